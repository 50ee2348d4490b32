//! [`join_all`] and [`try_join_all`]: wait for many futures at once, and get their outputs in
//! input order, on one waker-slot arena.
//!
//! They are drop-in replacements for `futures_util::future::{join_all, try_join_all}`, without
//! the problems users of `futures-util` and `futures-buffered` have run into:
//!
//! - **Only the woken futures are polled**, at every size. `futures-util` polls every future on
//!   every wake below 30 futures (quadratic work) and switches to a `FuturesOrdered` above.
//!   Here each future has its own waker, so `n` futures that each wait for one wake are polled
//!   `2n` times in all.
//! - **The first error wins at once.** [`try_join_all`] returns the first `Err` *in time*,
//!   whatever its position, and drops every other future right then; `futures-util` surfaces
//!   an error only after every earlier future has finished (futures-rs #2866).
//! - **Nothing leaks, nothing is read uninitialised.** Dropping a [`JoinAll`] or
//!   [`TryJoinAll`] at any point drops every running future and every kept output exactly
//!   once; `futures-buffered` 0.2.12 leaked finished outputs on cancellation. The crate has no
//!   `unsafe` code at all.
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
//! # How it works
//!
//! The futures go into one [`Arena`](pinfold_arena::Arena), input `i` in slot `i`. Each slot
//! holds its future while it runs; when the future finishes, it is dropped in place and its
//! output is kept in the same slot. Once every slot holds an output, the outputs are moved out
//! in slot order into the returned `Vec`. The arena polls only the slots whose wakers fired.
//!
//! # Allocations
//!
//! Two for the arena, when `join_all` / `try_join_all` is called, and one for the returned
//! `Vec`: three in all, and none while polling. That holds when the iterator's `size_hint` is
//! exact (a `Vec`, an array, a slice or a range, and `map` over them). An iterator whose size
//! is not known in advance (`filter`, say) is first collected into a `Vec` to count it: that
//! costs what `collect` costs (one allocation, or a few as the `Vec` grows) on top, and the
//! `Vec` is freed before `join_all` returns.
//!
//! An iterator that yields more futures than its exact `size_hint` promised (a bug in the
//! iterator) still gets a correct join: the extra futures go into a second arena.
//!
//! # Fairness
//!
//! One poll polls each woken future at most once. It yields (wakes its task and returns
//! `Pending`) once it has polled as many futures as it holds, or once two futures woke
//! themselves during their own poll, so a future that always wakes itself cannot starve the
//! executor.
//!
//! # Cancellation and panics
//!
//! Dropping a [`JoinAll`] or [`TryJoinAll`] drops every future still running and every output
//! kept so far, each exactly once, in place. When [`try_join_all`] returns an error, the other
//! futures and the kept `Ok` values have been dropped already.
//!
//! If a future panics while being polled, it is dropped in place, then every other future and
//! every kept output is dropped, and the panic propagates out of `poll`.
//!
//! # Polling after completion
//!
//! Once a join has returned `Ready` (for [`TryJoinAll`], `Ok` or `Err`), or a future's panic
//! has passed through it, it is terminated: [`FusedFuture::is_terminated`] returns `true`, it
//! holds no future and no output, and polling it again panics with the message
//! `JoinAll polled after completion` (or `TryJoinAll polled after completion`), as
//! `futures-util` does. It never returns a value twice.
//!
//! [`FusedFuture::is_terminated`]: futures_core::future::FusedFuture::is_terminated
#![forbid(unsafe_code)]

mod join;
mod join_all;
mod slot;
mod try_join_all;

pub use join_all::{JoinAll, join_all};
pub use try_join_all::{TryJoinAll, try_join_all};

/// The README's examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
