//! A task waker that panics in `clone`, `drop` or `wake`: the panic reaches the code that ran
//! it (the poll, or the release), and the pool loses neither a buffer nor a wake, nor leaks a
//! waker. A waiter whose poll panicked can be polled again or dropped.

mod support;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::task::Poll;

use pinfold_pool::BufferPool;
use pinfold_testkit::panicking_waker::{
    CLONE_PANIC, DROP_PANIC, WAKE_PANIC, WakerOps, panicking_waker,
};
use support::{counting_waker, panic_message, poll_once, poll_with};

#[test]
fn a_panic_in_clone_while_queueing_loses_no_buffer() {
    let pool = BufferPool::new(1, 8);
    let held = pool.try_acquire().unwrap();
    let (waker, switches) = panicking_waker();
    let mut waiter = Box::pin(pool.acquire());
    switches.panic_once(WakerOps::CLONE);
    let panic = catch_unwind(AssertUnwindSafe(|| poll_with(&mut waiter, &waker)))
        .expect_err("the clone did not panic");
    assert_eq!(panic_message(&*panic), CLONE_PANIC);
    // The waiter never queued: a release goes to the pool.
    drop(waiter);
    drop(held);
    assert_eq!(pool.available(), 1);
    assert!(pool.try_acquire().is_some());
    assert_eq!(switches.live(), 1, "a waker clone leaked");
}

#[test]
fn a_waiter_whose_queueing_clone_panicked_can_queue_again() {
    let pool = BufferPool::new(1, 8);
    let held = pool.try_acquire().unwrap();
    let (waker, switches) = panicking_waker();
    let mut waiter = Box::pin(pool.acquire());
    switches.panic_once(WakerOps::CLONE);
    assert!(catch_unwind(AssertUnwindSafe(|| poll_with(&mut waiter, &waker))).is_err());
    let (again, wakes) = counting_waker();
    assert!(poll_with(&mut waiter, &again).is_pending());
    drop(held);
    assert_eq!(wakes.count(), 1, "the release did not wake the waiter");
    let Poll::Ready(buf) = poll_with(&mut waiter, &again) else {
        panic!("the waiter did not get the released buffer");
    };
    drop((buf, waiter));
    assert_eq!(pool.available(), 1);
    assert_eq!(switches.live(), 1, "a waker clone leaked");
}

/// The clone gives the only buffer back, so the poll takes it from the free list under the
/// lock; then the clone's drop panics. The buffer goes back to the pool.
#[test]
fn a_panic_in_drop_of_the_clone_after_a_buffer_came_back_loses_no_buffer() {
    let pool = BufferPool::new(1, 8);
    let held = pool.try_acquire().unwrap();
    let (waker, switches) = panicking_waker();
    switches.run_once(WakerOps::CLONE, move || drop(held));
    switches.panic_once(WakerOps::DROP);
    let mut waiter = Box::pin(pool.acquire());
    let panic = catch_unwind(AssertUnwindSafe(|| poll_with(&mut waiter, &waker)))
        .expect_err("the clone's drop did not panic");
    assert_eq!(panic_message(&*panic), DROP_PANIC);
    assert_eq!(
        pool.available(),
        1,
        "the buffer taken before the panic was lost"
    );
    let Poll::Ready(buf) = poll_with(&mut waiter, &waker) else {
        panic!("polled again, the waiter did not take the free buffer");
    };
    drop((buf, waiter));
    assert_eq!(pool.available(), 1);
    assert_eq!(switches.live(), 1, "a waker clone leaked");
}

/// Re-polled with a new waker, the waiter clones it; the clone gives the only buffer back,
/// which is handed to the waiter; then dropping the unneeded clone panics. The waiter keeps
/// the buffer: polled again, it returns it.
#[test]
fn a_panic_in_drop_of_the_new_waker_after_a_hand_off_leaves_the_buffer_to_the_waiter() {
    let pool = BufferPool::new(1, 8);
    let held = pool.try_acquire().unwrap();
    let (old, switches) = panicking_waker();
    let new = switches.another_waker();
    let mut waiter = Box::pin(pool.acquire());
    assert!(poll_with(&mut waiter, &old).is_pending());
    switches.run_once(WakerOps::CLONE, move || drop(held));
    switches.panic_once(WakerOps::DROP);
    let panic = catch_unwind(AssertUnwindSafe(|| poll_with(&mut waiter, &new)))
        .expect_err("the new waker's drop did not panic");
    assert_eq!(panic_message(&*panic), DROP_PANIC);
    assert_eq!(
        pool.available(),
        0,
        "the buffer handed to the waiter went back"
    );
    let Poll::Ready(buf) = poll_with(&mut waiter, &new) else {
        panic!("the buffer handed to the waiter was lost");
    };
    drop((buf, waiter));
    assert_eq!(pool.available(), 1);
    assert_eq!(switches.live(), 2, "a waker clone leaked");
}

#[test]
fn a_panic_in_drop_of_the_replaced_waker_loses_no_wake() {
    let pool = BufferPool::new(1, 8);
    let held = pool.try_acquire().unwrap();
    let (old, switches) = panicking_waker();
    let (new, wakes) = counting_waker();
    let mut waiter = Box::pin(pool.acquire());
    assert!(poll_with(&mut waiter, &old).is_pending());
    switches.panic_once(WakerOps::DROP);
    let panic = catch_unwind(AssertUnwindSafe(|| poll_with(&mut waiter, &new)))
        .expect_err("the replaced waker's drop did not panic");
    assert_eq!(panic_message(&*panic), DROP_PANIC);
    drop(held);
    assert_eq!(
        wakes.count(),
        1,
        "the release did not wake the latest waker"
    );
    assert!(poll_with(&mut waiter, &new).is_ready());
    assert_eq!(switches.live(), 1, "a waker clone leaked");
}

#[test]
fn a_panic_in_wake_reaches_the_releasing_code_and_the_waiter_still_gets_the_buffer() {
    let pool = BufferPool::new(1, 8);
    let held = pool.try_acquire().unwrap();
    let (waker, switches) = panicking_waker();
    let mut waiter = Box::pin(pool.acquire());
    assert!(poll_with(&mut waiter, &waker).is_pending());
    switches.panic_once(WakerOps::ANY_WAKE);
    let panic =
        catch_unwind(AssertUnwindSafe(|| drop(held))).expect_err("the waiter's wake did not panic");
    assert_eq!(panic_message(&*panic), WAKE_PANIC);
    let Poll::Ready(buf) = poll_once(&mut waiter) else {
        panic!("the buffer was not handed over before the wake");
    };
    drop((buf, waiter));
    assert_eq!(pool.available(), 1);
    assert_eq!(switches.live(), 1, "a waker clone leaked");
}
