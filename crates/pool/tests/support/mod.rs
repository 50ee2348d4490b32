//! The test kit's PRNG, wakers and pollers (see `pinfold-testkit`), and what is particular to
//! the pool's tests: blocking on a future with a deadlock guard, and the bytes a writer puts
//! in a buffer so that a reader can tell whose they are.
// Each test file uses a different subset of these.
#![allow(dead_code, unused_imports)]

use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll, Wake, Waker};
use std::thread::{self, Thread};
use std::time::{Duration, Instant};

pub(crate) use pinfold_testkit::contract::panic_message;
pub(crate) use pinfold_testkit::future::{poll_once, poll_with};
pub(crate) use pinfold_testkit::rng::XorShift;
pub(crate) use pinfold_testkit::waker::{WakeCounter, counting_waker};

/// How long a test waits for a wake before it calls the wake lost: a deadlock guard, far above
/// any real delay (and reached at once under Miri, whose clock jumps when every thread
/// sleeps), not a timing assertion.
pub(crate) const LOST_WAKE: Duration = Duration::from_secs(60);

/// Runs `fut` to completion on this thread, parking while it is pending. Panics if it stays
/// pending and nothing wakes it for [`LOST_WAKE`], so a lost wake fails the test instead of
/// hanging it.
pub(crate) fn block_on<F: Future>(fut: F) -> F::Output {
    struct Unpark {
        thread: Thread,
        woken: AtomicBool,
    }
    impl Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.wake_by_ref();
        }
        fn wake_by_ref(self: &Arc<Self>) {
            self.woken.store(true, Ordering::SeqCst);
            self.thread.unpark();
        }
    }
    let unpark = Arc::new(Unpark {
        thread: thread::current(),
        woken: AtomicBool::new(false),
    });
    let waker = Waker::from(unpark.clone());
    let mut cx = Context::from_waker(&waker);
    let mut fut = pin!(fut);
    loop {
        if let Poll::Ready(out) = fut.as_mut().poll(&mut cx) {
            return out;
        }
        let parked = Instant::now();
        while !unpark.woken.swap(false, Ordering::SeqCst) {
            assert!(
                parked.elapsed() < LOST_WAKE,
                "pending and not woken for {LOST_WAKE:?}: a wake was lost"
            );
            thread::park_timeout(LOST_WAKE);
        }
    }
}

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
