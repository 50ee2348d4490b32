//! The synchronisation primitives the pool is built from: std in normal builds, loom under
//! `--cfg pinfold_loom` with the crate feature `loom`, so that the model checker sees every
//! atomic operation, every lock, every access to a waiter node and the memory block's
//! allocation.

#[cfg(all(pinfold_loom, feature = "loom"))]
pub(crate) use loom::{
    alloc::{alloc, dealloc},
    cell::UnsafeCell,
    sync::atomic::{AtomicU32, AtomicU64, Ordering},
    sync::{Arc, Mutex, MutexGuard},
};

#[cfg(not(all(pinfold_loom, feature = "loom")))]
pub(crate) use std::{
    alloc::{alloc, dealloc},
    sync::atomic::{AtomicU32, AtomicU64, Ordering},
    sync::{Arc, Mutex, MutexGuard},
};

/// `core::cell::UnsafeCell` behind loom's closure-based interface, so the same code compiles
/// under both.
#[cfg(not(all(pinfold_loom, feature = "loom")))]
#[derive(Debug)]
pub(crate) struct UnsafeCell<T>(core::cell::UnsafeCell<T>);

#[cfg(not(all(pinfold_loom, feature = "loom")))]
impl<T> UnsafeCell<T> {
    pub(crate) const fn new(value: T) -> Self {
        Self(core::cell::UnsafeCell::new(value))
    }

    pub(crate) fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        f(self.0.get())
    }
}
