//! Keeping state consistent across a panic, with or without `std`.
//!
//! Every pinfold primitive promises that a panicking poll or `Drop` of one of its values leaves
//! it usable. With the `std` feature (the default), these helpers catch the panic
//! (`catch_unwind`), repair, and resume it. Without `std` there is no `catch_unwind`; they then
//! repair from a drop guard while the panic unwinds, which needs no runtime support (and does
//! nothing under `panic = "abort"`, where there is no unwinding to survive). The one
//! difference a user can see: without `std`, a second panic while the first unwinds (a value
//! whose `Drop` panics while the set drops the others because of an earlier panic) aborts the
//! process, as it does for a `Vec`; with `std`, the first panic propagates and later ones are
//! dropped.

use core::mem::ManuallyDrop;

/// A caught panic: its payload with `std`; without `std` a panic is never caught, so there is
/// no value of this type.
#[cfg(feature = "std")]
// Defined with and without `std`: no feature badge.
#[cfg_attr(docsrs, doc(auto_cfg = false))]
pub type Panic = alloc::boxed::Box<dyn core::any::Any + Send + 'static>;
#[cfg(not(feature = "std"))]
#[allow(missing_docs)]
pub type Panic = core::convert::Infallible;

/// Resumes a panic caught by [`each_despite_panics`].
pub fn resume(panic: Panic) -> ! {
    #[cfg(feature = "std")]
    std::panic::resume_unwind(panic);
    #[cfg(not(feature = "std"))]
    match panic {}
}

#[cfg(feature = "std")]
std::thread_local! {
    /// A panic caught in a value's poll, on its way from the arena kind that caught it to the
    /// poll round that repairs and resumes it ([`keep`], [`take_kept`]).
    static KEPT: core::cell::Cell<Option<Panic>> = const { core::cell::Cell::new(None) };
}

/// What an arena kind returns in place of a value's output when the value's poll panicked:
/// the panic itself is kept on the thread ([`keep`]) for the round that repairs and resumes
/// it ([`take_kept`]), so that what a poll returns is no larger than its output. Without
/// `std` a panic is never caught, so there is no value of this type.
#[cfg(feature = "std")]
pub(crate) use kept::Kept;
#[cfg(not(feature = "std"))]
pub(crate) type Kept = core::convert::Infallible;

/// [`Kept`]'s home: a public type (it is in the arena kinds' hidden storage trait) that no
/// code outside the crate can name or make.
#[cfg(feature = "std")]
mod kept {
    /// See [`Kept`].
    #[derive(Debug)]
    pub struct Kept(pub(crate) ());
}

/// Keeps `panic` on this thread for [`take_kept`].
#[cfg(feature = "std")]
#[cold]
pub(crate) fn keep(panic: Panic) -> Kept {
    KEPT.set(Some(panic));
    Kept(())
}

/// The panic [`keep`] kept on this thread.
#[cfg(feature = "std")]
#[cold]
pub(crate) fn take_kept(_: Kept) -> Panic {
    KEPT.take()
        .unwrap_or_else(|| alloc::boxed::Box::new("a kept panic was taken twice"))
}

/// The user's value (a key, or an output held through a call that may panic), dropped as
/// [`drop_all`] drops: also while a panic unwinds, as when the primitive that holds it is
/// dropped because of that panic (with `std`, a panic of the value's `Drop` then is dropped
/// and the first goes on, where plain drop glue would abort). As large as the value, and
/// dereferences to it. One guards one value: the drop glue of a pair drops its second part
/// while its first part's panic unwinds, so each part needs a guard of its own.
pub struct QuietDrop<T>(ManuallyDrop<T>);

impl<T> QuietDrop<T> {
    /// Guards `value`.
    #[inline(always)]
    pub const fn new(value: T) -> Self {
        Self(ManuallyDrop::new(value))
    }

    /// The value, no longer guarded.
    #[inline(always)]
    pub fn into_inner(self) -> T {
        let mut this = ManuallyDrop::new(self);
        // SAFETY: `this` is never used or dropped again (`ManuallyDrop`), so the value is
        // taken out once.
        unsafe { ManuallyDrop::take(&mut this.0) }
    }
}

impl<T> Drop for QuietDrop<T> {
    #[inline]
    fn drop(&mut self) {
        // SAFETY: the value is taken out once, here, and `self` is not used after its drop.
        let value = unsafe { ManuallyDrop::take(&mut self.0) };
        // A plain drop unless a panic unwinds: a map drops each key so. Guarded by
        // `map_churn_100k` (instructions).
        #[cfg(feature = "std")]
        if std::thread::panicking() {
            return drop_quietly(value);
        }
        drop(value);
    }
}

/// [`QuietDrop`]'s drop of its value while a panic unwinds, out of the way of the drop that
/// comes in a call that returns.
#[cfg(feature = "std")]
#[cold]
#[inline(never)]
fn drop_quietly<T>(value: T) {
    drop_all(Some(value));
}

impl<T> core::ops::Deref for QuietDrop<T> {
    type Target = T;

    #[inline(always)]
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T> core::ops::DerefMut for QuietDrop<T> {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut T {
        &mut self.0
    }
}

impl<T: core::fmt::Debug> core::fmt::Debug for QuietDrop<T> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_tuple("QuietDrop").field(&*self.0).finish()
    }
}

/// [`QuietDrop`] on the heap, for a value held in a type that has no `Drop` of its own: the
/// value may borrow what is dropped before its holder, as a `Vec`'s values may (a `Drop`
/// generic over the value, such as [`QuietDrop`]'s, would make the compiler require its
/// borrows to outlive the holder). One allocation, for a value held on a cold path (an output
/// kept through a panic).
pub struct QuietBox<T> {
    raw: ErasedBox,
    /// The value's auto traits, as `Box<T>`'s, and its drop, which `raw` does.
    _value: core::marker::PhantomData<T>,
}

/// The value of a [`QuietBox`] with its type forgotten: its pointer and the function that
/// drops it quietly and frees it. Its `Drop` has no type parameter.
struct ErasedBox {
    value: core::ptr::NonNull<u8>,
    drop: unsafe fn(core::ptr::NonNull<u8>),
}

// SAFETY: an `ErasedBox` is only ever the field of a `QuietBox<T>`, whose `PhantomData<T>` gives
// it the auto traits of `Box<T>`; the value is reached only through that `QuietBox`.
unsafe impl Send for ErasedBox {}
// SAFETY: as for `Send`.
unsafe impl Sync for ErasedBox {}

impl Drop for ErasedBox {
    fn drop(&mut self) {
        // SAFETY: `drop` is the function for the value's type (`QuietBox::new`), and this is
        // the value's only drop (`into_inner` forgets the box it takes the value from).
        unsafe { (self.drop)(self.value) }
    }
}

/// Drops the `Box<T>` at `value` as [`QuietDrop`] does: its value in place (not moved out:
/// what it borrows may be gone, as a `Vec`'s values are dropped), then its allocation, also
/// while the value's panic unwinds.
///
/// # Safety
/// `value` is a `Box<T>`'s pointer, not used again.
unsafe fn drop_boxed<T>(value: core::ptr::NonNull<u8>) {
    // SAFETY: the box's own pointer (the caller), given back to it once, as a box of a value
    // it does not drop: it frees the allocation after the value's drop below.
    let mut boxed =
        unsafe { alloc::boxed::Box::from_raw(value.cast::<ManuallyDrop<T>>().as_ptr()) };
    drop_each(1, |_| {
        // SAFETY: the box's value, dropped once, here.
        unsafe { ManuallyDrop::drop(&mut boxed) }
    });
}

impl<T> QuietBox<T> {
    /// Guards `value`, moved to the heap.
    pub fn new(value: T) -> Self {
        let value = alloc::boxed::Box::into_raw(alloc::boxed::Box::new(value));
        Self {
            raw: ErasedBox {
                value: core::ptr::NonNull::new(value.cast::<u8>()).expect("a box is not null"),
                drop: drop_boxed::<T>,
            },
            _value: core::marker::PhantomData,
        }
    }

    /// The value, no longer guarded.
    pub fn into_inner(self) -> T {
        let raw = ManuallyDrop::new(self.raw);
        // SAFETY: the pointer of the `Box<T>` made in `new`, given back to it once: `raw` is
        // never dropped (`ManuallyDrop`), so nothing drops the value again.
        *unsafe { alloc::boxed::Box::from_raw(raw.value.cast::<T>().as_ptr()) }
    }
}

// The value sits in the heap, where moving the box does not move it, as with `Box`.
impl<T> Unpin for QuietBox<T> {}

impl<T> core::ops::Deref for QuietBox<T> {
    type Target = T;

    fn deref(&self) -> &T {
        // SAFETY: the pointer of the `Box<T>` made in `new`, live until the `QuietBox` is
        // dropped or taken apart; shared for as long as `self` is borrowed.
        unsafe { self.raw.value.cast::<T>().as_ref() }
    }
}

impl<T> core::ops::DerefMut for QuietBox<T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as for `deref`, and unique for as long as `self` is borrowed mutably.
        unsafe { self.raw.value.cast::<T>().as_mut() }
    }
}

impl<T: core::fmt::Debug> core::fmt::Debug for QuietBox<T> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_tuple("QuietBox").field(&**self).finish()
    }
}

/// Calls `each(index)` for every index in `0..len`, for drops that must all run (see
/// [`each_to_the_end`]).
#[inline]
pub(crate) fn drop_each(len: usize, each: impl FnMut(usize)) {
    each_to_the_end(0..len, each);
}

/// Drops every item of `items`, also when the `Drop` of some panics: the rest are dropped all
/// the same, then the first panic goes on (with `std`; a second panic is dropped, and so is the
/// first if another panic unwinds already; without `std`, a second panic aborts). A plain loop
/// while nothing panics. For the `Drop` of a container whose items are the user's. If the
/// iterator's `next` panics, it is not asked again: the items after are its own drop's.
pub fn drop_all<I: IntoIterator>(items: I) {
    each_to_the_end(items, drop);
}

/// Calls `each` on every item, for drops that must all run: a plain loop while nothing panics
/// (no catch on the way); if a call panics, the rest are called while that panic unwinds,
/// each caught (with `std`, where their panics are dropped; without, a second panic aborts),
/// and the first panic goes on. Called while another panic unwinds already, every call is
/// caught from the start (with `std`), and their panics dropped: a panic escaping a drop then
/// would abort. An iterator whose `next` panics is not asked again: the items after it are
/// left to its own drop, and with `std` a panic of `next` while another unwinds is dropped.
#[inline]
fn each_to_the_end<I: IntoIterator, F: FnMut(I::Item)>(items: I, each: F) {
    /// The calls not made yet: made when dropped, which only happens while a panic unwinds
    /// (the loop leaves none).
    struct Rest<I: Iterator, F: FnMut(I::Item)> {
        items: I,
        each: F,
        /// Set while the loop asks for an item, and once there is none: found set when
        /// dropped, `next` panicked (or the items ended), and it is not asked again.
        in_next: bool,
    }

    impl<I: Iterator, F: FnMut(I::Item)> Drop for Rest<I, F> {
        fn drop(&mut self) {
            if self.in_next {
                return;
            }
            // A call panicked, or another panic unwinds: that one goes on. A panic of `next`
            // then ends the calls.
            #[cfg(feature = "std")]
            let items = core::iter::from_fn(|| {
                use std::panic::{AssertUnwindSafe, catch_unwind};
                catch_unwind(AssertUnwindSafe(|| self.items.next())).unwrap_or(None)
            });
            #[cfg(not(feature = "std"))]
            let items = &mut self.items;
            let _ = each_despite_panics(items, &mut self.each);
        }
    }

    let mut rest = Rest {
        items: items.into_iter(),
        each,
        in_next: false,
    };
    #[cfg(feature = "std")]
    if std::thread::panicking() {
        // `rest`'s drop makes every call, each caught.
        return;
    }
    loop {
        rest.in_next = true;
        let Some(item) = rest.items.next() else {
            return;
        };
        rest.in_next = false;
        (rest.each)(item);
    }
}

/// Runs `body` on `state`; if it panics, runs `repair` on `state` before the panic goes on. With
/// `std`, a panic of `repair` is dropped and the first one goes on; without, it aborts.
#[inline]
pub fn repair_on_unwind<S: ?Sized, R>(
    state: &mut S,
    body: impl FnOnce(&mut S) -> R,
    repair: impl FnOnce(&mut S),
) -> R {
    #[cfg(feature = "std")]
    {
        use core::mem::MaybeUninit;
        use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
        // The output goes through a place of our own rather than `catch_unwind`'s result,
        // which passes it through a union: written field by field and read back whole, a load
        // some CPUs cannot forward from the stores, and wait for (see `Store::poll_value`).
        let mut out = MaybeUninit::<R>::uninit();
        match catch_unwind(AssertUnwindSafe(|| {
            out.write(body(state));
        })) {
            // SAFETY: the closure returned, so it wrote the output.
            Ok(()) => unsafe { out.assume_init() },
            Err(panic) => {
                // The first panic goes on: one of the repair (user code it runs, such as a
                // waker's `wake` or a key's `Drop`) is dropped.
                drop(catch_unwind(AssertUnwindSafe(|| repair(state))));
                resume_unwind(panic)
            }
        }
    }
    #[cfg(not(feature = "std"))]
    guarded::repair_on_unwind(state, body, repair)
}

/// Calls `each` on every item, also when one of the calls panics: the rest are called all
/// the same, and the first panic is returned (with `std`, where later panics are dropped).
/// Without `std` the rest are called while the first panic unwinds, and a second panic aborts.
pub fn each_despite_panics<I: IntoIterator>(
    items: I,
    mut each: impl FnMut(I::Item),
) -> Result<(), Panic> {
    #[cfg(feature = "std")]
    {
        use std::panic::{AssertUnwindSafe, catch_unwind};
        let mut first = None;
        for item in items {
            if let Err(panic) = catch_unwind(AssertUnwindSafe(|| each(item))) {
                first.get_or_insert(panic);
            }
        }
        first.map_or(Ok(()), Err)
    }
    #[cfg(not(feature = "std"))]
    {
        guarded::each_despite_panics(items, &mut each);
        Ok(())
    }
}

/// Aborts the process: `std::process::abort` with `std`; without it, a panic raised while a
/// panic unwinds, which the Rust runtime turns into an abort (and with `panic = "abort"`, the
/// first panic aborts).
pub use pinfold_sync::abort;

/// The drop-guard versions, compiled always so that the tests (which have `std`) check them
/// too.
#[cfg_attr(feature = "std", allow(dead_code))]
mod guarded {
    /// Runs its repair when dropped, unless disarmed: dropped armed only while unwinding.
    struct Repair<'a, S: ?Sized, G: FnOnce(&mut S)> {
        state: &'a mut S,
        repair: Option<G>,
    }

    impl<S: ?Sized, G: FnOnce(&mut S)> Drop for Repair<'_, S, G> {
        fn drop(&mut self) {
            if let Some(repair) = self.repair.take() {
                repair(self.state);
            }
        }
    }

    pub(super) fn repair_on_unwind<S: ?Sized, R>(
        state: &mut S,
        body: impl FnOnce(&mut S) -> R,
        repair: impl FnOnce(&mut S),
    ) -> R {
        let mut guard = Repair {
            state,
            repair: Some(repair),
        };
        let out = body(guard.state);
        guard.repair = None;
        out
    }

    /// Calls `each` on the items left when dropped: all of them if dropped while unwinding,
    /// none after the loop ran them all.
    struct Rest<I: Iterator, F: FnMut(I::Item)> {
        items: I,
        each: F,
    }

    impl<I: Iterator, F: FnMut(I::Item)> Drop for Rest<I, F> {
        fn drop(&mut self) {
            for item in &mut self.items {
                (self.each)(item);
            }
        }
    }

    pub(super) fn each_despite_panics<I: IntoIterator>(items: I, each: impl FnMut(I::Item)) {
        let mut rest = Rest {
            items: items.into_iter().fuse(),
            each,
        };
        for item in rest.items.by_ref() {
            (rest.each)(item);
        }
    }

    #[cfg(test)]
    mod tests {
        use std::panic::{AssertUnwindSafe, catch_unwind};
        use std::vec::Vec;

        #[test]
        fn repair_runs_only_when_the_body_panics() {
            let mut log = Vec::new();
            let out = super::repair_on_unwind(&mut log, |log| log.len(), |log| log.push(9));
            assert_eq!(out, 0);
            log.push(1);
            assert_eq!(log, [1]);
            let panicked = catch_unwind(AssertUnwindSafe(|| {
                super::repair_on_unwind(
                    &mut log,
                    |log| {
                        log.push(2);
                        panic!("body");
                    },
                    |log| log.push(9),
                )
            }));
            assert!(panicked.is_err());
            assert_eq!(log, [1, 2, 9]);
        }

        #[test]
        fn a_panicking_call_does_not_skip_the_rest() {
            let mut seen = Vec::new();
            let panicked = catch_unwind(AssertUnwindSafe(|| {
                super::each_despite_panics(0..5, |n| {
                    seen.push(n);
                    if n == 1 {
                        panic!("item 1");
                    }
                })
            }));
            let panic = panicked.unwrap_err();
            assert_eq!(panic.downcast_ref::<&str>(), Some(&"item 1"));
            assert_eq!(seen, [0, 1, 2, 3, 4]);
            // Without a panic, each item is called once: the guard finds nothing left.
            seen.clear();
            super::each_despite_panics(0..3, |n| seen.push(n));
            assert_eq!(seen, [0, 1, 2]);
        }
    }
}
