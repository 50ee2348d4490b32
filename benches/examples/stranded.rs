//! A free buffer out of a waiter's reach: one thread takes a buffer from a pool of 8, gives it
//! back and then idles (or exits); another thread then awaits all 8, one after another, each
//! polled until it is served or a second has passed. pinfold-pool's `BufferPool` and bab
//! 0.0.4's `HeapBufferPool` (one batch of 8), side by side.
//!
//! bab keeps a released buffer in the releasing thread's stock until the stock holds 1.5
//! batches, and a thread's first acquire moves a whole batch there; a waiter on another thread
//! looks only at its own stock and the shared stack, and nothing hands a stock over (not a
//! waiter's arrival, not the thread's exit). So every one of bab's waiters waits for ever with
//! 8 of 8 buffers free. pinfold's waiter sweeps the other threads' stocks before it queues
//! (see `pinfold_pool`'s *How it works*), so each is served at once.
//!
//! Run with `cargo run --release -p pinfold-benches --example stranded`.

use std::future::Future;
use std::pin::pin;
use std::sync::{Arc, mpsc};
use std::task::{Context, Poll, Waker};
use std::thread;
use std::time::{Duration, Instant};

/// How long a waiter is given before it counts as stranded.
const PATIENCE: Duration = Duration::from_secs(1);
const BUFFERS: usize = 8;
const SIZE: usize = 64;

/// Polls `fut` every millisecond until it is ready or [`PATIENCE`] has passed (a poll loop, so
/// a missed wake cannot be what keeps it waiting).
fn poll_for<F: Future>(fut: F) -> Option<F::Output> {
    let mut fut = pin!(fut);
    let start = Instant::now();
    loop {
        if let Poll::Ready(out) = fut.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
            return Some(out);
        }
        if start.elapsed() > PATIENCE {
            return None;
        }
        thread::sleep(Duration::from_millis(1));
    }
}

/// What the first thread does after it gave its buffer back.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Then {
    Idles,
    Exits,
}

/// Runs the scenario: `take_and_give_back` on a thread of its own, which then idles or exits,
/// then `acquire` on this thread, up to [`BUFFERS`] times, each result kept until the end.
/// Returns how many were served.
fn scenario<B>(
    then: Then,
    take_and_give_back: impl FnOnce() + Send + 'static,
    mut acquire: impl FnMut() -> Option<B>,
) -> usize {
    let (given_back, wait_given_back) = mpsc::channel();
    let (done, wait_done) = mpsc::channel::<()>();
    let first = thread::spawn(move || {
        take_and_give_back();
        given_back.send(()).unwrap();
        if then == Then::Idles {
            // Idles until the waiter is done (its sender dropped).
            let _ = wait_done.recv();
        }
    });
    wait_given_back.recv().unwrap();
    if then == Then::Exits {
        first.join().unwrap();
    }
    let mut served = Vec::new();
    while served.len() < BUFFERS {
        match acquire() {
            Some(buf) => served.push(buf),
            None => break,
        }
    }
    let count = served.len();
    drop(done);
    drop(served);
    count
}

fn main() {
    println!(
        "A pool of {BUFFERS} buffers; one thread takes one, gives it back, then idles or exits;\n\
         another awaits {BUFFERS}, each given {PATIENCE:?}.\n"
    );
    println!("| pool | first thread | served | not served in time |");
    println!("|---|---|---:|---:|");
    for then in [Then::Idles, Then::Exits] {
        let pool = pinfold_pool::BufferPool::new(BUFFERS, SIZE);
        let theirs = pool.clone();
        let served = scenario(
            then,
            move || drop(theirs.try_acquire().expect("a free buffer")),
            || poll_for(pool.acquire()),
        );
        println!(
            "| pinfold-pool | {then:?} | {served} | {} |",
            BUFFERS - served
        );

        let bab = Arc::new(bab::HeapBufferPool::new(SIZE, 1, BUFFERS));
        let theirs = bab.clone();
        let mine = bab.clone();
        let served = scenario(
            then,
            move || {
                let buffer = theirs.try_acquire().expect("a free buffer");
                // SAFETY: acquired from this pool, on this thread, released once.
                unsafe { theirs.release(buffer) };
            },
            move || poll_for(mine.acquire()),
        );
        println!("| bab 0.0.4 | {then:?} | {served} | {} |", BUFFERS - served);
    }
}
