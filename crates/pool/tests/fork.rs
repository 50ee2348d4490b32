//! A process forked while other threads use a pool: in the child, where those threads do not
//! exist, `try_acquire` and releases still never wait, and the buffers those threads did not
//! hold at the fork stay findable.
// `fork` is unix's, and Miri runs none.
#![cfg(all(unix, feature = "std", not(miri)))]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use pinfold_pool::{Buf, BufferPool};

/// The pool's buffers: one for each worker to cycle through its stock, the rest in the shared
/// list, so that a child that takes them all sweeps the workers' stocks.
const BUFFERS: usize = 8;
/// Threads acquiring and releasing on their own stocks while the test forks.
const WORKERS: usize = 3;
/// How many children are forked, one after another, while the workers run.
const FORKS: usize = 40;
/// How long every child has, from the last fork, to exit.
const CHILD_LIMIT: Duration = Duration::from_secs(2);

/// How a child ends, as its exit status (one that hangs is killed by a signal).
const CHILD_OK: i32 = 0;
const CHILD_PANICKED: i32 = 1;
/// The child found fewer buffers than those the workers cannot hold.
const CHILD_FOUND_TOO_FEW: i32 = 2;
/// `available` disagreed with what the child found.
const CHILD_MISCOUNTED: i32 = 3;
/// The child found fewer buffers the second time than the first.
const CHILD_LOST_BUFFERS: i32 = 4;

/// Takes every buffer `try_acquire` finds, into `held`; returns how many.
fn take_all(pool: &BufferPool, held: &mut [Option<Buf>; BUFFERS]) -> usize {
    let mut found = 0;
    for slot in held.iter_mut() {
        match pool.try_acquire() {
            Some(buf) => {
                *slot = Some(buf);
                found += 1;
            }
            None => break,
        }
    }
    found
}

/// What a child does with the pool: takes every buffer it finds (sweeping the stocks of the
/// parent's threads, which it does not have), gives them back, and takes them all again.
/// Allocates nothing and takes no lock of the test's.
fn child(pool: &BufferPool) -> i32 {
    let mut held: [Option<Buf>; BUFFERS] = Default::default();
    let first = take_all(pool, &mut held);
    // Each worker holds at most one buffer: its `Buf`, or its stock's.
    if first < BUFFERS - WORKERS {
        return CHILD_FOUND_TOO_FEW;
    }
    held = Default::default();
    if pool.available() != first {
        return CHILD_MISCOUNTED;
    }
    if take_all(pool, &mut held) != first {
        return CHILD_LOST_BUFFERS;
    }
    CHILD_OK
}

/// Forks a child that runs [`child`] and exits with its code (or with [`CHILD_PANICKED`]); it
/// is killed by `SIGALRM` if it outlives the parent's limit by far.
fn fork_child(pool: &BufferPool) -> libc::pid_t {
    // SAFETY: the child runs only `child` (no allocation, no lock but the pool's) and leaves
    // with `_exit`, never returning into the test harness.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        // SAFETY: `alarm` only arms a timer.
        unsafe { libc::alarm(2 * CHILD_LIMIT.as_secs() as libc::c_uint) };
        let code = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| child(pool)))
            .unwrap_or(CHILD_PANICKED);
        // SAFETY: ends the child at once, without running the parent's exit handlers.
        unsafe { libc::_exit(code) };
    }
    pid
}

/// Waits for `children` until `deadline`, then kills those still running. Returns each one's
/// outcome: `Ok(exit code)`, or `Err(signal)` for one that was killed.
fn reap(children: &[libc::pid_t], deadline: Instant) -> Vec<Result<i32, i32>> {
    let mut outcomes: Vec<Option<Result<i32, i32>>> = vec![None; children.len()];
    loop {
        for (pid, outcome) in children.iter().zip(&mut outcomes) {
            if outcome.is_some() {
                continue;
            }
            let mut status = 0;
            // SAFETY: `status` is a valid place for the status of our own child `pid`.
            let reaped = unsafe { libc::waitpid(*pid, &mut status, libc::WNOHANG) };
            assert!(reaped >= 0, "waitpid failed");
            if reaped == *pid {
                *outcome = Some(if libc::WIFEXITED(status) {
                    Ok(libc::WEXITSTATUS(status))
                } else {
                    Err(libc::WTERMSIG(status))
                });
            }
        }
        if outcomes.iter().all(Option::is_some) {
            break;
        }
        if Instant::now() >= deadline {
            for (pid, outcome) in children.iter().zip(&outcomes) {
                if outcome.is_none() {
                    // SAFETY: `pid` is our own child, not reaped yet.
                    unsafe { libc::kill(*pid, libc::SIGKILL) };
                }
            }
        }
        thread::sleep(Duration::from_millis(5));
    }
    outcomes.into_iter().map(Option::unwrap).collect()
}

/// Threads that cycle buffers through their stocks are, at any instant, likely inside a
/// stock operation; a child forked then has their stocks marked busy for ever. Its
/// `try_acquire` neither waits for them nor loses the buffers of the stocks that were idle.
#[test]
fn a_forked_child_neither_waits_for_the_parents_threads_nor_loses_their_idle_stocks() {
    // ThreadSanitizer (`cargo xtask tsan` sets `TSAN_OPTIONS`) does not support a child
    // forked from a multi-threaded process.
    if std::env::var_os("TSAN_OPTIONS").is_some() {
        return;
    }
    let pool = BufferPool::new(BUFFERS, 16);
    let (stop, started) = (
        Arc::new(AtomicBool::new(false)),
        Arc::new(AtomicUsize::new(0)),
    );
    let workers: Vec<_> = (0..WORKERS)
        .map(|_| {
            let (pool, stop, started) = (pool.clone(), Arc::clone(&stop), Arc::clone(&started));
            thread::spawn(move || {
                drop(pool.try_acquire());
                started.fetch_add(1, Ordering::Relaxed);
                while !stop.load(Ordering::Relaxed) {
                    drop(pool.try_acquire());
                }
            })
        })
        .collect();
    // Every worker has taken its first buffer, so each cycles one through its own stock.
    while started.load(Ordering::Relaxed) < WORKERS {
        thread::yield_now();
    }

    let children: Vec<libc::pid_t> = (0..FORKS).map(|_| fork_child(&pool)).collect();
    let outcomes = reap(&children, Instant::now() + CHILD_LIMIT);
    stop.store(true, Ordering::Relaxed);
    for worker in workers {
        worker.join().unwrap();
    }

    let hung = outcomes
        .iter()
        .filter(|outcome| matches!(outcome, Err(libc::SIGKILL | libc::SIGALRM)))
        .count();
    assert_eq!(hung, 0, "{hung} of {FORKS} children hung: {outcomes:?}");
    assert!(
        outcomes.iter().all(|outcome| *outcome == Ok(CHILD_OK)),
        "children failed: {outcomes:?}"
    );
    assert_eq!(
        pool.available(),
        BUFFERS,
        "the parent's buffers are all back"
    );
}
