//! [`join_all`] and [`try_join_all`]: wait for many futures at once, and get their outputs in
//! input order, on one waker-slot arena.
//!
//! They are drop-in replacements for `futures_util::future::{join_all, try_join_all}`, without
//! the problems users of `futures-util` and `futures-buffered` have run into:
//!
//! - **After the first polls, only the woken futures are polled**, at every size.
//!   `futures-util` polls every future on every wake up to 30 futures (quadratic work) and
//!   switches to a `FuturesOrdered` above (see [*Polls and wakes*](#polls-and-wakes)).
//! - **A join of ready futures makes one allocation**, where `futures-util` makes two: the
//!   futures are first polled with the task's own waker, and the outputs take the futures'
//!   place (see [*Allocations*](#allocations)). The benchmarks' `join_all_*` and
//!   `try_join_all_*` rows compare both joins with `futures-util`'s and `futures-buffered`'s.
//! - **The first error wins at once.** [`try_join_all`] returns the first `Err` *in time*,
//!   whatever its position, and drops every other future right then; `futures-util` surfaces
//!   an error only after every earlier future has finished (futures-rs #2866).
//! - **Nothing leaks, nothing is read uninitialised.** Dropping a [`JoinAll`] or
//!   [`TryJoinAll`] at any point drops every running future and every kept output exactly
//!   once; `futures-buffered` 0.2.12 leaked finished outputs on cancellation. The crate has no
//!   `unsafe` code at all (the arena crate holds it).
//!
//! # Example
//!
//! ```
//! use std::time::Duration;
//! use pinfold_join::{join_all, try_join_all};
//!
//! async fn fetch(id: u64) -> u64 {
//!     // Later inputs finish first; the outputs still come in input order.
//!     tokio::time::sleep(Duration::from_millis(10 - id)).await;
//!     id * 100
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
//! assert_eq!(join_all((0..4).map(fetch)).await, [0, 100, 200, 300]);
//!
//! async fn check(id: u64) -> Result<u64, String> {
//!     if id == 3 { Err(format!("input {id} failed")) } else { Ok(fetch(id).await) }
//! }
//! // Input 3 fails before the others finish: its error comes back at once.
//! assert_eq!(try_join_all((0..6).map(check)).await, Err("input 3 failed".to_string()));
//! # });
//! ```
//!
//! # The shared rules
//!
//! A join keeps the rules of every pinfold primitive on the arena, stated once in
//! [`pinfold_arena::contract`], as one future: [wakes](pinfold_arena::contract#wakes) and
//! [fairness](pinfold_arena::contract#fairness) once its futures have wakers of their own,
//! [panics](pinfold_arena::contract#panics) but for a future's poll, and the `std` and
//! `tokio-coop` [features](pinfold_arena::contract#features). What differs here:
//!
//! | Rule | What differs here |
//! |------|-------------------|
//! | Order | Outputs in input order, once every future has finished; a [`TryJoinAll`] completes with the first `Err` in time, as soon as a future gives it. |
//! | Wakes | The first polls use the task's waker; each future still running gets a waker of its own after them ([*Polls and wakes*](#polls-and-wakes)). |
//! | Fairness | The polls with the task's waker poll every future still running; after them each poll is a round of the arena ([*The tokio budget*](#the-tokio-budget) with `tokio-coop`). |
//! | Panics | A panic in a future's poll ends the join; any other leaves it consistent, not terminated ([*When user code panics*](#when-user-code-panics)). |
//! | Memory | At most three allocations, none while polling ([*Allocations*](#allocations)). |
//!
//! # Polls and wakes
//!
//! The first poll of a join polls every future once with the task's own waker, as
//! `futures-util` does: no per-future waker exists yet, and ready and nearly ready futures,
//! the common case of a small join, finish without one. A join of at most 32 futures does so
//! in its second poll too (so futures that yield once finish without a waker of their own
//! either); a larger join does not. The next poll gives every future still running a waker of
//! its own (one wake table for all) and polls each once with it; from then on only the
//! futures whose wakers fired are polled.
//!
//! So a future is polled once by each of the join's first `P + 1` polls while it runs (`P` =
//! 2 up to 32 futures, 1 above), and after that once per burst of wakes of its own waker
//! (wakes that come before the poll they cause are one). A future ready at once is polled
//! once; one that yields once, twice; one that waits for one wake from elsewhere, at most
//! `P + 2` times. Nothing else polls it, but for the future that keeps its first waker, below.
//!
//! The task is woken once per burst:
//!
//! - in a poll with the task's waker, the futures from the one after the first that stays
//!   pending on (all of them, in a poll that finds some finished already) are polled with a
//!   waker lent for that poll only ([`pinfold_arena::with_noted_wakes`]): a wake of it is
//!   noted, and the task is woken once after the last of them, if any woke. Ten futures that
//!   yield once wake the task twice (the first one's own wake, then the noted one), not ten
//!   times. A clone of the lent waker is a clone of the task's waker, so a future that keeps
//!   its waker keeps the task's. A poll that completes the join passes no wake on;
//! - once the futures have wakers of their own, any number of wakes between two polls of the
//!   join wake the task once.
//!
//! No wake is lost: a wake that comes while the join is being polled gets its future polled
//! in that poll, or wakes the task for the next one; one that comes after it wakes the task.
//! A future must wake the waker of its latest
//! poll, as the `Future` contract says: one that wakes the waker of its previous poll instead
//! misses that one wake when it changes from the task's waker to its own. A future that keeps
//! the waker of its first poll and never takes a new one (the contract does not allow it, but
//! it works wherever the waker never changes) is not lost either: polled with its own waker,
//! it keeps none, so the join polls it on each of its polls, as `futures-util` does.
//!
//! # The tokio budget
//!
//! A join's polls after the ones with the task's waker are rounds of the arena
//! ([*Fairness*](pinfold_arena::contract#fairness)): under tokio, once the task's coop budget
//! is spent, the polls of a join stay linear in its number of futures.
//!
//! With the `tokio-coop` feature, each future a join completes with an output spends a unit of
//! the task's tokio budget, as each output of the sets does (an error of [`try_join_all`] ends
//! the join instead). A poll that finds the budget spent returns `Pending` at once; a future completed
//! when none is left (the futures themselves may spend it) is kept, and the poll stops there.
//! Either way the join returns `Pending` with the task woken by tokio, so a join of many ready
//! futures lets the runtime's other tasks run, and the futures that poll did not reach are
//! polled by the next one. Nothing is spent on futures that stay pending: what they spend
//! themselves stays spent.
//!
//! # Allocations
//!
//! At most three allocations, counting the returned `Vec`, and none while polling, when the
//! iterator's `size_hint` is exact (a `Vec`, an array, a slice or a range, and `map` over
//! them):
//!
//! - the futures' storage, when `join_all` / `try_join_all` is called (none when the iterator
//!   is a `Vec` whose allocation `collect` reuses, as it does for `vec.into_iter()`): input
//!   `i` at index `i`, holding its future while it runs, then its output, once the future
//!   has been dropped in place;
//! - the wake table, only if a future is still running after the polls with the task's waker;
//! - the returned `Vec`, only if the outputs do not fit in the futures' storage: they reuse
//!   it when their alignment is the storage's, and the storage is at most 2 KiB or at most
//!   twice the outputs' size (so the `Vec` may have spare capacity, within those bounds).
//!
//! So a join of ready futures makes one allocation. An iterator whose size is not known in
//! advance (`filter`, say) costs what `collect` costs (one allocation, or a few as the
//! storage grows).
//!
//! A poll with the task's waker that finds every future still running writes each output
//! straight to its place in the returned `Vec` as long as every future before it finished in
//! that poll, so a join whose futures all finish in one poll writes each output once (guarded
//! by `join_all_ready_30_block_on`). The join's state is laid out so that a small join writes
//! little of it before a future stays pending (guarded by `join_all_ready_2_block_on`).
//!
//! The poll that finishes a join frees the wake table before it allocates the returned `Vec`,
//! and the futures' storage once their outputs are out: unless a finished future kept one of
//! its wakers (the table then goes with the last of them), a join never holds its futures,
//! table and outputs at once, and a finished join holds no memory (guarded by
//! `join_all_100k_block_on`).
//!
//! # Cancellation
//!
//! Dropping a [`JoinAll`] or [`TryJoinAll`] drops every future still running and every output
//! kept so far, each exactly once, in place. When [`try_join_all`] returns an error, the other
//! futures and the kept `Ok` values have been dropped already.
//!
//! # When user code panics
//!
//! User code runs in a join in a future's poll, a future's `Drop` (when it finishes, or is
//! cancelled), an output's or an error's `Drop`, and the task's waker (its `clone`, `wake`,
//! `wake_by_ref` and `drop`). A panic in any of them propagates out of `poll`; what the join
//! does then depends on where it came from:
//!
//! - **A future's poll** (including whatever the future calls there, such as the task's
//!   waker it was lent) ends the join: the future is dropped in place, then every other
//!   future and every kept output, each exactly once, and the panic propagates. The join is
//!   terminated: polling it again panics with the `polled after completion` message.
//! - **Anything else** (a future's or an output's `Drop`, the task's waker when the join
//!   registers, wakes or drops it) leaves the join consistent, and not terminated. A future
//!   that finished before the panic stays finished and keeps its output (a future whose own
//!   `Drop` panicked as it finished keeps it too), and is never polled again; an error
//!   [`try_join_all`] met stays kept, and the futures and outputs being dropped because of it
//!   are all dropped despite the panic. Polled again, the join goes on and completes with the
//!   same outputs in input order, or the same error (the first in time), as without the panic.
//!   A wake that the panic lost is the caller's to make up: a caller that catches the panic
//!   and keeps the join polls it again.
//!
//! With `std`, when several `Drop`s panic while a join drops values, the first panic
//! propagates and the others are dropped; without `std`, a second panic aborts.
//!
//! Once a join has returned `Ready` (for [`TryJoinAll`], `Ok` or `Err`), or the panic of a
//! future's poll has passed through it, it is terminated: [`FusedFuture::is_terminated`]
//! returns `true`, it holds no future and no output, and polling it again panics with the
//! message `JoinAll polled after completion` (or `TryJoinAll polled after completion`), as
//! `futures-util` does. It never returns a value twice.
//!
//! A join panics when made from `u32::MAX - 1` futures or more (the arena's limit).
//!
//! [`FusedFuture::is_terminated`]: futures_core::future::FusedFuture::is_terminated
//!
//! # Features
//!
//! `std` (default) and `tokio-coop`, as [*Features*](pinfold_arena::contract#features) states;
//! with `tokio-coop`, each future a join completes spends a unit of tokio's cooperative
//! budget, and a join whose budget runs out yields (see
//! [*The tokio budget*](#the-tokio-budget)).
#![cfg_attr(docsrs, feature(doc_cfg))]
#![forbid(unsafe_code)]
#![no_std]

extern crate alloc;
#[cfg(any(feature = "std", test))]
extern crate std;

mod input;
mod join;
mod join_all;
mod try_join_all;

pub use join_all::{JoinAll, join_all};
pub use try_join_all::{TryJoinAll, try_join_all};

/// The README's examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
