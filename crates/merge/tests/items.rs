//! Items: every item of every stream comes out exactly once, each stream's in its order, with
//! the key of its stream, whatever mix of items, `Pending` and self-wakes the streams give.
//! (Streams fed from other threads: `wakes.rs`.)

mod support;

use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

use futures_channel::mpsc;
use futures_core::Stream;
use futures_util::{StreamExt, future};
use support::{
    Key, MergeUnderTest, Tracked, XorShift, assert_each_stream_whole_and_in_order, both,
    counting_waker,
};

both!(
    every_item_comes_out_once_in_its_streams_order,
    channels_fed_while_the_merge_waits_give_every_item,
    items_come_as_their_channels_are_fed,
);

/// A stream of `(id, 0..len)` that at each poll, as its own PRNG draws, gives its next item
/// (or its end), wakes itself and returns `Pending`, or returns `Pending` and leaves its waker
/// in `parked` for the test to wake.
struct Jittery {
    id: usize,
    len: usize,
    next: usize,
    rng: XorShift,
    parked: Arc<Mutex<Vec<Waker>>>,
}

impl Stream for Jittery {
    type Item = (usize, usize);

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<(usize, usize)>> {
        let this = &mut *self;
        match this.rng.below(4) {
            0 => {
                cx.waker().wake_by_ref();
                Poll::Pending
            }
            1 => {
                this.parked.lock().unwrap().push(cx.waker().clone());
                Poll::Pending
            }
            _ if this.next == this.len => Poll::Ready(None),
            _ => {
                this.next += 1;
                Poll::Ready(Some((this.id, this.next - 1)))
            }
        }
    }
}

/// Many [`Jittery`] streams of random lengths: each item comes once, with its stream's key and
/// in its stream's order; each stream is dropped once; and a `Pending` call always leaves a
/// way to be woken (a wake of a parked stream wakes the task).
fn every_item_comes_out_once_in_its_streams_order<M: MergeUnderTest>() {
    let (seeds, streams, max_len) = if cfg!(miri) { (1, 12, 6) } else { (5, 200, 30) };
    for seed in 1..=seeds {
        let mut rng = XorShift::new(seed);
        let parked = Arc::new(Mutex::new(Vec::new()));
        let lengths: Vec<usize> = (0..streams).map(|_| rng.below(max_len + 1)).collect();
        let mut merged = M::new(streams);
        let mut keys = Vec::new();
        let mut counts = Vec::new();
        for (id, &len) in lengths.iter().enumerate() {
            let jittery = Jittery {
                id,
                len,
                next: 0,
                rng: XorShift::new(rng.next_u64()),
                parked: parked.clone(),
            };
            let (stream, count) = Tracked::new(id, jittery);
            keys.push(M::insert(&mut merged, stream));
            counts.push(count);
        }

        let (task, wakes) = counting_waker();
        let mut items = Vec::new();
        loop {
            let before = wakes.count();
            match M::poll_next_keyed(&mut merged, &mut Context::from_waker(&task)) {
                Poll::Ready(Some((key, (id, seq)))) => {
                    assert_eq!(key, keys[id], "item {seq} of stream {id} under another key");
                    items.push((id, seq));
                }
                Poll::Ready(None) => break,
                Poll::Pending if wakes.count() > before => {}
                Poll::Pending => {
                    // Only parked streams are left to poll: wake some of them, as their
                    // sources would.
                    let mut parked = parked.lock().unwrap();
                    assert!(!parked.is_empty(), "Pending with nothing left to wake it");
                    rng.shuffle(&mut parked);
                    let n = 1 + rng.below(parked.len());
                    parked.drain(..n).for_each(Waker::wake);
                    assert!(
                        wakes.count() > before,
                        "a stream's wake did not wake the task"
                    );
                }
            }
        }
        assert_each_stream_whole_and_in_order(&items, &lengths);
        assert!(counts.iter().all(|count| count.drops() == 1));
    }
}

/// Channels fed and closed on the polling thread while the merge waits on them, each send
/// waking it. Ported from futures-buffered (`src/merge_bounded.rs` and
/// `src/merge_unbounded.rs`, test `merge_channels`), with futures-channel's channels in place
/// of its hand-written local one.
fn channels_fed_while_the_merge_waits_give_every_item<M: MergeUnderTest>() {
    let (senders, receivers): (Vec<_>, Vec<_>) = (0..3).map(|_| mpsc::unbounded()).unzip();
    let merged: M::Merge<mpsc::UnboundedReceiver<u32>> = receivers.into_iter().collect();
    let (sum, ()) = futures_executor::block_on(future::join(
        merged.fold(0, |sum, item| future::ready(sum + item)),
        async move {
            for item in 1..=4 {
                for sender in &senders {
                    sender.unbounded_send(item).unwrap();
                }
            }
        },
    ));
    assert_eq!(sum, 3 * (1 + 2 + 3 + 4));
}

/// Items come as their channels are fed, and the merge ends when every channel is closed.
/// Ported from futures-rs (`futures/tests/stream_select_all.rs`, `works_1`); two items sent
/// before one poll may come in either order.
fn items_come_as_their_channels_are_fed<M: MergeUnderTest>() {
    let (senders, receivers): (Vec<_>, Vec<_>) = (0..3).map(|_| mpsc::unbounded()).unzip();
    let mut merged = M::new(3);
    let keys: Vec<Key> = receivers
        .into_iter()
        .map(|receiver| M::insert(&mut merged, receiver))
        .collect();
    let mut items = futures_executor::block_on_stream(merged);
    for _ in 0..2 {
        senders[1].unbounded_send(99).unwrap();
        senders[0].unbounded_send(33).unwrap();
        let mut two: [u32; 2] = [items.next().unwrap(), items.next().unwrap()];
        two.sort_unstable();
        assert_eq!(two, [33, 99]);
    }
    senders[2].unbounded_send(42).unwrap();
    assert_eq!(items.next(), Some(42));
    senders[0].unbounded_send(43).unwrap();
    assert_eq!(items.next(), Some(43));
    drop(senders);
    assert_eq!(items.next(), None);
    let merged = items.into_inner();
    assert!(keys.iter().all(|&key| !M::contains_key(&merged, key)));
}

/// Streams that keep a `&mut` into themselves while they wait (a `once` over a future that
/// does, as `read(&mut buf).await` would) are left alone by the merge's bookkeeping between
/// their polls (Miri checks the borrows survive).
#[test]
fn streams_borrowing_themselves_while_they_wait_give_their_items() {
    use pinfold_testkit::future::{Gate, borrows_itself};
    // Gates for each merge's streams (a gate wakes one waiter).
    let gates: Vec<[Gate; 2]> = (0..3).map(|_| Default::default()).collect();
    let streams = |merge: usize| {
        gates.iter().enumerate().map(move |(n, gate)| {
            futures_util::stream::once(borrows_itself(gate[merge].clone(), n as u8))
        })
    };
    let mut bounded: pinfold_merge::MergeBounded<_> = streams(0).collect();
    let mut growable = pinfold_merge::merge(streams(1));
    assert!(pinfold_testkit::stream::poll_once(&mut bounded).is_pending());
    assert!(pinfold_testkit::stream::poll_once(&mut growable).is_pending());
    let (mut from_bounded, mut from_growable) = (Vec::new(), Vec::new());
    for gate in gates.iter().rev() {
        gate.iter().for_each(Gate::open);
        from_bounded.extend(pinfold_testkit::stream::settle(&mut bounded));
        from_growable.extend(pinfold_testkit::stream::settle(&mut growable));
    }
    assert_eq!(from_bounded, [2, 1, 0]);
    assert_eq!(from_growable, [2, 1, 0]);
}
