//! [`Storage`]: what a primitive needs of its arena, so that each primitive is written once
//! over both kinds, the fixed [`Arena`] and the [`GrowableArena`].

pub(crate) mod block;
pub(crate) mod growable;
pub(crate) mod join_arena;
pub(crate) mod sizing;
pub(crate) mod store;

use core::pin::Pin;
use core::task::{Context, Poll};

use crate::key::Key;
use crate::poll::{Budget, PollStorage, Rounds, Step};
#[cfg(doc)]
use crate::{Arena, GrowableArena};

pub(crate) mod sealed {
    /// Keeps [`Storage`](super::Storage) to the arenas of this crate.
    pub trait Sealed {}

    /// The argument of [`Storage`](super::Storage)'s hidden methods, which hand out the poll
    /// loop's parts: only this crate can make one, so no code outside it can call them, put
    /// the parts out of step (a queue of one arena with the slots of another) and make the
    /// loop index out of bounds.
    #[derive(Debug, Clone, Copy)]
    pub struct Token(());

    impl Token {
        /// The token, for this crate's own calls.
        #[inline(always)]
        pub(crate) const fn new() -> Self {
            Self(())
        }
    }
}

use sealed::Token;

/// The keyed arenas' methods: implemented by [`Arena<T>`] (a fixed capacity:
/// [`insert`](Storage::insert) gives the value back when it is full) and by
/// [`GrowableArena<T>`] (never full). The poll entry points ([`start_round`](Storage::start_round),
/// [`poll_next`](Storage::poll_next), [`poll_next_some`](Storage::poll_next_some),
/// [`poll_with_budget`](Storage::poll_with_budget)) are written once here, over the one poll
/// loop; the rest is each kind's own. A primitive generic over `Storage` is monomorphised for
/// each arena, at no cost. Bring the trait into scope to call these methods.
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
    /// The kind's storage, as the poll loop reaches it.
    #[doc(hidden)]
    type PollStorage: PollStorage<T>;

    /// The poll loop's state and the storage it polls. Only this crate has the token: safe
    /// code outside it cannot reach the parts, nor swap one arena's with another's.
    ///
    /// ```compile_fail,E0061
    /// use pinfold_arena::{Arena, Storage};
    ///
    /// let mut arena = Arena::<std::future::Ready<u32>>::new(1);
    /// let _parts = arena.engine();
    /// ```
    ///
    /// ```compile_fail,E0603
    /// use pinfold_arena::{Arena, Storage};
    ///
    /// let mut arena = Arena::<std::future::Ready<u32>>::new(1);
    /// let _parts = arena.engine(pinfold_arena::storage::sealed::Token::new());
    /// ```
    #[doc(hidden)]
    fn engine(&mut self, token: Token) -> (&mut Rounds, &mut Self::PollStorage);

    /// Stores `value` in a free slot, queues it to be polled (without any atomic operation)
    /// and returns its key; gives `value` back if the arena is full (a [`GrowableArena`] never
    /// is).
    fn insert(&mut self, value: T) -> Result<Key, T>;
    /// Drops `key`'s value in place now and frees its slot; `false` if it was gone already.
    ///
    /// If the value's `Drop` panics, the slot is free all the same and the panic propagates.
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
    #[inline]
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// How many slots the arena has now.
    fn capacity(&self) -> usize;
    /// Whether an insert would give the value back (never, for a [`GrowableArena`]).
    fn is_full(&self) -> bool;
    /// Drops every value in place: storage is kept ([`Arena`]), or empty groups are released
    /// as after an output ([`GrowableArena`]).
    ///
    /// If a value's `Drop` panics, the other values are dropped all the same, and then the
    /// first panic propagates.
    fn clear(&mut self);
    /// The values with their keys, in slot order.
    fn iter(&self) -> Self::Iter<'_>;
    /// The values, pinned, with their keys, in slot order.
    fn iter_pin_mut(&mut self) -> Self::IterPinMut<'_>;
    /// Moves the values out, in slot order, for `T: Unpin`. The values the iterator has not
    /// given when it is dropped are dropped with the arena.
    fn into_values(self) -> Self::IntoValues
    where
        T: Unpin;

    /// Starts a poll round: the fairness budget for
    /// [`poll_with_budget`](Storage::poll_with_budget). Values woken again in the last round
    /// are queued for this one.
    #[inline]
    fn start_round(&mut self) -> Budget {
        let (rounds, slots) = self.engine(Token::new());
        rounds.start_round(slots)
    }

    /// The old name of [`start_round`](Storage::start_round).
    #[deprecated(note = "renamed to `start_round`")]
    #[inline]
    fn budget(&mut self) -> Budget {
        self.start_round()
    }

    /// Polls the arena as a stream: the next output of any woken value, fairly.
    ///
    /// `f` polls one value (with the context of its own waker); [`Step`] says what came of it.
    /// Returns `Ready(None)` when the arena is empty, `Ready(Some((key, output)))` when a value
    /// gives an output, and `Pending` once every woken value has been polled (the task is
    /// woken when a value's waker fires) or when the round's [`Budget`] is spent (the task has
    /// been woken already: it yields to let others run).
    ///
    /// If `f` panics, the value is dropped in place, its slot freed, and the panic resumed.
    // Always inlined, so that the loop runs in the caller's frame with no call per output, as
    // it does on a set's own way to it (`Futures::poll_arena`).
    #[inline(always)]
    fn poll_next<R, F>(&mut self, cx: &mut Context<'_>, f: F) -> Poll<Option<(Key, R)>>
    where
        F: FnMut(Key, Pin<&mut T>, &mut Context<'_>) -> Step<R>,
    {
        let (rounds, slots) = self.engine(Token::new());
        rounds.next_output(slots, cx, f)
    }

    /// [`poll_next`](Storage::poll_next) for values that may leave without an output, such as
    /// streams (`Step::of_stream`): an output of `None` (a stream's end: `Step::Done(None)`
    /// drops the value) is not returned; the round goes on to the next value, within the same
    /// budget. `Ready(None)` when the arena holds nothing.
    #[inline]
    fn poll_next_some<R, F>(&mut self, cx: &mut Context<'_>, f: F) -> Poll<Option<(Key, R)>>
    where
        F: FnMut(Key, Pin<&mut T>, &mut Context<'_>) -> Step<Option<R>>,
    {
        let (rounds, slots) = self.engine(Token::new());
        rounds.next_output_some(slots, cx, f)
    }

    /// [`poll_next`](Storage::poll_next) within a round the caller started with
    /// [`start_round`](Storage::start_round), for a caller that takes several outputs in one poll of its
    /// own (a join, a stream adapter): call it again with the same budget after each output,
    /// and each value is still polled at most once.
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
        let (rounds, slots) = self.engine(Token::new());
        rounds.poll(slots, cx, budget, f)
    }
}
