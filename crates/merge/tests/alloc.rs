//! Allocations: a `MergeBounded` allocates its storage when it is made and never after, and a
//! `Merge` made with a capacity allocates nothing while it stays within it, however many
//! streams go through them.
//!
//! This file holds a single test so that nothing else runs while the counting allocator is
//! counting.

mod support;

use std::task::Poll;

use futures_util::StreamExt;
use futures_util::stream::{self, Repeat, Take};
use pinfold_merge::{Merge, MergeBounded};
use pinfold_testkit::alloc::{CountingAlloc, measure};
use support::{Bounded, Growable, MergeUnderTest, counting_waker};

#[global_allocator]
static ALLOCATOR: CountingAlloc = CountingAlloc;

/// Stream `i` gives `i % 4` items, each `i` (so some end at their first poll).
fn stream_number(i: usize) -> Take<Repeat<usize>> {
    stream::repeat(i).take(i % 4)
}

/// Pushes `total` streams through `merged`, keeping it at `capacity` streams, and removes each
/// stream whose number is a multiple of 5 at its first item; how many items came, and their
/// sum, with the allocations made meanwhile.
fn churn<M: MergeUnderTest>(
    merged: &mut M::Merge<Take<Repeat<usize>>>,
    capacity: usize,
    total: usize,
) -> ((usize, usize), usize) {
    let (task, wakes) = counting_waker();
    let mut cx = std::task::Context::from_waker(&task);
    measure(|| {
        let (mut pushed, mut count, mut sum) = (0, 0, 0);
        loop {
            while M::len(merged) < capacity && pushed < total {
                M::insert(merged, stream_number(pushed));
                pushed += 1;
            }
            let before = wakes.count();
            match M::poll_next_keyed(merged, &mut cx) {
                Poll::Ready(Some((key, item))) => {
                    count += 1;
                    sum += item;
                    if item % 5 == 0 {
                        assert!(M::remove(merged, key));
                    }
                }
                Poll::Ready(None) if pushed == total => return (count, sum),
                Poll::Ready(None) => {}
                Poll::Pending => assert!(wakes.count() > before, "Pending with no wake"),
            }
        }
    })
}

#[test]
fn no_allocation_after_the_merge_is_made() {
    let capacity = if cfg!(miri) { 8 } else { 64 };
    let total = if cfg!(miri) { 200 } else { 100_000 };
    let (expected_count, expected_sum) = (0..total)
        .map(|i| if i % 5 == 0 { (i % 4).min(1) } else { i % 4 })
        .enumerate()
        .fold((0, 0), |(count, sum), (i, n)| (count + n, sum + n * i));

    // The counter counts: a `Vec` made inside the window is seen.
    let (_, seen) = measure(|| Vec::<u8>::with_capacity(1));
    assert_eq!(seen, 1, "the counting allocator does not count");

    let (mut bounded, made) = measure(|| MergeBounded::new(capacity));
    assert!(
        made <= 2,
        "MergeBounded::new({capacity}) made {made} allocations"
    );
    let ((count, sum), after) = churn::<Bounded>(&mut bounded, capacity, total);
    assert_eq!(
        after, 0,
        "MergeBounded: {after} allocations for {total} streams"
    );
    assert_eq!((count, sum), (expected_count, expected_sum));

    let mut growable = Merge::with_capacity(capacity);
    let ((count, sum), after) = churn::<Growable>(&mut growable, capacity, total);
    assert_eq!(after, 0, "Merge: {after} allocations for {total} streams");
    assert_eq!((count, sum), (expected_count, expected_sum));
    assert_eq!(growable.capacity(), capacity, "the merge grew");
}
