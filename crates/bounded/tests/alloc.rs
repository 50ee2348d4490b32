//! Allocations: the set allocates its storage when it is made, and never after.
//!
//! This file holds a single test so that nothing else runs while the counting allocator is
//! counting.

use std::alloc::{GlobalAlloc, Layout, System};
use std::future::{Ready, ready};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::task::{Context, Poll};

use futures_core::{FusedStream, Stream};
use futures_util::StreamExt;
use pinfold_bounded::FuturesUnorderedBounded;

/// Counts allocations (including reallocations) while [`COUNTING`] is set.
struct CountingAlloc;

static COUNTING: AtomicBool = AtomicBool::new(false);
static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

impl CountingAlloc {
    fn count() {
        if COUNTING.load(Ordering::SeqCst) {
            ALLOCATIONS.fetch_add(1, Ordering::SeqCst);
        }
    }
}

// SAFETY: every method forwards to the system allocator with the caller's arguments; counting
// touches only atomics and never allocates.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        Self::count();
        // SAFETY: the caller upholds `GlobalAlloc::alloc`'s contract, which is System's.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        Self::count();
        // SAFETY: as in `alloc`.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        Self::count();
        // SAFETY: `ptr` was allocated by System through this allocator, with `layout`.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` was allocated by System through this allocator, with `layout`.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: CountingAlloc = CountingAlloc;

/// Runs `f`, returning its result and how many allocations it made.
fn allocations_in<R>(f: impl FnOnce() -> R) -> (R, usize) {
    let before = ALLOCATIONS.load(Ordering::SeqCst);
    COUNTING.store(true, Ordering::SeqCst);
    let out = f();
    COUNTING.store(false, Ordering::SeqCst);
    (out, ALLOCATIONS.load(Ordering::SeqCst) - before)
}

/// One `poll_next` with a waker that does nothing (and allocates nothing).
fn poll(set: &mut FuturesUnorderedBounded<Ready<usize>>) -> Poll<Option<usize>> {
    set.poll_next_unpin(&mut Context::from_waker(futures_task::noop_waker_ref()))
}

#[test]
fn allocates_at_most_twice_when_made_and_never_after() {
    const CAPACITY: usize = 256;
    let total: usize = if cfg!(miri) { 1_000 } else { 512_000 };

    // The counter counts: a `Vec` made inside the window is seen.
    let (_, seen) = allocations_in(|| Vec::<u8>::with_capacity(1));
    assert_eq!(seen, 1, "the counting allocator does not count");

    let (mut set, made) = allocations_in(|| FuturesUnorderedBounded::new(CAPACITY));
    assert!(made <= 2, "new({CAPACITY}) made {made} allocations");
    assert_eq!(set.size_hint(), (0, Some(0)));

    let ((count, sum), after) = allocations_in(|| {
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
            match poll(&mut set) {
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
        while let Poll::Ready(Some(out)) = poll(&mut set) {
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
