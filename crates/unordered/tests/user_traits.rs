//! A user's trait over a set, whose methods have the set's own names and call the set's: by
//! path (`FuturesUnordered::push(self, future)`, `Self::is_empty(self)`) or by method call
//! (`self.len()`), as tower's `Drive`, deno's op driver and other code written for
//! futures-util's `FuturesUnordered` do. Each call reaches the set's inherent method; were the
//! method only reachable through a dereference, the call would pick the trait's own method,
//! which calls itself until the stack overflows.

use std::future::{Future, Ready, ready};
use std::pin::Pin;
use std::task::{Context, Poll};

use futures_core::Stream;
use futures_task::noop_waker_ref;
use pinfold_testkit::stream::{drain_ready, poll_once};
use pinfold_unordered::{FuturesUnordered, FuturesUnorderedBounded, Key};

/// tower's `Drive`: `is_empty` and `push` by path, as its `CallAll` and `ReadyCache` call them.
mod tower_drive {
    use super::*;

    /// tower's `Drive`, implemented for its set of in-flight calls.
    trait Drive<F: Future> {
        fn is_empty(&self) -> bool;
        fn push(&mut self, future: F);
        fn poll(&mut self, cx: &mut Context<'_>) -> Poll<Option<F::Output>>;
    }

    impl<F: Future> Drive<F> for FuturesUnordered<F> {
        fn is_empty(&self) -> bool {
            FuturesUnordered::is_empty(self)
        }

        fn push(&mut self, future: F) {
            FuturesUnordered::push(self, future)
        }

        fn poll(&mut self, cx: &mut Context<'_>) -> Poll<Option<F::Output>> {
            Stream::poll_next(Pin::new(self), cx)
        }
    }

    impl<F: Future> Drive<F> for FuturesUnorderedBounded<F> {
        fn is_empty(&self) -> bool {
            FuturesUnorderedBounded::is_empty(self)
        }

        fn push(&mut self, future: F) {
            FuturesUnorderedBounded::push(self, future)
        }

        fn poll(&mut self, cx: &mut Context<'_>) -> Poll<Option<F::Output>> {
            Stream::poll_next(Pin::new(self), cx)
        }
    }

    /// tower's pattern: `Drive` pushes, says whether the set is empty and polls, on an empty set.
    fn drive_reaches_the_set<S: Drive<Ready<u32>>>(mut set: S) {
        let mut cx = Context::from_waker(noop_waker_ref());
        assert!(Drive::is_empty(&set));
        Drive::push(&mut set, ready(7));
        assert!(!Drive::is_empty(&set));
        assert_eq!(set.poll(&mut cx), Poll::Ready(Some(7)));
        assert!(Drive::is_empty(&set));
        assert_eq!(set.poll(&mut cx), Poll::Ready(None));
    }

    #[test]
    fn growable_set_drives_through_a_towers_drive() {
        drive_reaches_the_set(FuturesUnordered::new());
    }

    #[test]
    fn bounded_set_drives_through_a_towers_drive() {
        drive_reaches_the_set(FuturesUnorderedBounded::new(1));
    }
}

/// Every method a set has, each in a trait of the user's under its own name.
mod every_method {
    use super::*;

    /// Every method of the set, under its own name, in a trait of the user's: half call the set
    /// by path, half by method call (as deno's `len` calls `self.len()`).
    trait Set<F: Future> {
        fn push(&mut self, future: F);
        fn insert(&mut self, future: F) -> Key;
        fn remove(&mut self, key: Key) -> bool;
        fn contains_key(&self, key: Key) -> bool;
        fn get(&self, key: Key) -> Option<&F>;
        fn get_pin_mut(&mut self, key: Key) -> Option<Pin<&mut F>>;
        fn len(&self) -> usize;
        fn is_empty(&self) -> bool;
        fn capacity(&self) -> usize;
        fn clear(&mut self);
        fn iter(&self) -> Box<dyn ExactSizeIterator<Item = &F> + '_>;
        fn iter_keyed(&self) -> Box<dyn ExactSizeIterator<Item = (Key, &F)> + '_>;
        fn iter_pin_mut(&mut self) -> Box<dyn ExactSizeIterator<Item = Pin<&mut F>> + '_>;
        fn iter_pin_mut_keyed(
            &mut self,
        ) -> Box<dyn ExactSizeIterator<Item = (Key, Pin<&mut F>)> + '_>;
        fn iter_mut(&mut self) -> Box<dyn ExactSizeIterator<Item = &mut F> + '_>
        where
            F: Unpin;
        fn poll_next_keyed(&mut self, cx: &mut Context<'_>) -> Poll<Option<(Key, F::Output)>>;
        fn keyed(&mut self) -> Box<dyn Stream<Item = (Key, F::Output)> + Unpin + '_>;
    }

    impl<F: Future> Set<F> for FuturesUnordered<F> {
        fn push(&mut self, future: F) {
            FuturesUnordered::push(self, future)
        }
        fn insert(&mut self, future: F) -> Key {
            self.insert(future)
        }
        fn remove(&mut self, key: Key) -> bool {
            Self::remove(self, key)
        }
        fn contains_key(&self, key: Key) -> bool {
            self.contains_key(key)
        }
        fn get(&self, key: Key) -> Option<&F> {
            FuturesUnordered::get(self, key)
        }
        fn get_pin_mut(&mut self, key: Key) -> Option<Pin<&mut F>> {
            self.get_pin_mut(key)
        }
        fn len(&self) -> usize {
            self.len()
        }
        fn is_empty(&self) -> bool {
            Self::is_empty(self)
        }
        fn capacity(&self) -> usize {
            FuturesUnordered::capacity(self)
        }
        fn clear(&mut self) {
            self.clear()
        }
        fn iter(&self) -> Box<dyn ExactSizeIterator<Item = &F> + '_> {
            Box::new(FuturesUnordered::iter(self))
        }
        fn iter_keyed(&self) -> Box<dyn ExactSizeIterator<Item = (Key, &F)> + '_> {
            Box::new(self.iter_keyed())
        }
        fn iter_pin_mut(&mut self) -> Box<dyn ExactSizeIterator<Item = Pin<&mut F>> + '_> {
            Box::new(Self::iter_pin_mut(self))
        }
        fn iter_pin_mut_keyed(
            &mut self,
        ) -> Box<dyn ExactSizeIterator<Item = (Key, Pin<&mut F>)> + '_> {
            Box::new(self.iter_pin_mut_keyed())
        }
        fn iter_mut(&mut self) -> Box<dyn ExactSizeIterator<Item = &mut F> + '_>
        where
            F: Unpin,
        {
            Box::new(FuturesUnordered::iter_mut(self))
        }
        fn poll_next_keyed(&mut self, cx: &mut Context<'_>) -> Poll<Option<(Key, F::Output)>> {
            self.poll_next_keyed(cx)
        }
        fn keyed(&mut self) -> Box<dyn Stream<Item = (Key, F::Output)> + Unpin + '_> {
            Box::new(Self::keyed(self))
        }
    }

    impl<F: Future> Set<F> for FuturesUnorderedBounded<F> {
        fn push(&mut self, future: F) {
            FuturesUnorderedBounded::push(self, future)
        }
        fn insert(&mut self, future: F) -> Key {
            self.insert(future)
        }
        fn remove(&mut self, key: Key) -> bool {
            Self::remove(self, key)
        }
        fn contains_key(&self, key: Key) -> bool {
            self.contains_key(key)
        }
        fn get(&self, key: Key) -> Option<&F> {
            FuturesUnorderedBounded::get(self, key)
        }
        fn get_pin_mut(&mut self, key: Key) -> Option<Pin<&mut F>> {
            self.get_pin_mut(key)
        }
        fn len(&self) -> usize {
            self.len()
        }
        fn is_empty(&self) -> bool {
            Self::is_empty(self)
        }
        fn capacity(&self) -> usize {
            FuturesUnorderedBounded::capacity(self)
        }
        fn clear(&mut self) {
            self.clear()
        }
        fn iter(&self) -> Box<dyn ExactSizeIterator<Item = &F> + '_> {
            Box::new(FuturesUnorderedBounded::iter(self))
        }
        fn iter_keyed(&self) -> Box<dyn ExactSizeIterator<Item = (Key, &F)> + '_> {
            Box::new(self.iter_keyed())
        }
        fn iter_pin_mut(&mut self) -> Box<dyn ExactSizeIterator<Item = Pin<&mut F>> + '_> {
            Box::new(Self::iter_pin_mut(self))
        }
        fn iter_pin_mut_keyed(
            &mut self,
        ) -> Box<dyn ExactSizeIterator<Item = (Key, Pin<&mut F>)> + '_> {
            Box::new(self.iter_pin_mut_keyed())
        }
        fn iter_mut(&mut self) -> Box<dyn ExactSizeIterator<Item = &mut F> + '_>
        where
            F: Unpin,
        {
            Box::new(FuturesUnorderedBounded::iter_mut(self))
        }
        fn poll_next_keyed(&mut self, cx: &mut Context<'_>) -> Poll<Option<(Key, F::Output)>> {
            self.poll_next_keyed(cx)
        }
        fn keyed(&mut self) -> Box<dyn Stream<Item = (Key, F::Output)> + Unpin + '_> {
            Box::new(Self::keyed(self))
        }
    }

    /// Every method through the user's `Set`, on an empty set with room for four futures.
    fn every_method_reaches_the_set<S>(mut set: S)
    where
        S: Set<Ready<u32>> + Stream<Item = u32> + Unpin,
    {
        assert!(Set::is_empty(&set));
        assert!(Set::capacity(&set) >= 4);
        Set::push(&mut set, ready(1));
        Set::push(&mut set, ready(2));
        let key = Set::insert(&mut set, ready(3));
        assert_eq!(Set::len(&set), 3);
        assert!(Set::contains_key(&set, key));
        assert!(Set::get(&set, key).is_some());
        assert!(Set::get_pin_mut(&mut set, key).is_some());
        assert_eq!(Set::iter(&set).len(), 3);
        assert!(Set::iter_keyed(&set).any(|(k, _)| k == key));
        assert_eq!(Set::iter_pin_mut(&mut set).len(), 3);
        assert!(Set::iter_pin_mut_keyed(&mut set).any(|(k, _)| k == key));
        assert_eq!(Set::iter_mut(&mut set).len(), 3);

        assert!(Set::remove(&mut set, key));
        assert!(!Set::contains_key(&set, key));
        assert_eq!(Set::len(&set), 2);

        let mut cx = Context::from_waker(noop_waker_ref());
        let Poll::Ready(Some((first, output))) = Set::poll_next_keyed(&mut set, &mut cx) else {
            panic!("a ready future gives its output at the first poll");
        };
        assert_eq!(output, 1);
        assert!(!Set::contains_key(&set, first));
        let rest: Vec<(Key, u32)> = drain_ready(&mut Set::keyed(&mut set));
        assert_eq!(
            rest.iter().map(|&(_, output)| output).collect::<Vec<_>>(),
            [2]
        );

        Set::push(&mut set, ready(4));
        Set::clear(&mut set);
        assert!(Set::is_empty(&set));
        assert_eq!(poll_once(&mut set), Poll::Ready(None));
    }

    #[test]
    fn growable_set_answers_every_method_of_a_users_trait() {
        every_method_reaches_the_set(FuturesUnordered::with_capacity(4));
    }

    #[test]
    fn bounded_set_answers_every_method_of_a_users_trait() {
        every_method_reaches_the_set(FuturesUnorderedBounded::new(4));
    }
}

/// The bounded set's own methods.
mod bounded_methods {
    use super::*;

    /// The bounded set's own methods, in a trait of the user's.
    trait Bounded<F> {
        fn new(capacity: usize) -> Self;
        fn try_push(&mut self, future: F) -> Result<(), F>;
        fn try_insert(&mut self, future: F) -> Result<Key, F>;
        fn is_full(&self) -> bool;
    }

    impl<F: Future> Bounded<F> for FuturesUnorderedBounded<F> {
        fn new(capacity: usize) -> Self {
            FuturesUnorderedBounded::new(capacity)
        }
        fn try_push(&mut self, future: F) -> Result<(), F> {
            FuturesUnorderedBounded::try_push(self, future)
        }
        fn try_insert(&mut self, future: F) -> Result<Key, F> {
            self.try_insert(future)
        }
        fn is_full(&self) -> bool {
            Self::is_full(self)
        }
    }

    #[test]
    fn bounded_set_answers_its_own_methods_of_a_users_trait() {
        let mut set: FuturesUnorderedBounded<Ready<u32>> = Bounded::new(2);
        assert!(Bounded::try_push(&mut set, ready(1)).is_ok());
        let key = Bounded::try_insert(&mut set, ready(2)).unwrap();
        assert!(set.contains_key(key));
        assert!(Bounded::is_full(&set));
        assert_eq!(
            Bounded::try_push(&mut set, ready(3))
                .unwrap_err()
                .into_inner(),
            3
        );
        assert!(Bounded::try_insert(&mut set, ready(4)).is_err());
    }
}

/// The growable set's own methods.
mod growable_methods {
    use super::*;

    /// The growable set's own methods, in a trait of the user's.
    trait Growable {
        fn new() -> Self;
        fn with_capacity(capacity: usize) -> Self;
        fn reserve(&mut self, additional: usize);
    }

    impl<F: Future> Growable for FuturesUnordered<F> {
        fn new() -> Self {
            FuturesUnordered::new()
        }
        fn with_capacity(capacity: usize) -> Self {
            Self::with_capacity(capacity)
        }
        fn reserve(&mut self, additional: usize) {
            self.reserve(additional)
        }
    }

    #[test]
    fn growable_set_answers_its_own_methods_of_a_users_trait() {
        let mut set: FuturesUnordered<Ready<u32>> = Growable::new();
        assert_eq!(set.capacity(), 0);
        Growable::reserve(&mut set, 40);
        assert!(set.capacity() >= 40);
        let set: FuturesUnordered<Ready<u32>> = Growable::with_capacity(8);
        assert_eq!(set.capacity(), 8);
    }
}
