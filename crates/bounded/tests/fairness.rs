//! Fairness: one `poll_next` polls each future at most once, and yields to the executor
//! (waking its task) instead of spinning on futures that wake themselves, without starving any.

mod probe;

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

use pinfold_bounded::FuturesUnorderedBounded;
use probe::{Spinner, counting_waker, poll_once, poll_with, probes};

fn snapshot(counters: &[Arc<AtomicUsize>]) -> Vec<usize> {
    counters.iter().map(|c| c.load(Ordering::SeqCst)).collect()
}

#[test]
fn one_poll_polls_each_future_at_most_once_and_yields_when_all_wake_themselves() {
    let n = 8;
    let (spinners, polls): (Vec<_>, Vec<_>) = (0..n).map(Spinner::forever).unzip();
    let mut set: FuturesUnorderedBounded<Spinner> = spinners.into_iter().collect();
    let (task, wakes) = counting_waker();
    for call in 0..4 * n {
        let before = snapshot(&polls);
        let woken = wakes.count();
        assert!(poll_with(&mut set, &task).is_pending());
        let after = snapshot(&polls);
        for (id, (b, a)) in before.iter().zip(&after).enumerate() {
            assert!(a - b <= 1, "call {call} polled future {id} {} times", a - b);
        }
        assert!(
            wakes.count() > woken,
            "call {call} returned Pending without waking its task, with work left"
        );
    }
    // No future was starved meanwhile.
    for (id, count) in snapshot(&polls).into_iter().enumerate() {
        assert!(
            count >= 2,
            "future {id} polled only {count} times in {} calls",
            4 * n
        );
    }
}

#[test]
fn one_poll_yields_after_two_futures_wake_themselves() {
    let n = 10;
    let (spinners, polls): (Vec<_>, Vec<_>) = (0..n).map(Spinner::forever).unzip();
    let mut set: FuturesUnorderedBounded<Spinner> = spinners.into_iter().collect();
    for call in 0..3 * n {
        let before: usize = snapshot(&polls).iter().sum();
        assert!(poll_once(&mut set).is_pending());
        let polled = snapshot(&polls).iter().sum::<usize>() - before;
        assert!(
            polled <= 2,
            "call {call} polled {polled} self-waking futures"
        );
    }
}

#[test]
fn one_poll_starts_every_pushed_future() {
    // Futures that do not wake themselves: the first call polls every one of them.
    let n = if cfg!(miri) { 20 } else { 300 };
    let (futures, states) = probes(n);
    let mut set = FuturesUnorderedBounded::new(n);
    for probe in futures {
        set.push(probe);
    }
    let (task, wakes) = counting_waker();
    assert!(poll_with(&mut set, &task).is_pending());
    for (id, state) in states.iter().enumerate() {
        assert_eq!(state.polls(), 1, "probe {id}");
    }
    assert_eq!(wakes.count(), 0, "the set yielded with nothing left to do");
}

#[test]
fn a_woken_future_is_polled_at_most_once_per_call() {
    // Waking every future between calls, from outside: each call polls each one once.
    let n = 16;
    let (futures, states) = probes(n);
    let mut set: FuturesUnorderedBounded<_> = futures.into_iter().collect();
    assert!(poll_once(&mut set).is_pending());
    for round in 2..6 {
        for state in &states {
            state.waker().wake();
        }
        assert!(poll_once(&mut set).is_pending());
        for (id, state) in states.iter().enumerate() {
            assert_eq!(state.polls(), round, "probe {id}");
        }
    }
}

#[test]
fn self_waking_futures_do_not_starve_the_others() {
    let spinners = 4;
    let mut set = FuturesUnorderedBounded::new(spinners + 1);
    for id in 0..spinners {
        set.push(Spinner::forever(id).0);
    }
    // Pushed last; finishes on its fourth poll, waking itself in between.
    let (late, late_polls) = Spinner::new(100, 3);
    set.push(late);
    let limit = 100;
    let mut calls = 0;
    let out = loop {
        match poll_once(&mut set) {
            Poll::Ready(out) => break out,
            Poll::Pending => {
                calls += 1;
                assert!(
                    calls < limit,
                    "the late future was polled {} times in {limit} calls",
                    late_polls.load(Ordering::SeqCst)
                );
            }
        }
    };
    assert_eq!(out, Some(100));
    assert_eq!(late_polls.load(Ordering::SeqCst), 4);
    assert_eq!(set.len(), spinners);
}

#[test]
fn self_waking_futures_all_finish() {
    let n = if cfg!(miri) { 30 } else { 500 };
    let mut set = FuturesUnorderedBounded::new(n);
    let mut polls = Vec::new();
    for id in 0..n {
        let (spinner, count) = Spinner::new(id, id % 7);
        set.push(spinner);
        polls.push(count);
    }
    let (task, wakes) = counting_waker();
    let mut outputs = Vec::new();
    let mut calls = 0;
    loop {
        let woken = wakes.count();
        match poll_with(&mut set, &task) {
            Poll::Ready(Some(out)) => outputs.push(out),
            Poll::Ready(None) => break,
            Poll::Pending => {
                // Nothing outside wakes these futures: a Pending must come with a self-wake,
                // or the stream would stall forever under a real executor.
                assert!(
                    wakes.count() > woken,
                    "stalled with {} futures left",
                    set.len()
                );
                calls += 1;
                assert!(calls < 100 * n, "no progress");
            }
        }
    }
    outputs.sort_unstable();
    assert_eq!(outputs, (0..n).collect::<Vec<_>>());
    for (id, count) in polls.iter().enumerate() {
        assert_eq!(count.load(Ordering::SeqCst), id % 7 + 1, "spinner {id}");
    }
}

/// A future that never finishes and, on each poll, wakes its partner (never itself). Two
/// partners woken by each other would be polled again and again by a set that polled every
/// wake it saw in the same call.
struct Relay {
    id: usize,
    partner: Option<usize>,
    wakers: Arc<Mutex<Vec<Option<Waker>>>>,
    polls: Arc<AtomicUsize>,
}

impl Future for Relay {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        self.polls.fetch_add(1, Ordering::SeqCst);
        let mut wakers = self.wakers.lock().unwrap();
        wakers[self.id] = Some(cx.waker().clone());
        if let Some(Some(partner)) = self.partner.map(|partner| &wakers[partner]) {
            partner.wake_by_ref();
        }
        Poll::Pending
    }
}

#[test]
fn futures_waking_each_other_are_polled_at_most_once_per_call() {
    // Futures 0 and 1 wake each other; the others are polled once and never woken, but they
    // count in the set's length, so the budget alone does not stop a second round.
    let n = 6;
    let wakers = Arc::new(Mutex::new(vec![None; n]));
    let mut polls = Vec::new();
    let mut set = FuturesUnorderedBounded::new(n);
    for id in 0..n {
        let count = Arc::new(AtomicUsize::new(0));
        set.push(Relay {
            id,
            partner: [Some(1), Some(0)].get(id).copied().flatten(),
            wakers: wakers.clone(),
            polls: count.clone(),
        });
        polls.push(count);
    }
    let (task, wakes) = counting_waker();
    for call in 0..4 * n {
        let before = snapshot(&polls);
        let woken = wakes.count();
        assert!(poll_with(&mut set, &task).is_pending());
        let after = snapshot(&polls);
        for (id, (b, a)) in before.iter().zip(&after).enumerate() {
            assert!(a - b <= 1, "call {call} polled future {id} {} times", a - b);
        }
        assert!(
            wakes.count() > woken,
            "call {call} returned Pending without waking its task, with futures woken"
        );
    }
    let polls = snapshot(&polls);
    assert!(polls[0] >= 2 && polls[1] >= 2, "polls: {polls:?}");
    assert!(
        polls[2..].iter().all(|&count| count == 1),
        "polls: {polls:?}"
    );
}
