//! The synchronisation primitives the pool is built from: std in normal builds, loom under
//! `--cfg pinfold_loom` with the crate feature `loom`, so that the model checker sees every
//! atomic operation, every lock, every access to a waiter node and the memory block's
//! allocation.

#[cfg(all(pinfold_loom, feature = "loom"))]
pub(crate) use loom::{
    alloc::{alloc, dealloc},
    hint::spin_loop,
    sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, Ordering, fence},
    sync::{Arc, Mutex, MutexGuard},
};

#[cfg(not(all(pinfold_loom, feature = "loom")))]
pub(crate) use alloc::{
    alloc::{alloc, dealloc},
    sync::Arc,
};
/// For the stocks' barriers where there is no `membarrier` (see `stocks`).
#[cfg(not(all(pinfold_loom, feature = "loom")))]
#[allow(unused_imports)]
pub(crate) use core::sync::atomic::fence;
#[cfg(not(all(pinfold_loom, feature = "loom")))]
pub(crate) use core::{
    hint::spin_loop,
    sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, Ordering},
};
#[cfg(all(not(all(pinfold_loom, feature = "loom")), feature = "std"))]
pub(crate) use std::sync::{Mutex, MutexGuard};

#[cfg(all(not(all(pinfold_loom, feature = "loom")), not(feature = "std")))]
pub(crate) use spin::{SpinLock as Mutex, SpinLockGuard as MutexGuard};

/// Takes `mutex`, a poisoned one as is: the pool's locks are held for a few word operations
/// and never while user code runs, so a panic cannot leave what they guard half-changed.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    #[cfg(feature = "std")]
    return mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    #[cfg(not(feature = "std"))]
    return mutex.lock();
}

/// The waiter lock without `std`: a test-and-test-and-set spin lock. It is held only for a
/// few list operations (no user code runs under it, see `WaitQueue::lock`), so spinning is short.
/// Built from this module's atomics and cell, so `loom-tests/tests/pool_spin_lock.rs` checks
/// it under loom.
#[cfg_attr(
    any(feature = "std", all(pinfold_loom, feature = "loom")),
    allow(dead_code)
)]
// `pub` items: the crate root re-exports the lock for the loom model (under loom only).
#[allow(unreachable_pub)]
pub(crate) mod spin {
    use core::marker::PhantomData;
    use core::ops::{Deref, DerefMut};

    use super::{AtomicBool, Ordering, UnsafeCell, spin_loop};

    /// A `T` that one holder at a time may use.
    #[derive(Debug)]
    pub struct SpinLock<T> {
        locked: AtomicBool,
        value: UnsafeCell<T>,
    }

    // SAFETY: the lock hands out access to `value` to one holder at a time (the `Acquire`
    // swap that takes it synchronizes with the `Release` store that gave it back), so sharing
    // the lock shares no `&mut T` between threads; `T: Send` because the value is used by
    // whichever thread holds it.
    unsafe impl<T: Send> Sync for SpinLock<T> {}

    impl<T> SpinLock<T> {
        /// An unlocked lock holding `value`.
        pub fn new(value: T) -> Self {
            Self {
                locked: AtomicBool::new(false),
                value: UnsafeCell::new(value),
            }
        }

        /// Spins until the lock is free, then takes it.
        pub fn lock(&self) -> SpinLockGuard<'_, T> {
            while self
                .locked
                .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
                .is_err()
            {
                while self.locked.load(Ordering::Relaxed) {
                    spin_loop();
                }
            }
            SpinLockGuard {
                lock: self,
                _access: PhantomData,
            }
        }
    }

    /// Access to a [`SpinLock`]'s value; gives the lock back when dropped.
    #[derive(Debug)]
    pub struct SpinLockGuard<'a, T> {
        lock: &'a SpinLock<T>,
        /// What the guard hands out: `Send` and `Sync` as a `&mut T` is, so that a `&guard`
        /// shared between threads shares a `&T` only if `T: Sync`.
        _access: PhantomData<&'a mut T>,
    }

    impl<T> Deref for SpinLockGuard<'_, T> {
        type Target = T;

        fn deref(&self) -> &T {
            // SAFETY: the guard exists only while its holder has the lock (see `lock`), so no
            // `&mut` to the value exists but through this guard, which `&self` borrows.
            self.lock.value.with_mut(|value| unsafe { &*value })
        }
    }

    impl<T> DerefMut for SpinLockGuard<'_, T> {
        fn deref_mut(&mut self) -> &mut T {
            // SAFETY: as in `deref`, and `&mut self` makes this the only access through it.
            self.lock.value.with_mut(|value| unsafe { &mut *value })
        }
    }

    impl<T> Drop for SpinLockGuard<'_, T> {
        fn drop(&mut self) {
            // Release: what the holder wrote happens before the next holder's `Acquire`.
            self.lock.locked.store(false, Ordering::Release);
        }
    }

    #[cfg(all(test, not(all(pinfold_loom, feature = "loom"))))]
    mod tests {
        use std::sync::Arc;
        use std::thread;

        use super::SpinLock;

        #[test]
        fn holders_take_turns() {
            let threads = 4;
            let rounds = if cfg!(miri) { 20 } else { 2_000 };
            let lock = Arc::new(SpinLock::new(0_usize));
            let handles: std::vec::Vec<_> = (0..threads)
                .map(|_| {
                    let lock = lock.clone();
                    thread::spawn(move || {
                        for _ in 0..rounds {
                            // Not one `+= 1`: a read, then a write, that a second holder
                            // would interleave.
                            let mut value = lock.lock();
                            let seen = *value;
                            *value = seen + 1;
                        }
                    })
                })
                .collect();
            for handle in handles {
                handle.join().unwrap();
            }
            assert_eq!(*lock.lock(), threads * rounds);
        }

        #[test]
        fn a_guard_is_shared_between_threads_only_if_its_value_may_be() {
            use core::cell::Cell;

            use pinfold_testkit::auto_traits::{AmbiguousIfSync, sync};

            use super::SpinLockGuard;

            sync::<SpinLockGuard<'static, u8>>();
            // A `&guard` on two threads would give both a `&Cell`: a data race.
            let _ = <SpinLockGuard<'static, Cell<u8>> as AmbiguousIfSync<_>>::not_sync;
        }
    }
}

/// `core::cell::UnsafeCell` behind loom's closure-based interface (loom's own under loom), so
/// the same code compiles under both: `pinfold-sync`'s, which the arena uses too.
pub(crate) use pinfold_sync::UnsafeCell;
