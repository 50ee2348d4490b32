//! The adaptive limit on tokio's paused clock, against a simulated backend whose latency
//! rises with the requests in flight: it finds the knee and beats a fixed low and a fixed high
//! concurrency. Virtual time is exact, so the times are asserted.

mod support;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::pin;
use std::task::Poll;
use std::time::Duration;

use futures_util::{StreamExt, stream};
use pinfold_buffer::{Adaptive, AdaptiveSettings, BufferExt, Limit, TryBufferExt};
use pinfold_testkit::panicking_waker::{WakerOps, panicking_waker};
use support::Gauge;
use tokio::time::{Instant, sleep};

/// Requests in the knee workload.
const REQUESTS: usize = 200;
/// The capacity of every buffer: the most the adaptive limit may reach.
const CAPACITY: usize = 64;

/// A backend that answers in 10 ms up to 8 requests in flight, and in
/// `10 ms × (in_flight / 8)²` above that (in flight counted as the request arrives, itself
/// included).
async fn call(backend: Gauge) {
    let _in_flight = backend.enter();
    let n = backend.now() as u64;
    let micros = if n <= 8 { 10_000 } else { 10_000 * n * n / 64 };
    sleep(Duration::from_micros(micros)).await;
}

/// The virtual time 200 requests take through `unordered_buffer(CAPACITY)`, at most `limit`
/// of them at once, each measured by `adaptive` if given; and the limit at each output.
async fn run(
    limit: Limit,
    adaptive: Option<&Adaptive<impl Fn() -> Duration>>,
) -> (Duration, Vec<usize>) {
    let backend = Gauge::default();
    let start = Instant::now();
    let mut buffer = pin!(
        stream::iter(0..REQUESTS)
            .map(|_| {
                let request = call(backend.clone());
                async move {
                    match adaptive {
                        Some(adaptive) => adaptive.measure(request).await,
                        None => request.await,
                    }
                }
            })
            .unordered_buffer(CAPACITY)
            .limit(limit.clone())
    );
    let mut limits = Vec::with_capacity(REQUESTS);
    while buffer.next().await.is_some() {
        limits.push(limit.get());
    }
    assert_eq!(limits.len(), REQUESTS);
    (start.elapsed(), limits)
}

fn paused_clock() -> impl Fn() -> Duration + Clone {
    let origin = Instant::now();
    move || origin.elapsed()
}

/// 200 requests: the adaptive limit (from 1, at most 64) takes 356 ms of virtual time, a fixed
/// 2 takes 1 s (100 rounds of 10 ms), a fixed 64 takes 1.93 s (past the knee every request is
/// slow). After its slow start and the cuts that end it, the limit saws between 7 and 10
/// around the knee of 8.
#[tokio::test(start_paused = true)]
#[cfg_attr(miri, ignore)]
async fn adaptive_finds_the_knee_and_beats_fixed_limits() {
    let adaptive = Adaptive::with_clock(AdaptiveSettings::new(CAPACITY), paused_clock());
    let (adaptive_time, limits) = run(adaptive.limit(), Some(&adaptive)).await;
    let (low, _) = run(Limit::new(2), None::<&Adaptive<fn() -> Duration>>).await;
    let (high, _) = run(Limit::new(64), None::<&Adaptive<fn() -> Duration>>).await;

    assert_eq!(adaptive_time, Duration::from_millis(356));
    assert_eq!(low, Duration::from_millis(1_000));
    assert_eq!(high, Duration::from_millis(1_930));
    assert_eq!(adaptive.baseline(), Some(Duration::from_millis(10)));
    let settled = &limits[REQUESTS / 2..];
    assert!(
        settled.iter().all(|limit| (7..=10).contains(limit)),
        "{limits:?}"
    );
    assert!(settled.contains(&8), "{limits:?}");
}

/// Eight requests that fail at once, all started in one round: the limit is cut once, by the
/// backoff (8 × 0.75 = 6), not once per failure.
#[tokio::test(start_paused = true)]
#[cfg_attr(miri, ignore)]
async fn failures_of_one_round_cut_the_limit_once() {
    let settings = AdaptiveSettings {
        initial: 8,
        ..AdaptiveSettings::new(8)
    };
    let adaptive = Adaptive::with_clock(settings, paused_clock());
    let results: Vec<Result<(), &str>> = stream::iter(0..8)
        .map(|_| {
            Ok(adaptive.measure_try(async {
                sleep(Duration::from_millis(5)).await;
                Err("refused")
            }))
        })
        .try_unordered_buffer(8)
        .limit(adaptive.limit())
        .collect()
        .await;
    assert_eq!(results, [Err("refused"); 8]);
    assert_eq!(adaptive.get(), 6);
    assert_eq!(
        adaptive.baseline(),
        None,
        "failures do not set the baseline"
    );
}

/// Latency that stays at the baseline grows the limit: by one per request in the slow start,
/// while at least half the limit is in use. Ten requests: the limit reaches 8 after the
/// first seven (rounds of 1, 2 and 4), and the last three, the source ended, use too little
/// of it to grow it.
#[tokio::test(start_paused = true)]
#[cfg_attr(miri, ignore)]
async fn steady_latency_grows_the_limit() {
    let adaptive = Adaptive::with_clock(AdaptiveSettings::new(16), paused_clock());
    let outputs: Vec<u32> = stream::iter(0..10u32)
        .map(|n| {
            adaptive.measure(async move {
                sleep(Duration::from_millis(10)).await;
                n
            })
        })
        .ordered_buffer(16)
        .limit(adaptive.limit())
        .collect()
        .await;
    assert_eq!(outputs, (0..10).collect::<Vec<_>>());
    assert_eq!(adaptive.get(), 8);
}

#[test]
#[should_panic = "Adaptive: the settings need 1 <= min <= initial <= max"]
fn settings_out_of_order_panic() {
    let settings = AdaptiveSettings {
        initial: 9,
        ..AdaptiveSettings::new(8)
    };
    let _ = Adaptive::with_clock(settings, || Duration::ZERO);
}

#[test]
#[should_panic = "Adaptive: baseline_rounds must be at least 1"]
fn a_baseline_of_no_rounds_panics() {
    let settings = AdaptiveSettings {
        baseline_rounds: 0,
        ..AdaptiveSettings::new(8)
    };
    let _ = Adaptive::with_clock(settings, || Duration::ZERO);
}

/// A measured future finishes and the limit grows, which wakes a second buffer that waits
/// for a unit with a task waker that panics: the panic is that task's, and the finished
/// future's output still comes out of the first buffer.
#[test]
fn a_raise_that_wakes_a_panicking_waker_loses_no_measured_output() {
    let settings = AdaptiveSettings {
        initial: 1,
        ..AdaptiveSettings::new(4)
    };
    let adaptive = Adaptive::with_clock(settings, || Duration::ZERO);
    let (gate, state) = support::Gate::new(7);
    let mut first = stream::iter([adaptive.measure(gate)])
        .unordered_buffer(4)
        .limit(adaptive.limit());
    let mut second = stream::iter([async { 8 }])
        .unordered_buffer(4)
        .limit(adaptive.limit());
    assert!(support::poll_once(&mut first).is_pending());
    let (waker, switches) = panicking_waker();
    assert!(support::poll_with(&mut second, &waker).is_pending());
    switches.panic_once(WakerOps::ANY_WAKE);
    state.open();
    let polled = catch_unwind(AssertUnwindSafe(|| support::poll_once(&mut first)));
    assert_eq!(polled.ok(), Some(Poll::Ready(Some(7))));
    assert_eq!(switches.panics(), 1, "the waiting task's waker was woken");
    assert_eq!(adaptive.get(), 2);
    assert_eq!(support::poll_once(&mut second), Poll::Ready(Some(8)));
}

/// A task's waker that reads the adaptive limit's baseline as it is woken.
struct ReadsTheBaseline(Adaptive<fn() -> Duration>);

impl std::task::Wake for ReadsTheBaseline {
    fn wake(self: std::sync::Arc<Self>) {
        let _ = self.0.baseline();
    }
}

/// A measured future finishes and the limit grows, which wakes a second buffer's task, whose
/// waker reads the adaptive limit: no user code runs under the limit's lock, so it does not
/// deadlock (a thread, so that a deadlock fails the test instead of hanging it).
#[test]
#[cfg_attr(miri, ignore)]
fn a_waker_woken_by_a_raise_may_read_the_adaptive_limit() {
    let (done, finished) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let settings = AdaptiveSettings {
            initial: 1,
            ..AdaptiveSettings::new(4)
        };
        let zero: fn() -> Duration = || Duration::ZERO;
        let adaptive = Adaptive::with_clock(settings, zero);
        let (gate, state) = support::Gate::new(7);
        let mut first = stream::iter([adaptive.measure(gate)])
            .unordered_buffer(4)
            .limit(adaptive.limit());
        let mut second = stream::iter([async { 8 }])
            .unordered_buffer(4)
            .limit(adaptive.limit());
        assert!(support::poll_once(&mut first).is_pending());
        let waker = std::task::Waker::from(std::sync::Arc::new(ReadsTheBaseline(adaptive)));
        assert!(support::poll_with(&mut second, &waker).is_pending());
        state.open();
        let output = support::poll_once(&mut first);
        done.send(output).unwrap();
    });
    let output = finished
        .recv_timeout(Duration::from_secs(30))
        .expect("the raise deadlocked");
    assert_eq!(output, Poll::Ready(Some(7)));
}

/// An infinite tolerance (or one so large that the threshold is past any duration) counts no
/// latency as congestion, only failures: futures that each take twice as long as the one before
/// finish with their outputs, and the limit never falls; a failure cuts it.
#[test]
fn a_tolerance_past_any_duration_counts_only_failures() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU64, Ordering};
    for tolerance in [f64::INFINITY, f64::MAX] {
        let settings = AdaptiveSettings {
            initial: 4,
            tolerance,
            ..AdaptiveSettings::new(8)
        };
        // Each read of the clock is a second later than the last: every latency is longer
        // than any before it.
        let ticks = Arc::new(AtomicU64::new(0));
        let clock = {
            let ticks = ticks.clone();
            move || Duration::from_secs(ticks.fetch_add(1, Ordering::Relaxed))
        };
        let adaptive = Adaptive::with_clock(settings, clock);
        let outputs: Vec<u32> = futures_executor::block_on(
            stream::iter(0..20u32)
                .map(|n| adaptive.measure(async move { n }))
                .unordered_buffer(8)
                .limit(adaptive.limit())
                .collect(),
        );
        assert_eq!(outputs.len(), 20, "tolerance {tolerance}: every output");
        assert!(adaptive.get() >= 4, "tolerance {tolerance}: never cut");
        let failed: Vec<Result<u32, ()>> = futures_executor::block_on(
            stream::iter([adaptive.measure_try(async { Err::<u32, ()>(()) })])
                .unordered_buffer(8)
                .limit(adaptive.limit())
                .collect(),
        );
        assert_eq!(failed, [Err(())]);
        assert!(
            adaptive.get() < 8,
            "tolerance {tolerance}: a failure cuts the limit"
        );
    }
}
