//! A `Limit` changes a buffer's concurrency while it runs: lowering lets the running futures
//! finish and starts none until fewer run than the new limit; raising starts more, and wakes a
//! buffer parked for room.

mod support;

use std::future::pending;
use std::pin::pin;
use std::sync::{Arc, Mutex};
use std::task::{Poll, Waker};
use std::time::Duration;

use futures_util::{StreamExt, stream};
use pinfold_buffer::{BufferExt, Limit, TryBufferExt};
use support::{CountingSource, Gate, Gauge, counting_waker, poll_once, poll_with, settle};
use tokio::time::sleep;

/// 40 futures of 10 ms through `unordered_buffer(8)` under a limit of 8, lowered to 3 after the
/// tenth output: every future that starts after the lowering finds at most 3 running
/// (itself included), and the ones running then all finish.
#[tokio::test(start_paused = true)]
#[cfg_attr(miri, ignore)]
async fn lowering_starts_nothing_until_below_the_new_limit() {
    let gauge = Gauge::default();
    let limit = Limit::new(8);
    // For each future: whether it started after the lowering, and how many ran as it started.
    let starts = Arc::new(Mutex::new(Vec::new()));
    let lowered = Arc::new(Mutex::new(false));
    let mut buffer = pin!(
        stream::iter(0..40usize)
            .map(|id| {
                let (gauge, starts, lowered) = (gauge.clone(), starts.clone(), lowered.clone());
                async move {
                    let _running = gauge.enter();
                    starts
                        .lock()
                        .unwrap()
                        .push((*lowered.lock().unwrap(), gauge.now()));
                    sleep(Duration::from_millis(10)).await;
                    id
                }
            })
            .unordered_buffer(8)
            .limit(limit.clone())
    );
    let mut outputs = Vec::new();
    while let Some(id) = buffer.next().await {
        outputs.push(id);
        if outputs.len() == 10 {
            limit.set(3);
            *lowered.lock().unwrap() = true;
        }
    }
    outputs.sort_unstable();
    assert_eq!(outputs, (0..40).collect::<Vec<_>>());
    let starts = starts.lock().unwrap();
    assert!(
        starts
            .iter()
            .any(|&(after, running)| !after && running == 8),
        "8 ran at once before the lowering"
    );
    let after: Vec<usize> = starts
        .iter()
        .filter(|(after, _)| *after)
        .map(|&(_, running)| running)
        .collect();
    assert!(!after.is_empty());
    assert!(after.iter().all(|&running| running <= 3), "{after:?}");
}

/// A limit of 1 on a buffer of capacity 4 whose futures never finish: one starts, the buffer
/// parks; raising the limit to 3 wakes its task, and the next poll starts two more.
#[test]
fn raising_wakes_a_buffer_parked_for_room() {
    let gauge = Gauge::default();
    let limit = Limit::new(1);
    let mut buffer = stream::iter(0..10usize)
        .map(|_| {
            let gauge = gauge.clone();
            async move {
                let _running = gauge.enter();
                pending::<()>().await;
            }
        })
        .unordered_buffer(4)
        .limit(limit.clone());
    let (waker, wakes) = counting_waker();
    assert_eq!(poll_with(&mut buffer, &waker), Poll::Pending);
    assert_eq!(gauge.now(), 1);

    limit.set(3);
    assert_eq!(wakes.count(), 1, "the raise woke the parked task");
    assert_eq!(poll_with(&mut buffer, &waker), Poll::Pending);
    assert_eq!(gauge.now(), 3);

    // Above the capacity, the buffer runs its capacity.
    limit.set(100);
    assert_eq!(poll_with(&mut buffer, &waker), Poll::Pending);
    assert_eq!(gauge.now(), 4);

    // Lowering wakes nothing: no future is cancelled.
    let before = wakes.count();
    limit.set(1);
    assert_eq!(wakes.count(), before);
    assert_eq!(poll_with(&mut buffer, &waker), Poll::Pending);
    assert_eq!(gauge.now(), 4);
}

/// The ordered buffer keeps its order under a limit that changes, and a window still bounds
/// what it holds.
#[tokio::test(start_paused = true)]
#[cfg_attr(miri, ignore)]
async fn ordered_buffer_keeps_order_under_a_changing_limit() {
    let gauge = Gauge::default();
    let limit = Limit::new(2);
    let delays = [30u64, 5, 20, 5, 10, 40, 5, 5, 15, 5, 25, 5];
    let mut buffer = pin!(
        stream::iter(delays.into_iter().enumerate())
            .map(|(id, millis)| {
                let gauge = gauge.clone();
                async move {
                    let _running = gauge.enter();
                    sleep(Duration::from_millis(millis)).await;
                    id
                }
            })
            .ordered_buffer(6)
            .limit(limit.clone())
    );
    let mut outputs = Vec::new();
    while let Some(id) = buffer.next().await {
        outputs.push(id);
        limit.set(if outputs.len() % 2 == 0 { 5 } else { 1 });
    }
    assert_eq!(outputs, (0..delays.len()).collect::<Vec<_>>());
    assert!(gauge.max() <= 6);
}

/// A window that follows a handle: the head never finishes on its own and everything behind
/// it is ready, so the window fills; raising it wakes the parked task and lets more in,
/// lowering it lets nothing in, and every output comes in order once the head finishes.
#[test]
fn the_window_follows_its_handle() {
    let head = Gate::new(0);
    let futures = std::iter::once(head.0).chain((1..20).map(|id| Gate::ready(id).0));
    let (source, counts) = CountingSource::new(futures);
    let window = Limit::new(2);
    let mut buffer = source.ordered_buffer(4).window_limit(window.clone());
    let (waker, wakes) = counting_waker();
    assert_eq!(poll_with(&mut buffer, &waker), Poll::Pending);
    assert_eq!(counts.pulled(), 2, "the window holds 2");

    window.set(6);
    assert_eq!(wakes.count(), 1, "the raise woke the parked task");
    assert_eq!(poll_with(&mut buffer, &waker), Poll::Pending);
    assert_eq!(counts.pulled(), 6, "the window holds 6");

    window.set(1);
    assert_eq!(poll_with(&mut buffer, &waker), Poll::Pending);
    assert_eq!(counts.pulled(), 6, "nothing comes in over a lowered window");

    head.1.open();
    assert_eq!(settle(&mut buffer), (0..20).collect::<Vec<_>>());
}

/// The try buffers take a limit too.
#[test]
fn try_buffers_take_a_limit() {
    let source = || stream::iter((0..6u32).map(|n| Ok::<_, ()>(async move { Ok(n) })));
    let ordered: Vec<Result<u32, ()>> = futures_executor::block_on(
        source()
            .try_ordered_buffer(4)
            .limit(Limit::new(2))
            .collect(),
    );
    assert_eq!(ordered, (0..6).map(Ok).collect::<Vec<_>>());
    let mut unordered: Vec<Result<u32, ()>> = futures_executor::block_on(
        source()
            .try_unordered_buffer(4)
            .limit(Limit::new(1))
            .collect(),
    );
    unordered.sort_unstable();
    assert_eq!(unordered, (0..6).map(Ok).collect::<Vec<_>>());
}

#[test]
#[should_panic = "Limit: a limit must be at least 1"]
fn a_limit_of_zero_panics() {
    Limit::new(3).set(0);
}

/// A limit given to a second buffer while the first runs steers both, as one budget; the
/// first dropped, the second has it all.
#[test]
fn a_limit_steers_several_buffers() {
    let limit = Limit::new(2);
    let first = stream::iter([async {}])
        .unordered_buffer(2)
        .limit(limit.clone());
    let second = stream::iter([1, 2].map(std::future::ready))
        .ordered_buffer(2)
        .limit(limit.clone());
    drop(first);
    let outputs = futures_executor::block_on(second.collect::<Vec<_>>());
    assert_eq!(outputs, [1, 2]);
    assert_eq!(limit.in_use(), 0);
}

/// A task's waker that panics at each wake, and counts them.
struct PanicsOnWake(std::sync::atomic::AtomicUsize);

impl std::task::Wake for PanicsOnWake {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        panic!("the task's waker panics");
    }
}

/// Two buffers share a limit of 1. The second waits for the unit with a waker that panics.
/// When the first's future finishes, its unit goes back and the second's waker panics: the
/// first's output still comes out of that poll, and the second, polled again, runs.
#[test]
fn a_waiting_buffers_panicking_waker_loses_no_output_of_the_one_giving_back() {
    let limit = Limit::new(1);
    let (gate, state) = support::Gate::new(7);
    let mut first = stream::iter([gate])
        .unordered_buffer(2)
        .limit(limit.clone());
    let mut second = stream::iter([async { 8 }])
        .unordered_buffer(2)
        .limit(limit.clone());
    assert!(poll_once(&mut first).is_pending());
    let panicking = Arc::new(PanicsOnWake(Default::default()));
    let panicking_waker = Waker::from(panicking.clone());
    assert!(poll_with(&mut second, &panicking_waker).is_pending());
    state.open();
    assert_eq!(poll_once(&mut first), Poll::Ready(Some(7)));
    assert_eq!(panicking.0.load(std::sync::atomic::Ordering::SeqCst), 1);
    assert_eq!(poll_once(&mut second), Poll::Ready(Some(8)));
    assert_eq!(poll_once(&mut first), Poll::Ready(None));
    assert_eq!(poll_once(&mut second), Poll::Ready(None));
    assert_eq!(limit.in_use(), 0);
}

/// Two buffers wait for a raise, the first with a waker that panics: the raise wakes the
/// second too, and then the panic comes out of `set`.
#[test]
fn a_raise_wakes_every_buffer_when_a_waker_panics() {
    let limit = Limit::new(1);
    let mut holder = stream::iter([std::future::pending::<()>()])
        .unordered_buffer(1)
        .limit(limit.clone());
    assert!(poll_once(&mut holder).is_pending());
    let mut first = stream::iter([async {}])
        .unordered_buffer(1)
        .limit(limit.clone());
    let mut second = stream::iter([async {}])
        .unordered_buffer(1)
        .limit(limit.clone());
    let panicking = Arc::new(PanicsOnWake(Default::default()));
    let (counting, wakes) = counting_waker();
    assert!(poll_with(&mut first, &Waker::from(panicking.clone())).is_pending());
    assert!(poll_with(&mut second, &counting).is_pending());
    let raised = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| limit.set(3)));
    assert!(raised.is_err());
    assert_eq!(panicking.0.load(std::sync::atomic::Ordering::SeqCst), 1);
    assert_eq!(wakes.count(), 1);
    assert_eq!(limit.get(), 3);
    assert_eq!(poll_once(&mut second), Poll::Ready(Some(())));
    assert_eq!(poll_once(&mut first), Poll::Ready(Some(())));
}

/// Four buffers on four threads share a limit of 3, each running 2,000 futures that yield
/// once: together they never run more than 3, and each ends (a unit given back, or a raise,
/// always wakes a buffer waiting for one: a lost wake would hang a thread, which the
/// receive's timeout reports).
#[test]
#[cfg_attr(miri, ignore)]
fn buffers_on_several_threads_share_one_limit() {
    let limit = Limit::new(3);
    let gauge = Gauge::default();
    let (done, finished) = std::sync::mpsc::channel();
    for thread in 0..4 {
        let (limit, gauge, done) = (limit.clone(), gauge.clone(), done.clone());
        std::thread::spawn(move || {
            let count = futures_executor::block_on(
                stream::iter(0..2_000)
                    .map(|_| {
                        let gauge = gauge.clone();
                        async move {
                            let _running = gauge.enter();
                            let mut yielded = false;
                            std::future::poll_fn(|cx| {
                                if std::mem::replace(&mut yielded, true) {
                                    return Poll::Ready(());
                                }
                                cx.waker().wake_by_ref();
                                Poll::Pending
                            })
                            .await;
                        }
                    })
                    .unordered_buffer(4)
                    .limit(limit)
                    .count(),
            );
            done.send((thread, count)).unwrap();
        });
    }
    // A raise and a lowering while they run.
    limit.set(5);
    limit.set(3);
    for _ in 0..4 {
        let (_, count) = finished
            .recv_timeout(Duration::from_secs(60))
            .expect("a buffer waiting for a unit was never woken");
        assert_eq!(count, 2_000);
    }
    assert!(gauge.max() <= 5, "{} ran at once", gauge.max());
    assert_eq!(limit.in_use(), 0);
}

/// A buffer that waits for the unit another holds is woken when that other is dropped.
#[test]
fn dropping_a_buffer_wakes_the_one_waiting_for_its_units() {
    let limit = Limit::new(1);
    let mut holder = stream::iter([std::future::pending::<()>()])
        .unordered_buffer(1)
        .limit(limit.clone());
    assert!(poll_once(&mut holder).is_pending());
    let mut waiting = stream::iter([async { 5 }])
        .unordered_buffer(1)
        .limit(limit.clone());
    let (waker, wakes) = counting_waker();
    assert!(poll_with(&mut waiting, &waker).is_pending());
    drop(holder);
    assert_eq!(wakes.count(), 1);
    assert_eq!(poll_once(&mut waiting), Poll::Ready(Some(5)));
}

/// Two buffers share a limit of 2. The first is full (a capacity of 1, its future pending) and
/// the second idle: a unit stays free that neither can use. Polling the first must not wake
/// its own task, or an executor would poll it again and again for as long as the unit is free.
#[test]
fn a_full_buffer_beside_a_free_unit_does_not_wake_itself() {
    let limit = Limit::new(2);
    let mut full = Box::pin(
        stream::iter([pending::<()>()])
            .unordered_buffer(1)
            .limit(limit.clone()),
    );
    let _idle = stream::iter([async {}])
        .unordered_buffer(1)
        .limit(limit.clone());
    let (waker, wakes) = counting_waker();
    for _ in 0..3 {
        assert!(poll_with(&mut full, &waker).is_pending());
    }
    assert_eq!(limit.in_use(), 1);
    assert_eq!(wakes.count(), 0, "the full buffer woke its own task");
}
