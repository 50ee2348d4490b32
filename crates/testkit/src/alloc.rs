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
    /// Bytes allocated less bytes freed by this thread (negative when it frees what another
    /// thread allocated).
    static LIVE: Cell<isize> = const { Cell::new(0) };
    /// The highest `LIVE` since [`measure_bytes`] last reset it.
    static PEAK: Cell<isize> = const { Cell::new(0) };
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

/// Adds `bytes` (negative for a free) to this thread's live bytes, and raises its peak.
fn add_live(bytes: isize) {
    let Ok(live) = LIVE.try_with(|live| {
        live.set(live.get().wrapping_add(bytes));
        live.get()
    }) else {
        return;
    };
    let _ = PEAK.try_with(|peak| peak.set(peak.get().max(live)));
}

// SAFETY: every method forwards to `System` with the caller's arguments, so `System`'s
// guarantees hold; counting touches a const-initialised thread-local `Cell`, which neither
// allocates nor unwinds.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count_one();
        add_live(layout.size() as isize);
        // SAFETY: the caller upholds `GlobalAlloc::alloc`'s contract, which `System` shares.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count_one();
        add_live(layout.size() as isize);
        // SAFETY: as for `alloc`.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        add_live(-(layout.size() as isize));
        // SAFETY: `ptr` was allocated by `System` (through this allocator) with `layout`.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count_one();
        add_live(new_size as isize - layout.size() as isize);
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

/// What [`measure_bytes`] saw of this thread's heap while `f` ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bytes {
    /// The most bytes live at once above what was live when `f` started (0 if never more).
    pub peak: usize,
    /// Bytes live when `f` returned less those live when it started (negative when `f` freed
    /// more than it allocated).
    pub change: isize,
}

/// What `f` returns, and how the bytes this thread allocated and freed moved while it ran
/// (counted only with a [`CountingAlloc`] static, as [`measure`]). It restarts the thread's
/// peak, so calls do not nest: an enclosing call's `peak` would miss what came before.
pub fn measure_bytes<R>(f: impl FnOnce() -> R) -> (R, Bytes) {
    let start = LIVE.with(Cell::get);
    PEAK.with(|peak| peak.set(start));
    let out = f();
    let bytes = Bytes {
        peak: (PEAK.with(Cell::get) - start) as usize,
        change: LIVE.with(Cell::get) - start,
    };
    (out, bytes)
}
