//! Rounds: what one `poll_next` polls. A future woken during the call, not yet polled in it,
//! is polled in it (no wasted `Pending`); a future polled in the call is not polled again in
//! it, whoever wakes it (fairness); futures are polled in the order they were queued (a woken
//! future is not passed over by futures pushed or woken after the next call began), once for
//! any number of wakes before their poll; and the stream's end is forgotten by `clear`.

use std::future::{Future, Ready, ready};
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

use futures_core::FusedStream;

use super::SetUnderTest;
use super::fairness::{assert_each_call_polls_each_future_at_most_once, snapshot};
use crate::probe::{Probe, ProbeState, Spinner};
use crate::stream::{poll_once, poll_with};
use crate::waker::counting_waker;

/// Three futures that each wake themselves once, then are ready: an output has come by the
/// second `poll_next`, with a waker that does nothing (so nothing but the set's own
/// bookkeeping decides it).
pub fn three_self_waking_futures_give_an_output_by_the_second_call<S: SetUnderTest>() {
    let mut set = S::with_capacity(3);
    let polls: Vec<Arc<AtomicUsize>> = (0..3)
        .map(|id| {
            let (spinner, polls) = Spinner::new(id, 1);
            S::insert(&mut set, spinner);
            polls
        })
        .collect();
    let first = poll_once(&mut set);
    assert!(
        snapshot(&polls).iter().all(|&count| count <= 1),
        "the first call polled a future twice: {:?}",
        snapshot(&polls)
    );
    let second = poll_once(&mut set);
    assert!(
        matches!(first, Poll::Ready(Some(_))) || matches!(second, Poll::Ready(Some(_))),
        "no output in two calls ({first:?}, {second:?}); polls {:?}",
        snapshot(&polls)
    );

    let mut outputs: Vec<usize> = [first, second]
        .into_iter()
        .filter_map(|poll| match poll {
            Poll::Ready(Some(id)) => Some(id),
            _ => None,
        })
        .collect();
    for _ in 0..6 {
        if let Poll::Ready(Some(id)) = poll_once(&mut set) {
            outputs.push(id);
        }
    }
    outputs.sort_unstable();
    assert_eq!(outputs, [0, 1, 2]);
    assert_eq!(
        snapshot(&polls),
        [2, 2, 2],
        "each is ready at its second poll"
    );
}

/// What a [`Nudge`] shares with the test.
#[derive(Debug, Default)]
struct NudgeState {
    polls: AtomicUsize,
    waker: Mutex<Option<Waker>>,
}

/// A future that never finishes; each of its polls but the first finishes (opens and wakes)
/// its target probe.
struct Nudge {
    target: Arc<ProbeState>,
    state: Arc<NudgeState>,
}

impl Future for Nudge {
    type Output = usize;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<usize> {
        let polls = self.state.polls.fetch_add(1, Ordering::SeqCst) + 1;
        *self.state.waker.lock().unwrap() = Some(cx.waker().clone());
        if polls > 1 {
            self.target.finish();
        }
        Poll::Pending
    }
}

/// A future woken from inside another future's poll, and not yet polled in that call, is
/// polled in the same call: its output comes from that call, not the next.
pub fn a_future_woken_during_a_call_is_polled_in_it<S: SetUnderTest>() {
    let mut set = S::with_capacity(2);
    let (target, target_state) = Probe::new(7);
    let nudge_state = Arc::new(NudgeState::default());
    // The set holds one future type: both are boxed.
    let nudge = Nudge {
        target: target_state.clone(),
        state: nudge_state.clone(),
    };
    S::insert(
        &mut set,
        Box::pin(target) as Pin<Box<dyn Future<Output = usize>>>,
    );
    S::insert(
        &mut set,
        Box::pin(nudge) as Pin<Box<dyn Future<Output = usize>>>,
    );
    assert!(poll_once(&mut set).is_pending());
    assert_eq!(target_state.polls(), 1);
    assert_eq!(nudge_state.polls.load(Ordering::SeqCst), 1);

    // Only the nudge is woken; its poll wakes the target.
    let waker = nudge_state.waker.lock().unwrap().clone().unwrap();
    waker.wake();
    assert_eq!(
        poll_once(&mut set),
        Poll::Ready(Some(7)),
        "the target, woken during the call, was left for the next one"
    );
    assert_eq!(nudge_state.polls.load(Ordering::SeqCst), 2);
    assert_eq!(target_state.polls(), 2);
}

/// A future that never finishes and, on each poll, wakes every future of its group that was
/// polled so far, itself included.
struct Shout {
    id: usize,
    wakers: Arc<Mutex<Vec<Option<Waker>>>>,
    polls: Arc<AtomicUsize>,
}

impl Future for Shout {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        self.polls.fetch_add(1, Ordering::SeqCst);
        let mut wakers = self.wakers.lock().unwrap();
        wakers[self.id] = Some(cx.waker().clone());
        for waker in wakers.iter().flatten() {
            waker.wake_by_ref();
        }
        Poll::Pending
    }
}

/// Fairness is kept: a future polled in a call is not polled again in it, though it wakes
/// itself and the others wake it, and each call that returns `Pending` with work left wakes
/// its task. (futures-rs pins the first half in `polled_only_once_at_most_per_iteration`.)
pub fn a_future_polled_in_a_call_is_not_polled_again_in_it<S: SetUnderTest>() {
    let n = 4;
    let wakers = Arc::new(Mutex::new(vec![None; n]));
    let mut set = S::with_capacity(n);
    let polls: Vec<Arc<AtomicUsize>> = (0..n)
        .map(|id| {
            let polls = Arc::new(AtomicUsize::new(0));
            S::insert(
                &mut set,
                Shout {
                    id,
                    wakers: wakers.clone(),
                    polls: polls.clone(),
                },
            );
            polls
        })
        .collect();
    assert_each_call_polls_each_future_at_most_once(&mut set, &polls, 4 * n);
    for (id, count) in snapshot(&polls).into_iter().enumerate() {
        assert!(
            count >= 2,
            "future {id} polled {count} times in {} calls",
            4 * n
        );
    }
}

/// `clear` makes a terminated set non-terminated again. Ported from futures-rs
/// (`futures/tests/stream_futures_unordered.rs`, `clear`).
pub fn clear_resets_is_terminated<S: SetUnderTest>() {
    let mut set = S::with_capacity(2);
    S::insert::<Ready<usize>>(&mut set, ready(1));
    assert!(!set.is_terminated());
    assert_eq!(poll_once(&mut set), Poll::Ready(Some(1)));
    assert_eq!(poll_once(&mut set), Poll::Ready(None));
    assert!(set.is_terminated());
    S::clear(&mut set);
    assert!(!set.is_terminated(), "clear left the set terminated");

    // And it ends again, once drained.
    S::insert(&mut set, ready(2));
    assert_eq!(poll_once(&mut set), Poll::Ready(Some(2)));
    assert_eq!(poll_once(&mut set), Poll::Ready(None));
    assert!(set.is_terminated());
}

/// A boxed future, so that futures of several kinds share one set.
type Boxed = Pin<Box<dyn Future<Output = usize> + Send>>;

/// Probe `id`, boxed, and its state; opened first (ready at its first poll) if `open`.
fn boxed_probe(id: usize, open: bool) -> (Boxed, Arc<ProbeState>) {
    let (probe, state) = Probe::new(id);
    if open {
        state.open();
    }
    (Box::pin(probe), state)
}

/// A future woken before a call is not passed over, call after call, by futures pushed after
/// its wake: a consumer that pushes a future ready at once before each call (a buffer refilling
/// from a source of cache hits) still gets the woken future's output, after at most the one
/// pushed together with its wake.
pub fn a_woken_future_is_not_passed_over_by_futures_pushed_after_its_wake<S: SetUnderTest>() {
    let mut set = S::with_capacity(4);
    let (woken, state) = boxed_probe(0, false);
    S::insert(&mut set, woken);
    assert!(poll_once(&mut set).is_pending());
    state.finish();
    let mut before = Vec::new();
    for id in 1..=20 {
        S::insert(&mut set, boxed_probe(id, true).0);
        match poll_once(&mut set) {
            Poll::Ready(Some(0)) => break,
            Poll::Ready(Some(id)) => before.push(id),
            other => panic!("a ready future was pushed, yet the call gave {other:?}"),
        }
    }
    assert!(
        before.len() <= 1,
        "the woken future waited behind futures pushed after its wake: {before:?}"
    );
    assert_eq!(state.drops(), 1, "the woken future never gave its output");
}

/// A future woken twice before its poll (once from outside, once by a future polled ahead of
/// it in the same call) is polled once: the call does not queue it again, and neither polls it
/// twice nor wakes the task for it.
pub fn a_future_woken_twice_before_its_poll_is_polled_once<S: SetUnderTest>() {
    let mut set: S::Set<Boxed> = S::with_capacity(2);
    let target: Arc<Mutex<Option<Waker>>> = Arc::default();
    let (wakes_target, waker_state) = {
        let target = target.clone();
        let (mut probe, state) = boxed_probe(0, false);
        let seen = state.clone();
        let future: Boxed = Box::pin(std::future::poll_fn(move |cx| {
            // Pending, and from its second poll on it wakes the second future.
            let poll = probe.as_mut().poll(cx);
            if seen.polls() > 1 {
                if let Some(waker) = target.lock().unwrap().as_ref() {
                    waker.wake_by_ref();
                }
            }
            poll
        }));
        (future, state)
    };
    S::insert(&mut set, wakes_target);
    let (second, second_state) = boxed_probe(1, false);
    S::insert(&mut set, second);
    let (task, task_wakes) = counting_waker();
    assert!(poll_with(&mut set, &task).is_pending());
    *target.lock().unwrap() = Some(second_state.waker());
    // Both woken from outside; the first, polled ahead of the second, wakes it again.
    waker_state.waker().wake();
    second_state.waker().wake();
    let wakes = task_wakes.count();
    assert!(poll_with(&mut set, &task).is_pending());
    assert_eq!(
        (waker_state.polls(), second_state.polls()),
        (2, 2),
        "each future is polled once for its wakes"
    );
    assert_eq!(
        task_wakes.count(),
        wakes,
        "the call woke its task with nothing left to poll"
    );
    assert!(poll_with(&mut set, &task).is_pending());
    assert_eq!(
        second_state.polls(),
        2,
        "a future woken twice before its poll was polled again with no wake since"
    );
}

/// A future woken before a call that the call did not reach (it ended at an earlier output) is
/// polled before a future woken after that call, also when that call polled a future that woke
/// itself (its next poll waits for the next call).
pub fn a_future_left_queued_is_not_passed_over_by_one_woken_later<S: SetUnderTest>() {
    let mut set: S::Set<Boxed> = S::with_capacity(4);
    let (futures, states): (Vec<Boxed>, Vec<_>) = (1..=3).map(|id| boxed_probe(id, false)).unzip();
    for future in futures {
        S::insert(&mut set, future);
    }
    assert!(poll_once(&mut set).is_pending());
    let (spinner, spins) = Spinner::forever(0);
    S::insert(&mut set, Box::pin(spinner));
    states[0].finish();
    states[1].finish();
    // The spinner, pushed first, is polled first and wakes itself; the call ends at the first
    // output of the two woken.
    let Poll::Ready(Some(first)) = poll_once(&mut set) else {
        panic!("two futures were finished, yet no output came");
    };
    assert_eq!(spins.load(Ordering::SeqCst), 1);
    let left = if first == 1 { 2 } else { 1 };
    states[2].finish();
    assert_eq!(
        poll_once(&mut set),
        Poll::Ready(Some(left)),
        "a future woken after the last call passed over one that call left queued"
    );
}
