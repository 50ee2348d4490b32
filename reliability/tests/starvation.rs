//! Starvation (futures-rs #2047): a future that always wakes itself must not keep the
//! primitive from returning `Pending`, so other tasks on a one-thread runtime still run, and
//! the other futures still give their outputs; and streams of a merge that are always ready
//! take turns, and a stream woken beside an always-ready one gets its turn.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use pinfold_reliability::ctl::{Outcome, Spec, World};
use pinfold_reliability::reentrance::{KINDS, primitive};
use pinfold_reliability::watchdog::Watchdog;

#[test]
fn a_future_that_always_wakes_itself_starves_neither_the_executor_nor_the_others() {
    let _watchdog = Watchdog::arm("starvation", Duration::from_secs(120));
    const OTHERS: usize = 20;
    for kind in KINDS {
        let mut world = World::new(kind);
        // Completed before the start: the others are ready at their first poll; the last
        // future (last, so that the ordered buffers can yield the others before it) wakes
        // itself on every poll, for ever.
        let mut futures = Vec::new();
        for _ in 0..OTHERS {
            let (fut, ctl) = world.ctl(Spec::default());
            ctl.complete(Outcome::Ok);
            futures.push(fut);
        }
        let (spinner, spinner_ctl) = world.ctl(Spec {
            yields: u32::MAX,
            ..Spec::default()
        });
        spinner_ctl.complete(Outcome::Ok);
        futures.push(spinner);
        let world = Arc::new(world);
        let mut primitive = primitive(kind, futures);
        let outputs = Arc::new(AtomicUsize::new(0));
        let polls = Arc::new(AtomicUsize::new(0));
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("build a tokio runtime");
        let ticks = runtime.block_on(async {
            let consumer = {
                let (world, outputs, polls) = (world.clone(), outputs.clone(), polls.clone());
                tokio::spawn(std::future::poll_fn(move |cx| {
                    let mut taken = Vec::new();
                    let polled = primitive.poll_each(cx, &mut taken, &|| {
                        world.begin_poll_call();
                        polls.fetch_add(1, Ordering::SeqCst);
                    });
                    outputs.fetch_add(taken.len(), Ordering::SeqCst);
                    polled
                }))
            };
            let mut ticks = 0;
            for _ in 0..100 {
                tokio::task::yield_now().await;
                ticks += 1;
            }
            consumer.abort();
            ticks
        });
        drop(runtime);
        assert_eq!(ticks, 100, "{kind}: the other task was starved");
        assert!(
            polls.load(Ordering::SeqCst) >= 2,
            "{kind}: the primitive never yielded"
        );
        if kind != "join_all" {
            assert_eq!(
                outputs.load(Ordering::SeqCst),
                OTHERS,
                "{kind}: the other futures were starved"
            );
        }
        world
            .check_violations()
            .unwrap_or_else(|e| panic!("{kind}: {e}"));
        let world = Arc::try_unwrap(world).expect("the consumer is gone");
        world
            .check_all_dropped_once()
            .unwrap_or_else(|e| panic!("{kind}: {e}"));
    }
}

#[test]
fn streams_that_are_always_ready_take_turns_in_a_merge() {
    use std::pin::Pin;
    use std::task::{Context, Poll, Waker};

    use futures_core::Stream;
    use futures_util::stream;

    type Boxed = Pin<Box<dyn Stream<Item = u32>>>;
    fn streams() -> [Boxed; 2] {
        [
            Box::pin(stream::repeat(0)),
            Box::pin(stream::iter([1, 2, 3])),
        ]
    }
    fn first_outputs<S: Stream<Item = u32> + Unpin>(merged: &mut S, n: usize) -> Vec<u32> {
        let mut cx = Context::from_waker(Waker::noop());
        (0..n)
            .map(|_| match Pin::new(&mut *merged).poll_next(&mut cx) {
                Poll::Ready(Some(item)) => item,
                other => panic!("the always-ready stream has an item, got {other:?}"),
            })
            .collect()
    }
    // The merge's contract: streams that are always ready take turns, one item each (so the
    // one that never ends holds up the other by one item at most).
    let mut bounded = pinfold_merge::MergeBounded::new(2);
    for s in streams() {
        assert!(bounded.try_insert(s).is_ok());
    }
    let mut growable = pinfold_merge::Merge::new();
    for s in streams() {
        growable.insert(s);
    }
    for (name, outputs) in [
        ("MergeBounded", first_outputs(&mut bounded, 8)),
        ("Merge", first_outputs(&mut growable, 8)),
    ] {
        assert_eq!(
            outputs,
            [0, 1, 0, 2, 0, 3, 0, 0],
            "{name}: the streams did not take turns"
        );
    }
}

#[test]
fn a_woken_stream_gets_its_turn_beside_one_that_is_always_ready() {
    use std::pin::Pin;
    use std::task::{Context, Poll, Waker};

    use futures_channel::mpsc;
    use futures_core::Stream;
    use futures_util::stream;

    type Boxed = Pin<Box<dyn Stream<Item = u32>>>;
    fn next<S: Stream<Item = u32> + Unpin>(merged: &mut S) -> u32 {
        match Pin::new(merged).poll_next(&mut Context::from_waker(Waker::noop())) {
            Poll::Ready(Some(item)) => item,
            other => panic!("the always-ready stream has an item, got {other:?}"),
        }
    }
    // The merge polls only woken streams, and collects the wakes at every call: a stream that
    // waited, once woken, gives its item within a turn of the always-ready one, also while
    // the always-ready one keeps the merge busy.
    let check = |name: &str, merged: &mut dyn FnMut() -> u32, send: &mut dyn FnMut(u32)| {
        for round in 0..3 {
            assert_eq!(merged(), 0, "{name}: the always-ready stream first");
            send(round + 1);
            let outputs = [merged(), merged()];
            assert!(
                outputs.contains(&(round + 1)),
                "{name}: the woken stream's item {} did not come in two calls: {outputs:?}",
                round + 1
            );
        }
    };
    let (tx, rx) = mpsc::unbounded();
    let mut bounded = pinfold_merge::MergeBounded::new(2);
    assert!(
        bounded
            .try_insert(Box::pin(stream::repeat(0u32)) as Boxed)
            .is_ok()
    );
    assert!(bounded.try_insert(Box::pin(rx) as Boxed).is_ok());
    check("MergeBounded", &mut || next(&mut bounded), &mut |item| {
        tx.unbounded_send(item).unwrap()
    });
    let (tx, rx) = mpsc::unbounded();
    let mut growable = pinfold_merge::Merge::new();
    growable.insert(Box::pin(stream::repeat(0u32)) as Boxed);
    growable.insert(Box::pin(rx) as Boxed);
    check("Merge", &mut || next(&mut growable), &mut |item| {
        tx.unbounded_send(item).unwrap()
    });
}
