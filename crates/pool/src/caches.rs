//! The caches of free buffers: a fixed number of free lists, each the home of the threads that
//! map to it, so that threads running side by side acquire and release on lists of their own
//! rather than all on the shared one. Which cache a thread uses is [`home`].

/// How many caches a pool has (a fixed array in the pool's shared state; a power of two).
#[cfg(not(all(pinfold_loom, feature = "loom")))]
pub(crate) const CACHES: usize = 16;
/// Two under loom: with the main thread and two workers, the models see threads with a cache
/// of their own and threads sharing one.
#[cfg(all(pinfold_loom, feature = "loom"))]
pub(crate) const CACHES: usize = 2;

/// The most buffers moved between a cache and the shared list at once.
pub(crate) const MAX_BATCH: u32 = 16;

/// How many buffers a pool of `count` moves between a cache and the shared list at once: a
/// share of the pool small enough that the caches together hold at most half of it at their
/// high-water mark (twice a batch each).
pub(crate) fn batch(count: u32) -> u32 {
    (count / (4 * CACHES as u32)).clamp(1, MAX_BATCH)
}

/// The calling thread's cache, `0..CACHES`: with `std`, the threads take the caches in turn,
/// at their first use of any pool, and keep theirs.
#[cfg(all(feature = "std", not(all(pinfold_loom, feature = "loom"))))]
#[inline]
pub(crate) fn home() -> usize {
    use core::cell::Cell;
    use core::sync::atomic::{AtomicUsize, Ordering};

    static NEXT: AtomicUsize = AtomicUsize::new(0);
    std::thread_local! {
        static HOME: Cell<usize> = const { Cell::new(usize::MAX) };
    }
    // A thread whose thread-locals are being destroyed (a buffer dropped by one) uses cache 0.
    HOME.try_with(|home| {
        let mut index = home.get();
        if index == usize::MAX {
            // Relaxed: the counter only spreads the threads; any value is correct.
            index = NEXT.fetch_add(1, Ordering::Relaxed) % CACHES;
            home.set(index);
        }
        index
    })
    .unwrap_or(0)
}

/// The calling thread's cache, `0..CACHES`: without `std` there are no thread-locals, so the
/// cache is picked by the address of the caller's stack, which differs between threads whose
/// stacks are 2 MiB or more apart. Any answer is correct; it only spreads the threads.
#[cfg(all(not(feature = "std"), not(all(pinfold_loom, feature = "loom"))))]
#[inline]
pub(crate) fn home() -> usize {
    let here = 0_u8;
    (core::ptr::addr_of!(here).addr() >> 21) % CACHES
}

/// The calling thread's cache under loom: loom's thread-locals, handed out in turn from a
/// counter that starts over with each execution, so every execution maps threads alike.
#[cfg(all(pinfold_loom, feature = "loom"))]
pub(crate) fn home() -> usize {
    use loom::sync::atomic::{AtomicUsize, Ordering};

    loom::lazy_static! {
        static ref NEXT: AtomicUsize = AtomicUsize::new(0);
    }
    loom::thread_local! {
        static HOME: usize = NEXT.fetch_add(1, Ordering::Relaxed) % CACHES;
    }
    HOME.with(|home| *home)
}
