//! The synchronisation primitives the arena is built from.
//!
//! Normal builds take them from `core` and `alloc`. Under `--cfg pinfold_loom` with the crate
//! feature `loom`, they come from [loom](https://docs.rs/loom), so the model checker sees every
//! atomic operation, every access to a shared cell, and every allocation of the wake table.

#[cfg(all(pinfold_loom, feature = "loom"))]
pub(crate) use loom::{
    alloc::{alloc, dealloc},
    sync::Arc,
    sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering},
};

#[cfg(not(all(pinfold_loom, feature = "loom")))]
pub(crate) use alloc::{
    alloc::{alloc, dealloc},
    sync::Arc,
};
#[cfg(not(all(pinfold_loom, feature = "loom")))]
pub(crate) use core::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};

/// The cell the arena keeps shared state in (`pinfold-sync`'s, loom's under `--cfg
/// pinfold_loom`).
pub(crate) use pinfold_sync::UnsafeCell;

/// The atomics of a static counter: core's in every build. Loom's cannot live in a static, and
/// the models need not see such a counter: it orders no other memory.
pub(crate) mod statics {
    pub(crate) use core::sync::atomic::{AtomicU64, Ordering};
}
