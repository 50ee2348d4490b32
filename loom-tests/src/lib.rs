//! Loom models of the arena's wake protocol and of the buffer pool, driven through the public
//! API.
//!
//! Each file in `tests/` is one scenario: the main model thread owns an arena (or a
//! `FuturesUnorderedBounded`, or a `GrowableArena` of two groups) and polls it, while two
//! spawned threads fire its wakers. The `pool_*` files race a `BufferPool`'s releases, packet
//! drops and cancelled waiters against its acquires, with loom's `block_on` as the executor. The
//! `buffer_*` files run buffers that share one `Limit`, each under `block_on` on a thread of
//! its own, with the buffer crate's `loom` feature substituting loom's atomics and lock in the
//! limit. The models are compiled only under `--cfg pinfold_loom`, where the arena's
//! `loom` feature substitutes loom's atomics, `Arc`, `UnsafeCell` and allocator (so a leaked wake
//! table fails the model); in a normal build this crate and its tests are empty.
//!
//! Run them with `cargo xtask loom` (`LOOM_MAX_PREEMPTIONS=2`), or `cargo xtask loom
//! --preemptions 3` for a deeper search.
//!
//! The support code here:
//!
//! - `check` runs a model with loom's bounds from the environment (at most 2 preemptions when
//!   `LOOM_MAX_PREEMPTIONS` is unset) and prints how many iterations it explored, and how long
//!   that took; `check_with_branches` allows a model more steps (a pool of many buffers).
//! - `Parent` is the task that polls the set: a waker that counts its wakes in a loom atomic,
//!   and is leak-tracked by loom.
//! - `Workers` spawns the waking threads and counts those that have finished, so the owner
//!   can tell "not woken yet" from "never going to be woken".
//! - `Leaf` is a value that stays pending until another thread fires its `Probe`, and
//!   counts its polls and drops; a `Spinner` polls one leaf of an arena as a value that wakes
//!   itself.
//! - `drive` polls a set to the end the way an executor would, and fails the model on a lost
//!   wake: a `Pending` after which every worker finished and the parent was never woken.
//! - `spawn_releaser` and `spawn_waiter` are the pool models' release and the waiter that
//!   checks the buffer it is handed.
//! - `write`, `drain` and `assert_delivered` are the writer models' handle, flusher and check.
#![forbid(unsafe_code)]

#[cfg(pinfold_loom)]
mod check;
#[cfg(pinfold_loom)]
mod drive;
#[cfg(pinfold_loom)]
mod leaf;
#[cfg(pinfold_loom)]
mod parent;
#[cfg(pinfold_loom)]
mod waiting;
#[cfg(pinfold_loom)]
mod workers;
#[cfg(pinfold_loom)]
mod writing;

#[cfg(pinfold_loom)]
pub use check::{check, check_with_branches};
#[cfg(pinfold_loom)]
pub use drive::{MAX_POLLS, drive};
#[cfg(pinfold_loom)]
pub use leaf::{
    Leaf, Probe, Spinner, finish_keeping_a_waker, pend_keeping_a_waker, poll_arena, poll_leaf,
};
#[cfg(pinfold_loom)]
pub use parent::Parent;
#[cfg(pinfold_loom)]
pub use waiting::{spawn_releaser, spawn_waiter};
#[cfg(pinfold_loom)]
pub use workers::Workers;
#[cfg(pinfold_loom)]
pub use writing::{assert_delivered, drain, write, write_now};
