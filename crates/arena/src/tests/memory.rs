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
    let (mut arena, n) = measure(|| Arena::new(256));
    assert!(n <= 2, "Arena::new(256) made {n} allocations");
    let rounds = if cfg!(miri) { 600 } else { 100_000 };
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
