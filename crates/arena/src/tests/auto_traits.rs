//! The auto traits of a `GrowableArena<T>` (`Send`, `Sync`, `Unpin`, `UnwindSafe`,
//! `RefUnwindSafe`) for values that are `Send` but not `Sync`, `Sync` but not `Send`, neither,
//! not `Unpin`, `UnwindSafe` but not `RefUnwindSafe`, and not `UnwindSafe`: `Send` and `Sync`
//! as the values', `Unpin` whatever they are, and the unwind-safety traits those of an
//! `Arena<T>`, each checked at compile time on both; and those of a `JoinArena<T>`, whose values
//! are a `Vec`'s: `Send` and `Sync` as the values', `Unpin`, neither unwind-safety trait; and
//! those of a `QuietBox<T>`: `Send`, `Sync` and `Unpin` as a `Box<T>`'s.

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

/// A kind of arena, as a type of its values: `Of<T>` holds values `T`.
trait Kind {
    type Of<T>;
}

struct Fixed;
struct Growable;
struct Join;
struct Quiet;

impl Kind for Fixed {
    type Of<T> = Arena<T>;
}

impl Kind for Growable {
    type Of<T> = GrowableArena<T>;
}

impl Kind for Join {
    type Of<T> = JoinArena<T>;
}

impl Kind for Quiet {
    type Of<T> = crate::unwind::QuietBox<T>;
}

/// Builds only if `K`'s arenas are `Send` and `Sync` as their values, and `Unpin` whatever the
/// values are (they never move). A `not_*` check names its trait's impl through a marker `M*`,
/// which the caller leaves to inference: it is inferred only where one impl applies, that is
/// where the arena lacks the trait.
fn send_and_sync_as_the_values_and_unpin<K: Kind, M1, M2, M3, M4, M5>()
where
    K::Of<u32>: Send + Sync + Unpin,
    K::Of<Pinned>: Send + Sync + Unpin,
    K::Of<SendOnly>: Send + AmbiguousIfSync<M1> + Unpin,
    K::Of<SyncOnly>: AmbiguousIfSend<M2> + Sync + Unpin,
    K::Of<Cell<u32>>: Send + AmbiguousIfSync<M3> + Unpin,
    K::Of<HoldsMut>: Send + Sync + Unpin,
    K::Of<Rc<u32>>: AmbiguousIfSend<M4> + AmbiguousIfSync<M5> + Unpin,
{
}

/// Neither `UnwindSafe` nor `RefUnwindSafe`: a type has `NeitherUnwindSafe<M>` for exactly one
/// marker `M` only if it has neither trait.
trait NeitherUnwindSafe<M> {}

impl<T, A, B> NeitherUnwindSafe<(A, B)> for T where
    T: AmbiguousIfUnwindSafe<A> + AmbiguousIfRefUnwindSafe<B>
{
}

/// Builds only if `K`'s arenas have neither unwind-safety trait, whatever the values are.
fn neither_unwind_safe<K: Kind, M1, M2, M3, M4, M5, M6, M7>()
where
    K::Of<u32>: NeitherUnwindSafe<M1>,
    K::Of<Cell<u32>>: NeitherUnwindSafe<M2>,
    K::Of<HoldsMut>: NeitherUnwindSafe<M3>,
    K::Of<Pinned>: NeitherUnwindSafe<M4>,
    K::Of<SendOnly>: NeitherUnwindSafe<M5>,
    K::Of<SyncOnly>: NeitherUnwindSafe<M6>,
    K::Of<Rc<u32>>: NeitherUnwindSafe<M7>,
{
}

#[test]
fn a_growable_arenas_send_sync_and_unpin_are_its_values() {
    send_and_sync_as_the_values_and_unpin::<Growable, _, _, _, _, _>();
}

#[test]
fn a_growable_arena_has_the_auto_traits_of_an_arena() {
    // The same three for a fixed arena, and neither unwind-safety trait for either, whatever
    // the values.
    send_and_sync_as_the_values_and_unpin::<Fixed, _, _, _, _, _>();
    neither_unwind_safe::<Growable, _, _, _, _, _, _, _>();
    neither_unwind_safe::<Fixed, _, _, _, _, _, _, _>();
}

#[test]
fn a_join_arenas_send_and_sync_are_its_values_and_it_is_always_unpin() {
    // As a `Vec` of the values (their storage), `Unpin` whatever they are (they never move).
    send_and_sync_as_the_values_and_unpin::<Join, _, _, _, _, _>();
    neither_unwind_safe::<Join, _, _, _, _, _, _, _>();
}

#[test]
fn a_quiet_boxs_send_and_sync_are_its_values_and_it_is_always_unpin() {
    // As a `Box` of the value.
    send_and_sync_as_the_values_and_unpin::<Quiet, _, _, _, _, _>();
}
