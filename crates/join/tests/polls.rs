//! Which futures a join polls, and how often: only the woken ones, each once per burst of
//! wakes, and never a finished one; and a future that keeps waking itself cannot hold the
//! executor.

mod probe;

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::task::{Poll, Wake, Waker};
use std::thread;

use futures_core::future::FusedFuture;
use pinfold_join::{join_all, try_join_all};
use probe::{Spinner, XorShift, counting_waker, poll_once, poll_with, probes};

#[test]
fn futures_waiting_for_one_wake_are_polled_at_most_twice_each() {
    for n in [1, 10, 29, 30, if cfg!(miri) { 100 } else { 10_000 }] {
        let mut rng = XorShift::new(n as u64);
        let (futures, states) = probes(n, |i| i);
        let mut join = join_all(futures);
        assert!(poll_once(&mut join).is_pending());
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
        };
        assert_eq!(outputs, (0..n).collect::<Vec<_>>());
        let polls: usize = states.iter().map(|s| s.polls()).sum();
        assert!(polls <= 2 * n, "{n} futures polled {polls} times");
        assert!(
            states.iter().all(|s| s.polls() == 2),
            "a future polled other than twice"
        );
    }
}

#[test]
fn only_the_woken_future_is_polled() {
    // Below 30 futures, futures-util polls all of them on every wake.
    let (futures, states) = probes(10, |i| i);
    let mut join = join_all(futures);
    assert!(poll_once(&mut join).is_pending());
    assert!(states.iter().all(|s| s.polls() == 1));

    // Not woken: nothing polled.
    assert!(poll_once(&mut join).is_pending());
    assert!(states.iter().all(|s| s.polls() == 1));

    // Woken (three times) but not ready: polled once more, the others not at all.
    for _ in 0..3 {
        states[4].waker().wake_by_ref();
    }
    assert!(poll_once(&mut join).is_pending());
    let polls: Vec<usize> = states.iter().map(|s| s.polls()).collect();
    assert_eq!(polls, [1, 1, 1, 1, 2, 1, 1, 1, 1, 1]);
}

#[test]
fn finished_future_is_dropped_when_it_finishes_and_not_polled_again() {
    let (futures, states) = probes(4, |i| i);
    let mut join = join_all(futures);
    assert!(poll_once(&mut join).is_pending());
    let stale = states[2].waker();
    states[2].finish();
    assert!(poll_once(&mut join).is_pending());
    assert_eq!(
        states[2].drops(),
        1,
        "a finished future waits for the others"
    );
    assert_eq!(states[2].polls(), 2);

    // A stale wake of the finished slot polls nothing (a probe polled after Ready panics).
    stale.wake_by_ref();
    assert!(poll_once(&mut join).is_pending());
    assert_eq!(states.iter().map(|s| s.polls()).sum::<usize>(), 5);

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
    // The join yields whenever two futures woke themselves, so it takes many polls; but each
    // poll makes progress.
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
    assert!(states.iter().all(|s| s.polls() == 2 && s.drops() == 1));
}
