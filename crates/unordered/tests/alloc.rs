//! Allocations, counted by a counting global allocator (this test binary's own): `new`
//! allocates nothing, the first push allocates the first group, and a set that stays within
//! its capacity allocates nothing, whether it is fed one future at a time or in batches.

use std::future::{Ready, ready};
use std::task::Poll;

use pinfold_testkit::alloc::{CountingAlloc, measure};
use pinfold_testkit::stream::poll_once;
use pinfold_unordered::FuturesUnordered;

#[global_allocator]
static ALLOCATOR: CountingAlloc = CountingAlloc;

/// How many ready futures go through the set in the throughput workloads.
fn total() -> usize {
    if cfg!(miri) { 1_024 } else { 512_000 }
}

#[test]
fn new_allocates_nothing() {
    let ((), count) = measure(|| {
        let mut set = FuturesUnordered::<Ready<usize>>::new();
        assert_eq!(poll_once(&mut set), Poll::Ready(None));
        drop(set);
        drop(FuturesUnordered::<Ready<usize>>::default());
        drop(FuturesUnordered::<Ready<usize>>::with_capacity(0));
    });
    assert_eq!(count, 0);
}

#[test]
fn first_push_allocates_the_first_group_and_no_more() {
    let mut set = FuturesUnordered::new();
    // The table of groups, the hub, and the group's slots and wake table.
    let ((), count) = measure(|| set.push(ready(0)));
    assert_eq!(count, 4);
    let ((), count) = measure(|| {
        for n in 1..32 {
            set.push(ready(n));
        }
        let mut sum = 0;
        while let Poll::Ready(Some(n)) = poll_once(&mut set) {
            sum += n;
        }
        assert_eq!(sum, (0..32).sum());
    });
    assert_eq!(count, 0, "filling and draining the first group");
}

#[test]
fn ready_futures_through_a_window_of_256_allocate_at_most_16_times() {
    // As futures-buffered's benchmark: 256 in flight, one pushed for each that finishes.
    let total = total();
    let (sum, count) = measure(|| {
        let mut set = FuturesUnordered::new();
        let mut sum = 0;
        for n in 0..256 {
            set.push(ready(n));
        }
        for n in 256..total {
            match poll_once(&mut set) {
                Poll::Ready(Some(out)) => sum += out,
                other => panic!("expected an output, got {other:?}"),
            }
            set.push(ready(n));
        }
        while let Poll::Ready(Some(out)) = poll_once(&mut set) {
            sum += out;
        }
        assert!(set.is_empty());
        sum
    });
    assert_eq!(sum, (0..total).sum::<usize>());
    assert!(count <= 16, "{count} allocations");
}

#[test]
fn ready_futures_in_batches_of_256_allocate_at_most_16_times() {
    // Push 256, drain them all, again and again: the set must not release and reallocate its
    // groups every batch.
    let total = total();
    let (sum, count) = measure(|| {
        let mut set = FuturesUnordered::new();
        let mut sum = 0;
        for batch in 0..total / 256 {
            for n in 0..256 {
                set.push(ready(batch * 256 + n));
            }
            loop {
                match poll_once(&mut set) {
                    Poll::Ready(Some(out)) => sum += out,
                    Poll::Ready(None) => break,
                    Poll::Pending => panic!("ready futures, yet Pending"),
                }
            }
        }
        sum
    });
    assert_eq!(sum, (0..total).sum::<usize>());
    assert!(count <= 16, "{count} allocations");
}

#[test]
fn a_set_within_its_capacity_allocates_nothing() {
    let mut set = FuturesUnordered::new();
    for n in 0..1_000 {
        set.push(ready(n));
    }
    while let Poll::Ready(Some(_)) = poll_once(&mut set) {}
    // Warm: the groups needed for 1,000 are back (retained now), and then none is needed.
    for n in 0..1_000 {
        set.push(ready(n));
    }
    while let Poll::Ready(Some(_)) = poll_once(&mut set) {}
    let ((), count) = measure(|| {
        for _ in 0..if cfg!(miri) { 3 } else { 100 } {
            for n in 0..1_000 {
                set.push(ready(n));
            }
            while let Poll::Ready(Some(_)) = poll_once(&mut set) {}
        }
    });
    assert_eq!(count, 0);
}
