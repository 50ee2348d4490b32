//! The synchronisation primitives a [`Limit`](crate::Limit) is built from.
//!
//! Normal builds take them from `core`, `alloc` and `std`. Under `--cfg pinfold_loom` with the
//! crate feature `loom`, they come from [loom](https://docs.rs/loom), so the model checker sees
//! every load and CAS of the budget, the fence of a registration, and the lock of the wakers'
//! list (as `pinfold-arena`'s `sync` does for the wakers themselves).

#[cfg(all(pinfold_loom, feature = "loom"))]
pub(crate) use loom::sync::{
    Arc,
    atomic::{AtomicUsize, Ordering, fence},
};
#[cfg(all(pinfold_loom, feature = "loom", feature = "std"))]
pub(crate) use loom::sync::{Mutex, MutexGuard};

#[cfg(not(all(pinfold_loom, feature = "loom")))]
pub(crate) use alloc::sync::Arc;
#[cfg(not(all(pinfold_loom, feature = "loom")))]
pub(crate) use core::sync::atomic::{AtomicUsize, Ordering, fence};
#[cfg(all(not(all(pinfold_loom, feature = "loom")), feature = "std"))]
pub(crate) use std::sync::{Mutex, MutexGuard};
