//! The sparse-wake workloads: the cells wake what waits on them, and the batches are what
//! `merge_sparse_10k` and `unordered_sparse_10k` say they are.

use std::collections::HashSet;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures_core::Stream;
use pinfold_benches::{LocalSignalCell, SPARSE_BATCH, SPARSE_BATCHES, SPARSE_LEN, SparseWakes};
use pinfold_testkit::future::poll_with;
use pinfold_testkit::waker::counting_waker;

fn poll_stream<S: Stream + Unpin>(stream: &mut S, cx: &mut Context<'_>) -> Poll<Option<S::Item>> {
    Pin::new(stream).poll_next(cx)
}

#[test]
fn a_stream_gives_one_item_per_fire_and_wakes_once_per_fire() {
    let cell = LocalSignalCell::new();
    let mut stream = cell.stream(7);
    let (waker, wakes) = counting_waker();
    let mut cx = Context::from_waker(&waker);
    assert_eq!(poll_stream(&mut stream, &mut cx), Poll::Pending);
    assert!(cell.is_registered());
    cell.fire();
    assert_eq!(wakes.count(), 1);
    assert!(!cell.is_registered());
    assert_eq!(poll_stream(&mut stream, &mut cx), Poll::Ready(Some(7)));
    assert_eq!(poll_stream(&mut stream, &mut cx), Poll::Pending);
    cell.fire();
    assert_eq!(wakes.count(), 2);
    assert_eq!(poll_stream(&mut stream, &mut cx), Poll::Ready(Some(7)));
    assert_eq!(poll_stream(&mut stream, &mut cx), Poll::Pending);
}

#[test]
fn a_signal_finishes_once_its_cell_fired() {
    let cell = LocalSignalCell::new();
    let mut signal = cell.signal(3);
    let (waker, wakes) = counting_waker();
    assert_eq!(poll_with(&mut signal, &waker), Poll::Pending);
    cell.fire();
    assert_eq!(wakes.count(), 1);
    assert_eq!(poll_with(&mut signal, &waker), Poll::Ready(3));
}

#[test]
fn reset_forgets_the_fire_and_the_waker() {
    let cell = LocalSignalCell::new();
    let (waker, wakes) = counting_waker();
    let mut stream = cell.stream(1);
    assert_eq!(
        poll_stream(&mut stream, &mut Context::from_waker(&waker)),
        Poll::Pending
    );
    cell.reset();
    assert!(!cell.is_registered());
    cell.fire();
    assert_eq!(wakes.count(), 0, "the forgotten waker is not woken");
    cell.reset();
    assert_eq!(
        poll_stream(&mut stream, &mut Context::from_waker(&waker)),
        Poll::Pending,
        "the fire before the reset is gone"
    );
}

#[test]
fn merge_batches_fire_distinct_cells() {
    let wakes = SparseWakes::merge_sparse_10k();
    assert_eq!(wakes.len(), SPARSE_LEN);
    let batches: Vec<&[usize]> = wakes.batches().collect();
    assert_eq!(batches.len(), SPARSE_BATCHES);
    for batch in batches {
        assert_eq!(batch.len(), SPARSE_BATCH);
        let distinct: HashSet<usize> = batch.iter().copied().collect();
        assert_eq!(distinct.len(), SPARSE_BATCH, "no cell twice in a batch");
        assert!(batch.iter().all(|&i| i < SPARSE_LEN));
    }
}

#[test]
fn unordered_batches_fire_every_cell_once() {
    let wakes = SparseWakes::unordered_sparse_10k();
    let mut fired: Vec<usize> = wakes.batches().flatten().copied().collect();
    assert_eq!(wakes.batches().count(), SPARSE_BATCHES);
    assert!(wakes.batches().all(|batch| batch.len() == SPARSE_BATCH));
    fired.sort_unstable();
    assert_eq!(fired, (0..SPARSE_LEN).collect::<Vec<_>>());
    let n = SPARSE_LEN as u64;
    assert_eq!(wakes.expected(), (n, n * (n - 1) / 2));
}

#[test]
fn a_round_takes_every_fire_through_a_merge() {
    let wakes = SparseWakes::repeating(100, 30, 5, 1);
    for _ in 0..2 {
        wakes.round(|w| {
            let mut merged = pinfold_merge::MergeBounded::new(w.len());
            w.streams().for_each(|s| merged.push(s));
            merged
        });
    }
}

#[test]
#[should_panic(expected = "a batch gives its cells' items")]
fn a_round_rejects_items_of_cells_that_did_not_fire() {
    let wakes = SparseWakes::repeating(100, 30, 5, 1);
    // Every item off by one: as many items as fires, not the fired cells' indexes.
    wakes.round(|w| {
        let mut merged = pinfold_merge::MergeBounded::new(w.len());
        w.streams().for_each(|s| merged.push(s));
        futures_util::StreamExt::map(merged, |item| item + 1)
    });
}
