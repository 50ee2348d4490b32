//! Rounds: what one `poll_next` polls. A future woken during the call, not yet polled in it,
//! is polled in it (no wasted `Pending`); a future polled in the call is not polled again in
//! it, whoever wakes it (fairness); and the stream's end is forgotten by `clear`.

use std::future::{Future, Ready, ready};
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

use futures_core::FusedStream;

use super::SetUnderTest;
use super::fairness::{assert_each_call_polls_each_future_at_most_once, snapshot};
use crate::probe::{Probe, ProbeState, Spinner};
use crate::stream::poll_once;

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
