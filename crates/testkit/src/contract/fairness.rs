//! Fairness: one `poll_next` polls each future at most once, and yields to the executor
//! (waking its task) instead of spinning on futures that wake themselves, without starving any.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

use futures_core::Stream;

use super::SetUnderTest;
use crate::probe::{Probe, Spinner, probes};
use crate::stream::{poll_once, poll_with};
use crate::waker::counting_waker;

/// The counts of `counters`, now.
pub(crate) fn snapshot(counters: &[Arc<AtomicUsize>]) -> Vec<usize> {
    counters
        .iter()
        .map(|count| count.load(Ordering::SeqCst))
        .collect()
}

/// Calls `poll_next` of `set` `calls` times with a counting task waker, asserting of each call
/// that it returns `Pending`, polls some future but none twice (`polls` counts the polls of
/// each future, by id), and wakes its task: woken futures are left, so a `Pending` without a
/// wake would stall the set under a real executor.
pub(crate) fn assert_each_call_polls_each_future_at_most_once<St: Stream + Unpin>(
    set: &mut St,
    polls: &[Arc<AtomicUsize>],
    calls: usize,
) {
    let (task, wakes) = counting_waker();
    for call in 0..calls {
        let before = snapshot(polls);
        let woken = wakes.count();
        assert!(poll_with(set, &task).is_pending());
        let after = snapshot(polls);
        for (id, (b, a)) in before.iter().zip(&after).enumerate() {
            assert!(a - b <= 1, "call {call} polled future {id} {} times", a - b);
        }
        assert!(after != before, "call {call} polled nothing");
        assert!(
            wakes.count() > woken,
            "call {call} returned Pending without waking its task, with futures woken"
        );
    }
}

/// `n` futures that wake themselves on every poll: each call polls each at most once and
/// yields, waking its task, and none is starved.
pub fn one_poll_polls_each_future_at_most_once_and_yields_when_all_wake_themselves<
    S: SetUnderTest,
>() {
    let n = 8;
    let (spinners, polls): (Vec<_>, Vec<_>) = (0..n).map(Spinner::forever).unzip();
    let mut set: S::Set<Spinner> = spinners.into_iter().collect();
    assert_each_call_polls_each_future_at_most_once(&mut set, &polls, 4 * n);
    // No future was starved meanwhile.
    for (id, count) in snapshot(&polls).into_iter().enumerate() {
        assert!(
            count >= 2,
            "future {id} polled only {count} times in {} calls",
            4 * n
        );
    }
}

/// Futures that wake themselves on every poll, more of them than
/// `pinfold_arena::MAX_VAIN_REPOLLS` (32): a self-wake is not a vain poll, so
/// no call is cut short by them; each call polls every future exactly once (round robin), and
/// yields, waking its task.
pub fn self_waking_futures_are_each_polled_once_every_call<S: SetUnderTest>() {
    let n = 40;
    let (spinners, polls): (Vec<_>, Vec<_>) = (0..n).map(Spinner::forever).unzip();
    let mut set: S::Set<Spinner> = spinners.into_iter().collect();
    let (task, wakes) = counting_waker();
    for call in 1..=4 {
        let woken = wakes.count();
        assert!(poll_with(&mut set, &task).is_pending());
        assert!(
            wakes.count() > woken,
            "call {call} yielded without waking its task"
        );
        for (id, count) in snapshot(&polls).into_iter().enumerate() {
            assert_eq!(count, call, "future {id} after call {call}");
        }
    }
}

/// Futures that do not wake themselves: the first call polls every one of them, and does not
/// wake its task (there is nothing left to do).
pub fn one_poll_starts_every_pushed_future<S: SetUnderTest>() {
    let n = if cfg!(miri) { 20 } else { 300 };
    let (futures, states) = probes(n);
    let mut set: S::Set<Probe> = futures.into_iter().collect();
    let (task, wakes) = counting_waker();
    assert!(poll_with(&mut set, &task).is_pending());
    for (id, state) in states.iter().enumerate() {
        assert_eq!(state.polls(), 1, "probe {id}");
    }
    assert_eq!(wakes.count(), 0, "the set yielded with nothing left to do");
}

/// Every future woken from outside between calls: each call polls each one once.
pub fn a_woken_future_is_polled_at_most_once_per_call<S: SetUnderTest>() {
    let n = 16;
    let (futures, states) = probes(n);
    let mut set: S::Set<Probe> = futures.into_iter().collect();
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

/// A future added after four that always wake themselves, and that wakes itself three times
/// before it finishes, gives its output within a bounded number of calls.
pub fn self_waking_futures_do_not_starve_the_others<S: SetUnderTest>() {
    let spinners = 4;
    let mut set = S::with_capacity(spinners + 1);
    for id in 0..spinners {
        S::insert(&mut set, Spinner::forever(id).0);
    }
    // Added last; finishes on its fourth poll, waking itself in between.
    let (late, late_polls) = Spinner::new(100, 3);
    S::insert(&mut set, late);
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
    assert_eq!(S::len(&set), spinners);
}

/// Futures that each wake themselves a few times, then finish, all finish, each after as many
/// polls as it woke itself and one; every `Pending` comes with a wake of the task.
pub fn self_waking_futures_all_finish<S: SetUnderTest>() {
    let n = if cfg!(miri) { 30 } else { 500 };
    let (spinners, polls): (Vec<_>, Vec<_>) = (0..n).map(|id| Spinner::new(id, id % 7)).unzip();
    let mut set: S::Set<Spinner> = spinners.into_iter().collect();
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
                    S::len(&set)
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

/// Futures 0 and 1 wake each other; the others are polled once and never woken, but they
/// count in the set's length, so the budget alone does not stop a second round. Each call
/// polls each at most once.
pub fn futures_waking_each_other_are_polled_at_most_once_per_call<S: SetUnderTest>() {
    let n = 6;
    let wakers = Arc::new(Mutex::new(vec![None; n]));
    let (relays, polls): (Vec<Relay>, Vec<Arc<AtomicUsize>>) = (0..n)
        .map(|id| {
            let count = Arc::new(AtomicUsize::new(0));
            let relay = Relay {
                id,
                partner: [Some(1), Some(0)].get(id).copied().flatten(),
                wakers: wakers.clone(),
                polls: count.clone(),
            };
            (relay, count)
        })
        .unzip();
    let mut set: S::Set<Relay> = relays.into_iter().collect();
    assert_each_call_polls_each_future_at_most_once(&mut set, &polls, 4 * n);
    let polls = snapshot(&polls);
    assert!(polls[0] >= 2 && polls[1] >= 2, "polls: {polls:?}");
    assert!(
        polls[2..].iter().all(|&count| count == 1),
        "polls: {polls:?}"
    );
}
