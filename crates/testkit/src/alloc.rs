//! A global allocator that counts the allocations of each thread.
//!
//! A global allocator belongs to one binary, so a test binary that counts declares its own:
//!
//! ```
//! #[global_allocator]
//! static ALLOCATOR: pinfold_testkit::alloc::CountingAlloc = pinfold_testkit::alloc::CountingAlloc;
//!
//! let (v, allocations) = pinfold_testkit::alloc::measure(|| Vec::<u8>::with_capacity(8));
//! assert_eq!(allocations, 1);
//! # drop(v);
//! ```
//!
//! [`measure`] counts only when such a static exists; without one it sees no allocation.

// The allocator forwards to `System`, which takes unsafe calls; nothing else here is unsafe.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

thread_local! {
    /// Allocations (and reallocations) made by this thread through [`CountingAlloc`].
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

/// Forwards to the system allocator, counting each allocation, zeroed allocation and
/// reallocation made by the current thread, so tests running in parallel do not see each
/// other's.
#[derive(Debug, Clone, Copy, Default)]
pub struct CountingAlloc;

fn count_one() {
    // `try_with`: the allocator may run while the thread's locals are being torn down.
    let _ = ALLOCATIONS.try_with(|count| count.set(count.get() + 1));
}

// SAFETY: every method forwards to `System` with the caller's arguments, so `System`'s
// guarantees hold; counting touches a const-initialised thread-local `Cell`, which neither
// allocates nor unwinds.
unsafe impl GlobalAlloc for CountingAlloc {
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

/// What `f` returns, and how many allocations this thread made while running it.
pub fn measure<R>(f: impl FnOnce() -> R) -> (R, usize) {
    let before = ALLOCATIONS.with(Cell::get);
    let out = f();
    (out, ALLOCATIONS.with(Cell::get) - before)
}
