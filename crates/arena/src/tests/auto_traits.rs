//! The auto traits of a `GrowableArena<T>` (`Send`, `Sync`, `Unpin`, `UnwindSafe`,
//! `RefUnwindSafe`) for values that are `Send` but not `Sync`, `Sync` but not `Send`, neither,
//! not `Unpin`, `UnwindSafe` but not `RefUnwindSafe`, and not `UnwindSafe`: the same as an
//! `Arena<T>`'s, each fixed.

use std::cell::Cell;
use std::marker::{PhantomData, PhantomPinned};
use std::panic::{RefUnwindSafe, UnwindSafe};
use std::rc::Rc;

use crate::{Arena, GrowableArena};

/// Whether the concrete type `$ty` implements `$tr`: an inherent associated constant, whose
/// impl applies only when the bound holds, is found before the trait's default.
macro_rules! implements {
    ($ty:ty: $tr:path) => {{
        #[allow(dead_code)]
        struct Probe<T: ?Sized>(PhantomData<T>);
        #[allow(dead_code)]
        trait Fallback {
            const YES: bool = false;
        }
        impl<T: ?Sized> Fallback for Probe<T> {}
        #[allow(dead_code)]
        impl<T: ?Sized + $tr> Probe<T> {
            const YES: bool = true;
        }
        <Probe<$ty>>::YES
    }};
}

/// `[Send, Sync, Unpin, UnwindSafe, RefUnwindSafe]` of `$ty`.
macro_rules! auto_traits {
    ($ty:ty) => {
        [
            implements!($ty: Send),
            implements!($ty: Sync),
            implements!($ty: Unpin),
            implements!($ty: UnwindSafe),
            implements!($ty: RefUnwindSafe),
        ]
    };
}

/// `Send` but not `Sync`.
struct SendOnly(PhantomData<*const u8>);
// SAFETY: holds nothing.
unsafe impl Send for SendOnly {}

/// `Sync` but not `Send`.
struct SyncOnly(PhantomData<*const u8>);
// SAFETY: holds nothing.
unsafe impl Sync for SyncOnly {}

/// Holds a mutable reference: not `UnwindSafe`.
struct HoldsMut(#[allow(dead_code)] &'static mut u32);

/// Not `Unpin`.
struct Pinned(#[allow(dead_code)] PhantomPinned);

#[test]
fn a_growable_arenas_send_sync_and_unpin_are_its_values() {
    // `[Send, Sync, Unpin]`: `Send` and `Sync` as the values', `Unpin` whatever they are
    // (they never move). The unwind-safety traits are those of an `Arena` (below).
    assert_eq!(auto_traits!(GrowableArena<u32>)[..3], [true, true, true]);
    assert_eq!(auto_traits!(GrowableArena<Pinned>)[..3], [true, true, true]);
    assert_eq!(
        auto_traits!(GrowableArena<SendOnly>)[..3],
        [true, false, true]
    );
    assert_eq!(
        auto_traits!(GrowableArena<SyncOnly>)[..3],
        [false, true, true]
    );
    assert_eq!(
        auto_traits!(GrowableArena<Cell<u32>>)[..3],
        [true, false, true]
    );
    assert_eq!(
        auto_traits!(GrowableArena<HoldsMut>)[..3],
        [true, true, true]
    );
    assert_eq!(
        auto_traits!(GrowableArena<Rc<u32>>)[..3],
        [false, false, true]
    );
}

#[test]
fn the_probe_tells_the_auto_traits_of_plain_types_apart() {
    assert_eq!(auto_traits!(u32), [true; 5]);
    assert_eq!(auto_traits!(Cell<u32>), [true, false, true, true, false]);
    assert_eq!(
        auto_traits!(&'static mut u32),
        [true, true, true, false, true]
    );
    assert_eq!(auto_traits!(Pinned), [true, true, false, true, true]);
    assert_eq!(auto_traits!(SendOnly), [true, false, true, true, true]);
    assert_eq!(auto_traits!(SyncOnly), [false, true, true, true, true]);
}

#[test]
fn a_growable_arena_has_the_auto_traits_of_an_arena() {
    assert_eq!(auto_traits!(GrowableArena<u32>), auto_traits!(Arena<u32>));
    assert_eq!(
        auto_traits!(GrowableArena<Pinned>),
        auto_traits!(Arena<Pinned>)
    );
    assert_eq!(
        auto_traits!(GrowableArena<SendOnly>),
        auto_traits!(Arena<SendOnly>)
    );
    assert_eq!(
        auto_traits!(GrowableArena<SyncOnly>),
        auto_traits!(Arena<SyncOnly>)
    );
    assert_eq!(
        auto_traits!(GrowableArena<Cell<u32>>),
        auto_traits!(Arena<Cell<u32>>)
    );
    assert_eq!(
        auto_traits!(GrowableArena<HoldsMut>),
        auto_traits!(Arena<HoldsMut>)
    );
    assert_eq!(
        auto_traits!(GrowableArena<Rc<u32>>),
        auto_traits!(Arena<Rc<u32>>)
    );
}
