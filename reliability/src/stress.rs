//! The stress runner: a primitive consumes beacons on a multi-thread tokio runtime while
//! [`WAKER_THREADS`] threads wake them; every output must arrive once (in input order for the
//! ordered primitives), every beacon must be dropped once, and nothing may hang (see
//! `tests/stress.rs`).

use std::future::Future;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use crate::beacon::{Beacon, Pace, WAKER_THREADS, beacons, drive};
use crate::sizes::time_limit;
use crate::watchdog::Watchdog;

/// How long a stress test may take before it fails (times `PINFOLD_TIMEOUT_SCALE`).
pub const LIMIT: Duration = Duration::from_secs(300);

/// What a consumer saw: each id's number of outputs, in the order they came.
#[derive(Debug, Default)]
pub struct Seen {
    order: Mutex<Vec<usize>>,
    count: AtomicUsize,
}

impl Seen {
    /// Records an output of beacon `id`.
    pub fn record(&self, id: usize) {
        self.order.lock().unwrap().push(id);
        self.count.fetch_add(1, Ordering::SeqCst);
    }
}

/// Runs `consume` (which takes every beacon, polls them with some primitive and records each
/// output in `seen`) on a multi-thread runtime while `WAKER_THREADS` threads send `wakes` wakes;
/// fails if it takes longer than the limit or if any output is missing, repeated or (with
/// `ordered`) out of input order.
pub fn stress<C, Fut>(name: &str, wakes: u64, pace: Pace, ordered: bool, consume: C)
where
    C: FnOnce(Vec<Beacon>, Arc<Seen>) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    let limit = time_limit(LIMIT);
    let _watchdog = Watchdog::arm(name, LIMIT + Duration::from_secs(60));
    let started = Instant::now();
    let n = pace.futures();
    let (futures, states) = beacons(n, wakes);
    let seen = Arc::new(Seen::default());
    let stop = AtomicBool::new(false);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_time()
        .build()
        .expect("build a tokio runtime");
    let consumer = consume(futures, seen.clone());
    let (outcome, sent) = thread::scope(|scope| {
        let drivers: Vec<_> = (0..WAKER_THREADS)
            .map(|t| {
                let (states, stop) = (&states, &stop);
                scope.spawn(move || drive(t, pace, states, stop))
            })
            .collect();
        let outcome = runtime.block_on(async {
            let task = tokio::spawn(consumer);
            tokio::time::timeout(limit, task).await
        });
        // On a timeout, the drivers may wait for futures that will never be polled.
        stop.store(true, Ordering::SeqCst);
        let sent: u64 = drivers.into_iter().map(|d| d.join().unwrap()).sum();
        (outcome, sent)
    });
    drop(runtime);
    let took = started.elapsed();
    match outcome {
        Err(_) => panic!(
            "{name}: not done after {limit:?}: {} of {n} outputs, {sent} wakes sent \
             (a lost wake?)",
            seen.count.load(Ordering::SeqCst)
        ),
        Ok(Err(join_error)) => std::panic::resume_unwind(join_error.into_panic()),
        Ok(Ok(())) => {}
    }
    let order = seen.order.lock().unwrap().clone();
    if ordered {
        assert!(
            order.iter().copied().eq(0..n),
            "{name}: outputs out of input order"
        );
    } else {
        let mut sorted = order.clone();
        sorted.sort_unstable();
        assert!(
            sorted.iter().copied().eq(0..n),
            "{name}: an output is missing or repeated"
        );
    }
    let expected_wakes = n as u64 * (wakes / n as u64).max(1);
    assert_eq!(sent, expected_wakes, "{name}: wakes sent");
    for (id, state) in states.iter().enumerate() {
        assert_eq!(state.drops(), 1, "{name}: future {id} dropped");
    }
    eprintln!(
        "{name} ({pace:?}): {n} futures, {sent} wakes from {WAKER_THREADS} threads, in \
         {took:.2?}"
    );
}
