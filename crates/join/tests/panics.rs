//! A panicking future: its panic reaches the caller, and every other future and every kept
//! output is dropped, exactly once, before it does. A panicking `Drop` is survived too, and a
//! panicking task waker leaves the join as it was.

mod probe;

use std::future::{Future, pending};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures_core::future::FusedFuture;
use pinfold_join::{join_all, try_join_all};
use probe::{DropFlag, DropLog, Probe, ProbeState, Tracked, flags, is_set, poll_once, probes};

/// A probe, or a future that panics with `"boom"` on its second poll.
enum Input {
    Probe(Pin<Box<Probe<Tracked>>>),
    Bomb { polled: bool, _flag: DropFlag },
}

impl Future for Input {
    type Output = Tracked;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Tracked> {
        match &mut *self {
            Input::Probe(probe) => probe.as_mut().poll(cx),
            Input::Bomb { polled: true, .. } => panic!("boom"),
            Input::Bomb { polled, .. } => {
                *polled = true;
                cx.waker().wake_by_ref();
                Poll::Pending
            }
        }
    }
}

/// `n` probes with tracked outputs, and a bomb at `bomb`; the states of the probes (the bomb's
/// is never polled), the drop log of the outputs and the bomb's drop flag.
fn inputs_with_a_bomb(
    n: usize,
    bomb: usize,
) -> (
    Vec<Input>,
    Vec<Arc<ProbeState>>,
    Arc<DropLog>,
    Arc<std::sync::atomic::AtomicBool>,
) {
    let log = DropLog::new(n);
    let (futures, states) = probes(n, |i| log.tracked(i));
    let flag = flags(1).remove(0);
    let inputs = futures
        .into_iter()
        .enumerate()
        .map(|(i, probe)| {
            if i == bomb {
                Input::Bomb {
                    polled: false,
                    _flag: DropFlag(flag.clone()),
                }
            } else {
                Input::Probe(Box::pin(probe))
            }
        })
        .collect();
    (inputs, states, log, flag)
}

#[test]
fn panic_in_one_future_reaches_the_caller_and_the_others_are_dropped() {
    let n = 20;
    let (inputs, states, log, bomb) = inputs_with_a_bomb(n, 13);
    let mut join = join_all(inputs);
    assert!(poll_once(&mut join).is_pending());
    // Some finish first, so their outputs are kept when the bomb goes off.
    for i in [0, 5, 19] {
        states[i].finish();
    }
    let panic = catch_unwind(AssertUnwindSafe(|| poll_once(&mut join))).unwrap_err();
    assert_eq!(panic.downcast_ref::<&str>(), Some(&"boom"));

    // Before the `JoinAll` is dropped: every future and every kept output is gone.
    assert!(is_set(&bomb), "the panicking future was not dropped");
    // (Probe 13 was replaced by the bomb, and dropped, before the join began.)
    probe::assert_probes_dropped_once(&states);
    log.assert_each_dropped_once("output");
    assert!(join.is_terminated());

    // Polling again panics with the documented message, not with the future's.
    let again = catch_unwind(AssertUnwindSafe(|| poll_once(&mut join))).unwrap_err();
    assert_eq!(
        again.downcast_ref::<String>().map(String::as_str),
        Some("JoinAll polled after completion")
    );
    drop(join);
    probe::assert_probes_dropped_once(&states);
    log.assert_each_dropped_once("output");
}

#[tokio::test]
#[cfg_attr(miri, ignore)]
async fn panic_in_a_spawned_join_reaches_the_join_handle() {
    let dropped = flags(50);
    let futures: Vec<_> = dropped
        .iter()
        .enumerate()
        .map(|(i, flag)| {
            let guard = DropFlag(flag.clone());
            async move {
                let _guard = guard;
                tokio::task::yield_now().await;
                if i == 31 {
                    panic!("future {i} panicked");
                }
                pending::<Result<(), ()>>().await
            }
        })
        .collect();
    let err = tokio::spawn(try_join_all(futures)).await.unwrap_err();
    assert!(err.is_panic());
    let panic = err.into_panic();
    assert_eq!(
        panic.downcast_ref::<String>().unwrap(),
        "future 31 panicked"
    );
    assert!(dropped.iter().all(|f| is_set(f)));
}

/// Panics when dropped.
struct PanicOnDrop;

impl Drop for PanicOnDrop {
    fn drop(&mut self) {
        panic!("drop panicked");
    }
}

#[test]
fn panicking_drops_during_cancellation_drop_everything_at_once_and_the_error_comes_next() {
    let n = 8;
    let dropped = flags(n);
    let futures: Vec<_> = dropped
        .iter()
        .enumerate()
        .map(|(i, flag)| {
            let flag = DropFlag(flag.clone());
            // Futures 2 and 4 panic when dropped; future 6 fails.
            let bomb = (i == 2 || i == 4).then(|| PanicOnDrop);
            async move {
                let _flag = flag;
                let _bomb = bomb;
                if i == 6 {
                    return Err(i);
                }
                pending::<Result<(), usize>>().await
            }
        })
        .collect();
    let mut join = try_join_all(futures);
    // The error cancels the others; a drop panics, and that panic comes out of `poll`.
    let panic = catch_unwind(AssertUnwindSafe(|| poll_once(&mut join))).unwrap_err();
    assert_eq!(panic.downcast_ref::<&str>(), Some(&"drop panicked"));
    // Every future was dropped then, not left for the join's own drop.
    for (i, flag) in dropped.iter().enumerate() {
        assert!(is_set(flag), "future {i} still alive");
    }
    // The error is kept: the next poll returns it.
    assert!(!join.is_terminated());
    assert_eq!(poll_once(&mut join), Poll::Ready(Err(6)));
    assert!(join.is_terminated());
    drop(join);
}

/// A future that is ready with a tracked output at its first poll (and panics when dropped
/// after that if it holds a `PanicOnDrop`), panics there (`"boom"`), or never finishes.
enum Quick {
    Ready {
        output: Option<Tracked>,
        _bomb: Option<PanicOnDrop>,
    },
    Boom,
    Never {
        _flag: DropFlag,
    },
}

impl Future for Quick {
    type Output = Tracked;

    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Tracked> {
        match self.get_mut() {
            Quick::Ready { output, .. } => Poll::Ready(output.take().expect("polled after Ready")),
            Quick::Boom => panic!("boom"),
            Quick::Never { .. } => Poll::Pending,
        }
    }
}

/// 16 futures: ready ones before `stop`, a bomb at `stop`, never-finishing ones after. The
/// first poll panics with the bomb's panic; checks that every future and every output made is
/// dropped once before `poll` returns.
fn first_poll_panics(stop: usize) {
    let n = 16;
    let log = DropLog::new(n);
    let never = flags(n);
    let inputs: Vec<Quick> = (0..n)
        .map(|i| {
            if i < stop {
                Quick::Ready {
                    output: Some(log.tracked(i)),
                    _bomb: None,
                }
            } else if i == stop {
                Quick::Boom
            } else {
                Quick::Never {
                    _flag: DropFlag(never[i].clone()),
                }
            }
        })
        .collect();
    let mut join = join_all(inputs);
    let panic = catch_unwind(AssertUnwindSafe(|| poll_once(&mut join))).unwrap_err();
    assert_eq!(panic.downcast_ref::<&str>(), Some(&"boom"));
    assert!(join.is_terminated());
    for i in 0..n {
        assert_eq!(log.drops(i), usize::from(i < stop), "output {i}");
    }
    for (i, flag) in never.iter().enumerate().skip(stop + 1) {
        assert!(is_set(flag), "future {i} still alive");
    }
    drop(join);
    for i in 0..n {
        assert_eq!(log.drops(i), usize::from(i < stop), "output {i}");
    }
}

/// In its first poll a join writes each output straight to its place in the returned `Vec`
/// while every future before it has finished; a panic there must still find those outputs and
/// drop each once.
#[test]
fn a_panic_in_the_first_poll_after_ready_futures_drops_their_outputs_once() {
    for stop in [0, 1, 7, 15] {
        first_poll_panics(stop);
    }
}

/// A future's drop is not its poll: its panic leaves the join going on, with the future's
/// output kept.
#[test]
fn a_ready_future_whose_drop_panics_in_the_first_poll_loses_no_output() {
    let n = 16;
    for drop_panics in [0, 6, 15] {
        let log = DropLog::new(n);
        let inputs: Vec<Quick> = (0..n)
            .map(|i| Quick::Ready {
                output: Some(log.tracked(i)),
                _bomb: (i == drop_panics).then(|| PanicOnDrop),
            })
            .collect();
        let mut join = join_all(inputs);
        let panic = catch_unwind(AssertUnwindSafe(|| poll_once(&mut join))).unwrap_err();
        assert_eq!(panic.downcast_ref::<&str>(), Some(&"drop panicked"));
        assert!(!join.is_terminated());
        for i in 0..n {
            assert_eq!(log.drops(i), 0, "output {i} dropped");
        }
        // The next poll polls the futures the first did not reach, and completes.
        let Poll::Ready(outputs) = poll_once(&mut join) else {
            panic!("the join did not complete after the drop's panic");
        };
        assert_eq!(
            outputs.iter().map(Tracked::id).collect::<Vec<_>>(),
            (0..n).collect::<Vec<_>>()
        );
        drop(outputs);
        log.assert_each_dropped_once("output");
    }
}

#[test]
fn a_panic_of_the_task_wakers_wake_after_a_task_pass_leaves_the_join_usable() {
    use pinfold_testkit::contract::panic_message;
    use pinfold_testkit::panicking_waker::{WAKE_BY_REF_PANIC, WakerOps, panicking_waker};

    // Input 0 waits for an event (it keeps a clone of the task's waker, and wakes nobody in
    // the pass), inputs 1 to 4 are ready, inputs 5 to 9 yield once: their wakes are noted in
    // the pass and passed on after it, and that wake panics.
    let (mut probes, states) = probes(1, |i| i);
    let mut futures: Vec<Pin<Box<dyn Future<Output = usize>>>> =
        vec![Box::pin(probes.pop().expect("one probe"))];
    for id in 1..10 {
        let (spinner, _) = probe::Spinner::new(id, usize::from(id >= 5));
        futures.push(Box::pin(spinner));
    }
    let mut join = join_all(futures);
    let (task, switches) = panicking_waker();
    switches.panic_once(WakerOps::WAKE_BY_REF);
    let panic = catch_unwind(AssertUnwindSafe(|| probe::poll_with(&mut join, &task)))
        .expect_err("the task's wake after the pass did not panic");
    assert_eq!(panic_message(&*panic), WAKE_BY_REF_PANIC);
    assert!(
        !join.is_terminated(),
        "the waker's panic cancelled the join"
    );
    // The join goes on: the yielding inputs finish at the next poll, the waiting one when its
    // event comes, and the four that finished in the panicking poll are counted as finished.
    assert!(probe::poll_with(&mut join, &task).is_pending());
    states[0].finish();
    assert_eq!(
        probe::poll_with(&mut join, &task),
        Poll::Ready((0..10).collect::<Vec<_>>())
    );
    assert_eq!(switches.panics(), 1);
}
