//! Fairness: a stream that is always ready delays neither a woken stream (its item comes out
//! before any always-ready stream has a second turn) nor the other ready streams (they take
//! turns), and streams that wake themselves do not keep `poll_next` from returning to the
//! executor.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::thread;

use futures_channel::mpsc;
use futures_util::future::Either;
use futures_util::{StreamExt, stream};
use support::{MergeUnderTest, Tracked, both, counting_waker, poll_keyed, poll_with};

both!(
    a_woken_stream_comes_out_of_the_next_call_beside_an_always_ready_one,
    a_woken_stream_comes_out_of_the_next_call_beside_two_always_ready_ones,
    always_ready_streams_take_turns,
    self_waking_streams_yield_to_the_executor,
);

/// A channel fed from another thread, merged with a `repeat` stream that always has an item:
/// each item sent comes out before the always-ready stream gives a second item after the send
/// (the send woke the channel's stream, queued behind the streams queued before the wake).
fn a_woken_stream_comes_out_of_the_next_call_beside_an_always_ready_one<M: MergeUnderTest>() {
    woken_beside_always_ready::<M>(1);
}

/// As [`a_woken_stream_comes_out_of_the_next_call_beside_an_always_ready_one`], beside two
/// always-ready streams: the crate's promise (a woken stream is polled before any always-ready
/// stream has a second turn) is not about one such stream only.
fn a_woken_stream_comes_out_of_the_next_call_beside_two_always_ready_ones<M: MergeUnderTest>() {
    woken_beside_always_ready::<M>(2);
}

/// Each item sent on a channel from another thread, merged with `always_ready` `repeat`
/// streams, must come out before any of them gives a second item after the send: within
/// `always_ready + 1` calls.
///
/// Deterministic: the main thread asks for each item only once the channel's stream has
/// returned `Pending` (so the send wakes it), then waits for the producer's Release store,
/// made after the send, before it polls.
fn woken_beside_always_ready<M: MergeUnderTest>(always_ready: usize) {
    const ALWAYS: usize = usize::MAX;
    let items = if cfg!(miri) { 4 } else { 200 };
    let (sender, receiver) = mpsc::unbounded();
    let (receiver, counts) = Tracked::new(0, receiver);
    let mut merged = M::new(always_ready + 1);
    let fed = M::insert(&mut merged, Either::Right(receiver));
    for _ in 0..always_ready {
        M::insert(&mut merged, Either::Left(stream::repeat(ALWAYS)));
    }

    let asked = Arc::new(AtomicUsize::new(0));
    let sent = Arc::new(AtomicUsize::new(0));
    let mut producer = Some(thread::spawn({
        let (asked, sent) = (asked.clone(), sent.clone());
        move || {
            for item in 0..items {
                // Acquire pairs with the main thread's Release store of `asked`.
                while asked.load(Ordering::Acquire) <= item {
                    if Arc::strong_count(&asked) == 1 {
                        return; // The main thread failed and is gone.
                    }
                    thread::yield_now();
                }
                sender.unbounded_send(item).unwrap();
                // Release: the send (and its wake) happens before the main thread sees this.
                sent.store(item + 1, Ordering::Release);
            }
        }
    }));

    for item in 0..items {
        // Wait until the channel's stream was polled since its last item: it found the
        // channel empty and returned `Pending`, leaving its waker with the channel.
        let polls = counts.polls();
        for call in 1.. {
            assert!(call <= 8, "a stream that gave an item was not polled again");
            assert_eq!(
                poll_keyed::<M, _>(&mut merged).map(|item| item.map(|(_, item)| item)),
                Poll::Ready(Some(ALWAYS))
            );
            if counts.polls() > polls {
                break;
            }
        }
        // Release pairs with the producer's Acquire load.
        asked.store(item + 1, Ordering::Release);
        // Acquire pairs with the producer's Release store, made after the send.
        while sent.load(Ordering::Acquire) <= item {
            if producer
                .as_ref()
                .is_some_and(|producer| producer.is_finished())
            {
                // `is_finished` does not synchronize (a load of `sent` may still see an older
                // value, as Miri's weak memory emulation shows); joining does.
                if let Some(producer) = producer.take() {
                    producer.join().unwrap();
                }
                assert!(sent.load(Ordering::Acquire) > item, "the producer stopped");
            }
            thread::yield_now();
        }
        let mut turns = Vec::new();
        loop {
            assert!(turns.len() <= 8, "item {item} never came");
            match poll_keyed::<M, _>(&mut merged) {
                Poll::Ready(Some((key, got))) if key == fed => {
                    assert_eq!(got, item);
                    break;
                }
                Poll::Ready(Some((key, got))) => {
                    assert_eq!(got, ALWAYS);
                    assert!(
                        !turns.contains(&key),
                        "an always-ready stream had a second turn before item {item}"
                    );
                    turns.push(key);
                }
                other => panic!("the merge gave {other:?}"),
            }
        }
        assert!(turns.len() <= always_ready);
    }
    if let Some(producer) = producer {
        producer.join().unwrap();
    }
}

/// Two always-ready streams take turns, one item each, until one ends. Ported from futures-rs
/// (`futures/tests/stream_select_all.rs`, `issue_1626`); either stream may go first.
fn always_ready_streams_take_turns<M: MergeUnderTest>() {
    let merged: M::Merge<_> = [stream::iter(0..=2), stream::iter(10..=14)]
        .into_iter()
        .collect();
    let items: Vec<i32> = futures_executor::block_on(merged.collect());
    assert!(
        items == [0, 10, 1, 11, 2, 12, 13, 14] || items == [10, 0, 11, 1, 12, 2, 13, 14],
        "the streams did not take turns: {items:?}"
    );
}

/// Streams that never give an item and wake themselves at each poll: each call polls each of
/// them at most once, then returns `Pending` having woken its task, so the executor runs others.
fn self_waking_streams_yield_to_the_executor<M: MergeUnderTest>() {
    let n = 4;
    let mut merged = M::new(n);
    let counts: Vec<_> = (0..n)
        .map(|id| {
            let spinning = stream::poll_fn(|cx: &mut Context<'_>| {
                cx.waker().wake_by_ref();
                Poll::<Option<()>>::Pending
            });
            let (stream, counts) = Tracked::new(id, spinning);
            M::insert(&mut merged, stream);
            counts
        })
        .collect();
    let (task, wakes) = counting_waker();
    for call in 1..=10 {
        let before = wakes.count();
        assert_eq!(poll_with(&mut merged, &task), Poll::Pending);
        assert!(
            wakes.count() > before,
            "call {call} returned Pending without a wake"
        );
        for (id, counts) in counts.iter().enumerate() {
            assert!(
                counts.polls() <= call,
                "stream {id} polled {} times in {call} calls",
                counts.polls()
            );
        }
    }
    assert!(
        counts.iter().all(|counts| counts.polls() >= 2),
        "a stream was starved"
    );
}
