//! [`Storage`]: what a primitive needs of its arena, so that each primitive is written once
//! over both kinds, the fixed [`Arena`] and the [`GrowableArena`].

use core::pin::Pin;
use core::task::{Context, Poll};

use crate::key::Key;
use crate::round::Budget;
use crate::step::Step;
#[cfg(doc)]
use crate::{arena::Arena, growable::GrowableArena};

pub(crate) mod sealed {
    /// Keeps [`Storage`](super::Storage) to the arenas of this crate.
    pub trait Sealed {}
}

/// The operations a primitive needs of its arena, implemented by [`Arena<T>`] (a fixed
/// capacity: [`insert`](Storage::insert) gives the value back when it is full) and by
/// [`GrowableArena<T>`] (never full). Each method is the arena's own method of the same name;
/// a primitive generic over `Storage` is monomorphised for each arena, at no cost.
///
/// An arena is `Unpin` whatever `T` is: its values are pinned in its own storage. The trait
/// is sealed: only the two arenas implement it.
///
/// ```
/// use std::future::{Future, ready};
/// use std::task::{Context, Poll, Waker};
/// use pinfold_arena::{Arena, GrowableArena, Step, Storage};
///
/// fn sum<A: Storage<std::future::Ready<u32>>>(mut arena: A) -> u32 {
///     for n in 1..=3 {
///         assert!(arena.insert(ready(n)).is_ok());
///     }
///     let mut cx = Context::from_waker(Waker::noop());
///     let mut sum = 0;
///     while let Poll::Ready(Some((_, n))) =
///         arena.poll_next(&mut cx, |_, fut, cx| Step::of_future(fut.poll(cx)))
///     {
///         sum += n;
///     }
///     sum
/// }
///
/// assert_eq!(sum(Arena::new(3)), 6);
/// assert_eq!(sum(GrowableArena::new()), 6);
/// ```
pub trait Storage<T>: Unpin + sealed::Sealed {
    /// The same kind of arena, holding values of type `U`: `Arena<U>` for an `Arena<T>`,
    /// `GrowableArena<U>` for a `GrowableArena<T>`.
    type Of<U>: Storage<U>;
    /// The values with their keys: [`iter`](Storage::iter).
    type Iter<'a>: ExactSizeIterator<Item = (Key, &'a T)>
    where
        Self: 'a,
        T: 'a;
    /// The values, pinned, with their keys: [`iter_pin_mut`](Storage::iter_pin_mut).
    type IterPinMut<'a>: ExactSizeIterator<Item = (Key, Pin<&'a mut T>)>
    where
        Self: 'a,
        T: 'a;
    /// The values, moved out: [`into_values`](Storage::into_values). An
    /// `ExactSizeIterator<Item = T>` for `T: Unpin`.
    type IntoValues;

    /// Stores `value`, queues it to be polled and returns its key; gives `value` back if the
    /// arena is full (a [`GrowableArena`] never is).
    fn insert(&mut self, value: T) -> Result<Key, T>;
    /// Drops `key`'s value in place now; `false` if it was gone already.
    fn remove(&mut self, key: Key) -> bool;
    /// Whether `key`'s value is still in the arena.
    fn contains_key(&self, key: Key) -> bool;
    /// `key`'s value, if it is still in the arena.
    fn get(&self, key: Key) -> Option<&T>;
    /// `key`'s value, pinned, if it is still in the arena.
    fn get_pin_mut(&mut self, key: Key) -> Option<Pin<&mut T>>;
    /// How many values the arena holds.
    fn len(&self) -> usize;
    /// Whether the arena holds no value.
    fn is_empty(&self) -> bool;
    /// How many slots the arena has now.
    fn capacity(&self) -> usize;
    /// Whether an insert would give the value back (never, for a [`GrowableArena`]).
    fn is_full(&self) -> bool;
    /// Drops every value in place (a [`GrowableArena`] then releases empty groups).
    fn clear(&mut self);
    /// The values with their keys.
    fn iter(&self) -> Self::Iter<'_>;
    /// The values, pinned, with their keys.
    fn iter_pin_mut(&mut self) -> Self::IterPinMut<'_>;
    /// Moves the values out, for `T: Unpin`.
    fn into_values(self) -> Self::IntoValues
    where
        T: Unpin;
    /// Starts a poll round: the budget for [`poll_with_budget`](Storage::poll_with_budget).
    fn budget(&mut self) -> Budget;
    /// The next output of any woken value, fairly: [`Arena::poll_next`].
    fn poll_next<R, F>(&mut self, cx: &mut Context<'_>, f: F) -> Poll<Option<(Key, R)>>
    where
        F: FnMut(Key, Pin<&mut T>, &mut Context<'_>) -> Step<R>;
    /// [`poll_next`](Storage::poll_next) that skips values leaving without an output:
    /// [`Arena::poll_next_some`].
    fn poll_next_some<R, F>(&mut self, cx: &mut Context<'_>, f: F) -> Poll<Option<(Key, R)>>
    where
        F: FnMut(Key, Pin<&mut T>, &mut Context<'_>) -> Step<Option<R>>;
    /// [`poll_next`](Storage::poll_next) within a round started by
    /// [`budget`](Storage::budget): [`Arena::poll_with_budget`].
    fn poll_with_budget<R, F>(
        &mut self,
        cx: &mut Context<'_>,
        budget: &mut Budget,
        f: &mut F,
    ) -> Poll<Option<(Key, R)>>
    where
        F: FnMut(Key, Pin<&mut T>, &mut Context<'_>) -> Step<R>;
}

/// The [`Storage`] methods that an arena kind has as inherent methods of the same name and
/// signature, forwarded to them: written once for both kinds. Every method but `insert` and
/// `is_full`, which differ.
macro_rules! forward_to_inherent {
    ($arena:ident) => {
        #[inline]
        fn remove(&mut self, key: Key) -> bool {
            $arena::remove(self, key)
        }

        #[inline]
        fn contains_key(&self, key: Key) -> bool {
            $arena::contains_key(self, key)
        }

        #[inline]
        fn get(&self, key: Key) -> Option<&T> {
            $arena::get(self, key)
        }

        #[inline]
        fn get_pin_mut(&mut self, key: Key) -> Option<Pin<&mut T>> {
            $arena::get_pin_mut(self, key)
        }

        #[inline]
        fn len(&self) -> usize {
            $arena::len(self)
        }

        #[inline]
        fn is_empty(&self) -> bool {
            $arena::is_empty(self)
        }

        #[inline]
        fn capacity(&self) -> usize {
            $arena::capacity(self)
        }

        #[inline]
        fn clear(&mut self) {
            $arena::clear(self);
        }

        #[inline]
        fn iter(&self) -> Iter<'_, T> {
            $arena::iter(self)
        }

        #[inline]
        fn iter_pin_mut(&mut self) -> IterPinMut<'_, T> {
            $arena::iter_pin_mut(self)
        }

        #[inline]
        fn into_values(self) -> IntoValues<T>
        where
            T: Unpin,
        {
            $arena::into_values(self)
        }

        #[inline]
        fn budget(&mut self) -> Budget {
            $arena::budget(self)
        }

        #[inline]
        fn poll_next<R, F>(&mut self, cx: &mut Context<'_>, f: F) -> Poll<Option<(Key, R)>>
        where
            F: FnMut(Key, Pin<&mut T>, &mut Context<'_>) -> Step<R>,
        {
            $arena::poll_next(self, cx, f)
        }

        #[inline]
        fn poll_next_some<R, F>(&mut self, cx: &mut Context<'_>, f: F) -> Poll<Option<(Key, R)>>
        where
            F: FnMut(Key, Pin<&mut T>, &mut Context<'_>) -> Step<Option<R>>,
        {
            $arena::poll_next_some(self, cx, f)
        }

        #[inline]
        fn poll_with_budget<R, F>(
            &mut self,
            cx: &mut Context<'_>,
            budget: &mut Budget,
            f: &mut F,
        ) -> Poll<Option<(Key, R)>>
        where
            F: FnMut(Key, Pin<&mut T>, &mut Context<'_>) -> Step<R>,
        {
            $arena::poll_with_budget(self, cx, budget, f)
        }
    };
}
pub(crate) use forward_to_inherent;
