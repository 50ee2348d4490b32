//! Auto traits checked at compile time, written once: [`send`], [`sync`], [`unpin`],
//! [`unwind_safe`] and [`ref_unwind_safe`] build only for a type that has the trait, and the
//! `AmbiguousIf*` traits name their `not_*` function only for a type that has not (the
//! `static_assertions` trick: for a type with the trait the two impls make the name ambiguous,
//! which fails to compile).
//!
//! ```
//! use pinfold_testkit::auto_traits::{AmbiguousIfSync, send};
//!
//! send::<std::cell::Cell<u8>>();
//! let _ = <std::cell::Cell<u8> as AmbiguousIfSync<_>>::not_sync;
//! ```

use std::panic::{RefUnwindSafe, UnwindSafe};

/// Builds only for a type that is `Unpin`.
pub fn unpin<T: ?Sized + Unpin>() {}

/// Builds only for a type that is `Send`.
pub fn send<T: ?Sized + Send>() {}

/// Builds only for a type that is `Sync`.
pub fn sync<T: ?Sized + Sync>() {}

/// Builds only for a type that is `UnwindSafe`.
pub fn unwind_safe<T: ?Sized + UnwindSafe>() {}

/// Builds only for a type that is `RefUnwindSafe`.
pub fn ref_unwind_safe<T: ?Sized + RefUnwindSafe>() {}

/// `T::not_unpin` names a function only if `T` is not `Unpin`.
pub trait AmbiguousIfUnpin<A> {
    /// Named only for a type that is not `Unpin`.
    fn not_unpin() {}
}
impl<T: ?Sized> AmbiguousIfUnpin<()> for T {}
impl<T: ?Sized + Unpin> AmbiguousIfUnpin<u8> for T {}

/// `T::not_send` names a function only if `T` is not `Send`.
pub trait AmbiguousIfSend<A> {
    /// Named only for a type that is not `Send`.
    fn not_send() {}
}
impl<T: ?Sized> AmbiguousIfSend<()> for T {}
impl<T: ?Sized + Send> AmbiguousIfSend<u8> for T {}

/// `T::not_sync` names a function only if `T` is not `Sync`.
pub trait AmbiguousIfSync<A> {
    /// Named only for a type that is not `Sync`.
    fn not_sync() {}
}
impl<T: ?Sized> AmbiguousIfSync<()> for T {}
impl<T: ?Sized + Sync> AmbiguousIfSync<u8> for T {}

/// `T::not_unwind_safe` names a function only if `T` is not `UnwindSafe`.
pub trait AmbiguousIfUnwindSafe<A> {
    /// Named only for a type that is not `UnwindSafe`.
    fn not_unwind_safe() {}
}
impl<T: ?Sized> AmbiguousIfUnwindSafe<()> for T {}
impl<T: ?Sized + UnwindSafe> AmbiguousIfUnwindSafe<u8> for T {}

/// `T::not_ref_unwind_safe` names a function only if `T` is not `RefUnwindSafe`.
pub trait AmbiguousIfRefUnwindSafe<A> {
    /// Named only for a type that is not `RefUnwindSafe`.
    fn not_ref_unwind_safe() {}
}
impl<T: ?Sized> AmbiguousIfRefUnwindSafe<()> for T {}
impl<T: ?Sized + RefUnwindSafe> AmbiguousIfRefUnwindSafe<u8> for T {}
