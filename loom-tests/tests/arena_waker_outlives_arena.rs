//! Wakers cloned, woken and dropped on other threads while, and after, the arena is dropped.
//!
//! The owner polls the arena once and drops it while one worker clones slot 0's waker, wakes
//! the clone by reference, drops it, and wakes the original by value; the other worker waits
//! until the arena is gone, then clones, wakes and drops slot 1's waker. The wake table must
//! live exactly as long as its last reference: freed once, by whichever of the three lets go
//! last.
//!
//! Asserts: the values are dropped by the owner, in `drop(arena)`, each once; the parent task's
//! waker is released by the dropped arena (once the racing wake is delivered, no clone of it is
//! left, although the table lives on); and loom's leak check finds the wake table freed. A use
//! after free is made loud by this test binary's allocator, which poisons every block it frees:
//! a waker that touched a freed table would read loom object handles of 0xA5 bytes and fail.
#![cfg(pinfold_loom)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::task::{Context, Poll};

use loom::sync::Arc;
use loom::sync::atomic::{AtomicBool, Ordering};
use loom_tests::{Leaf, Parent, Workers, check, poll_arena};
use pinfold_arena::{Arena, Storage};

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

#[test]
fn wakers_outliving_the_arena_free_the_table_once() {
    check("arena_waker_outlives_arena", || {
        let task = Parent::new();
        let mut arena = Arena::new(2);
        let (first, first_probe) = Leaf::new(0);
        let (second, second_probe) = Leaf::new(1);
        let first = arena.insert(first).unwrap();
        let second = arena.insert(second).unwrap();
        let (waker0, waker1) = (arena.waker(first).unwrap(), arena.waker(second).unwrap());
        let dropped = Arc::new(AtomicBool::new(false));

        // Two sets of one worker each, so the owner can wait for the first alone.
        let (mut racing, mut late) = (Workers::new(), Workers::new());
        racing.spawn(move || {
            let clone = waker0.clone();
            clone.wake_by_ref();
            drop(clone);
            waker0.wake();
        });
        let gone = Arc::clone(&dropped);
        late.spawn(move || {
            // Acquire pairs with the owner's Release store: the arena is gone.
            while !gone.load(Ordering::Acquire) {
                loom::thread::yield_now();
            }
            let clone = waker1.clone();
            drop(waker1);
            clone.wake_by_ref();
            drop(clone);
        });

        {
            let waker = task.waker();
            assert_eq!(
                poll_arena(&mut arena, &mut Context::from_waker(&waker)),
                Poll::Pending
            );
        }
        drop(arena);
        assert_eq!(
            (first_probe.drops(), second_probe.drops()),
            (1, 1),
            "the values are dropped in place by the owner's drop"
        );
        // The first worker may be delivering a wake to the parent right now; once it is done,
        // nothing holds the parent's waker, although the table lives on (the second worker
        // holds a waker).
        racing.join();
        assert_eq!(
            task.wakers_alive(),
            0,
            "the dropped arena let the parent waker go"
        );
        dropped.store(true, Ordering::Release);
        late.join();
    });
}
