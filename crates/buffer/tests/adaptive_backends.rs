//! The adaptive limit against the backends a service meets, on tokio's paused clock (so the
//! times are exact): a knee, a backend that gains capacity, a brief and a lasting slowdown,
//! an application that is itself the bottleneck for a while, two buffers that share one limit,
//! and a weighted queue whose group the limit steers. Each is compared with the best fixed limit on the same backend.

mod support;

use std::sync::Arc;
use std::time::Duration;

use futures_util::{StreamExt, stream};
use pinfold_buffer::{Adaptive, AdaptiveSettings, BufferExt, Limit};
use support::Gauge;
use tokio::time::{Instant, sleep};

/// The most any buffer here may run.
const CAPACITY: usize = 64;

/// The fixed limits an adaptive run is compared with.
const FIXED: [usize; 7] = [1, 2, 4, 8, 16, 32, 64];

/// A backend that answers in `10 ms × slowdown` while at most `capacity` requests are in
/// flight, and in `10 ms × slowdown × n / capacity` with `n` in flight (counted as the request
/// arrives, itself included); `capacity` and `slowdown` may change with the time since the
/// run began.
#[derive(Clone)]
struct Backend {
    in_flight: Gauge,
    start: Instant,
    capacity: fn(Duration) -> u64,
    slowdown: fn(Duration) -> u64,
}

impl Backend {
    fn new(capacity: fn(Duration) -> u64, slowdown: fn(Duration) -> u64) -> Self {
        Self {
            in_flight: Gauge::default(),
            start: Instant::now(),
            capacity,
            slowdown,
        }
    }

    async fn call(self) {
        let _in_flight = self.in_flight.enter();
        let now = self.start.elapsed();
        let n = self.in_flight.now() as u64;
        let capacity = (self.capacity)(now);
        let micros = 10_000 * (self.slowdown)(now) * n.max(capacity) / capacity;
        sleep(Duration::from_micros(micros)).await;
    }
}

fn paused_clock() -> impl Fn() -> Duration + Clone {
    let origin = Instant::now();
    move || origin.elapsed()
}

/// The virtual time `requests` requests to a new `backend` take through
/// `unordered_buffer(CAPACITY)` steered by `limit`, each measured by `adaptive` if given; and
/// the most that were in flight at once.
async fn run(
    requests: usize,
    backend: Backend,
    limit: Limit,
    adaptive: Option<&Adaptive<impl Fn() -> Duration>>,
) -> (Duration, usize) {
    let start = Instant::now();
    let gauge = backend.in_flight.clone();
    let done = stream::iter(0..requests)
        .map(|_| {
            let request = backend.clone().call();
            async move {
                match adaptive {
                    Some(adaptive) => adaptive.measure(request).await,
                    None => request.await,
                }
            }
        })
        .unordered_buffer(CAPACITY)
        .limit(limit)
        .count()
        .await;
    assert_eq!(done, requests);
    (start.elapsed(), gauge.max())
}

/// The adaptive run's time and the best fixed limit's (and which it was), on backends made
/// by `backend`.
async fn compare(requests: usize, backend: impl Fn() -> Backend) -> (Duration, Duration, usize) {
    let adaptive = Adaptive::with_clock(AdaptiveSettings::new(CAPACITY), paused_clock());
    let (adaptive_time, _) = run(requests, backend(), adaptive.limit(), Some(&adaptive)).await;
    let mut best = (Duration::MAX, 0);
    for fixed in FIXED {
        let none = None::<&Adaptive<fn() -> Duration>>;
        let (time, _) = run(requests, backend(), Limit::new(fixed), none).await;
        best = best.min((time, fixed));
    }
    (adaptive_time, best.0, best.1)
}

/// Asserts the adaptive run within 1.3 times the best fixed limit's time.
fn assert_near_best((adaptive, best, fixed): (Duration, Duration, usize)) {
    assert!(
        adaptive.as_secs_f64() <= 1.3 * best.as_secs_f64(),
        "adaptive took {adaptive:?}, the best fixed limit ({fixed}) {best:?}"
    );
}

/// A knee at 8: 2,000 requests. Past the knee every request waits longer, so a fixed 8 (or
/// more) takes 2.5 s, and the adaptive limit keeps within 1.3 times that.
#[tokio::test(start_paused = true)]
#[cfg_attr(miri, ignore)]
async fn a_knee() {
    let times = compare(2_000, || Backend::new(|_| 8, |_| 1)).await;
    assert_eq!(times.1, Duration::from_millis(2_500));
    assert_near_best(times);
}

/// The backend's capacity rises from 8 to 32 at 400 ms: 6,000 requests. The limit follows it
/// up (a fixed 8 takes 7.5 s).
#[tokio::test(start_paused = true)]
#[cfg_attr(miri, ignore)]
async fn capacity_that_rises() {
    let capacity = |now: Duration| {
        if now < Duration::from_millis(400) {
            8
        } else {
            32
        }
    };
    let times = compare(6_000, || Backend::new(capacity, |_| 1)).await;
    assert_near_best(times);
}

/// The backend is 5 times slower from 300 to 400 ms: 2,000 requests. The limit recovers when
/// it does.
#[tokio::test(start_paused = true)]
#[cfg_attr(miri, ignore)]
async fn a_brief_slowdown() {
    let slowdown = |now: Duration| {
        if (Duration::from_millis(300)..Duration::from_millis(400)).contains(&now) {
            5
        } else {
            1
        }
    };
    let times = compare(2_000, || Backend::new(|_| 8, slowdown)).await;
    assert_near_best(times);
}

/// The backend is twice as slow for good from 300 ms: 1,500 requests. The baseline rises to the
/// new latency, so the limit climbs back to the knee instead of staying at its least.
#[tokio::test(start_paused = true)]
#[cfg_attr(miri, ignore)]
async fn a_lasting_slowdown() {
    let slowdown = |now: Duration| {
        if now < Duration::from_millis(300) {
            1
        } else {
            2
        }
    };
    let adaptive = Adaptive::with_clock(AdaptiveSettings::new(CAPACITY), paused_clock());
    let (_, _) = run(
        1_500,
        Backend::new(|_| 8, slowdown),
        adaptive.limit(),
        Some(&adaptive),
    )
    .await;
    assert_eq!(adaptive.baseline(), Some(Duration::from_millis(20)));
    assert!(
        adaptive.get() >= 6,
        "the limit stayed at {}",
        adaptive.get()
    );
    let times = compare(1_500, || Backend::new(|_| 8, slowdown)).await;
    assert_near_best(times);
}

/// For four seconds the application, not the backend, is the bottleneck: it makes one request
/// every 20 ms, so one is in flight. Then 500 come at once. The limit did not grow while it
/// was not what held the requests back, so the burst runs at most twice the knee into the
/// backend.
#[tokio::test(start_paused = true)]
#[cfg_attr(miri, ignore)]
async fn an_application_limited_phase_then_a_burst() {
    let adaptive = Adaptive::with_clock(AdaptiveSettings::new(CAPACITY), paused_clock());
    let backend = Backend::new(|_| 8, |_| 1);
    // Finds the knee first.
    run(500, backend.clone(), adaptive.limit(), Some(&adaptive)).await;
    let before = adaptive.get();
    let trickle = stream::iter(0..200).then(|_| async {
        sleep(Duration::from_millis(20)).await;
    });
    let burst = stream::iter(0..500).map(|_| ());
    let gauge = Gauge::default();
    let done = trickle
        .chain(burst)
        .map(|()| {
            let request = backend.clone().call();
            let gauge = gauge.clone();
            adaptive.measure(async move {
                let _in_flight = gauge.enter();
                request.await;
            })
        })
        .unordered_buffer(CAPACITY)
        .limit(adaptive.limit())
        .count()
        .await;
    assert_eq!(done, 700);
    assert!(
        gauge.max() <= 16,
        "{} in flight after the application-limited phase (the limit was {before})",
        gauge.max()
    );
}

/// Two buffers share one limit of 5: together they never run more than 5, and they do run 5.
/// The units of the one that ends first go to the other.
#[tokio::test(start_paused = true)]
#[cfg_attr(miri, ignore)]
async fn two_buffers_share_one_limit() {
    let limit = Limit::new(5);
    let gauge = Gauge::default();
    let buffer = |requests: usize| {
        let gauge = gauge.clone();
        stream::iter(0..requests)
            .map(move |_| {
                let gauge = gauge.clone();
                async move {
                    let _running = gauge.enter();
                    sleep(Duration::from_millis(10)).await;
                }
            })
            .unordered_buffer(8)
            .limit(limit.clone())
            .count()
    };
    let start = Instant::now();
    let (a, b) = tokio::join!(buffer(20), buffer(80));
    assert_eq!((a, b), (20, 80));
    assert_eq!(gauge.max(), 5);
    // 100 futures of 10 ms, 5 at a time: the budget never idles.
    assert_eq!(start.elapsed(), Duration::from_millis(200));
    assert_eq!(limit.in_use(), 0);
}

/// Two buffers share one adaptive limit, on one backend with a knee at 8: together they never
/// run more than the limit allowed when each future started.
#[tokio::test(start_paused = true)]
#[cfg_attr(miri, ignore)]
async fn two_buffers_share_one_adaptive_limit() {
    let adaptive = Adaptive::with_clock(AdaptiveSettings::new(CAPACITY), paused_clock());
    let backend = Backend::new(|_| 8, |_| 1);
    let over = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let buffer = |requests: usize| {
        let (backend, measuring, over) = (backend.clone(), adaptive.clone(), over.clone());
        let limit = adaptive.limit();
        stream::iter(0..requests)
            .map(move |_| {
                let (backend, limit, over) = (backend.clone(), measuring.limit(), over.clone());
                measuring.measure(async move {
                    // In flight as this one starts, itself included, against the limit then
                    // (a lowering lets those running finish, so only a start can exceed it).
                    if backend.in_flight.now() + 1 > limit.get().max(limit.in_use()) {
                        over.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    }
                    backend.call().await;
                })
            })
            .unordered_buffer(CAPACITY)
            .limit(limit)
            .count()
    };
    let (a, b) = tokio::join!(buffer(300), buffer(300));
    assert_eq!((a, b), (300, 300));
    assert_eq!(over.load(std::sync::atomic::Ordering::Relaxed), 0);
    assert!(backend.in_flight.max() <= CAPACITY);
    assert_eq!(adaptive.limit().in_use(), 0);
}

/// A buffer dropped with futures running gives their units back: the next buffer on the same
/// limit runs at its whole value.
#[tokio::test(start_paused = true)]
#[cfg_attr(miri, ignore)]
async fn a_dropped_buffer_gives_its_units_back() {
    let limit = Limit::new(3);
    let mut first = Box::pin(
        stream::iter(0..10)
            .map(|_| std::future::pending::<()>())
            .unordered_buffer(8)
            .limit(limit.clone()),
    );
    let polled = futures_util::poll!(first.next());
    assert!(polled.is_pending());
    assert_eq!(limit.in_use(), 3);
    drop(first);
    assert_eq!(limit.in_use(), 0);
    let gauge = Gauge::default();
    let done = stream::iter(0..6)
        .map(|_| {
            let gauge = gauge.clone();
            async move {
                let _running = gauge.enter();
                sleep(Duration::from_millis(10)).await;
            }
        })
        .unordered_buffer(8)
        .limit(limit.clone())
        .count()
        .await;
    assert_eq!(done, 6);
    assert_eq!(gauge.max(), 3);
}

/// A backend with a gentle knee: 10 ms up to 8 requests in flight, then 5 % more for each
/// request above 8 (counted as it arrives, itself included). It never slows down, so the
/// baseline stays its unloaded latency: a baseline that rose with the latency of the load
/// the limit itself puts on it would let the limit climb with it.
#[tokio::test(start_paused = true)]
#[cfg_attr(miri, ignore)]
async fn a_gentle_knee_does_not_raise_the_baseline() {
    let adaptive = Adaptive::with_clock(AdaptiveSettings::new(CAPACITY), paused_clock());
    let in_flight = Gauge::default();
    let done = stream::iter(0..20_000)
        .map(|_| {
            let in_flight = in_flight.clone();
            adaptive.measure(async move {
                let _in_flight = in_flight.enter();
                let above = (in_flight.now() as u64).saturating_sub(8);
                sleep(Duration::from_micros(10_000 + 500 * above)).await;
            })
        })
        .unordered_buffer(CAPACITY)
        .limit(adaptive.limit())
        .count()
        .await;
    assert_eq!(done, 20_000);
    assert_eq!(adaptive.baseline(), Some(Duration::from_millis(10)));
}

/// The virtual time `requests` requests to a new `backend`, each of weight 1 in the group
/// `"db"`, take through `future_queue_grouped(CAPACITY, [("db", CAPACITY)])` with the group
/// steered by `limit`, each measured by `adaptive` if given; one item in four is local work
/// of weight 2 and no group (1 ms, not on the backend).
async fn run_group(
    requests: usize,
    backend: Backend,
    limit: Limit,
    adaptive: Option<&Adaptive<impl Fn() -> Duration>>,
) -> Duration {
    let start = Instant::now();
    let done = stream::iter(0..requests)
        .map(|i| {
            let request = backend.clone().call();
            let (weight, group) = if i % 4 == 3 {
                (2, None)
            } else {
                (1, Some("db"))
            };
            let future = async move {
                if group.is_none() {
                    sleep(Duration::from_millis(1)).await;
                    return;
                }
                match adaptive {
                    Some(adaptive) => adaptive.measure(request).await,
                    None => request.await,
                }
            };
            (weight, group, future)
        })
        .future_queue_grouped(CAPACITY, [("db", CAPACITY)])
        .group_limit("db", limit)
        .count()
        .await;
    assert_eq!(done, requests);
    start.elapsed()
}

/// A group of a weighted queue steered by an adaptive limit, against a backend with a knee at
/// 8: within 1.3 times the best fixed group limit's time, as an unordered buffer is.
#[tokio::test(start_paused = true)]
#[cfg_attr(miri, ignore)]
async fn a_knee_behind_a_weighted_queues_group() {
    let adaptive = Adaptive::with_clock(AdaptiveSettings::new(CAPACITY), paused_clock());
    let backend = Backend::new(|_| 8, |_| 1);
    let adaptive_time = run_group(2_000, backend, adaptive.limit(), Some(&adaptive)).await;
    assert_eq!(adaptive.limit().in_use(), 0);
    let mut best = (Duration::MAX, 0);
    for fixed in FIXED {
        let none = None::<&Adaptive<fn() -> Duration>>;
        let time = run_group(2_000, Backend::new(|_| 8, |_| 1), Limit::new(fixed), none).await;
        best = best.min((time, fixed));
    }
    assert_near_best((adaptive_time, best.0, best.1));
}
