//! The test kit's PRNG, wakers, pollers and `block_on` with its deadlock guard (see
//! `pinfold-testkit`), and what is particular to the pool's tests: a paused tokio runtime, and
//! the bytes a writer puts in a buffer so that a reader can tell whose they are.
// Each test file uses a different subset of these.
#![allow(dead_code, unused_imports)]

pub(crate) use pinfold_testkit::contract::panic_message;
pub(crate) use pinfold_testkit::future::{block_on, lost_wake, poll_once, poll_with};
pub(crate) use pinfold_testkit::rng::XorShift;
pub(crate) use pinfold_testkit::waker::{WakeCounter, counting_waker};

/// A current-thread tokio runtime with its clock paused: timers fire as soon as every task
/// waits, so a timeout guards against a hang without slowing the test, and is deterministic.
pub(crate) fn paused_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .expect("a current-thread runtime")
}

/// Byte `at` of what writer `writer` puts in its `round`th buffer: different writers, rounds
/// and positions give different bytes, so a reader sees whose bytes it got.
pub(crate) fn pattern_byte(writer: u64, round: u64, at: usize) -> u8 {
    (writer.wrapping_mul(101) ^ round.wrapping_mul(13) ^ (at as u64).wrapping_mul(7)) as u8
}

/// The first `len` bytes of writer `writer`'s `round`th buffer (see [`pattern_byte`]).
pub(crate) fn pattern(writer: u64, round: u64, len: usize) -> Vec<u8> {
    (0..len).map(|at| pattern_byte(writer, round, at)).collect()
}
