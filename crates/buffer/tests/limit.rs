//! A `Limit` changes a buffer's concurrency while it runs: lowering lets the running futures
//! finish and starts none until fewer run than the new limit; raising starts more, and wakes a
//! buffer parked for room.

mod support;

use std::future::pending;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::pin;
use std::sync::{Arc, Mutex};
use std::task::{Poll, Waker};
use std::time::Duration;

use futures_util::{StreamExt, stream};
use pinfold_buffer::{BufferExt, Limit, TryBufferExt};
use pinfold_testkit::panicking_waker::{WakerOps, panicking_waker};
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

/// Two buffers share a limit with units free, their sources stalled: neither can start a
/// future, so a poll of one wakes neither (a wake would make the two tasks wake each other
/// for ever, each poll taking the free units and giving them back).
#[test]
fn stalled_buffers_sharing_a_limit_do_not_wake_each_other() {
    let limit = Limit::new(2);
    let stalled = || {
        stream::pending::<std::future::Ready<()>>()
            .unordered_buffer(4)
            .limit(limit.clone())
    };
    let (mut first, mut second) = (stalled(), stalled());
    let (first_waker, first_wakes) = counting_waker();
    let (second_waker, second_wakes) = counting_waker();
    for _ in 0..3 {
        assert!(poll_with(&mut first, &first_waker).is_pending());
        assert!(poll_with(&mut second, &second_waker).is_pending());
    }
    assert_eq!((first_wakes.count(), second_wakes.count()), (0, 0));
    assert_eq!(limit.in_use(), 0);
}

/// A buffer's task waker whose `clone` panics as the buffer registers it, waiting for units
/// another buffer holds: the panic comes out of the poll, and the units the buffer took
/// before go back when it is dropped.
#[test]
fn a_waker_whose_clone_panics_leaks_no_unit() {
    let limit = Limit::new(2);
    let mut holder = stream::iter([pending::<()>()])
        .unordered_buffer(1)
        .limit(limit.clone());
    assert!(poll_once(&mut holder).is_pending());
    assert_eq!(limit.in_use(), 1);
    let mut second = stream::iter([pending::<()>(), pending()])
        .unordered_buffer(4)
        .limit(limit.clone());
    let (waker, switches) = panicking_waker();
    switches.panic_once(WakerOps::CLONE);
    let polled = catch_unwind(AssertUnwindSafe(|| poll_with(&mut second, &waker)));
    assert!(polled.is_err());
    drop(second);
    drop(holder);
    assert_eq!(limit.in_use(), 0);
}

/// A future whose second poll panics, under a limit of 1 that a second buffer waits for: the
/// future is gone, so its unit goes back at once and the waiting buffer is woken.
#[test]
fn a_future_whose_poll_panics_gives_its_unit_back() {
    let limit = Limit::new(1);
    let mut polled_once = false;
    let panics = std::future::poll_fn(move |cx| {
        assert!(
            !std::mem::replace(&mut polled_once, true),
            "the future panics"
        );
        cx.waker().wake_by_ref();
        Poll::<u32>::Pending
    });
    let mut first = stream::iter([panics])
        .unordered_buffer(2)
        .limit(limit.clone());
    let mut second = stream::iter([async { 8 }])
        .unordered_buffer(2)
        .limit(limit.clone());
    assert!(poll_once(&mut first).is_pending());
    let (waker, wakes) = counting_waker();
    assert!(poll_with(&mut second, &waker).is_pending());
    assert!(catch_unwind(AssertUnwindSafe(|| poll_once(&mut first))).is_err());
    assert_eq!(limit.in_use(), 0);
    assert_eq!(wakes.count(), 1, "the waiting buffer was woken");
    assert_eq!(poll_with(&mut second, &waker), Poll::Ready(Some(8)));
}

/// A source that panics as it is polled holds no unit of the limit: none is in use after.
#[test]
fn a_source_that_panics_holds_no_unit() {
    let limit = Limit::new(3);
    let mut buffer = stream::poll_fn(|_| -> Poll<Option<std::future::Ready<()>>> {
        panic!("the source panics")
    })
    .unordered_buffer(4)
    .limit(limit.clone());
    assert!(catch_unwind(AssertUnwindSafe(|| poll_once(&mut buffer))).is_err());
    assert_eq!(limit.in_use(), 0);
}

/// A limit given to a buffer that already runs futures counts them: with 3 running and a
/// limit of 2, none starts until fewer than 2 run, and the 3 are the limit's units in use.
#[test]
fn a_limit_given_to_a_running_buffer_counts_its_futures() {
    let (gates, states) = support::gates(10);
    let mut buffer = stream::iter(gates).unordered_buffer(3);
    assert!(poll_once(&mut buffer).is_pending());
    let limit = Limit::new(2);
    let mut buffer = buffer.limit(limit.clone());
    assert!(poll_once(&mut buffer).is_pending());
    assert_eq!(limit.in_use(), 3);
    states[0].open();
    assert_eq!(poll_once(&mut buffer), Poll::Ready(Some(0)));
    assert_eq!(limit.in_use(), 2, "no future started while 2 ran");
    assert_eq!(states[3].polls(), 0);
    drop(buffer);
    assert_eq!(limit.in_use(), 0);
}

/// A limit given to a future queue that already runs futures counts their weight: with a
/// weight of 6 running and a limit of 4, none starts until the weight running leaves room.
#[test]
fn a_limit_given_to_a_running_future_queue_counts_its_weight() {
    let (gates, states) = support::gates(10);
    let mut queue = stream::iter(gates.into_iter().map(|gate| (2, gate))).future_queue(6);
    assert!(poll_once(&mut queue).is_pending());
    let limit = Limit::new(4);
    let mut queue = queue.limit(limit.clone());
    assert!(poll_once(&mut queue).is_pending());
    assert_eq!(limit.in_use(), 6);
    states[0].open();
    assert_eq!(poll_once(&mut queue), Poll::Ready(Some(0)));
    assert_eq!(
        limit.in_use(),
        4,
        "no future started while a weight of 4 ran"
    );
    assert_eq!(states[3].polls(), 0);
    drop(queue);
    assert_eq!(limit.in_use(), 0);
}

/// A future that is `Pending` once, waking itself, then `Ready(id)`, counted by `gauge` while
/// it lives.
async fn yields_once(id: usize, gauge: Gauge) -> usize {
    let _running = gauge.enter();
    let mut yielded = false;
    std::future::poll_fn(|cx| {
        if std::mem::replace(&mut yielded, true) {
            return Poll::Ready(id);
        }
        cx.waker().wake_by_ref();
        Poll::Pending
    })
    .await
}

/// One limit of 3 steers an unordered buffer, an ordered buffer (as its concurrency and its
/// window) and a future queue, each on its own thread, while a fourth thread raises and
/// lowers it: every buffer ends (a unit given back or a raise always wakes the buffers that
/// wait for one: a lost wake would hang a thread, which the receive's timeout reports), the
/// ordered one in order, and no unit is left in use.
#[test]
#[cfg_attr(miri, ignore)]
fn an_unordered_an_ordered_and_a_future_queue_share_one_limit() {
    const N: usize = 1_000;
    let limit = Limit::new(3);
    let gauge = Gauge::default();
    let (done, finished) = std::sync::mpsc::channel();
    let run = |name: &'static str, make: Box<dyn FnOnce() -> Vec<usize> + Send>| {
        let done = done.clone();
        std::thread::spawn(move || done.send((name, make())).unwrap());
    };
    let (l, g) = (limit.clone(), gauge.clone());
    run(
        "unordered",
        Box::new(move || {
            let source = stream::iter(0..N).map(move |id| yields_once(id, g.clone()));
            let mut out: Vec<usize> =
                futures_executor::block_on(source.unordered_buffer(4).limit(l).collect());
            out.sort_unstable();
            out
        }),
    );
    let (l, g) = (limit.clone(), gauge.clone());
    run(
        "ordered",
        Box::new(move || {
            let source = stream::iter(0..N).map(move |id| yields_once(id, g.clone()));
            let buffer = source.ordered_buffer(4).limit(l.clone()).window_limit(l);
            futures_executor::block_on(buffer.collect())
        }),
    );
    let (l, g) = (limit.clone(), gauge.clone());
    run(
        "future_queue",
        Box::new(move || {
            let source = stream::iter(0..N).map(move |id| (1 + id % 3, yields_once(id, g.clone())));
            let mut out: Vec<usize> =
                futures_executor::block_on(source.future_queue(4).limit(l).collect());
            out.sort_unstable();
            out
        }),
    );
    let changer = {
        let limit = limit.clone();
        std::thread::spawn(move || {
            for round in 0..200 {
                limit.set(if round % 2 == 0 { 5 } else { 2 });
                std::thread::yield_now();
            }
            limit.set(3);
        })
    };
    for _ in 0..3 {
        let (name, outputs) = finished
            .recv_timeout(Duration::from_secs(60))
            .expect("a buffer waiting for a unit was never woken");
        assert_eq!(outputs, (0..N).collect::<Vec<_>>(), "{name}");
    }
    changer.join().unwrap();
    assert!(gauge.max() <= 5, "{} ran at once", gauge.max());
    assert_eq!(limit.in_use(), 0);
}

/// A future's poll panics under a limit of 1 that a second buffer waits for with a task waker
/// that panics too: the unit goes back as the first panic unwinds, the waker's panic is the
/// waiting task's and is dropped, and the first panic comes out of the poll.
#[test]
fn a_poll_panic_that_wakes_a_panicking_waker_gives_the_unit_back() {
    pinfold_testkit::panic_hook::no_forced_backtraces();
    let limit = Limit::new(1);
    let mut polled_once = false;
    let panics = std::future::poll_fn(move |cx| {
        assert!(
            !std::mem::replace(&mut polled_once, true),
            "the future panics"
        );
        cx.waker().wake_by_ref();
        Poll::<u32>::Pending
    });
    let mut first = stream::iter([panics])
        .unordered_buffer(2)
        .limit(limit.clone());
    let mut second = stream::iter([async { 8 }])
        .unordered_buffer(2)
        .limit(limit.clone());
    assert!(poll_once(&mut first).is_pending());
    let (waker, switches) = panicking_waker();
    assert!(poll_with(&mut second, &waker).is_pending());
    switches.panic_once(WakerOps::ANY_WAKE);
    let panic = catch_unwind(AssertUnwindSafe(|| poll_once(&mut first))).unwrap_err();
    assert_eq!(panic.downcast_ref::<&str>(), Some(&"the future panics"));
    assert_eq!(switches.panics(), 1);
    assert_eq!(limit.in_use(), 0);
    assert_eq!(poll_once(&mut second), Poll::Ready(Some(8)));
}

/// Buffers driven until they hold finished outputs, then dropped with them: an unordered
/// buffer (whose outputs keep their units), an ordered one and a future queue, and one
/// consumed by `for_each_driven` whose consumer waits: none leaves a unit in use.
#[test]
fn buffers_dropped_with_outputs_held_leave_no_unit_in_use() {
    use pinfold_buffer::{ProgressStream, ProgressStreamExt};
    use std::future::Future;
    let limit = Limit::new(3);
    let (waker, _) = counting_waker();
    let mut cx = std::task::Context::from_waker(&waker);
    let ready = || stream::iter((0..10).map(std::future::ready));
    let mut unordered = ready().unordered_buffer(4).limit(limit.clone());
    let _ = std::pin::Pin::new(&mut unordered).poll_progress(&mut cx);
    assert_eq!(limit.in_use(), 3, "the driven outputs keep their units");
    drop(unordered);
    let mut ordered = ready().ordered_buffer(4).limit(limit.clone());
    let _ = std::pin::Pin::new(&mut ordered).poll_progress(&mut cx);
    drop(ordered);
    let mut queue = stream::iter((0..10).map(|n| (1, std::future::ready(n))))
        .future_queue(4)
        .limit(limit.clone());
    let _ = std::pin::Pin::new(&mut queue).poll_progress(&mut cx);
    assert_eq!(limit.in_use(), 3);
    drop(queue);
    assert_eq!(limit.in_use(), 0);
    let mut consuming = Box::pin(
        ready()
            .unordered_buffer(4)
            .limit(limit.clone())
            .for_each_driven(|_| pending::<()>()),
    );
    assert!(consuming.as_mut().poll(&mut cx).is_pending());
    assert!(limit.in_use() > 0);
    drop(consuming);
    assert_eq!(limit.in_use(), 0);
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

/// A limit's `Debug` shows its value and the units the buffers it steers hold.
#[test]
fn a_limits_debug_shows_its_value_and_units_in_use() {
    let limit = Limit::new(3);
    let mut buffer = stream::iter([pending::<()>()])
        .unordered_buffer(2)
        .limit(limit.clone());
    assert!(poll_once(&mut buffer).is_pending());
    assert_eq!(format!("{limit:?}"), "Limit { limit: 3, in_use: 1 }");
}
