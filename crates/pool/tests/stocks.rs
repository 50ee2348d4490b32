//! The threads' stocks of free buffers: a buffer released on any thread stays findable by an
//! acquire on any other, reaches a task that waits, and is counted by `available`, whether the
//! thread that released it goes on working, idles or exits.
// They spawn threads.
#![cfg(feature = "std")]

mod support;

use std::sync::mpsc;
use std::task::Poll;
use std::thread;

use pinfold_pool::{Buf, BufferPool};
use support::{block_on, counting_waker, poll_with};

/// Sizes that cover a batch of one buffer and batches of several (the largest left out under
/// Miri, where each buffer's trip costs thousands of times more).
const COUNTS: &[usize] = if cfg!(miri) { &[1, 16] } else { &[1, 16, 200] };

/// Drops `bufs` on a thread of its own, so they go into that thread's stock (and the shared
/// list, past two batches), and lets the thread exit.
fn release_on_another_thread(bufs: Vec<Buf>) {
    thread::spawn(move || drop(bufs)).join().unwrap();
}

#[test]
fn buffers_released_on_other_threads_are_all_found_by_try_acquire() {
    for &count in COUNTS {
        let pool = BufferPool::new(count, 8);
        let all: Vec<Buf> = (0..count).map(|_| pool.try_acquire().unwrap()).collect();
        assert!(pool.try_acquire().is_none());
        // Half on one thread, half on another: some into stocks, some back to the shared list.
        let mut all = all;
        let half = all.split_off(count / 2);
        release_on_another_thread(all);
        release_on_another_thread(half);
        assert_eq!(pool.available(), count, "available counts every list");

        let again: Vec<Buf> = (0..count)
            .map(|_| pool.try_acquire().expect("a free buffer in some stock"))
            .collect();
        assert_eq!(pool.available(), 0);
        assert!(pool.try_acquire().is_none());
        drop(again);
        assert_eq!(pool.available(), count);
    }
}

#[test]
fn a_waiter_is_handed_a_buffer_released_on_another_thread() {
    for &count in COUNTS {
        let pool = BufferPool::new(count, 8);
        let mut held: Vec<Buf> = (0..count).map(|_| pool.try_acquire().unwrap()).collect();
        let (waker, wakes) = counting_waker();
        let mut waiting = Box::pin(pool.acquire());
        assert!(poll_with(&mut waiting, &waker).is_pending());

        let one = held.pop().unwrap();
        release_on_another_thread(vec![one]);
        assert_eq!(wakes.count(), 1, "the release woke the waiter");
        assert_eq!(pool.available(), 0, "handed over, not cached");
        let Poll::Ready(got) = poll_with(&mut waiting, &waker) else {
            panic!("the waiter was not handed the released buffer");
        };

        // With nobody waiting, the rest go into the releasing thread's stock again.
        release_on_another_thread(held);
        assert_eq!(pool.available(), count - 1);
        drop(got);
        assert_eq!(pool.available(), count);
    }
}

/// What a thread that holds buffers of a pool does once it has released some: goes on idling
/// (holding the rest, or nothing), or exits.
#[derive(Debug, Clone, Copy)]
enum Then {
    IdleHolding(usize),
    Idle,
    Exit,
}

/// A thread takes every buffer of a pool of `count`, releases all but those `then` keeps
/// (the last ones into its own stock), then idles or exits; this thread then awaits as many
/// buffers as were released, one `acquire` after another, each holding its buffer: every one
/// is served at once, though the first ones find this thread's stock and the shared list
/// empty. bab 0.0.4 strands the first such waiter (see the benches' `stranded` example).
fn served_after_the_releaser(count: usize, then: Then) {
    let pool = BufferPool::new(count, 8);
    let (released, wait_released) = mpsc::channel();
    let (done, wait_done) = mpsc::channel::<()>();
    let mut releaser = Some({
        let pool = pool.clone();
        thread::spawn(move || {
            let mut all: Vec<Buf> = (0..count).map(|_| pool.try_acquire().unwrap()).collect();
            let kept = match then {
                Then::IdleHolding(kept) => all.split_off(count - kept),
                Then::Idle | Then::Exit => Vec::new(),
            };
            drop(all);
            released.send(()).unwrap();
            if !matches!(then, Then::Exit) {
                // Idles until the waiters are served (the sender is dropped), then gives the
                // rest back.
                let _ = wait_done.recv();
            }
            drop(kept);
        })
    });
    wait_released.recv().unwrap();
    if matches!(then, Then::Exit) {
        releaser.take().unwrap().join().unwrap();
    }
    let freed = match then {
        Then::IdleHolding(kept) => count - kept,
        Then::Idle | Then::Exit => count,
    };
    assert_eq!(
        pool.available(),
        freed,
        "{then:?}: every released buffer counted"
    );
    let served: Vec<Buf> = (0..freed).map(|_| block_on(pool.acquire())).collect();
    assert_eq!(pool.available(), 0, "{then:?}");
    assert!(pool.try_acquire().is_none(), "{then:?}");
    drop(done);
    if let Some(releaser) = releaser {
        releaser.join().unwrap();
    }
    drop(served);
    assert_eq!(pool.available(), count, "{then:?}: every buffer back");
}

#[test]
fn a_waiter_is_served_from_the_stock_of_a_thread_that_idles_after_releasing_some() {
    for &count in COUNTS {
        served_after_the_releaser(count, Then::IdleHolding(count / 2));
    }
}

#[test]
fn a_waiter_is_served_from_the_stock_of_a_thread_that_idles_after_releasing_all() {
    for &count in COUNTS {
        served_after_the_releaser(count, Then::Idle);
    }
}

#[test]
fn a_waiter_is_served_from_the_stock_of_a_thread_that_exited() {
    for &count in COUNTS {
        served_after_the_releaser(count, Then::Exit);
    }
}

/// Three threads alive at once release one, one and two buffers into their stocks; an
/// acquire that finds its own stock and the shared list empty sweeps all three stocks
/// together and finds every buffer, each once.
#[test]
fn buffers_in_the_stocks_of_several_live_threads_are_all_found_by_one_sweep() {
    use std::sync::{Arc, Barrier};

    const SHARES: [usize; 3] = [1, 1, 2];
    let count = SHARES.iter().sum();
    let pool = BufferPool::new(count, 8);
    let mut all: Vec<Buf> = (0..count).map(|_| pool.try_acquire().unwrap()).collect();
    // Every thread has released, then every buffer was acquired again.
    let (released, acquired) = (Arc::new(Barrier::new(4)), Arc::new(Barrier::new(4)));
    let threads: Vec<_> = SHARES
        .iter()
        .map(|&share| {
            let bufs = all.split_off(all.len() - share);
            let (released, acquired) = (Arc::clone(&released), Arc::clone(&acquired));
            thread::spawn(move || {
                drop(bufs);
                released.wait();
                // Alive, so its stock stays its own, until the buffers are found.
                acquired.wait();
            })
        })
        .collect();
    released.wait();
    assert_eq!(pool.available(), count, "available counts every stock");
    let mut again: Vec<Buf> = (0..count)
        .map(|_| pool.try_acquire().expect("a free buffer in some stock"))
        .collect();
    assert!(pool.try_acquire().is_none(), "no buffer is found twice");
    acquired.wait();
    for thread in threads {
        thread.join().unwrap();
    }
    for (byte, buf) in (0u8..).zip(&mut again) {
        std::io::Write::write_all(buf, &[byte]).unwrap();
    }
    for (byte, buf) in (0u8..).zip(&again) {
        assert_eq!(buf[..], [byte], "two of the buffers are one");
    }
    drop(again);
    assert_eq!(pool.available(), count);
}

/// A waiter already queued when a thread releases into what would be its stock: the release
/// hands the buffer over instead, and the thread then idles.
#[test]
fn a_release_while_a_task_waits_goes_to_the_waiter_not_to_the_stock() {
    let pool = BufferPool::new(8, 8);
    let all: Vec<Buf> = (0..8).map(|_| pool.try_acquire().unwrap()).collect();
    let (waker, wakes) = counting_waker();
    let mut waiting = Box::pin(pool.acquire());
    assert!(poll_with(&mut waiting, &waker).is_pending());
    let (released, wait_released) = mpsc::channel();
    let (done, wait_done) = mpsc::channel::<()>();
    let releaser = thread::spawn(move || {
        let mut all = all;
        let one = all.pop().unwrap();
        drop(one);
        released.send(()).unwrap();
        let _ = wait_done.recv();
        drop(all);
    });
    wait_released.recv().unwrap();
    assert_eq!(wakes.count(), 1, "the release woke the waiter");
    assert!(matches!(poll_with(&mut waiting, &waker), Poll::Ready(_)));
    drop(done);
    releaser.join().unwrap();
    assert_eq!(pool.available(), 8);
}

/// Many threads, more than a pool has stocks, each taking and releasing buffers of a small
/// pool while others wait for them: every acquire is served, and every buffer comes back.
#[test]
fn threads_beyond_the_stocks_acquire_and_release_alongside_waiters() {
    let threads = if cfg!(miri) { 3 } else { 24 };
    let rounds = if cfg!(miri) { 10 } else { 500 };
    let pool = BufferPool::new(4, 8);
    let workers: Vec<_> = (0..threads)
        .map(|_| {
            let pool = pool.clone();
            thread::spawn(move || {
                for round in 0..rounds {
                    let buf = if round % 2 == 0 {
                        block_on(pool.acquire())
                    } else {
                        match pool.try_acquire() {
                            Some(buf) => buf,
                            None => block_on(pool.acquire()),
                        }
                    };
                    drop(buf);
                }
            })
        })
        .collect();
    for worker in workers {
        worker.join().unwrap();
    }
    assert_eq!(pool.available(), 4);
}
