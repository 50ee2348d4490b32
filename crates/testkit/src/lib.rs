//! What pinfold's tests share, written once: futures and wakers that let a test see what a set,
//! a join or a buffer does with them, a counting allocator, and a deterministic PRNG.
//!
//! - [`probe`]: futures that count their polls and drops, keep the waker of their latest poll,
//!   and assert they never moved once pinned ([`Probe`](probe::Probe)), or that wake
//!   themselves ([`Spinner`](probe::Spinner)).
//! - [`tracked`]: a stream or future around another that counts its polls, end and drop,
//!   and can panic in a chosen poll ([`Tracked`](tracked::Tracked)).
//! - [`waker`]: a waker that counts its wakes.
//! - [`stream`] and [`future`]: one poll with a given or a no-op waker, and the loops built on
//!   it (drain a stream, settle it, finish probes in batches, block on a future with a guard
//!   against lost wakes), and what a merge of numbered streams must give.
//! - [`channels`]: oneshot channels completed from several std threads at once.
//! - [`alloc`]: a counting global allocator. A global allocator belongs to one binary, so each
//!   test binary that counts declares its own static of this type.
//! - [`rng`]: xorshift64, for shuffles and delays that are the same on every run.
//! - [`panicking_waker`]: a task waker whose `clone`, `wake`, `wake_by_ref` or `drop` panics
//!   on command, once, or at the call a [`FaultClock`](fault_clock::FaultClock) picks.
//! - [`fault_clock`]: counts the calls into user code in a run and makes the k-th panic.
//! - [`panic_hook`]: a panic hook without backtraces under Miri, for tests that panic while a
//!   panic unwinds.
//! - [`panic_site`]: the file and line a panic reports, to check a `#[track_caller]` method.
//! - [`contract`]: what every keyed set of futures promises, written once as generic
//!   functions that the bounded and the growable set's test files run over their own type
//!   ([`contract_tests!`] declares the tests), and [`borrowing_tests!`] for the cases that
//!   need the set type itself.
//! - [`cases`]: [`tests_for_each!`], one `#[test]` per generic case and per type under test.
//! - [`auto_traits`]: `Send`, `Sync`, `Unpin` and the unwind-safety traits, present or absent,
//!   checked at compile time.
//!
//! Nothing here depends on a pinfold crate, so every pinfold crate, `pinfold-arena` included,
//! can take this one as a dev-dependency.
//!
//! ```
//! use pinfold_testkit::probe::Probe;
//! use pinfold_testkit::future::poll_once;
//!
//! let (probe, state) = Probe::new(7);
//! let mut probe = Box::pin(probe);
//! assert!(poll_once(&mut probe).is_pending());
//! state.finish();
//! assert_eq!(poll_once(&mut probe), std::task::Poll::Ready(7));
//! assert_eq!(state.polls(), 2);
//! drop(probe);
//! assert_eq!(state.drops(), 1);
//! ```

// Only the counting allocator (`alloc`) and the panicking waker's vtable (`panicking_waker`)
// need unsafe code, and each allows it for itself.
#![deny(unsafe_code)]

pub mod alloc;
pub mod auto_traits;
pub mod cases;
pub mod channels;
pub mod contract;
pub mod fault_clock;
pub mod future;
pub mod panic_hook;
pub mod panic_site;
pub mod panicking_waker;
pub mod probe;
pub mod rng;
pub mod stream;
pub mod tracked;
pub mod waker;
