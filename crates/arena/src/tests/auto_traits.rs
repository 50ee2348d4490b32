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

#[test]
fn a_growable_arenas_send_sync_and_unpin_are_its_values() {
    // `Send` and `Sync` as the values', `Unpin` whatever they are (they never move).
    send::<GrowableArena<u32>>();
    sync::<GrowableArena<u32>>();
    unpin::<GrowableArena<u32>>();

    send::<GrowableArena<Pinned>>();
    sync::<GrowableArena<Pinned>>();
    unpin::<GrowableArena<Pinned>>();

    send::<GrowableArena<SendOnly>>();
    let _ = <GrowableArena<SendOnly> as AmbiguousIfSync<_>>::not_sync;
    unpin::<GrowableArena<SendOnly>>();

    let _ = <GrowableArena<SyncOnly> as AmbiguousIfSend<_>>::not_send;
    sync::<GrowableArena<SyncOnly>>();
    unpin::<GrowableArena<SyncOnly>>();

    send::<GrowableArena<Cell<u32>>>();
    let _ = <GrowableArena<Cell<u32>> as AmbiguousIfSync<_>>::not_sync;
    unpin::<GrowableArena<Cell<u32>>>();

    send::<GrowableArena<HoldsMut>>();
    sync::<GrowableArena<HoldsMut>>();
    unpin::<GrowableArena<HoldsMut>>();

    let _ = <GrowableArena<Rc<u32>> as AmbiguousIfSend<_>>::not_send;
    let _ = <GrowableArena<Rc<u32>> as AmbiguousIfSync<_>>::not_sync;
    unpin::<GrowableArena<Rc<u32>>>();
}

#[test]
fn a_growable_arena_has_the_auto_traits_of_an_arena() {
    // The same three for a fixed arena, and neither unwind-safety trait for either, whatever
    // the values.
    send::<Arena<u32>>();
    sync::<Arena<u32>>();
    unpin::<Arena<u32>>();
    send::<Arena<Pinned>>();
    sync::<Arena<Pinned>>();
    unpin::<Arena<Pinned>>();
    send::<Arena<SendOnly>>();
    let _ = <Arena<SendOnly> as AmbiguousIfSync<_>>::not_sync;
    let _ = <Arena<SyncOnly> as AmbiguousIfSend<_>>::not_send;
    sync::<Arena<SyncOnly>>();
    send::<Arena<Cell<u32>>>();
    let _ = <Arena<Cell<u32>> as AmbiguousIfSync<_>>::not_sync;
    send::<Arena<HoldsMut>>();
    sync::<Arena<HoldsMut>>();
    let _ = <Arena<Rc<u32>> as AmbiguousIfSend<_>>::not_send;
    let _ = <Arena<Rc<u32>> as AmbiguousIfSync<_>>::not_sync;

    let _ = <GrowableArena<u32> as AmbiguousIfUnwindSafe<_>>::not_unwind_safe;
    let _ = <Arena<u32> as AmbiguousIfUnwindSafe<_>>::not_unwind_safe;
    let _ = <GrowableArena<u32> as AmbiguousIfRefUnwindSafe<_>>::not_ref_unwind_safe;
    let _ = <Arena<u32> as AmbiguousIfRefUnwindSafe<_>>::not_ref_unwind_safe;
    let _ = <GrowableArena<Cell<u32>> as AmbiguousIfUnwindSafe<_>>::not_unwind_safe;
    let _ = <Arena<Cell<u32>> as AmbiguousIfUnwindSafe<_>>::not_unwind_safe;
    let _ = <GrowableArena<HoldsMut> as AmbiguousIfRefUnwindSafe<_>>::not_ref_unwind_safe;
    let _ = <Arena<HoldsMut> as AmbiguousIfRefUnwindSafe<_>>::not_ref_unwind_safe;
    let _ = <GrowableArena<Pinned> as AmbiguousIfUnwindSafe<_>>::not_unwind_safe;
    let _ = <GrowableArena<Pinned> as AmbiguousIfRefUnwindSafe<_>>::not_ref_unwind_safe;
    let _ = <Arena<Pinned> as AmbiguousIfUnwindSafe<_>>::not_unwind_safe;
    let _ = <Arena<Pinned> as AmbiguousIfRefUnwindSafe<_>>::not_ref_unwind_safe;
    let _ = <GrowableArena<SendOnly> as AmbiguousIfUnwindSafe<_>>::not_unwind_safe;
    let _ = <GrowableArena<SendOnly> as AmbiguousIfRefUnwindSafe<_>>::not_ref_unwind_safe;
    let _ = <Arena<SendOnly> as AmbiguousIfUnwindSafe<_>>::not_unwind_safe;
    let _ = <Arena<SendOnly> as AmbiguousIfRefUnwindSafe<_>>::not_ref_unwind_safe;
    let _ = <GrowableArena<SyncOnly> as AmbiguousIfUnwindSafe<_>>::not_unwind_safe;
    let _ = <GrowableArena<SyncOnly> as AmbiguousIfRefUnwindSafe<_>>::not_ref_unwind_safe;
    let _ = <Arena<SyncOnly> as AmbiguousIfUnwindSafe<_>>::not_unwind_safe;
    let _ = <Arena<SyncOnly> as AmbiguousIfRefUnwindSafe<_>>::not_ref_unwind_safe;
    let _ = <GrowableArena<Rc<u32>> as AmbiguousIfUnwindSafe<_>>::not_unwind_safe;
    let _ = <GrowableArena<Rc<u32>> as AmbiguousIfRefUnwindSafe<_>>::not_ref_unwind_safe;
    let _ = <Arena<Rc<u32>> as AmbiguousIfUnwindSafe<_>>::not_unwind_safe;
    let _ = <Arena<Rc<u32>> as AmbiguousIfRefUnwindSafe<_>>::not_ref_unwind_safe;
    let _ = <GrowableArena<Cell<u32>> as AmbiguousIfRefUnwindSafe<_>>::not_ref_unwind_safe;
    let _ = <Arena<Cell<u32>> as AmbiguousIfRefUnwindSafe<_>>::not_ref_unwind_safe;
    let _ = <GrowableArena<HoldsMut> as AmbiguousIfUnwindSafe<_>>::not_unwind_safe;
    let _ = <Arena<HoldsMut> as AmbiguousIfUnwindSafe<_>>::not_unwind_safe;
}

#[test]
fn a_join_arenas_send_and_sync_are_its_values_and_it_is_always_unpin() {
    // As a `Vec` of the values (their storage), `Unpin` whatever they are (they never move).
    send::<JoinArena<u32>>();
    sync::<JoinArena<u32>>();
    unpin::<JoinArena<u32>>();
    send::<JoinArena<Pinned>>();
    sync::<JoinArena<Pinned>>();
    unpin::<JoinArena<Pinned>>();
    send::<JoinArena<SendOnly>>();
    let _ = <JoinArena<SendOnly> as AmbiguousIfSync<_>>::not_sync;
    let _ = <JoinArena<SyncOnly> as AmbiguousIfSend<_>>::not_send;
    sync::<JoinArena<SyncOnly>>();
    send::<JoinArena<Cell<u32>>>();
    let _ = <JoinArena<Cell<u32>> as AmbiguousIfSync<_>>::not_sync;
    send::<JoinArena<HoldsMut>>();
    sync::<JoinArena<HoldsMut>>();
    let _ = <JoinArena<Rc<u32>> as AmbiguousIfSend<_>>::not_send;
    let _ = <JoinArena<Rc<u32>> as AmbiguousIfSync<_>>::not_sync;
    unpin::<JoinArena<Rc<u32>>>();
    let _ = <JoinArena<u32> as AmbiguousIfUnwindSafe<_>>::not_unwind_safe;
    let _ = <JoinArena<u32> as AmbiguousIfRefUnwindSafe<_>>::not_ref_unwind_safe;
}
