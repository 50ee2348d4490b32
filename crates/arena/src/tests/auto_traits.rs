//! The auto traits of a `GrowableArena<T>` (`Send`, `Sync`, `Unpin`, `UnwindSafe`,
//! `RefUnwindSafe`) for values that are `Send` but not `Sync`, `Sync` but not `Send`, neither,
//! not `Unpin`, `UnwindSafe` but not `RefUnwindSafe`, and not `UnwindSafe`: `Send` and `Sync`
//! as the values', `Unpin` whatever they are, and the unwind-safety traits those of an
//! `Arena<T>`, each checked at compile time on both; and those of a `JoinArena<T>`, whose values
//! are a `Vec`'s: `Send` and `Sync` as the values', `Unpin`, neither unwind-safety trait.

use std::cell::Cell;
use std::marker::{PhantomData, PhantomPinned};
use std::rc::Rc;

use pinfold_testkit::auto_traits::{
    AmbiguousIfRefUnwindSafe, AmbiguousIfSend, AmbiguousIfSync, AmbiguousIfUnpin,
    AmbiguousIfUnwindSafe, ref_unwind_safe, send, sync, unpin, unwind_safe,
};

use crate::{Arena, GrowableArena, JoinArena};

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
fn the_value_types_have_the_auto_traits_the_checks_below_rest_on() {
    send::<u32>();
    sync::<u32>();
    unpin::<u32>();
    unwind_safe::<u32>();
    ref_unwind_safe::<u32>();

    send::<Cell<u32>>();
    let _ = <Cell<u32> as AmbiguousIfSync<_>>::not_sync;
    unpin::<Cell<u32>>();
    unwind_safe::<Cell<u32>>();
    let _ = <Cell<u32> as AmbiguousIfRefUnwindSafe<_>>::not_ref_unwind_safe;

    send::<&'static mut u32>();
    sync::<&'static mut u32>();
    unpin::<&'static mut u32>();
    let _ = <&'static mut u32 as AmbiguousIfUnwindSafe<_>>::not_unwind_safe;
    ref_unwind_safe::<&'static mut u32>();

    send::<Pinned>();
    sync::<Pinned>();
    let _ = <Pinned as AmbiguousIfUnpin<_>>::not_unpin;
    unwind_safe::<Pinned>();
    ref_unwind_safe::<Pinned>();

    send::<SendOnly>();
    let _ = <SendOnly as AmbiguousIfSync<_>>::not_sync;
    unpin::<SendOnly>();
    unwind_safe::<SendOnly>();
    ref_unwind_safe::<SendOnly>();

    let _ = <SyncOnly as AmbiguousIfSend<_>>::not_send;
    sync::<SyncOnly>();
    unpin::<SyncOnly>();
    unwind_safe::<SyncOnly>();
    ref_unwind_safe::<SyncOnly>();
}

/// `Send` and `Sync` as the values', and `Unpin` whatever they are (they never move): checked
/// on `$arena` for each value type above.
macro_rules! send_and_sync_as_the_values_and_unpin {
    ($arena:ident) => {
        send::<$arena<u32>>();
        sync::<$arena<u32>>();
        unpin::<$arena<u32>>();

        send::<$arena<Pinned>>();
        sync::<$arena<Pinned>>();
        unpin::<$arena<Pinned>>();

        send::<$arena<SendOnly>>();
        let _ = <$arena<SendOnly> as AmbiguousIfSync<_>>::not_sync;
        unpin::<$arena<SendOnly>>();

        let _ = <$arena<SyncOnly> as AmbiguousIfSend<_>>::not_send;
        sync::<$arena<SyncOnly>>();
        unpin::<$arena<SyncOnly>>();

        send::<$arena<Cell<u32>>>();
        let _ = <$arena<Cell<u32>> as AmbiguousIfSync<_>>::not_sync;
        unpin::<$arena<Cell<u32>>>();

        send::<$arena<HoldsMut>>();
        sync::<$arena<HoldsMut>>();
        unpin::<$arena<HoldsMut>>();

        let _ = <$arena<Rc<u32>> as AmbiguousIfSend<_>>::not_send;
        let _ = <$arena<Rc<u32>> as AmbiguousIfSync<_>>::not_sync;
        unpin::<$arena<Rc<u32>>>();
    };
}

/// Neither `UnwindSafe` nor `RefUnwindSafe`, whatever the values: checked on `$arena` for each
/// of `$value`.
macro_rules! neither_unwind_safe {
    ($arena:ident: $($value:ty),+) => {$(
        let _ = <$arena<$value> as AmbiguousIfUnwindSafe<_>>::not_unwind_safe;
        let _ = <$arena<$value> as AmbiguousIfRefUnwindSafe<_>>::not_ref_unwind_safe;
    )+};
}

#[test]
fn a_growable_arenas_send_sync_and_unpin_are_its_values() {
    send_and_sync_as_the_values_and_unpin!(GrowableArena);
}

#[test]
fn a_growable_arena_has_the_auto_traits_of_an_arena() {
    // The same three for a fixed arena, and neither unwind-safety trait for either, whatever
    // the values.
    send_and_sync_as_the_values_and_unpin!(Arena);
    neither_unwind_safe!(GrowableArena: u32, Cell<u32>, HoldsMut, Pinned, SendOnly, SyncOnly,
        Rc<u32>);
    neither_unwind_safe!(Arena: u32, Cell<u32>, HoldsMut, Pinned, SendOnly, SyncOnly, Rc<u32>);
}

#[test]
fn a_join_arenas_send_and_sync_are_its_values_and_it_is_always_unpin() {
    // As a `Vec` of the values (their storage), `Unpin` whatever they are (they never move).
    send_and_sync_as_the_values_and_unpin!(JoinArena);
    neither_unwind_safe!(JoinArena: u32, Cell<u32>, HoldsMut, Pinned, SendOnly, SyncOnly,
        Rc<u32>);
}
