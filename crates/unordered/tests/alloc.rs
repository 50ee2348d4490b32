//! Allocations, counted by a counting global allocator (this test binary's own): a growable
//! set's `new` allocates nothing, its first push allocates the first group, and a set that
//! stays within its capacity allocates nothing, whether it is fed one future at a time or in
//! batches; a bounded set allocates its storage when it is made, and never after.

use std::future::{Ready, ready};
use std::task::Poll;

use pinfold_testkit::alloc::{CountingAlloc, measure, measure_bytes};
use pinfold_testkit::stream::poll_once;
use pinfold_unordered::{FuturesUnordered, FuturesUnorderedBounded};

// It counts the allocations of the thread that makes them, so the tests of this file, running
// side by side, do not disturb each other's counts.
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
fn a_growable_set_within_its_first_group_holds_one_group_record_more_than_a_bounded_set() {
    // The same 32 values (the first group's size) in each: the growable set's bytes beyond the
    // bounded set's are its record of the one group, about 150 (its list of groups holds one
    // record, not room for four: 464 bytes).
    let values = || (0..32).map(ready);
    let (growable, growable_bytes) = measure_bytes(|| {
        let mut set = FuturesUnordered::new();
        set.extend(values());
        set
    });
    let (bounded, bounded_bytes) = measure_bytes(|| {
        let mut set = FuturesUnorderedBounded::new(32);
        for value in values() {
            set.push(value);
        }
        set
    });
    assert_eq!((growable.len(), bounded.len()), (32, 32));
    let extra = growable_bytes.peak - bounded_bytes.peak;
    assert!(
        extra < 200,
        "growable {} bytes, bounded {} bytes",
        growable_bytes.peak,
        bounded_bytes.peak
    );
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
    // Under Miri, 300 futures: still several groups.
    let items = if cfg!(miri) { 300 } else { 1_000 };
    let mut set = FuturesUnordered::new();
    for n in 0..items {
        set.push(ready(n));
    }
    while let Poll::Ready(Some(_)) = poll_once(&mut set) {}
    // Warm: the groups needed for them are back (retained now), and then none is needed.
    for n in 0..items {
        set.push(ready(n));
    }
    while let Poll::Ready(Some(_)) = poll_once(&mut set) {}
    let ((), count) = measure(|| {
        for _ in 0..if cfg!(miri) { 3 } else { 100 } {
            for n in 0..items {
                set.push(ready(n));
            }
            while let Poll::Ready(Some(_)) = poll_once(&mut set) {}
        }
    });
    assert_eq!(count, 0);
}

/// The bounded set's allocations.
mod bounded {
    use std::future::ready;
    use std::task::Poll;

    use futures_core::{FusedStream, Stream};
    use pinfold_testkit::alloc::measure;
    use pinfold_testkit::stream::poll_once;
    use pinfold_unordered::FuturesUnorderedBounded;

    #[test]
    fn allocates_at_most_twice_when_made_and_never_after() {
        const CAPACITY: usize = 256;
        let total: usize = if cfg!(miri) { 1_000 } else { 512_000 };

        // The counter counts: a `Vec` made inside the window is seen.
        let (_, seen) = measure(|| Vec::<u8>::with_capacity(1));
        assert_eq!(seen, 1, "the counting allocator does not count");

        let (mut set, made) = measure(|| FuturesUnorderedBounded::new(CAPACITY));
        assert!(made <= 2, "new({CAPACITY}) made {made} allocations");
        assert_eq!(set.size_hint(), (0, Some(0)));

        let ((count, sum), after) = measure(|| {
            let mut next = 0;
            let (mut count, mut sum) = (0, 0);
            // Fill the set.
            while !set.is_full() {
                set.push(ready(next));
                next += 1;
            }
            assert_eq!(set.size_hint(), (CAPACITY, Some(CAPACITY)));
            // Keep it full: take one output, push one future.
            while next < total {
                match poll_once(&mut set) {
                    Poll::Ready(Some(out)) => {
                        count += 1;
                        sum += out;
                    }
                    _ => panic!("a full set of ready futures gave no output"),
                }
                assert_eq!(set.size_hint(), (CAPACITY - 1, Some(CAPACITY - 1)));
                set.push(ready(next));
                next += 1;
            }
            assert_eq!(set.size_hint(), (CAPACITY, Some(CAPACITY)));
            // Drain it.
            while let Poll::Ready(Some(out)) = poll_once(&mut set) {
                count += 1;
                sum += out;
            }
            assert_eq!(set.size_hint(), (0, Some(0)));
            assert!(set.is_terminated());
            (count, sum)
        });
        assert_eq!(
            after, 0,
            "pushing and draining {total} futures made {after} allocations"
        );
        assert_eq!(count, total);
        assert_eq!(sum, total * (total - 1) / 2);
        assert!(set.is_empty());
    }
}

#[test]
fn pushes_after_reserve_allocate_nothing() {
    let n = if cfg!(miri) { 300 } else { 5_000 };
    let mut set = FuturesUnordered::new();
    set.push(ready(0));
    set.reserve(n);
    let ((), count) = measure(|| {
        for i in 1..=n {
            set.push(ready(i));
        }
    });
    assert_eq!(count, 0, "{n} pushes after reserve({n})");
    assert_eq!(set.len(), n + 1);
}
