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
pub use loom::cell::UnsafeCell;

/// `core::cell::UnsafeCell` behind loom's closure-based interface, so the same code compiles
/// under both. The one home of this shim: `pinfold-pool` takes it from here (see the crate
/// root's hidden `UnsafeCell`).
#[cfg(not(all(pinfold_loom, feature = "loom")))]
#[derive(Debug)]
pub struct UnsafeCell<T>(core::cell::UnsafeCell<T>);

#[cfg(not(all(pinfold_loom, feature = "loom")))]
impl<T> UnsafeCell<T> {
    /// A cell holding `value`.
    pub const fn new(value: T) -> Self {
        Self(core::cell::UnsafeCell::new(value))
    }

    /// Runs `f` on a pointer to the value (what loom's cell does, tracking the access).
    pub fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        f(self.0.get())
    }
}
