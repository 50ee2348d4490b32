//! A user's trait over a merge, whose methods have the merge's own names and call the merge's:
//! by path (`Merge::push(self, stream)`, `Self::is_empty(self)`) or by method call
//! (`self.len()`), as code written for futures-buffered's merges and for futures-util's set
//! (tower's `Drive`, deno's op driver) does. Each call reaches the merge's inherent method;
//! were the method only reachable through a dereference, the call would pick the trait's own
//! method, which calls itself until the stack overflows.

use std::pin::Pin;
use std::task::{Context, Poll};
use std::vec::IntoIter;

use futures_core::Stream;
use futures_task::noop_waker_ref;
use futures_util::stream::{self, Iter};
use pinfold_merge::{Key, Merge, MergeBounded};
use pinfold_testkit::stream::{drain_ready, poll_once};

/// A stream of the one item `n`.
fn one(n: u32) -> Iter<IntoIter<u32>> {
    stream::iter(vec![n])
}

/// A trait in the manner of tower's `Drive`: `is_empty` and `push` by path.
mod tower_drive {
    use super::*;

    /// tower's `Drive`, implemented for a merge.
    trait Drive<S: Stream> {
        fn is_empty(&self) -> bool;
        fn push(&mut self, stream: S);
        fn poll(&mut self, cx: &mut Context<'_>) -> Poll<Option<S::Item>>;
    }

    impl<S: Stream> Drive<S> for Merge<S> {
        fn is_empty(&self) -> bool {
            Merge::is_empty(self)
        }

        fn push(&mut self, stream: S) {
            Merge::push(self, stream)
        }

        fn poll(&mut self, cx: &mut Context<'_>) -> Poll<Option<S::Item>> {
            Stream::poll_next(Pin::new(self), cx)
        }
    }

    impl<S: Stream> Drive<S> for MergeBounded<S> {
        fn is_empty(&self) -> bool {
            MergeBounded::is_empty(self)
        }

        fn push(&mut self, stream: S) {
            MergeBounded::push(self, stream)
        }

        fn poll(&mut self, cx: &mut Context<'_>) -> Poll<Option<S::Item>> {
            Stream::poll_next(Pin::new(self), cx)
        }
    }

    /// tower's pattern: `Drive` pushes, says whether the set is empty and polls, on an empty set.
    fn drive_reaches_the_set<S: Drive<Iter<IntoIter<u32>>>>(mut set: S) {
        let mut cx = Context::from_waker(noop_waker_ref());
        assert!(Drive::is_empty(&set));
        Drive::push(&mut set, one(7));
        assert!(!Drive::is_empty(&set));
        assert_eq!(set.poll(&mut cx), Poll::Ready(Some(7)));
        assert_eq!(set.poll(&mut cx), Poll::Ready(None));
        assert!(Drive::is_empty(&set)); // the stream ended
    }

    #[test]
    fn growable_merge_drives_through_a_towers_drive() {
        drive_reaches_the_set(Merge::new());
    }

    #[test]
    fn bounded_merge_drives_through_a_towers_drive() {
        drive_reaches_the_set(MergeBounded::new(1));
    }
}

/// Every method a merge has, each in a trait of the user's under its own name.
mod every_method {
    use super::*;

    /// Every method of the merge, under its own name, in a trait of the user's: half call the
    /// merge by path, half by method call (as deno's `len` calls `self.len()`).
    trait Set<S: Stream> {
        fn push(&mut self, stream: S);
        fn insert(&mut self, stream: S) -> Key;
        fn remove(&mut self, key: Key) -> bool;
        fn contains_key(&self, key: Key) -> bool;
        fn get(&self, key: Key) -> Option<&S>;
        fn get_pin_mut(&mut self, key: Key) -> Option<Pin<&mut S>>;
        fn len(&self) -> usize;
        fn is_empty(&self) -> bool;
        fn capacity(&self) -> usize;
        fn clear(&mut self);
        fn iter(&self) -> Box<dyn ExactSizeIterator<Item = &S> + '_>;
        fn iter_keyed(&self) -> Box<dyn ExactSizeIterator<Item = (Key, &S)> + '_>;
        fn iter_pin_mut(&mut self) -> Box<dyn ExactSizeIterator<Item = Pin<&mut S>> + '_>;
        fn iter_pin_mut_keyed(
            &mut self,
        ) -> Box<dyn ExactSizeIterator<Item = (Key, Pin<&mut S>)> + '_>;
        fn iter_mut(&mut self) -> Box<dyn ExactSizeIterator<Item = &mut S> + '_>
        where
            S: Unpin;
        fn poll_next_keyed(&mut self, cx: &mut Context<'_>) -> Poll<Option<(Key, S::Item)>>;
        fn keyed(&mut self) -> Box<dyn Stream<Item = (Key, S::Item)> + Unpin + '_>;
    }

    impl<S: Stream> Set<S> for Merge<S> {
        fn push(&mut self, stream: S) {
            Merge::push(self, stream)
        }
        fn insert(&mut self, stream: S) -> Key {
            self.insert(stream)
        }
        fn remove(&mut self, key: Key) -> bool {
            Self::remove(self, key)
        }
        fn contains_key(&self, key: Key) -> bool {
            self.contains_key(key)
        }
        fn get(&self, key: Key) -> Option<&S> {
            Merge::get(self, key)
        }
        fn get_pin_mut(&mut self, key: Key) -> Option<Pin<&mut S>> {
            self.get_pin_mut(key)
        }
        fn len(&self) -> usize {
            self.len()
        }
        fn is_empty(&self) -> bool {
            Self::is_empty(self)
        }
        fn capacity(&self) -> usize {
            Merge::capacity(self)
        }
        fn clear(&mut self) {
            self.clear()
        }
        fn iter(&self) -> Box<dyn ExactSizeIterator<Item = &S> + '_> {
            Box::new(Merge::iter(self))
        }
        fn iter_keyed(&self) -> Box<dyn ExactSizeIterator<Item = (Key, &S)> + '_> {
            Box::new(self.iter_keyed())
        }
        fn iter_pin_mut(&mut self) -> Box<dyn ExactSizeIterator<Item = Pin<&mut S>> + '_> {
            Box::new(Self::iter_pin_mut(self))
        }
        fn iter_pin_mut_keyed(
            &mut self,
        ) -> Box<dyn ExactSizeIterator<Item = (Key, Pin<&mut S>)> + '_> {
            Box::new(self.iter_pin_mut_keyed())
        }
        fn iter_mut(&mut self) -> Box<dyn ExactSizeIterator<Item = &mut S> + '_>
        where
            S: Unpin,
        {
            Box::new(Merge::iter_mut(self))
        }
        fn poll_next_keyed(&mut self, cx: &mut Context<'_>) -> Poll<Option<(Key, S::Item)>> {
            self.poll_next_keyed(cx)
        }
        fn keyed(&mut self) -> Box<dyn Stream<Item = (Key, S::Item)> + Unpin + '_> {
            Box::new(Self::keyed(self))
        }
    }

    impl<S: Stream> Set<S> for MergeBounded<S> {
        fn push(&mut self, stream: S) {
            MergeBounded::push(self, stream)
        }
        fn insert(&mut self, stream: S) -> Key {
            self.insert(stream)
        }
        fn remove(&mut self, key: Key) -> bool {
            Self::remove(self, key)
        }
        fn contains_key(&self, key: Key) -> bool {
            self.contains_key(key)
        }
        fn get(&self, key: Key) -> Option<&S> {
            MergeBounded::get(self, key)
        }
        fn get_pin_mut(&mut self, key: Key) -> Option<Pin<&mut S>> {
            self.get_pin_mut(key)
        }
        fn len(&self) -> usize {
            self.len()
        }
        fn is_empty(&self) -> bool {
            Self::is_empty(self)
        }
        fn capacity(&self) -> usize {
            MergeBounded::capacity(self)
        }
        fn clear(&mut self) {
            self.clear()
        }
        fn iter(&self) -> Box<dyn ExactSizeIterator<Item = &S> + '_> {
            Box::new(MergeBounded::iter(self))
        }
        fn iter_keyed(&self) -> Box<dyn ExactSizeIterator<Item = (Key, &S)> + '_> {
            Box::new(self.iter_keyed())
        }
        fn iter_pin_mut(&mut self) -> Box<dyn ExactSizeIterator<Item = Pin<&mut S>> + '_> {
            Box::new(Self::iter_pin_mut(self))
        }
        fn iter_pin_mut_keyed(
            &mut self,
        ) -> Box<dyn ExactSizeIterator<Item = (Key, Pin<&mut S>)> + '_> {
            Box::new(self.iter_pin_mut_keyed())
        }
        fn iter_mut(&mut self) -> Box<dyn ExactSizeIterator<Item = &mut S> + '_>
        where
            S: Unpin,
        {
            Box::new(MergeBounded::iter_mut(self))
        }
        fn poll_next_keyed(&mut self, cx: &mut Context<'_>) -> Poll<Option<(Key, S::Item)>> {
            self.poll_next_keyed(cx)
        }
        fn keyed(&mut self) -> Box<dyn Stream<Item = (Key, S::Item)> + Unpin + '_> {
            Box::new(Self::keyed(self))
        }
    }

    /// Every method through the user's `Set`, on an empty merge with room for four streams.
    fn every_method_reaches_the_merge<M>(mut set: M)
    where
        M: Set<Iter<IntoIter<u32>>> + Stream<Item = u32> + Unpin,
    {
        assert!(Set::is_empty(&set));
        assert!(Set::capacity(&set) >= 4);
        Set::push(&mut set, one(1));
        Set::push(&mut set, one(2));
        let key = Set::insert(&mut set, one(3));
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
            panic!("a ready stream gives its item at the first poll");
        };
        assert_eq!(output, 1);
        assert!(Set::contains_key(&set, first)); // not ended yet
        let rest: Vec<(Key, u32)> = drain_ready(&mut Set::keyed(&mut set));
        assert_eq!(rest.iter().map(|&(_, item)| item).collect::<Vec<_>>(), [2]);
        assert!(!Set::contains_key(&set, first)); // ended

        Set::push(&mut set, one(4));
        Set::clear(&mut set);
        assert!(Set::is_empty(&set));
        assert_eq!(poll_once(&mut set), Poll::Ready(None));
    }

    #[test]
    fn growable_merge_answers_every_method_of_a_users_trait() {
        every_method_reaches_the_merge(Merge::with_capacity(4));
    }

    #[test]
    fn bounded_merge_answers_every_method_of_a_users_trait() {
        every_method_reaches_the_merge(MergeBounded::new(4));
    }
}

/// The bounded merge's own methods.
mod bounded_methods {
    use super::*;

    /// The bounded merge's own methods, in a trait of the user's.
    trait Bounded<S> {
        fn new(capacity: usize) -> Self;
        fn try_push(&mut self, stream: S) -> Result<(), S>;
        fn try_insert(&mut self, stream: S) -> Result<Key, S>;
        fn is_full(&self) -> bool;
    }

    impl<S: Stream> Bounded<S> for MergeBounded<S> {
        fn new(capacity: usize) -> Self {
            MergeBounded::new(capacity)
        }
        fn try_push(&mut self, stream: S) -> Result<(), S> {
            MergeBounded::try_push(self, stream)
        }
        fn try_insert(&mut self, stream: S) -> Result<Key, S> {
            self.try_insert(stream)
        }
        fn is_full(&self) -> bool {
            Self::is_full(self)
        }
    }

    #[test]
    fn bounded_merge_answers_its_own_methods_of_a_users_trait() {
        let mut set: MergeBounded<Iter<IntoIter<u32>>> = Bounded::new(2);
        assert!(Bounded::try_push(&mut set, one(1)).is_ok());
        let key = Bounded::try_insert(&mut set, one(2)).unwrap();
        assert!(set.contains_key(key));
        assert!(Bounded::is_full(&set));
        let refused = Bounded::try_push(&mut set, one(3)).unwrap_err();
        assert_eq!(refused.size_hint(), (1, Some(1)));
        assert!(Bounded::try_insert(&mut set, one(4)).is_err());
    }
}

/// The growable merge's own methods.
mod growable_methods {
    use super::*;

    /// The growable merge's own methods, in a trait of the user's.
    trait Growable {
        fn new() -> Self;
        fn with_capacity(capacity: usize) -> Self;
        fn reserve(&mut self, additional: usize);
    }

    impl<S: Stream> Growable for Merge<S> {
        fn new() -> Self {
            Merge::new()
        }
        fn with_capacity(capacity: usize) -> Self {
            Self::with_capacity(capacity)
        }
        fn reserve(&mut self, additional: usize) {
            self.reserve(additional)
        }
    }

    #[test]
    fn growable_merge_answers_its_own_methods_of_a_users_trait() {
        let mut set: Merge<Iter<IntoIter<u32>>> = Growable::new();
        assert_eq!(set.capacity(), 0);
        Growable::reserve(&mut set, 40);
        assert!(set.capacity() >= 40);
        let set: Merge<Iter<IntoIter<u32>>> = Growable::with_capacity(8);
        assert_eq!(set.capacity(), 8);
    }
}
