//! Memory: what `new` allocates and what use does not, the size of a slot, the largest
//! capacity, and every byte given back once the arena and its wakers are gone.

use std::future::ready;
use std::panic::catch_unwind;
use std::task::{Poll, Waker};

use pinfold_testkit::alloc::measure;
use pinfold_testkit::probe::probes;
use pinfold_testkit::waker::counting_waker;

use super::next;
use crate::{Arena, Storage};

#[test]
fn new_allocates_twice_and_use_allocates_nothing() {
    // Under Miri a smaller arena (still several words of wake bits) takes fewer rounds: there,
    // under Tree Borrows, the run's time grows faster than the arena's capacity.
    let (capacity, rounds) = if cfg!(miri) {
        (128, 320)
    } else {
        (256, 100_000)
    };
    let (mut arena, n) = measure(|| Arena::new(capacity));
    assert!(n <= 2, "Arena::new({capacity}) made {n} allocations");
    let ((), n) = measure(|| {
        let waker = Waker::noop();
        for i in 0..rounds {
            if arena.is_full() {
                assert!(matches!(next(&mut arena, waker), Poll::Ready(Some(_))));
            }
            arena.insert(ready(i)).unwrap();
        }
        while let Poll::Ready(Some(_)) = next(&mut arena, waker) {}
        arena.clear();
    });
    assert_eq!(n, 0, "inserting and polling allocated");
    assert!(arena.is_empty());
}

#[test]
fn a_capacity_past_the_largest_panics_naming_the_largest() {
    let panic = catch_unwind(|| Arena::<u8>::new(usize::MAX)).unwrap_err();
    assert_eq!(
        panic
            .downcast_ref::<alloc::string::String>()
            .map(|s| s.as_str()),
        Some(&*alloc::format!(
            "arena capacity {} is too large (at most 2147483647)",
            usize::MAX
        )),
        "two entries a slot, indexed by `u32` below its largest value"
    );
}

#[test]
fn a_slot_adds_sixteen_bytes_to_a_value_of_eight() {
    // The value (or, free, the next free slot), the generation with the occupied bit, and the
    // queue mark; the slot's two wake entries are in the wake table.
    assert_eq!(size_of::<crate::storage::store::Slot<u64>>(), 24);
    assert_eq!(size_of::<crate::storage::store::Slot<[u8; 24]>>(), 40);
    assert_eq!(size_of::<crate::storage::store::Slot<()>>(), 24);
}

#[test]
fn an_arena_and_its_wakers_free_every_byte_once_gone() {
    use pinfold_testkit::alloc::measure_bytes;

    // An arena that polled with a task's waker, dropped while that waker is registered; a
    // value's waker kept past the arena and woken by value.
    let ((), bytes) = measure_bytes(|| {
        let (task, _) = counting_waker();
        let mut arena = Arena::new(4);
        let (values, states) = probes(2);
        for value in values {
            arena.insert(value).unwrap();
        }
        assert!(next(&mut arena, &task).is_pending());
        let kept = states[0].waker();
        drop(arena);
        kept.wake();
        drop((task, states));
    });
    assert_eq!(bytes.change, 0, "bytes left behind");
}

/// A value's poll clones the waker it is lent on another thread (scoped, joined within the
/// poll): the first counted waker of the arena is made there. The clone outlives the arena,
/// which must leave the table to it: a table freed with the arena is a use after free that Miri
/// reports at the wake below (the bytes are not counted here: a spawned thread's own are not
/// given back within the measure).
#[test]
fn a_waker_first_cloned_on_another_thread_keeps_the_table_past_the_arena() {
    let mut arena = Arena::new(2);
    arena.insert(core::future::pending::<()>()).unwrap();
    let mut kept = None;
    let polled = arena.poll_next(
        &mut core::task::Context::from_waker(Waker::noop()),
        |_, _, cx| -> crate::Step<()> {
            let lent = cx.waker();
            kept = Some(std::thread::scope(|s| {
                s.spawn(|| lent.clone()).join().unwrap()
            }));
            crate::Step::Pending
        },
    );
    assert!(polled.is_pending());
    drop(arena);
    let kept = kept.unwrap();
    kept.wake_by_ref();
    drop(kept);
}

/// Wakers of a value that left (its entry retired), of a value still held when the arena is
/// dropped, and an uncounted clone all outlive the arena, dropped in turn: the table lives
/// until the last and then gives every byte back.
#[test]
fn retired_held_and_uncounted_wakers_keep_the_table_until_the_last() {
    use pinfold_testkit::alloc::measure_bytes;

    let ((), bytes) = measure_bytes(|| {
        let (values, states) = probes(2);
        let mut arena = Arena::new(2);
        let keys: alloc::vec::Vec<_> = values
            .into_iter()
            .map(|value| arena.insert(value).unwrap())
            .collect();
        assert!(next(&mut arena, Waker::noop()).is_pending());
        let (left, held) = (states[0].waker(), states[1].waker());
        assert!(
            arena.remove(keys[0]),
            "its entry is retired: a waker of it is alive"
        );
        let many: alloc::vec::Vec<Waker> = (0..=crate::wake::wake_table::MAX_COUNTED)
            .map(|_| held.clone())
            .collect();
        drop(arena);
        left.wake();
        drop(many);
        held.wake_by_ref();
        drop((held, states));
    });
    assert_eq!(bytes.change, 0, "bytes left behind");
}
