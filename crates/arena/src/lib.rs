//! The waker-slot arena that every pinfold primitive stands on.
//!
//! An [`Arena<T>`] is a block of `capacity` slots, fixed when it is made. Each slot holds a
//! pinned value (a future, a stream, anything the owner polls) and has a waker of its own.
//! Waking a slot's waker, from any thread, puts the slot in a lock-free set of woken slots;
//! the owner collects that set into a queue and polls exactly the values that were woken.
//!
//! - Storage is allocated once, at construction (two allocations: the slots, and the wake
//!   table the wakers share) and never again: inserting, polling, waking, removing and
//!   clearing allocate nothing.
//! - A value never moves: it is dropped in place when it finishes, is removed, or the arena is
//!   dropped.
//! - Wakers are `Send + Sync` and may be cloned, woken and dropped anywhere, at any time, also
//!   after their value is gone or the arena is dropped: then a wake does nothing, and the wake
//!   table is freed with the last waker.
//! - The wake path is a few atomic `fetch_or`s, no lock, no allocation. Wakes coalesce: a slot
//!   woken many times before it is polled is polled once, and a burst of wakes wakes the parent
//!   task once.
//! - Polling is fair: one call polls each value at most once and yields (wakes its task and
//!   returns `Pending`) once it has polled as many values as the arena held when it started, or
//!   once two values woke themselves during their own poll.
//! - A panic in a value's poll drops that value in place, frees its slot and resumes the panic;
//!   the arena stays usable.
//!
//! How it works is in [`implementation`].
//!
//! # Example
//!
//! A tiny unordered set of futures:
//!
//! ```
//! use std::future::{Future, ready};
//! use std::task::{Context, Poll};
//! use pinfold_arena::{Arena, Step};
//!
//! let mut arena = Arena::new(4);
//! for n in [1, 2, 3] {
//!     arena.insert(ready(n * 10)).unwrap();
//! }
//! let mut cx = Context::from_waker(std::task::Waker::noop());
//! let mut outputs = Vec::new();
//! while let Poll::Ready(Some((_slot, out))) = arena.poll_next(&mut cx, |_, fut, cx| match fut.poll(cx) {
//!     Poll::Ready(out) => Step::Done(out),
//!     Poll::Pending => Step::Pending,
//! }) {
//!     outputs.push(out);
//! }
//! assert_eq!(outputs, [10, 20, 30]);
//! assert!(arena.is_empty());
//! ```
//!
//! # Stale wakers
//!
//! There is no generation counter: a waker that outlives its value still names its slot, so
//! waking it after the slot was reused may cause one spurious poll of the slot's next
//! occupant. Futures and streams must tolerate spurious polls in any case; the arena never
//! polls an empty slot.

mod arena;
mod atomic_waker;
mod hub;
pub mod implementation;
mod ready_set;
mod sync;
mod wake_table;

pub use arena::{Arena, Budget, Queued, Step};
pub use hub::Hub;

#[cfg(all(test, not(all(pinfold_loom, feature = "loom"))))]
mod tests;
