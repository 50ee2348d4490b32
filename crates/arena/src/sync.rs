//! The synchronisation primitives the arena is built from.
//!
//! Normal builds take them from `core` and `alloc`. Under `--cfg pinfold_loom` with the crate
//! feature `loom`, they come from [loom](https://docs.rs/loom), so the model checker sees every
//! atomic operation, every access to a shared cell, and every allocation of the wake table.

#[cfg(all(pinfold_loom, feature = "loom"))]
pub(crate) use loom::{
    alloc::{alloc, dealloc},
    sync::Arc,
    sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering},
};

#[cfg(not(all(pinfold_loom, feature = "loom")))]
pub(crate) use alloc::{
    alloc::{alloc, dealloc},
    sync::Arc,
};
#[cfg(not(all(pinfold_loom, feature = "loom")))]
pub(crate) use core::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};

#[cfg(all(pinfold_loom, feature = "loom"))]
pub(crate) use loom::cell::UnsafeCell;

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
