//! Allocations, counted by a counting global allocator (this test binary's own): `new`
//! allocates nothing, the first push allocates the first group, and a set that stays within
//! its capacity allocates nothing, whether it is fed one future at a time or in batches.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::future::{Ready, ready};
use std::pin::Pin;
use std::task::{Context, Poll};

use futures_core::Stream;
use pinfold_unordered::FuturesUnordered;

/// Counts the allocations (and reallocations) made by the current thread, so that tests
/// running in parallel do not see each other's.
struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

fn count_one() {
    // `try_with`: the allocator may run while the thread is being torn down.
    let _ = ALLOCATIONS.try_with(|count| count.set(count.get() + 1));
}

// SAFETY: every method forwards to `System` with the caller's arguments, so `System`'s
// guarantees hold; counting touches a const-initialised thread-local `Cell`, which neither
// allocates nor unwinds.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count_one();
        // SAFETY: the caller upholds `GlobalAlloc::alloc`'s contract, which `System` shares.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count_one();
        // SAFETY: as for `alloc`.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` was allocated by `System` (through this allocator) with `layout`.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count_one();
        // SAFETY: as for `dealloc`, and the caller upholds `realloc`'s contract.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// How many allocations `f` made on this thread, and its result.
fn allocations<R>(f: impl FnOnce() -> R) -> (usize, R) {
    let before = ALLOCATIONS.with(Cell::get);
    let out = f();
    (ALLOCATIONS.with(Cell::get) - before, out)
}

/// One `poll_next`, with a waker that does nothing.
fn poll(set: &mut FuturesUnordered<Ready<usize>>) -> Poll<Option<usize>> {
    let mut cx = Context::from_waker(futures_task::noop_waker_ref());
    Pin::new(set).poll_next(&mut cx)
}

/// How many ready futures go through the set in the throughput workloads.
fn total() -> usize {
    if cfg!(miri) { 4_096 } else { 512_000 }
}

#[test]
fn new_allocates_nothing() {
    let (count, ()) = allocations(|| {
        let mut set = FuturesUnordered::<Ready<usize>>::new();
        assert_eq!(poll(&mut set), Poll::Ready(None));
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
    let (count, ()) = allocations(|| set.push(ready(0)));
    assert_eq!(count, 4);
    let (count, ()) = allocations(|| {
        for n in 1..32 {
            set.push(ready(n));
        }
        let mut sum = 0;
        while let Poll::Ready(Some(n)) = poll(&mut set) {
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
    let (count, sum) = allocations(|| {
        let mut set = FuturesUnordered::new();
        let mut sum = 0;
        for n in 0..256 {
            set.push(ready(n));
        }
        for n in 256..total {
            match poll(&mut set) {
                Poll::Ready(Some(out)) => sum += out,
                other => panic!("expected an output, got {other:?}"),
            }
            set.push(ready(n));
        }
        while let Poll::Ready(Some(out)) = poll(&mut set) {
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
    let (count, sum) = allocations(|| {
        let mut set = FuturesUnordered::new();
        let mut sum = 0;
        for batch in 0..total / 256 {
            for n in 0..256 {
                set.push(ready(batch * 256 + n));
            }
            loop {
                match poll(&mut set) {
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
    while let Poll::Ready(Some(_)) = poll(&mut set) {}
    // Warm: the groups needed for 1,000 are back (retained now), and then none is needed.
    for n in 0..1_000 {
        set.push(ready(n));
    }
    while let Poll::Ready(Some(_)) = poll(&mut set) {}
    let (count, ()) = allocations(|| {
        for _ in 0..if cfg!(miri) { 3 } else { 100 } {
            for n in 0..1_000 {
                set.push(ready(n));
            }
            while let Poll::Ready(Some(_)) = poll(&mut set) {}
        }
    });
    assert_eq!(count, 0);
}
