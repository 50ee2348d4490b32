//! Wakes: a release wakes the first waiter only, through the waker of its latest poll; a
//! waiter polled before its turn stays pending without losing its place; a release on another
//! thread wakes a task blocked in `acquire`.

mod support;

use std::sync::{Arc, Mutex, mpsc};
use std::task::{Wake, Waker};
use std::thread;
use std::time::Duration;

use pinfold_pool::{Buf, BufferPool};
use support::{block_on, counting_waker, poll_with};

#[test]
fn a_release_wakes_only_the_first_waiter() {
    let pool = BufferPool::new(2, 8);
    let held: Vec<_> = (0..2).map(|_| pool.try_acquire().unwrap()).collect();
    let wakers: Vec<_> = (0..3).map(|_| counting_waker()).collect();
    let mut waiters: Vec<_> = (0..3).map(|_| Box::pin(pool.acquire())).collect();
    for (waiter, (waker, _)) in waiters.iter_mut().zip(&wakers) {
        assert!(poll_with(waiter, waker).is_pending());
    }
    let wakes = || {
        wakers
            .iter()
            .map(|(_, wakes)| wakes.count())
            .collect::<Vec<_>>()
    };
    let mut held = held.into_iter();
    drop(held.next());
    assert_eq!(wakes(), [1, 0, 0]);
    drop(held.next());
    assert_eq!(wakes(), [1, 1, 0]);
}

#[test]
fn a_waiter_is_woken_through_the_waker_of_its_latest_poll() {
    let pool = BufferPool::new(1, 8);
    let held = pool.try_acquire().unwrap();
    let (old, old_wakes) = counting_waker();
    let (new, new_wakes) = counting_waker();
    let mut waiter = Box::pin(pool.acquire());
    assert!(poll_with(&mut waiter, &old).is_pending());
    assert!(poll_with(&mut waiter, &new).is_pending());
    drop(held);
    assert_eq!((old_wakes.count(), new_wakes.count()), (0, 1));
    assert!(poll_with(&mut waiter, &new).is_ready());
}

#[test]
fn a_waiter_polled_before_its_turn_keeps_its_place() {
    let pool = BufferPool::new(1, 8);
    let held = pool.try_acquire().unwrap();
    let (first_waker, first_wakes) = counting_waker();
    let (second_waker, second_wakes) = counting_waker();
    let mut first = Box::pin(pool.acquire());
    let mut second = Box::pin(pool.acquire());
    assert!(poll_with(&mut first, &first_waker).is_pending());
    assert!(poll_with(&mut second, &second_waker).is_pending());
    for _ in 0..3 {
        assert!(poll_with(&mut first, &first_waker).is_pending());
        assert!(poll_with(&mut second, &second_waker).is_pending());
    }
    drop(held);
    assert_eq!((first_wakes.count(), second_wakes.count()), (1, 0));
    assert!(poll_with(&mut second, &second_waker).is_pending());
    assert!(poll_with(&mut first, &first_waker).is_ready());
}

#[test]
fn a_release_on_another_thread_wakes_a_task_blocked_in_acquire() {
    let rounds = if cfg!(miri) { 3 } else { 200 };
    let pool = BufferPool::new(1, 8);
    for _ in 0..rounds {
        let held = pool.try_acquire().unwrap();
        let releaser = thread::spawn(move || drop(held));
        let buf = block_on(pool.acquire());
        releaser.join().unwrap();
        drop(buf);
    }
    assert_eq!(pool.available(), 1);
}

/// A task's waker that owns a buffer (as a task owning its future does), which goes back to
/// the pool when the last handle of the waker is dropped.
struct OwnsBuffer(#[allow(dead_code)] Mutex<Option<Buf>>);

impl Wake for OwnsBuffer {
    fn wake(self: Arc<Self>) {}
}

/// Regression test: `Acquire::poll` once cloned the new waker and dropped the replaced one with
/// the waiter lock held; when that drop gave a buffer of the same pool back while tasks waited,
/// the release took the lock again on the same thread and deadlocked. Wakers are now cloned
/// before the lock and dropped after it.
#[test]
fn a_replaced_waker_whose_drop_releases_a_buffer_does_not_deadlock() {
    let (done, finished) = mpsc::channel();
    thread::spawn(move || {
        let pool = BufferPool::new(2, 8);
        let other = pool.try_acquire().unwrap();
        let owned = pool.try_acquire().unwrap();
        let owner = Waker::from(Arc::new(OwnsBuffer(Mutex::new(Some(owned)))));
        let mut waiter = Box::pin(pool.acquire());
        assert!(poll_with(&mut waiter, &owner).is_pending());
        drop(owner); // the pool's clone is now the last handle
        // Replaces (and drops) the pool's clone: `owned` goes back, to this waiter.
        let (new, _) = counting_waker();
        let _ = poll_with(&mut waiter, &new);
        drop((other, waiter));
        assert_eq!(pool.available(), 2);
        done.send(()).unwrap();
    });
    finished
        .recv_timeout(Duration::from_secs(5))
        .expect("deadlocked: the replaced waker was dropped with the pool's lock held");
}
