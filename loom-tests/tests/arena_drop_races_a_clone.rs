//! The arena's drop against a worker that clones the waker of a value still held (its entry
//! bound, with no reference to the table of its own), drops the original and wakes by value
//! through the clone, while another worker drops the last waker of a retired entry. The
//! arena's drop retires the held value's entry if its count is above zero when it looks, and
//! the count moves under it.
//!
//! Asserts: the held value is dropped once; the wake table is freed once, by whoever lets go
//! last: loom's leak check fails the model if a reference is never given up, and a reference
//! given up twice frees the block early, which this binary's allocator poisons (0xA5 bytes).
#![cfg(pinfold_loom)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::task::{Context, Poll, Waker};

use loom::sync::Arc;
use loom_tests::{Leaf, Parent, Probe, Workers, check, finish_keeping_a_waker};
use pinfold_arena::{Arena, Step, Storage};

/// The system allocator, but every freed block is overwritten with 0xA5 first.
struct Poisoning;

// SAFETY: forwards to `System`; the poisoning writes only the block being freed, which the
// caller owns and gives up.
unsafe impl GlobalAlloc for Poisoning {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller upholds `alloc`'s contract.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` is a live block of `layout.size()` bytes that the caller gives up.
        unsafe { ptr.write_bytes(0xA5, layout.size()) };
        // SAFETY: the caller upholds `dealloc`'s contract.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static POISONING: Poisoning = Poisoning;

/// Inserts a pending value with output `id` and polls it once; returns a clone of the waker
/// it was polled with, and its probe.
fn pending_keeping_a_waker(
    arena: &mut Arena<Leaf>,
    cx: &mut Context<'_>,
    id: usize,
) -> (Waker, Arc<Probe>) {
    let (leaf, probe) = Leaf::new(id);
    let key = arena.insert(leaf).unwrap();
    let mut kept = None;
    let pending = arena.poll_next(cx, |polled, _, cx| -> Step<()> {
        assert_eq!(polled, key);
        kept = Some(cx.waker().clone());
        Step::Pending
    });
    assert_eq!(pending, Poll::Pending);
    (kept.unwrap(), probe)
}

#[test]
fn a_clone_of_a_held_values_waker_races_the_arena_drop() {
    check("arena_drop_races_a_clone", || {
        let task = Parent::new();
        let waker = task.waker();
        let mut cx = Context::from_waker(&waker);
        let mut arena = Arena::new(2);
        let (_, _, stale) = finish_keeping_a_waker(&mut arena, &mut cx, 0);
        let (kept, probe) = pending_keeping_a_waker(&mut arena, &mut cx, 1);

        let mut workers = Workers::new();
        workers.spawn(move || {
            let clone = kept.clone();
            drop(kept);
            clone.wake();
        });
        workers.spawn(move || {
            stale.wake_by_ref();
            drop(stale);
        });
        drop(arena);
        assert_eq!(
            probe.drops(),
            1,
            "the held value is dropped by the arena's drop"
        );
        workers.join();
    });
}
