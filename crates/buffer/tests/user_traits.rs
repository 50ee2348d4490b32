//! A user's trait over an ordered set, whose methods have the set's own names (futures-util's
//! `FuturesOrdered`'s) and call the set's: by path (`FuturesOrdered::push_back(self, f)`) or by
//! method call (`self.len()`), as tower's `Drive` and deno's op driver call futures-util's sets.
//! `FuturesOrdered` and `FuturesOrderedBounded` are one type, `OrderedSet`, whose methods are
//! its own (no dereference), so each call reaches the set's method, never the trait's own,
//! which would call itself until the stack overflows.

use std::future::{Ready, ready};
use std::task::Poll;

use pinfold_buffer::{FuturesOrdered, FuturesOrderedBounded};
use pinfold_testkit::stream::drain_ready;

/// futures-util's `FuturesOrdered`'s methods, in a trait of the user's.
trait Ordered<F> {
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool;
    fn push(&mut self, future: F);
    fn push_back(&mut self, future: F);
    fn push_front(&mut self, future: F);
    fn clear(&mut self);
}

/// By path, as tower's `Drive` calls futures-util's set.
impl Ordered<Ready<u32>> for FuturesOrdered<Ready<u32>> {
    fn len(&self) -> usize {
        FuturesOrdered::len(self)
    }
    fn is_empty(&self) -> bool {
        FuturesOrdered::is_empty(self)
    }
    // Deprecated, as futures-util's is, and still called by code written for it.
    #[allow(deprecated)]
    fn push(&mut self, future: Ready<u32>) {
        FuturesOrdered::push(self, future)
    }
    fn push_back(&mut self, future: Ready<u32>) {
        FuturesOrdered::push_back(self, future)
    }
    fn push_front(&mut self, future: Ready<u32>) {
        FuturesOrdered::push_front(self, future)
    }
    fn clear(&mut self) {
        FuturesOrdered::clear(self)
    }
}

/// By method call, as deno's op driver's `len` calls `self.len()`; with the bounded set's own
/// methods.
impl Ordered<Ready<u32>> for FuturesOrderedBounded<Ready<u32>> {
    fn len(&self) -> usize {
        self.len()
    }
    fn is_empty(&self) -> bool {
        self.is_empty()
    }
    // Deprecated, as futures-util's is, and still called by code written for it.
    #[allow(deprecated)]
    fn push(&mut self, future: Ready<u32>) {
        self.push(future)
    }
    fn push_back(&mut self, future: Ready<u32>) {
        self.push_back(future)
    }
    fn push_front(&mut self, future: Ready<u32>) {
        self.push_front(future)
    }
    fn clear(&mut self) {
        self.clear()
    }
}

/// The bounded set's own methods, in a trait of the user's.
trait Bounded<F> {
    fn try_push_back(&mut self, future: F) -> Result<(), F>;
    fn try_push_front(&mut self, future: F) -> Result<(), F>;
    fn capacity(&self) -> usize;
    fn is_full(&self) -> bool;
}

impl Bounded<Ready<u32>> for FuturesOrderedBounded<Ready<u32>> {
    fn try_push_back(&mut self, future: Ready<u32>) -> Result<(), Ready<u32>> {
        FuturesOrderedBounded::try_push_back(self, future)
    }
    fn try_push_front(&mut self, future: Ready<u32>) -> Result<(), Ready<u32>> {
        self.try_push_front(future)
    }
    fn capacity(&self) -> usize {
        Self::capacity(self)
    }
    fn is_full(&self) -> bool {
        self.is_full()
    }
}

/// Every method through the user's `Ordered`, on an empty set with room for three futures:
/// the outputs come in queue order.
fn every_method_reaches_the_set<S>(mut set: S)
where
    S: Ordered<Ready<u32>> + futures_core::Stream<Item = u32> + Unpin,
{
    assert!(Ordered::is_empty(&set));
    Ordered::push(&mut set, ready(2));
    Ordered::push_back(&mut set, ready(3));
    Ordered::push_front(&mut set, ready(1));
    assert_eq!(Ordered::len(&set), 3);
    assert_eq!(drain_ready(&mut set), [1, 2, 3]);
    Ordered::push_back(&mut set, ready(4));
    Ordered::clear(&mut set);
    assert!(Ordered::is_empty(&set));
    assert_eq!(
        pinfold_testkit::stream::poll_once(&mut set),
        Poll::Ready(None)
    );
}

#[test]
fn growable_ordered_set_answers_every_method_of_a_users_trait() {
    every_method_reaches_the_set(FuturesOrdered::new());
}

#[test]
fn bounded_ordered_set_answers_every_method_of_a_users_trait() {
    every_method_reaches_the_set(FuturesOrderedBounded::new(3));
}

#[test]
fn bounded_ordered_set_answers_its_own_methods_of_a_users_trait() {
    let mut set = FuturesOrderedBounded::new(2);
    assert_eq!(Bounded::capacity(&set), 2);
    assert!(Bounded::try_push_back(&mut set, ready(2)).is_ok());
    assert!(Bounded::try_push_front(&mut set, ready(1)).is_ok());
    assert!(Bounded::is_full(&set));
    assert!(Bounded::try_push_back(&mut set, ready(3)).is_err());
    assert_eq!(drain_ready(&mut set), [1, 2]);
}
