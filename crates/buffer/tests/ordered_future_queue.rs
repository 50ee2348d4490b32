//! The ordered weighted queues: `future_queue`'s and `future_queue_grouped`'s contract with
//! their outputs in the source's order, a window, panics, a driven queue and shared limits.

mod support;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::task::Poll;
use std::time::Duration;

use futures_core::{FusedStream, Stream};
use futures_util::{StreamExt, stream};
use pinfold_buffer::{BufferExt, Limit, ProgressStreamExt};
use pinfold_testkit::rng::XorShift;
use support::{counting_waker, poll_once, poll_with};
use tokio::time::{Instant, sleep};

/// Tokio's current-thread runtime on its paused clock (the tests on it are left out under
/// Miri, as the crate's other virtual-time tests are).
fn paused_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap()
}

fn panic_message(f: impl FnOnce()) -> String {
    let payload = catch_unwind(AssertUnwindSafe(f)).expect_err("it panics");
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap()
}

#[test]
#[cfg_attr(miri, ignore)]
fn outputs_come_in_the_sources_order_while_the_weights_stay_within_the_max_weight() {
    // Random weights (0 to 5) and run times under a max weight of 6: the outputs come in
    // order, the weight running never passed the max, and every future ran once.
    let mut rng = XorShift::new(0x0DE5);
    let jobs: Vec<(usize, u64)> = (0..300).map(|_| (rng.below(6), rng.up_to(20))).collect();
    let running = std::sync::Arc::new(std::sync::Mutex::new((0usize, 0usize)));
    let outputs: Vec<usize> = paused_runtime().block_on(
        stream::iter(jobs.clone().into_iter().enumerate())
            .map(|(i, (weight, ms))| {
                let running = running.clone();
                (weight, async move {
                    {
                        let mut running = running.lock().unwrap();
                        running.0 += weight;
                        running.1 = running.1.max(running.0);
                    }
                    sleep(Duration::from_millis(ms)).await;
                    running.lock().unwrap().0 -= weight;
                    i
                })
            })
            .ordered_future_queue(6)
            .collect(),
    );
    assert_eq!(outputs, (0..300).collect::<Vec<_>>());
    let (now, max) = *running.lock().unwrap();
    assert_eq!(now, 0);
    // A weight of 0 counts nothing, so the futures of weight 0 may run beside 6.
    assert!(max <= 6 + 5 * jobs.iter().filter(|job| job.0 == 0).count());
}

#[test]
#[cfg_attr(miri, ignore)]
fn a_slow_head_frees_the_weight_of_those_behind_it_as_they_finish() {
    // Max weight 2, weights 1: the head sleeps 100 ms, the others 10 ms each. The others run
    // one after another beside the head (each frees its weight when it finishes, though its
    // output waits), so all are done at 100 ms and come out right after the head.
    let (outputs, took) = paused_runtime().block_on(async {
        let start = Instant::now();
        let outputs: Vec<usize> = stream::iter(0..9usize)
            .map(|i| {
                let ms = if i == 0 { 100 } else { 10 };
                (1, async move {
                    sleep(Duration::from_millis(ms)).await;
                    i
                })
            })
            .ordered_future_queue(2)
            .collect()
            .await;
        (outputs, start.elapsed())
    });
    assert_eq!(outputs, (0..9).collect::<Vec<_>>());
    assert_eq!(took, Duration::from_millis(100));
}

#[test]
fn a_window_stops_the_source_behind_a_stuck_head() {
    let (gates, states) = support::gates(10);
    let mut queue = stream::iter(gates.into_iter().map(|gate| (1, gate)))
        .ordered_future_queue(8)
        .window(3);
    for state in &states[1..] {
        state.open();
    }
    // The head is stuck: two finish behind it and are held, and the window of 3 stops the
    // source there.
    assert_eq!(poll_once(&mut queue), Poll::Pending);
    assert_eq!(poll_once(&mut queue), Poll::Pending);
    let polled: Vec<usize> = states.iter().map(|s| s.polls()).collect();
    assert_eq!(polled[..3], [1, 1, 1]);
    assert!(polled[3..].iter().all(|&p| p == 0), "{polled:?}");
    assert_eq!(
        queue.current_weight(),
        1,
        "the held outputs' weight is free"
    );
    assert_eq!(queue.size_hint().0, 10);
    states[0].open();
    let outputs: Vec<usize> = futures_executor::block_on(queue.collect());
    assert_eq!(outputs, (0..10).collect::<Vec<_>>());
}

#[test]
fn a_window_of_0_panics() {
    let message = panic_message(|| {
        let _ = stream::iter([(1, async { 0 })])
            .ordered_future_queue(1)
            .window(0);
    });
    assert_eq!(
        message,
        "ordered_future_queue: window must be greater than 0"
    );
    let message = panic_message(|| {
        let _ = stream::iter([(1, async { 0 })]).ordered_future_queue(0);
    });
    assert_eq!(
        message,
        "ordered_future_queue: max_weight must be greater than 0"
    );
}

#[test]
fn a_future_that_panics_loses_its_place_and_the_rest_come_in_order() {
    // Future 1 panics in its poll, future 3 in its drop after it finished: their places are
    // skipped, the others come in order, and the weight goes back.
    struct DropPanics(usize);
    impl Drop for DropPanics {
        fn drop(&mut self) {
            if self.0 == 3 && !std::thread::panicking() {
                panic!("drop of 3 panics");
            }
        }
    }
    let mut queue = stream::iter(0..6usize)
        .map(|i| {
            let guard = DropPanics(i);
            (1, async move {
                let _guard = &guard;
                assert!(i != 1, "poll of 1 panics");
                i
            })
        })
        .ordered_future_queue(2);
    let (waker, _) = counting_waker();
    let mut outputs = Vec::new();
    let mut panics = Vec::new();
    loop {
        match catch_unwind(AssertUnwindSafe(|| poll_with(&mut queue, &waker))) {
            Ok(Poll::Ready(Some(i))) => outputs.push(i),
            Ok(Poll::Ready(None)) => break,
            Ok(Poll::Pending) => panic!("ready futures only"),
            Err(payload) => panics.push(
                payload
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                    .unwrap(),
            ),
        }
    }
    assert_eq!(outputs, [0, 2, 4, 5]);
    assert_eq!(panics, ["poll of 1 panics", "drop of 3 panics"]);
    assert_eq!(queue.current_weight(), 0);
    assert!(queue.is_terminated());
}

#[test]
#[cfg_attr(miri, ignore)]
fn grouped_outputs_come_in_the_sources_order_with_both_limits_kept() {
    let mut rng = XorShift::new(0x6A0F);
    let items: Vec<(usize, Option<u8>, u64)> = (0..400)
        .map(|_| {
            (
                1 + rng.below(3),
                [None, Some(0), Some(1), Some(2)][rng.below(4)],
                rng.up_to(15),
            )
        })
        .collect();
    let groups = [(0u8, 2usize), (1, 3), (2, 4)];
    let seen = std::sync::Arc::new(std::sync::Mutex::new(([0usize; 3], 0usize)));
    let outputs: Vec<usize> = paused_runtime().block_on(
        stream::iter(items.clone().into_iter().enumerate())
            .map(|(i, (weight, group, ms))| {
                let seen = seen.clone();
                (weight, group, async move {
                    if let Some(g) = group {
                        let mut seen = seen.lock().unwrap();
                        seen.0[g as usize] += weight.min(groups[g as usize].1);
                        assert!(seen.0[g as usize] <= groups[g as usize].1, "group {g} over");
                    }
                    {
                        let mut seen = seen.lock().unwrap();
                        seen.1 += weight;
                        assert!(seen.1 <= 6, "over the max weight");
                    }
                    sleep(Duration::from_millis(ms)).await;
                    let mut seen = seen.lock().unwrap();
                    seen.1 -= weight;
                    if let Some(g) = group {
                        seen.0[g as usize] -= weight.min(groups[g as usize].1);
                    }
                    i
                })
            })
            .ordered_future_queue_grouped(6, groups)
            .window(16)
            .collect(),
    );
    assert_eq!(outputs, (0..400).collect::<Vec<_>>());
}

#[test]
fn an_unknown_group_takes_no_place() {
    let items = [(1, Some("a"), 0), (1, Some("nope"), 1), (1, None, 2)];
    let mut queue = stream::iter(items)
        .map(|(weight, group, id)| (weight, group, async move { id }))
        .ordered_future_queue_grouped(1, [("a", 1)]);
    let (waker, _) = counting_waker();
    let message = panic_message(|| {
        let _ = poll_with(&mut queue, &waker);
    });
    assert_eq!(
        message,
        "ordered_future_queue_grouped: unknown group \"nope\" (the groups are [\"a\"])"
    );
    assert_eq!(poll_with(&mut queue, &waker), Poll::Ready(Some(0)));
    assert_eq!(poll_with(&mut queue, &waker), Poll::Ready(Some(2)));
    assert_eq!(poll_with(&mut queue, &waker), Poll::Ready(None));
}

#[test]
#[cfg_attr(miri, ignore)]
fn driven_it_keeps_the_order_and_a_finished_outputs_weight_until_it_is_taken() {
    // for_each_driven: the consumer takes 5 ms an output while the queue runs; the outputs
    // still come in order.
    let outputs = paused_runtime().block_on(async {
        let outputs = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        stream::iter(0..40usize)
            .map(|i| {
                (1 + i % 3, async move {
                    sleep(Duration::from_millis((7 * i % 11) as u64)).await;
                    i
                })
            })
            .ordered_future_queue(4)
            .window(6)
            .for_each_driven(|i| {
                let outputs = outputs.clone();
                async move {
                    sleep(Duration::from_millis(5)).await;
                    outputs.lock().unwrap().push(i);
                }
            })
            .await;
        std::sync::Arc::try_unwrap(outputs)
            .unwrap()
            .into_inner()
            .unwrap()
    });
    assert_eq!(outputs, (0..40).collect::<Vec<_>>());
}

#[test]
fn a_stuck_window_driven_is_ready_for_the_consumer() {
    // Driven with the head finished and the window full: poll_progress is Ready (nothing
    // can start until an output is taken), and the outputs come in order.
    let (gates, states) = support::gates(4);
    let mut queue = Box::pin(
        stream::iter(gates.into_iter().map(|gate| (1, gate)))
            .ordered_future_queue(4)
            .window(2),
    );
    let (waker, _) = counting_waker();
    let mut cx = std::task::Context::from_waker(&waker);
    use pinfold_buffer::ProgressStream;
    assert_eq!(queue.as_mut().poll_progress(&mut cx), Poll::Pending);
    states[1].open();
    assert_eq!(queue.as_mut().poll_progress(&mut cx), Poll::Pending);
    states[0].open();
    assert_eq!(queue.as_mut().poll_progress(&mut cx), Poll::Ready(()));
    for state in &states {
        state.open();
    }
    let outputs: Vec<usize> = futures_executor::block_on(queue.collect());
    assert_eq!(outputs, [0, 1, 2, 3]);
}

#[test]
fn a_limit_and_a_group_limit_steer_the_ordered_queue() {
    let limit = Limit::new(2);
    let group = Limit::new(1);
    let (gates, states) = support::gates(4);
    let groups = [Some("a"), Some("a"), None, None];
    let mut queue = stream::iter(gates.into_iter().zip(groups).map(|(g, k)| (1, k, g)))
        .ordered_future_queue_grouped(8, [("a", 8)])
        .group_limit("a", group.clone())
        .limit(limit.clone());
    assert_eq!(poll_once(&mut queue), Poll::Pending);
    // One of group "a" (its limit 1), and one of none (the max weight's limit 2).
    let polled: Vec<usize> = states.iter().map(|s| s.polls()).collect();
    assert_eq!(polled, [1, 0, 1, 0]);
    assert_eq!((limit.in_use(), group.in_use()), (2, 1));
    for state in &states {
        state.open();
    }
    let outputs: Vec<usize> = futures_executor::block_on(queue.collect());
    assert_eq!(outputs, [0, 1, 2, 3]);
    assert_eq!((limit.in_use(), group.in_use()), (0, 0));
}

#[test]
fn debug_shows_the_places_and_the_window() {
    let queue = stream::iter([(1, std::future::ready(0))])
        .ordered_future_queue(1)
        .window(4);
    let shown = format!("{queue:?}");
    assert!(shown.starts_with("OrderedFutureQueue {"), "{shown}");
    assert!(shown.contains("window: Some(4)"), "{shown}");
    assert!(shown.contains("places: 0"), "{shown}");
}

#[test]
fn a_source_that_panics_after_an_output_finished_loses_no_place() {
    // Max weight 1: 0 runs, 1 waits for room. 0 finishes and its weight starts 1; the source,
    // polled for the next item in the same call, panics once. Every output still comes, in
    // order, and the queue ends.
    // The source as `two_then_a_panic`, one that `Debug` shows.
    let source = stream::iter((0..3).map(|i| {
        assert!(i < 2, "the source panics");
        (1, std::future::ready(i))
    }));
    let mut queue = source.ordered_future_queue(1);
    let (outputs, panics) = support::poll_through_panics(&mut queue, |queue| {
        // 0's output, kept for the next call: counted, shown, and the queue not terminated.
        assert!(!queue.is_terminated());
        assert_eq!(
            queue.size_hint().0,
            2,
            "the kept output and the future waiting"
        );
        let shown = format!("{queue:?}");
        assert!(shown.contains("kept: true"), "{shown}");
    });
    assert_eq!(panics, 1);
    assert_eq!(outputs, [0, 1]);
    assert!(queue.is_terminated());
}

#[test]
fn a_stuck_head_and_an_endless_ready_source_let_poll_next_return() {
    // The head never finishes; every future behind it is ready at once, and the source never
    // ends. One poll_next is one round: it returns (Pending) after a bounded number of polls,
    // as ordered_buffer's does, instead of pulling the source for ever.
    let pulled = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = pulled.clone();
    let source = stream::iter(0usize..).map(move |i| {
        let n = counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        assert!(n < 10_000, "the source was pulled without end in one call");
        (
            1,
            std::future::poll_fn(move |_| {
                if i == 0 {
                    Poll::Pending
                } else {
                    Poll::Ready(i)
                }
            }),
        )
    });
    let mut queue = source.ordered_future_queue(2);
    let (waker, wakes) = counting_waker();
    let polled = catch_unwind(AssertUnwindSafe(|| poll_with(&mut queue, &waker)));
    assert!(
        matches!(polled, Ok(Poll::Pending)),
        "one call never returned"
    );
    assert!(pulled.load(std::sync::atomic::Ordering::SeqCst) < 100);
    assert!(wakes.count() > 0, "the call that yields wakes its task");
}

#[test]
fn a_panicking_task_waker_skips_no_place() {
    // Every call to the task's waker panics in turn (one run each): the outputs all come, in
    // order, driven or not, and the limit's units all come back.
    use pinfold_buffer::ProgressStream;
    use pinfold_testkit::panicking_waker::panicking_waker;
    let run = |panic_at: Option<usize>| -> (Vec<usize>, usize) {
        let (waker, switches) = panicking_waker();
        if let Some(call) = panic_at {
            switches.panic_at_call(call);
        }
        let limit = Limit::new(2);
        let (gates, states) = support::gates(6);
        let groups = [Some("a"), None, Some("a"), None, Some("a"), None];
        let mut queue = Box::pin(
            stream::iter(gates.into_iter().zip(groups).map(|(g, k)| (1, k, g)))
                .ordered_future_queue_grouped(3, [("a", 1)])
                .window(4)
                .limit(limit.clone()),
        );
        let mut cx = std::task::Context::from_waker(&waker);
        let order = [1, 0, 3, 5, 2, 4];
        let mut outputs = Vec::new();
        for step in 0..60 {
            if step % 3 == 1 {
                let _ = catch_unwind(AssertUnwindSafe(|| queue.as_mut().poll_progress(&mut cx)));
            } else {
                match catch_unwind(AssertUnwindSafe(|| queue.as_mut().poll_next(&mut cx))) {
                    Ok(Poll::Ready(Some(i))) => outputs.push(i),
                    Ok(Poll::Ready(None)) => break,
                    _ => {}
                }
            }
            if let Some(&k) = order.get(step / 2) {
                if step % 2 == 0 {
                    let _ = catch_unwind(AssertUnwindSafe(|| states[k].open()));
                }
            }
        }
        assert!(
            queue.is_terminated(),
            "{panic_at:?}: {outputs:?} {queue:?} {:?}",
            states
                .iter()
                .map(|s| (s.polls(), s.drops()))
                .collect::<Vec<_>>()
        );
        assert_eq!(limit.in_use(), 0, "{panic_at:?}");
        (outputs, switches.calls())
    };
    let (outputs, calls) = run(None);
    assert_eq!(outputs, (0..6).collect::<Vec<_>>());
    for call in 1..=calls {
        let (outputs, _) = run(Some(call));
        assert_eq!(
            outputs,
            (0..6).collect::<Vec<_>>(),
            "waker call {call} panicked"
        );
    }
}

/// Driven, the queue is `Ready` once the next output in order has finished, also while a
/// future behind it still runs and the source waits: that output can be taken.
#[test]
fn a_driven_queue_is_ready_once_the_next_output_in_order_has_finished() {
    use futures_util::future::{Either, pending, ready};
    use pinfold_buffer::ProgressStream;
    let mut items = vec![
        (1, Either::Left(ready(0usize))),
        (1, Either::Right(pending::<usize>())),
    ];
    items.reverse();
    // Gives its two items, then waits for good.
    let source = stream::poll_fn(move |_| match items.pop() {
        Some(item) => Poll::Ready(Some(item)),
        None => Poll::Pending,
    });
    let mut queue = source.ordered_future_queue(4);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    let mut progress = Vec::new();
    for _ in 0..2 {
        progress.push(std::pin::Pin::new(&mut queue).poll_progress(&mut cx));
    }
    assert_eq!(
        progress.last(),
        Some(&Poll::Ready(())),
        "{progress:?}: {queue:?}"
    );
    assert_eq!(poll_once(&mut queue), Poll::Ready(Some(0)));
    assert!(poll_once(&mut queue).is_pending());
}
