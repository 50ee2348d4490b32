//! A global allocator that counts, while a [`measure`] call is running, the allocations made,
//! the bytes requested, and the peak of the bytes live at once.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering::Relaxed};

/// Whether a [`measure`] call is counting. Off, the allocator is `System` plus one relaxed
/// load, so the timed runs are not slowed by the counting.
static COUNTING: AtomicBool = AtomicBool::new(false);
static ALLOCS: AtomicU64 = AtomicU64::new(0);
static BYTES: AtomicU64 = AtomicU64::new(0);
/// Bytes allocated minus bytes freed since the measurement started (negative if it frees more
/// than it allocates: memory from before the measurement).
static LIVE: AtomicI64 = AtomicI64::new(0);
static PEAK: AtomicI64 = AtomicI64::new(0);
/// One measurement at a time: the counters are global.
static MEASURING: Mutex<()> = Mutex::new(());

/// The system allocator, counting while a [`measure`] call runs. Install it in each bench
/// binary:
///
/// ```ignore
/// #[global_allocator]
/// static ALLOC: pinfold_benches::CountingAlloc = pinfold_benches::CountingAlloc::new();
/// ```
#[derive(Debug, Default)]
pub struct CountingAlloc {
    _private: (),
}

impl CountingAlloc {
    /// The allocator (it has no state: the counters are global).
    pub const fn new() -> Self {
        Self { _private: () }
    }
}

fn allocated(size: usize) {
    ALLOCS.fetch_add(1, Relaxed);
    BYTES.fetch_add(size as u64, Relaxed);
    let live = LIVE.fetch_add(size as i64, Relaxed) + size as i64;
    PEAK.fetch_max(live, Relaxed);
}

// SAFETY: every method forwards to `System` with the caller's arguments unchanged, so
// `System`'s guarantees are ours; the counting only touches atomics and never allocates.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller upholds `GlobalAlloc::alloc`'s contract, which we pass on.
        let ptr = unsafe { System.alloc(layout) };
        if COUNTING.load(Relaxed) && !ptr.is_null() {
            allocated(layout.size());
        }
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller upholds `GlobalAlloc::alloc_zeroed`'s contract, which we pass on.
        let ptr = unsafe { System.alloc_zeroed(layout) };
        if COUNTING.load(Relaxed) && !ptr.is_null() {
            allocated(layout.size());
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller upholds `GlobalAlloc::dealloc`'s contract, which we pass on.
        unsafe { System.dealloc(ptr, layout) };
        if COUNTING.load(Relaxed) {
            LIVE.fetch_sub(layout.size() as i64, Relaxed);
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller upholds `GlobalAlloc::realloc`'s contract, which we pass on.
        let new = unsafe { System.realloc(ptr, layout, new_size) };
        if COUNTING.load(Relaxed) && !new.is_null() {
            // A realloc counts as one allocation of its new size, and as freeing the old one.
            LIVE.fetch_sub(layout.size() as i64, Relaxed);
            allocated(new_size);
        }
        new
    }
}

/// What [`measure`] counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Allocs {
    /// Calls to `alloc`, `alloc_zeroed` and `realloc`.
    pub allocs: u64,
    /// Bytes requested by those calls (a `realloc` counts its whole new size).
    pub bytes: u64,
    /// The most bytes live at once during the measurement, above what was live when it began.
    pub peak_bytes: u64,
}

/// Runs `f` once, counting every allocation made meanwhile, on any thread, by the
/// [`CountingAlloc`] installed as the global allocator (all zeros if it is not installed).
pub fn measure<R>(f: impl FnOnce() -> R) -> (Allocs, R) {
    let _one_at_a_time = MEASURING
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    ALLOCS.store(0, Relaxed);
    BYTES.store(0, Relaxed);
    LIVE.store(0, Relaxed);
    PEAK.store(0, Relaxed);
    COUNTING.store(true, Relaxed);
    let out = std::hint::black_box(f());
    COUNTING.store(false, Relaxed);
    let allocs = Allocs {
        allocs: ALLOCS.load(Relaxed),
        bytes: BYTES.load(Relaxed),
        peak_bytes: PEAK.load(Relaxed).max(0) as u64,
    };
    (allocs, out)
}

/// Runs `f` once untimed and uncounted, then [`measure`]s a second run: so that one-time
/// lazy initialisation (a thread-local's first use, a runtime's timer wheel, a thread's first
/// park) is not charged to whichever implementation happens to run first.
pub fn measure_warm<R>(mut f: impl FnMut() -> R) -> (Allocs, R) {
    drop(std::hint::black_box(f()));
    measure(f)
}

/// Bytes live now above what was live when the running [`measure`] began (0 outside one).
pub fn live_bytes() -> i64 {
    if COUNTING.load(Relaxed) {
        LIVE.load(Relaxed)
    } else {
        0
    }
}

/// Pins glibc's `malloc` thresholds high, turning off glibc's own adjustment of them: blocks
/// up to 32 MiB (its largest threshold) come from the heap, and freed memory stays with the
/// allocator instead of going back to the system. Without this a workload's time depended on
/// which workloads ran before it in the same bench binary: glibc maps a large block on its
/// own and unmaps it when freed until a first such free raises its thresholds for the rest of
/// the process, and every unmapped page is faulted in again by the next run. A burst of
/// 100,000 futures in pinfold's growable set took 6.0 ms (2,400 page faults a run) as the
/// first workload of a process and 2.7 ms (none) after the others; pinned, every row runs as
/// in a warm process that keeps its memory, whatever ran before it. Called by
/// [`Group::new`](crate::Group::new) (once is enough); a no-op elsewhere than glibc.
pub fn pin_malloc_thresholds() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        static PINNED: std::sync::Once = std::sync::Once::new();
        PINNED.call_once(|| {
            // glibc's largest mapping threshold on 64-bit targets; past it `mallopt` fails.
            const MMAP_THRESHOLD: libc::c_int = 32 * 1024 * 1024;
            for (parameter, value) in [
                (libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD),
                (libc::M_TRIM_THRESHOLD, libc::c_int::MAX),
            ] {
                // SAFETY: `mallopt` only sets one of malloc's tuning parameters, which glibc
                // reads under its own locks; both values are in the ranges it accepts.
                let set = unsafe { libc::mallopt(parameter, value) };
                assert_eq!(set, 1, "mallopt({parameter}, {value}) failed");
            }
        });
    }
}
