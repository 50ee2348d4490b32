//! Which futures a join polls, and how often: every running one in the first polls (two with
//! the task's waker up to 32 futures, one above, then one with its own waker), after that only
//! the woken ones, each once per burst of wakes, and never a finished one; and a future that
//! keeps waking itself cannot hold the executor.

mod probe;

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::task::{Poll, Wake, Waker};
use std::thread;

use futures_core::future::FusedFuture;
use pinfold_join::{join_all, try_join_all};
use probe::{Spinner, XorShift, counting_waker, poll_once, poll_with, probes};

/// The sizes the poll bound is checked at: around the small-join threshold (32), and large.
const SIZES: [usize; 7] = [1, 2, 10, 31, 32, 33, if cfg!(miri) { 100 } else { 1_000 }];

/// How many of a join's first polls poll every running future with the task's waker: two up
/// to 32 futures, one above (the crate docs, *Polls*).
fn task_passes(n: usize) -> usize {
    if n <= 32 { 2 } else { 1 }
}

#[test]
fn ready_futures_are_polled_once_each() {
    for n in SIZES {
        let (spinners, polls): (Vec<_>, Vec<_>) = (0..n).map(|id| Spinner::new(id, 0)).unzip();
        let mut join = join_all(spinners);
        assert_eq!(
            poll_once(&mut join),
            Poll::Ready((0..n).collect::<Vec<_>>())
        );
        assert!(
            polls.iter().all(|p| p.load(Ordering::SeqCst) == 1),
            "n = {n}: a ready future polled other than once"
        );
    }
}

#[test]
fn futures_that_yield_once_are_polled_twice_each_and_finish_at_the_second_poll() {
    for n in SIZES {
        let (spinners, polls): (Vec<_>, Vec<_>) = (0..n).map(|id| Spinner::new(id, 1)).unzip();
        let mut join = join_all(spinners);
        assert!(poll_once(&mut join).is_pending());
        assert_eq!(
            poll_once(&mut join),
            Poll::Ready((0..n).collect::<Vec<_>>()),
            "n = {n}"
        );
        assert!(
            polls.iter().all(|p| p.load(Ordering::SeqCst) == 2),
            "n = {n}: a future that yields once polled other than twice"
        );
    }
}

#[test]
fn futures_waiting_for_one_wake_are_polled_at_most_task_passes_plus_2_times() {
    for n in SIZES {
        let passes = task_passes(n);
        let mut rng = XorShift::new(n as u64);
        let (futures, states) = probes(n, |i| i);
        let mut join = join_all(futures);
        // The task passes, then the poll that gives each future its own waker: every future is
        // polled once by each, woken or not.
        for poll in 1..=passes + 1 {
            assert!(poll_once(&mut join).is_pending());
            assert!(
                states.iter().all(|s| s.polls() == poll),
                "n = {n}: poll {poll} did not poll every future once"
            );
        }
        // From now on only woken futures are polled: once each, when its one wake comes.
        let order = rng.permutation(n);
        let mut rest = &order[..];
        let outputs = loop {
            let batch = (1 + rng.below(n / 4 + 1)).min(rest.len());
            for &i in &rest[..batch] {
                states[i].finish();
            }
            rest = &rest[batch..];
            if let Poll::Ready(outputs) = poll_once(&mut join) {
                break outputs;
            }
            let polled: usize = states.iter().map(|s| s.polls()).sum();
            let finished = n - rest.len();
            assert_eq!(
                polled,
                n * (passes + 1) + finished,
                "n = {n}: an unwoken future was polled"
            );
        };
        assert_eq!(outputs, (0..n).collect::<Vec<_>>());
        assert!(
            states.iter().all(|s| s.polls() == passes + 2),
            "n = {n}: a future polled other than {} times",
            passes + 2
        );
    }
}

#[test]
fn futures_woken_from_another_thread_are_polled_at_most_task_passes_plus_2_times() {
    for n in SIZES {
        let n = if cfg!(miri) { n.min(33) } else { n };
        let (futures, states) = probes(n, |i| i * 2);
        let mut join = join_all(futures);
        let waker = Waker::from(Arc::new(Unparker(thread::current())));
        assert!(poll_with(&mut join, &waker).is_pending());
        let finisher = {
            let states = states.clone();
            thread::spawn(move || {
                for state in &states {
                    state.finish();
                }
            })
        };
        let outputs = loop {
            match poll_with(&mut join, &waker) {
                Poll::Ready(outputs) => break outputs,
                Poll::Pending => thread::park(),
            }
        };
        finisher.join().unwrap();
        assert_eq!(outputs, (0..n).map(|i| i * 2).collect::<Vec<_>>());
        let bound = task_passes(n) + 2;
        for (i, state) in states.iter().enumerate() {
            assert!(
                (2..=bound).contains(&state.polls()),
                "n = {n}: future {i} polled {} times (at most {bound})",
                state.polls()
            );
        }
    }
}

#[test]
fn only_the_woken_future_is_polled() {
    // Up to 30 futures, futures-util polls all of them on every wake; here only the first
    // three polls of a join of 10 poll them all (two with the task's waker, one to give each
    // its own waker).
    let (futures, states) = probes(10, |i| i);
    let mut join = join_all(futures);
    for _ in 0..3 {
        assert!(poll_once(&mut join).is_pending());
    }
    assert!(states.iter().all(|s| s.polls() == 3));

    // Not woken: nothing polled.
    assert!(poll_once(&mut join).is_pending());
    assert!(states.iter().all(|s| s.polls() == 3));

    // Woken (three times) but not ready: polled once more, the others not at all.
    for _ in 0..3 {
        states[4].waker().wake_by_ref();
    }
    assert!(poll_once(&mut join).is_pending());
    let polls: Vec<usize> = states.iter().map(|s| s.polls()).collect();
    assert_eq!(polls, [3, 3, 3, 3, 4, 3, 3, 3, 3, 3]);
}

#[test]
fn finished_future_is_dropped_when_it_finishes_and_not_polled_again() {
    let (futures, states) = probes(4, |i| i);
    let mut join = join_all(futures);
    for _ in 0..3 {
        assert!(poll_once(&mut join).is_pending());
    }
    // The future's own waker (the third poll gave it).
    let stale = states[2].waker();
    states[2].finish();
    assert!(poll_once(&mut join).is_pending());
    assert_eq!(
        states[2].drops(),
        1,
        "a finished future waits for the others"
    );
    assert_eq!(states[2].polls(), 4);

    // A stale wake of the finished slot polls nothing (a probe polled after Ready panics).
    stale.wake_by_ref();
    assert!(poll_once(&mut join).is_pending());
    assert_eq!(states.iter().map(|s| s.polls()).sum::<usize>(), 13);

    for i in [0, 1, 3] {
        states[i].finish();
    }
    stale.wake();
    assert_eq!(poll_once(&mut join), Poll::Ready(vec![0, 1, 2, 3]));
}

#[test]
fn a_wake_wakes_the_task_that_polled_last() {
    let (futures, states) = probes(3, |i| i);
    let mut join = join_all(futures);
    let (first, first_count) = counting_waker();
    let (second, second_count) = counting_waker();
    assert!(poll_with(&mut join, &first).is_pending());
    assert!(poll_with(&mut join, &second).is_pending());
    states[0].finish();
    assert_eq!((first_count.count(), second_count.count()), (0, 1));
    assert!(poll_with(&mut join, &second).is_pending());
    // A burst of wakes wakes the task once.
    states[1].finish();
    states[2].finish();
    assert_eq!(second_count.count(), 2);
    assert_eq!(poll_with(&mut join, &second), Poll::Ready(vec![0, 1, 2]));
}

#[test]
fn futures_that_yield_in_a_task_pass_wake_the_task_once_or_twice_not_once_each() {
    // The first future the pass polls wakes the task itself; the others' wakes are noted and
    // passed on once after the pass (`pinfold_arena::with_noted_wakes`).
    for n in SIZES {
        let (spinners, _polls): (Vec<_>, Vec<_>) = (0..n).map(|id| Spinner::new(id, 2)).unzip();
        let mut join = join_all(spinners);
        let (task, wakes) = counting_waker();
        for pass in 1..=task_passes(n) {
            let before = wakes.count();
            assert!(poll_with(&mut join, &task).is_pending());
            let woke = wakes.count() - before;
            assert!(
                (1..=2.min(n)).contains(&woke),
                "n = {n}, task pass {pass}: {woke} wakes of the task"
            );
        }
    }
}

#[test]
fn futures_that_always_wake_themselves_cannot_hold_the_executor() {
    let (spinners, polls): (Vec<_>, Vec<_>) = (0..4).map(|id| Spinner::new(id, usize::MAX)).unzip();
    let mut join = join_all(spinners);
    let (waker, wakes) = counting_waker();
    for round in 1..=20 {
        // Each poll returns, having polled each spinner at most once, and woken the task so
        // that it is polled again.
        let before = wakes.count();
        assert!(poll_with(&mut join, &waker).is_pending());
        assert!(wakes.count() > before, "yielded without waking the task");
        assert!(polls.iter().all(|p| p.load(Ordering::SeqCst) <= round));
    }
    assert!(polls.iter().all(|p| p.load(Ordering::SeqCst) >= 10));
}

#[test]
fn futures_that_wake_themselves_a_few_times_all_finish() {
    let n = if cfg!(miri) { 50 } else { 1_000 };
    let (spinners, polls): (Vec<_>, Vec<_>) = (0..n).map(|id| Spinner::new(id, id % 7)).unzip();
    let mut join = try_join_all(
        spinners
            .into_iter()
            .map(|s| async move { Ok::<_, ()>(s.await) }),
    );
    // Futures that woke themselves are polled again in the next poll, so the join takes
    // several polls; but each poll makes progress.
    let spins: usize = (0..n).map(|id| id % 7).sum();
    let mut rounds = 0;
    let outputs = loop {
        if let Poll::Ready(outputs) = poll_once(&mut join) {
            break outputs;
        }
        rounds += 1;
        assert!(rounds <= spins, "the join stopped making progress");
    };
    assert_eq!(outputs, Ok((0..n).collect::<Vec<_>>()));
    for (id, polls) in polls.iter().enumerate() {
        assert_eq!(polls.load(Ordering::SeqCst), id % 7 + 1, "spinner {id}");
    }
    assert!(join.is_terminated());
}

/// Unparks the thread that made it.
struct Unparker(thread::Thread);

impl Wake for Unparker {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }
}

#[test]
fn wakes_from_other_threads_complete_the_join() {
    let n = if cfg!(miri) { 8 } else { 200 };
    let (futures, states) = probes(n, |i| i * 2);
    let mut join = join_all(futures);
    let waker = Waker::from(Arc::new(Unparker(thread::current())));
    assert!(poll_with(&mut join, &waker).is_pending());
    let wakers: Vec<_> = (0..4)
        .map(|t| {
            let states = states.clone();
            thread::spawn(move || {
                for state in states.iter().skip(t).step_by(4) {
                    state.finish();
                }
            })
        })
        .collect();
    let outputs = loop {
        match poll_with(&mut join, &waker) {
            Poll::Ready(outputs) => break outputs,
            Poll::Pending => thread::park(),
        }
    };
    for thread in wakers {
        thread.join().unwrap();
    }
    assert_eq!(outputs, (0..n).map(|i| i * 2).collect::<Vec<_>>());
    // 200 futures: one task pass, so at most 3 polls each (see above).
    assert!(
        states
            .iter()
            .all(|s| (2..=3).contains(&s.polls()) && s.drops() == 1)
    );
}

/// A future that keeps the waker of its first poll only: the `Future` contract asks for the
/// latest poll's, but such futures work wherever the waker never changes (futures-util's small
/// joins poll every future with the task's waker).
struct KeepsFirstWaker {
    open: Arc<std::sync::atomic::AtomicBool>,
    waker: Arc<std::sync::Mutex<Option<Waker>>>,
    id: usize,
}

impl std::future::Future for KeepsFirstWaker {
    type Output = usize;

    fn poll(self: std::pin::Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> Poll<usize> {
        if self.open.load(Ordering::SeqCst) {
            return Poll::Ready(self.id);
        }
        self.waker
            .lock()
            .unwrap()
            .get_or_insert_with(|| cx.waker().clone());
        Poll::Pending
    }
}

#[test]
fn a_future_that_keeps_its_first_waker_still_finishes() {
    // The first polls hand it the task's waker, which it keeps; its own waker comes later and
    // it never takes it. The join polls it again on each of its polls instead of losing it.
    for n in [10, 100] {
        let open = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let kept: Vec<_> = (0..n)
            .map(|_| Arc::new(std::sync::Mutex::new(None)))
            .collect();
        let futures = (0..n).map(|id| KeepsFirstWaker {
            open: open.clone(),
            waker: kept[id].clone(),
            id,
        });
        let mut join = join_all(futures);
        let (task, wakes) = counting_waker();
        for _ in 0..4 {
            assert!(poll_with(&mut join, &task).is_pending());
        }
        // The event: every future's kept waker (the task's) is woken once.
        open.store(true, Ordering::SeqCst);
        let before = wakes.count();
        for waker in &kept {
            waker.lock().unwrap().take().expect("polled").wake();
        }
        assert!(wakes.count() > before, "the kept wakers are the task's");
        assert_eq!(
            poll_with(&mut join, &task),
            Poll::Ready((0..n).collect::<Vec<_>>())
        );
    }
}

#[test]
fn a_join_of_futures_keeping_their_first_waker_does_not_wake_its_own_task() {
    // Past the 32 futures a call polls again in vain before it yields: the join polls them
    // again on each of its polls, by design, and that is no reason to wake the task.
    for n in [33, 40, if cfg!(miri) { 50 } else { 200 }] {
        let open = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let futures = (0..n).map(|id| KeepsFirstWaker {
            open: open.clone(),
            waker: Arc::default(),
            id,
        });
        let mut join = join_all(futures);
        let (task, wakes) = counting_waker();
        for poll in 0..10 {
            assert!(poll_with(&mut join, &task).is_pending());
            assert_eq!(
                wakes.count(),
                0,
                "join of {n}: poll {poll} woke its own task, with nothing woken"
            );
        }
        open.store(true, Ordering::SeqCst);
        assert_eq!(
            poll_with(&mut join, &task),
            Poll::Ready((0..n).collect::<Vec<_>>())
        );
    }
}
