//! `JoinArena`'s passes when an output's `Drop` panics beside another panic (a value's `Drop`,
//! `take`, the task waker's `drop`): the first panic reaches the caller, every value and every
//! output is dropped once, and nothing aborts.
// With `std` only: without it a second panic while one unwinds aborts (see `unwind`).
#![cfg(feature = "std")]

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, RawWaker, RawWakerVTable, Waker};

use pinfold_arena::{JoinArena, Step};

/// Drop counts, one per value (or output) id.
#[derive(Debug, Clone)]
struct Counts(Arc<[AtomicUsize; 4]>);

impl Counts {
    fn new() -> Self {
        Self(Arc::new([const { AtomicUsize::new(0) }; 4]))
    }

    fn dropped(&self, id: u64) {
        self.0[id as usize].fetch_add(1, Ordering::SeqCst);
    }

    fn first(&self, n: usize) -> Vec<usize> {
        self.0[..n]
            .iter()
            .map(|d| d.load(Ordering::SeqCst))
            .collect()
    }
}

/// Sixteen bytes (an id and the counts' pointer, plus a flag), aligned as a `u64`: a `Loud`
/// output takes its storage in place.
struct Value {
    id: u64,
    panics: bool,
    drops: Counts,
}

impl Drop for Value {
    fn drop(&mut self) {
        self.drops.dropped(self.id);
        if self.panics {
            panic!("value {} panics in drop", self.id);
        }
    }
}

/// An output whose `Drop` panics; no larger than a `Value` and aligned as one.
#[derive(Debug)]
struct Loud(u64, Counts);

impl Drop for Loud {
    fn drop(&mut self) {
        self.1.dropped(self.0);
        panic!("output {} panics in drop", self.0);
    }
}

/// An output whose `Drop` panics that never takes a `Value`'s storage (larger than one).
#[derive(Debug)]
struct LoudWide(u64, Counts, #[allow(dead_code)] [u64; 4]);

impl Drop for LoudWide {
    fn drop(&mut self) {
        self.1.dropped(self.0);
        panic!("output {} panics in drop", self.0);
    }
}

fn values(n: u64, panicking: &[u64], drops: &Counts) -> impl Iterator<Item = Value> + use<> {
    let (panicking, drops) = (panicking.to_vec(), drops.clone());
    (0..n).map(move |id| Value {
        id,
        panics: panicking.contains(&id),
        drops: drops.clone(),
    })
}

fn message(panic: &(dyn std::any::Any + Send)) -> &str {
    panic
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| panic.downcast_ref::<&str>().copied())
        .unwrap_or("?")
}

#[test]
fn take_vec_with_in_place_a_value_and_its_output_panic_in_drop() {
    pinfold_testkit::panic_hook::no_forced_backtraces();
    let (value_drops, output_drops) = (Counts::new(), Counts::new());
    let mut arena = JoinArena::new(values(3, &[0], &value_drops));
    let taken = catch_unwind(AssertUnwindSafe(|| {
        arena.take_vec_with(|value| Loud(value.id, output_drops.clone()))
    }));
    let panic = taken.expect_err("the first panic reaches the caller");
    assert_eq!(message(&*panic), "value 0 panics in drop");
    drop(arena);
    assert_eq!(value_drops.first(3), [1, 1, 1]);
    assert_eq!(output_drops.first(1), [1]);
}

#[test]
fn take_vec_with_new_vec_take_panics_and_an_output_panics_in_drop() {
    pinfold_testkit::panic_hook::no_forced_backtraces();
    let (value_drops, output_drops) = (Counts::new(), Counts::new());
    let mut arena = JoinArena::new(values(3, &[], &value_drops));
    let taken = catch_unwind(AssertUnwindSafe(|| {
        arena.take_vec_with(|value| {
            if value.id == 1 {
                panic!("take panics");
            }
            LoudWide(value.id, output_drops.clone(), [0; 4])
        })
    }));
    let panic = taken.expect_err("the first panic reaches the caller");
    assert_eq!(message(&*panic), "take panics");
    drop(arena);
    assert_eq!(value_drops.first(3), [1, 1, 1]);
    assert_eq!(output_drops.first(1), [1]);
}

#[test]
fn take_vec_with_new_vec_a_value_and_an_output_panic_in_drop() {
    pinfold_testkit::panic_hook::no_forced_backtraces();
    let (value_drops, output_drops) = (Counts::new(), Counts::new());
    let mut arena = JoinArena::new(values(2, &[1], &value_drops));
    let taken = catch_unwind(AssertUnwindSafe(|| {
        arena.take_vec_with(|value| LoudWide(value.id, output_drops.clone(), [0; 4]))
    }));
    let panic = taken.expect_err("the first panic reaches the caller");
    assert_eq!(message(&*panic), "value 1 panics in drop");
    drop(arena);
    assert_eq!(value_drops.first(2), [1, 1]);
    assert_eq!(output_drops.first(2), [1, 1]);
}

static TASK_WAKER_DROPS: AtomicUsize = AtomicUsize::new(0);

fn quiet_clone(_: *const ()) -> RawWaker {
    RawWaker::new(std::ptr::null(), &LOUD)
}
fn noop(_: *const ()) {}
fn loud_drop(_: *const ()) {
    TASK_WAKER_DROPS.fetch_add(1, Ordering::SeqCst);
    panic!("the task waker panics in drop");
}
/// The task's waker as given: its clones (the one the arena registers) panic in `drop`.
static QUIET: RawWakerVTable = RawWakerVTable::new(quiet_clone, noop, noop, noop);
static LOUD: RawWakerVTable = RawWakerVTable::new(quiet_clone, noop, noop, loud_drop);

#[test]
fn fill_in_place_complete_the_task_waker_and_an_output_panic_in_drop() {
    pinfold_testkit::panic_hook::no_forced_backtraces();
    // SAFETY: the vtable's functions ignore the data pointer.
    let waker = unsafe { Waker::from_raw(RawWaker::new(std::ptr::null(), &QUIET)) };
    let mut cx = Context::from_waker(&waker);
    let (value_drops, output_drops) = (Counts::new(), Counts::new());
    let mut arena = JoinArena::new(values(2, &[], &value_drops));
    arena.arm(|_| true);
    let mut budget = arena.start_round();
    // Every value waits: the round registers a clone of the task's waker.
    let polled = arena.poll_with_budget(&mut cx, &mut budget, &mut |_, _, _| Step::<()>::Pending);
    assert!(polled.is_pending());
    let filled = catch_unwind(AssertUnwindSafe(|| {
        arena.fill_in_place(
            |value| Ok::<_, ()>(Loud(value.id, output_drops.clone())),
            |_| unreachable!("nothing is put back"),
        )
    }));
    let panic = filled.expect_err("the first panic reaches the caller");
    assert_eq!(message(&*panic), "the task waker panics in drop");
    drop(arena);
    assert_eq!(TASK_WAKER_DROPS.load(Ordering::SeqCst), 1);
    assert_eq!(value_drops.first(2), [1, 1]);
    assert_eq!(output_drops.first(2), [1, 1]);
}
