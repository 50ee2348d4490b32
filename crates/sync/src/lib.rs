//! What pinfold's two crates with `unsafe` code, `pinfold-arena` and `pinfold-pool`, share
//! without one depending on the other: the cell their shared state lives in ([`UnsafeCell`]),
//! and [`abort`]. Not meant for use outside pinfold.
//!
//! # Features
//!
//! - `std` (default): [`abort`] is `std::process::abort`.
//! - `loom`: with `--cfg pinfold_loom`, [`UnsafeCell`] is loom's, so that the models in
//!   `loom-tests/` see every access to a shared cell.
#![no_std]
#![forbid(unsafe_code)]

#[cfg(feature = "std")]
extern crate std;

#[cfg(all(pinfold_loom, feature = "loom"))]
pub use loom::cell::UnsafeCell;

/// `core::cell::UnsafeCell` behind loom's closure-based interface, so that the same code
/// compiles under both.
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

/// Aborts the process: `std::process::abort` with `std`; without it, a panic raised while a
/// panic unwinds, which the Rust runtime turns into an abort (and with `panic = "abort"`, the
/// first panic aborts).
#[cold]
pub fn abort() -> ! {
    #[cfg(feature = "std")]
    std::process::abort();
    #[cfg(not(feature = "std"))]
    {
        struct PanicAgain;
        impl Drop for PanicAgain {
            fn drop(&mut self) {
                panic!("pinfold: aborting");
            }
        }
        let _again = PanicAgain;
        panic!("pinfold: aborting");
    }
}
