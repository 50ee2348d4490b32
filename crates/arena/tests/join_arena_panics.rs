//! `JoinArena` driven from safe code while the closures and the values' `Drop` panic: every
//! value is dropped exactly once, the first panic reaches the caller, and nothing aborts.
// With `std` only: without it a second panic while one unwinds aborts (see `unwind`).
#![cfg(feature = "std")]

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use pinfold_arena::JoinArena;

static COUNTED_DROPS: [AtomicUsize; 3] = [const { AtomicUsize::new(0) }; 3];

/// Eight bytes, aligned as a `u64`: a `u64` output may take its storage.
struct Counted {
    id: u64,
}

impl Drop for Counted {
    fn drop(&mut self) {
        COUNTED_DROPS[self.id as usize].fetch_add(1, Ordering::SeqCst);
    }
}

#[test]
fn fill_in_place_with_a_panicking_restore_drops_each_value_once() {
    let mut arena = JoinArena::new((0..3).map(|id| Counted { id }));
    let filled = catch_unwind(AssertUnwindSafe(|| {
        arena.fill_in_place(
            |value| if value.id < 2 { Ok(value.id) } else { Err(()) },
            |_output: u64| -> Counted { panic!("restore panics") },
        )
    }));
    assert!(filled.is_err(), "the panic of restore propagates");
    drop(arena);
    for (id, drops) in COUNTED_DROPS.iter().enumerate() {
        assert_eq!(drops.load(Ordering::SeqCst), 1, "drops of value {id}");
    }
}

/// Each test's drops, a row a test (the tests of a file run side by side): the drops of value
/// `id` of test `TEST` are `DROPS[TEST][id]`.
static DROPS: [[AtomicUsize; 4]; 2] = [const { [const { AtomicUsize::new(0) }; 4] }; 2];
const TAKE_VEC: usize = 0;
const DROP_ARENA: usize = 1;

/// Sixteen bytes, aligned as a `u64`: a `u64` output takes its storage in place. Counts its
/// drops in `DROPS[TEST]`; panics in its `Drop` if `panics`.
struct Panicky<const TEST: usize> {
    id: u64,
    panics: bool,
}

impl<const TEST: usize> Drop for Panicky<TEST> {
    fn drop(&mut self) {
        DROPS[TEST][self.id as usize].fetch_add(1, Ordering::SeqCst);
        if self.panics {
            panic!("value {} panics in drop", self.id);
        }
    }
}

/// Every value of the test `test` was dropped exactly once.
fn assert_each_dropped_once(test: usize) {
    for (id, drops) in DROPS[test].iter().enumerate() {
        assert_eq!(drops.load(Ordering::SeqCst), 1, "drops of value {id}");
    }
}

#[test]
fn take_vec_with_two_panicking_drops_drops_every_value_then_the_first_panic_goes_on() {
    pinfold_testkit::panic_hook::no_forced_backtraces();
    let mut arena = JoinArena::new((0..4).map(|id| Panicky::<TAKE_VEC> {
        id,
        panics: id == 0 || id == 2,
    }));
    let taken = catch_unwind(AssertUnwindSafe(|| arena.take_vec_with(|value| value.id)));
    let panic = taken.expect_err("the panic of a value's Drop reaches the caller");
    assert_eq!(
        panic.downcast_ref::<String>().map(String::as_str),
        Some("value 0 panics in drop")
    );
    drop(arena);
    assert_each_dropped_once(TAKE_VEC);
}

#[test]
fn dropping_a_join_arena_drops_every_value_then_the_first_panic_goes_on() {
    pinfold_testkit::panic_hook::no_forced_backtraces();
    let arena = JoinArena::new((0..4).map(|id| Panicky::<DROP_ARENA> {
        id,
        panics: id == 1 || id == 3,
    }));
    let dropped = catch_unwind(AssertUnwindSafe(|| drop(arena)));
    let panic = dropped.expect_err("the panic of a value's Drop reaches the caller");
    assert_eq!(
        panic.downcast_ref::<String>().map(String::as_str),
        Some("value 1 panics in drop")
    );
    assert_each_dropped_once(DROP_ARENA);
}

static ZSTS_DROPPED: AtomicUsize = AtomicUsize::new(0);
static ZSTS_ARMED: AtomicBool = AtomicBool::new(false);

/// Zero-sized: its values' `Vec` has the largest capacity. Once armed, every other one panics
/// in `Drop`.
struct Zst;

impl Drop for Zst {
    fn drop(&mut self) {
        let drops = ZSTS_DROPPED.fetch_add(1, Ordering::SeqCst);
        if ZSTS_ARMED.load(Ordering::SeqCst) && drops % 2 == 1 {
            panic!("a zero-sized value panics in drop");
        }
    }
}

#[test]
fn a_join_arena_of_zero_sized_values_dropped_while_a_panic_unwinds_drops_each_once() {
    pinfold_testkit::panic_hook::no_forced_backtraces();
    let unwound = catch_unwind(AssertUnwindSafe(|| {
        let _arena = JoinArena::new((0..4).map(|_| Zst));
        let mut taken = JoinArena::new((0..3).map(|_| Zst));
        // The values are taken out with nothing dropped: the arena's block holds none after.
        assert_eq!(taken.take_vec_with(|_| ()).len(), 3);
        drop(taken);
        ZSTS_ARMED.store(true, Ordering::SeqCst);
        panic!("the first panic");
    }));
    let panic = unwound.expect_err("the first panic goes on");
    assert_eq!(panic.downcast_ref::<&str>(), Some(&"the first panic"));
    assert_eq!(ZSTS_DROPPED.load(Ordering::SeqCst), 7);
}
