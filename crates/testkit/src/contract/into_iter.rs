//! Moving the futures out of the set (`into_iter`, for `F: Unpin`) and changing them in place
//! (`iter_mut`): every future comes out once, the length is exact at each step, each future is
//! dropped exactly once (given out, left in an iterator dropped part-way, or finished before),
//! and `into_iter` allocates nothing.
//!
//! Cases that take sizes run with each set's own: a growable set's tests use enough futures to
//! span several groups. The helpers are public for the cases a set type adds of its own (a
//! growable set whose groups were released, say).

use std::future::{Future, Pending, Ready, pending, ready};
use std::iter::FusedIterator;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll, Waker};

use futures_channel::oneshot;

use super::{SetUnderTest, panic_message};
use crate::alloc::measure;
use crate::probe::{Probe, ProbeState};
use crate::stream::{drain, finish_in_batches, poll_once, settle, take_ready};
use crate::tracked::{TRACKED_PANIC, Tracked};

/// A probe in a box: `Unpin`, so the set can give it back, and still counting its polls and
/// drops and keeping the waker of its latest poll.
pub type Boxed = Pin<Box<Probe>>;

/// A set holding boxed probes with ids `0..n` (collected: as large as that for a bounded set,
/// grown group by group for a growable one), and their states.
pub fn boxed_set<S: SetUnderTest>(n: usize) -> (S::Set<Boxed>, Vec<Arc<ProbeState>>) {
    let (probes, states): (Vec<Boxed>, Vec<Arc<ProbeState>>) = (0..n)
        .map(|id| {
            let (probe, state) = Probe::new(id);
            (Box::pin(probe), state)
        })
        .unzip();
    (probes.into_iter().collect(), states)
}

/// [`boxed_set`], each probe polled once (pending, its waker kept in its state).
pub fn polled_set<S: SetUnderTest>(n: usize) -> (S::Set<Boxed>, Vec<Arc<ProbeState>>) {
    let (mut set, states) = boxed_set::<S>(n);
    assert!(settle(&mut set).is_empty());
    assert!(states.iter().all(|state| state.polls() == 1));
    (set, states)
}

/// Drives `iter` to its end, asserting before each step that `len` and `size_hint` give the
/// number left, `n` at first; the ids of the futures it gave, which it drops.
pub fn ids_checking_len(iter: &mut impl ExactSizeIterator<Item = Boxed>, n: usize) -> Vec<usize> {
    let mut ids = Vec::with_capacity(n);
    for left in (0..=n).rev() {
        assert_eq!(iter.len(), left);
        assert_eq!(iter.size_hint(), (left, Some(left)));
        match iter.next() {
            Some(fut) => ids.push(fut.id()),
            None => assert_eq!(left, 0, "the iterator ended with {left} futures left"),
        }
    }
    ids
}

/// `ids`, sorted.
pub fn sorted(mut ids: Vec<usize>) -> Vec<usize> {
    ids.sort_unstable();
    ids
}

/// Asserts that every probe was dropped exactly once and that nothing holds it any more.
#[track_caller]
pub fn assert_each_dropped_once_and_freed(states: &[Arc<ProbeState>]) {
    for (id, state) in states.iter().enumerate() {
        assert_eq!(
            state.drops(),
            1,
            "probe {id} dropped {} times",
            state.drops()
        );
        assert_eq!(Arc::strong_count(state), 1, "probe {id} leaked");
    }
}

/// A future that is never ready and counts its drops; the one made by
/// [`Idle::panicking_on_drop`] panics in its drop.
struct Idle {
    id: usize,
    drops: Arc<AtomicUsize>,
    panic_on_drop: bool,
}

impl Idle {
    fn new(id: usize) -> (Self, Arc<AtomicUsize>) {
        let drops = Arc::new(AtomicUsize::new(0));
        let idle = Self {
            id,
            drops: drops.clone(),
            panic_on_drop: false,
        };
        (idle, drops)
    }

    fn panicking_on_drop(id: usize) -> (Self, Arc<AtomicUsize>) {
        let (mut idle, drops) = Self::new(id);
        idle.panic_on_drop = true;
        (idle, drops)
    }
}

impl Future for Idle {
    type Output = usize;

    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<usize> {
        Poll::Pending
    }
}

impl Drop for Idle {
    fn drop(&mut self) {
        self.drops.fetch_add(1, Ordering::SeqCst);
        if self.panic_on_drop {
            panic!("idle future {} panics in drop", self.id);
        }
    }
}

/// A future that waits for the test to give it its output in place (through `iter_mut`),
/// keeping the waker of its latest poll so that the test can wake it.
struct Mailbox {
    id: usize,
    output: Option<usize>,
    waker: Option<Waker>,
    polls: usize,
}

impl Future for Mailbox {
    type Output = (usize, usize);

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<(usize, usize)> {
        self.polls += 1;
        match self.output.take() {
            Some(output) => Poll::Ready((self.id, output)),
            None => {
                self.waker = Some(cx.waker().clone());
                Poll::Pending
            }
        }
    }
}

/// `into_iter` gives an iterator that knows its length, is fused, and may be sent and shared.
pub fn into_iter_is_exact_size_fused_send_and_sync<S: SetUnderTest>()
where
    S::IntoIter<Pending<()>>: Send + Sync,
{
    fn exact_fused_send_sync<I: ExactSizeIterator + FusedIterator + Send + Sync>(_: &I) {}
    exact_fused_send_sync(&S::into_iter(S::with_capacity::<Pending<()>>(1)));
}

/// `into_iter` runs while another thread wakes the futures it moves out (their wakers outlive
/// the set), and gives each once.
pub fn into_iter_runs_while_another_thread_wakes_the_futures<S: SetUnderTest>() {
    let n = if cfg!(miri) { 64 } else { 1_000 };
    let (set, states) = polled_set::<S>(n);
    let wakers: Vec<Waker> = states.iter().map(|state| state.waker()).collect();
    let waking = std::thread::spawn(move || {
        for _ in 0..3 {
            for waker in &wakers {
                waker.wake_by_ref();
            }
        }
    });
    let ids: Vec<usize> = S::into_iter(set).map(|fut| fut.id()).collect();
    waking
        .join()
        .expect("waking a consumed set's futures does not panic");
    assert_eq!(sorted(ids), (0..n).collect::<Vec<_>>());
    assert_each_dropped_once_and_freed(&states);
}

/// `into_iter` of a set of `n` polled, pending futures, whose capacity is then `capacity`,
/// gives each once with an exact length at every step, is fused, and polls none.
pub fn into_iter_gives_every_pending_future_once_with_an_exact_len<S: SetUnderTest>(
    n: usize,
    capacity: usize,
) {
    let (set, states) = polled_set::<S>(n);
    assert_eq!(S::capacity(&set), capacity);

    let mut iter = S::into_iter(set);
    let ids = ids_checking_len(&mut iter, n);
    assert_eq!(sorted(ids), (0..n).collect::<Vec<_>>());
    for _ in 0..3 {
        assert!(iter.next().is_none(), "not fused");
        assert_eq!(iter.len(), 0);
    }
    assert!(
        states.iter().all(|state| state.polls() == 1),
        "into_iter polled a future"
    );
    drop(iter);
    assert_each_dropped_once_and_freed(&states);
}

/// `into_iter` of a set of `n` futures never polled gives them all, and they are the caller's.
pub fn into_iter_gives_futures_that_were_never_polled<S: SetUnderTest>(n: usize) {
    let (set, states) = boxed_set::<S>(n);
    let given: Vec<Boxed> = S::into_iter(set).collect();
    assert_eq!(
        sorted(given.iter().map(|fut| fut.id()).collect()),
        (0..n).collect::<Vec<_>>()
    );
    assert!(states.iter().all(|state| !state.was_polled()));
    assert!(
        states.iter().all(|state| state.drops() == 0),
        "a given future is the caller's"
    );
    drop(given);
    assert_each_dropped_once_and_freed(&states);
}

/// `into_iter` of an empty set gives nothing: of sets made empty with each of `capacities`,
/// and of a set of capacity `emptied.0` emptied by the outputs of `emptied.1` ready futures.
pub fn into_iter_of_an_empty_set_gives_nothing<S: SetUnderTest>(
    capacities: [usize; 2],
    emptied: (usize, usize),
) {
    let mut iter = S::into_iter(S::with_capacity::<Boxed>(capacities[0]));
    assert_eq!(iter.len(), 0);
    assert!(iter.next().is_none());
    assert_eq!(
        S::into_iter(S::with_capacity::<Boxed>(capacities[1])).count(),
        0
    );

    // Emptied by its outputs.
    let (capacity, n) = emptied;
    let mut set = S::with_capacity(capacity);
    for output in 0..n {
        S::insert(&mut set, ready(output));
    }
    assert_eq!(sorted(drain(&mut set)), (0..n).collect::<Vec<_>>());
    assert_eq!(S::into_iter(set).len(), 0);
}

/// Dropping `into_iter` of `n` polled futures after taking `taken` of them, for each of
/// `stops`, drops each future not taken once, there and then.
pub fn dropping_into_iter_part_way_drops_the_rest_once<S: SetUnderTest>(n: usize, stops: &[usize]) {
    for &taken in stops {
        let (set, states) = polled_set::<S>(n);
        let mut iter = S::into_iter(set);
        let given: Vec<Boxed> = iter.by_ref().take(taken).collect();
        assert_eq!(iter.len(), n - taken);
        assert!(states.iter().all(|state| state.drops() == 0));

        drop(iter);
        let given_ids: Vec<usize> = given.iter().map(|fut| fut.id()).collect();
        for (id, state) in states.iter().enumerate() {
            let expected = usize::from(!given_ids.contains(&id));
            assert_eq!(
                state.drops(),
                expected,
                "probe {id}, after dropping the iterator with {taken} taken"
            );
        }
        drop(given);
        assert_each_dropped_once_and_freed(&states);
    }
}

/// Dropping `into_iter` of `n` futures part-way drops every future left, also when the drop
/// of one of them (`panicking`) panics; that panic comes out where the drop ran, and only there.
pub fn dropping_into_iter_part_way_drops_the_rest_when_one_drop_panics<S: SetUnderTest>(
    n: usize,
    panicking: usize,
) {
    let (futures, drops): (Vec<Idle>, Vec<Arc<AtomicUsize>>) = (0..n)
        .map(|id| {
            if id == panicking {
                Idle::panicking_on_drop(id)
            } else {
                Idle::new(id)
            }
        })
        .unzip();
    let set: S::Set<Idle> = futures.into_iter().collect();
    let mut iter = S::into_iter(set);
    let first = iter.next().expect("futures in the set");
    let first_id = first.id;
    let dropped = catch_unwind(AssertUnwindSafe(|| drop(iter)));
    for (id, count) in drops.iter().enumerate() {
        let expected = usize::from(id != first_id);
        assert_eq!(count.load(Ordering::SeqCst), expected, "future {id}");
    }
    let dropped_first = catch_unwind(AssertUnwindSafe(|| drop(first)));
    let panic = match (dropped, dropped_first) {
        (Err(panic), Ok(())) if first_id != panicking => panic,
        (Ok(()), Err(panic)) if first_id == panicking => panic,
        _ => panic!(
            "future {panicking}'s drop panicked in the wrong place (future {first_id} given)"
        ),
    };
    assert_eq!(
        panic_message(&*panic),
        format!("idle future {panicking} panics in drop")
    );
    assert!(drops.iter().all(|count| count.load(Ordering::SeqCst) == 1));
}

/// A set of `n` polled futures, of which `finished` finish (`batch` at a time, their outputs
/// taken) and `woken` are woken and not polled again, is consumed by `into_iter`: it gives the
/// ones left, each future is dropped once, nothing leaks, and the wakers that outlive the set
/// do nothing.
pub fn a_partly_polled_set_drops_each_future_once_and_leaks_nothing<S: SetUnderTest>(
    n: usize,
    finished: &[usize],
    woken: &[usize],
    batch: usize,
) {
    let (mut set, states) = polled_set::<S>(n);
    // Those finished give their outputs (their slots are free, their wakers alive).
    assert_eq!(
        sorted(finish_in_batches(&mut set, &states, finished, batch)),
        sorted(finished.to_vec())
    );
    // Others are woken and not polled again before the set is consumed.
    for &id in woken {
        states[id].waker().wake();
    }
    // Every future's latest waker outlives the set.
    let wakers: Vec<Waker> = states.iter().map(|state| state.waker()).collect();

    let mut iter = S::into_iter(set);
    let left: Vec<usize> = (0..n).filter(|id| !finished.contains(id)).collect();
    let ids = ids_checking_len(&mut iter, left.len());
    assert_eq!(sorted(ids), left);
    drop(iter);
    assert_each_dropped_once_and_freed(&states);

    // Waking a future of a set that is gone does nothing.
    for waker in wakers {
        waker.wake();
    }
    for state in &states {
        state.finish();
    }
    assert_each_dropped_once_and_freed(&states);
}

/// After future `panicking` of `n` panicked in the set's first poll (and was dropped there),
/// the set counts and iterates the others, and `into_iter` gives them.
pub fn into_iter_after_a_future_panicked_gives_the_others<S: SetUnderTest>(
    n: usize,
    panicking: usize,
) {
    let (futures, counts): (Vec<_>, Vec<_>) = (0..n)
        .map(|id| {
            let (tracked, count) = Tracked::new(id, pending::<usize>());
            let tracked = if id == panicking {
                tracked.panicking_at(1)
            } else {
                tracked
            };
            (tracked, count)
        })
        .unzip();
    let mut set: S::Set<Tracked<Pending<usize>>> = futures.into_iter().collect();
    let polled = catch_unwind(AssertUnwindSafe(|| poll_once(&mut set)));
    assert_eq!(
        panic_message(&*polled.expect_err("the first poll polls the panicking future")),
        TRACKED_PANIC
    );
    assert_eq!(
        counts[panicking].drops(),
        1,
        "the panicking future was dropped"
    );
    // The set may be left with stale counts by the panic (its length recounted on the next use).
    assert_eq!(S::len(&set), n - 1);
    assert_eq!(S::iter_mut(&mut set).len(), n - 1);
    assert_eq!(S::iter_mut(&mut set).count(), n - 1);

    let mut iter = S::into_iter(set);
    assert_eq!(iter.len(), n - 1);
    let ids: Vec<usize> = iter.by_ref().map(|fut| fut.id()).collect();
    assert_eq!(
        sorted(ids),
        (0..n).filter(|&id| id != panicking).collect::<Vec<_>>()
    );
    assert!(counts.iter().all(|count| count.drops() == 1));
}

/// `into_iter` of a set of `n` polled futures, every fourth finished (`batch` at a time), with
/// their wakers alive, allocates nothing, whether it gives the futures or is dropped with
/// them. The test binary must have [`CountingAlloc`](crate::alloc::CountingAlloc) as its
/// global allocator (checked first).
pub fn into_iter_allocates_nothing<S: SetUnderTest>(n: usize, batch: usize) {
    let (_, seen) = measure(|| Vec::<u8>::with_capacity(1));
    assert_eq!(seen, 1, "the counting allocator does not count");

    let (mut set, states) = polled_set::<S>(n);
    let finished: Vec<usize> = (0..n).step_by(4).collect();
    assert_eq!(
        sorted(finish_in_batches(&mut set, &states, &finished, batch)),
        finished
    );
    let left = S::len(&set);

    let (sum, allocations) = measure(|| {
        let mut iter = S::into_iter(set);
        // Half given (and dropped), half dropped with the iterator.
        let sum: usize = iter.by_ref().take(left / 2).map(|fut| fut.id()).sum();
        drop(iter);
        sum
    });
    assert_eq!(allocations, 0, "into_iter made {allocations} allocations");
    assert!(sum > 0);
    assert_each_dropped_once_and_freed(&states);
}

/// `iter_mut` of a set of `n` polled futures visits each once with an exact length at every
/// step, and neither polls nor drops any.
pub fn iter_mut_visits_every_future_once_with_an_exact_len<S: SetUnderTest>(n: usize) {
    let (mut set, states) = polled_set::<S>(n);
    let mut iter = S::iter_mut(&mut set);
    let mut ids = Vec::new();
    for left in (0..=n).rev() {
        assert_eq!(iter.len(), left);
        assert_eq!(iter.size_hint(), (left, Some(left)));
        match iter.next() {
            Some(fut) => ids.push(fut.id()),
            None => assert_eq!(left, 0),
        }
    }
    assert!(iter.next().is_none());
    drop(iter);
    assert_eq!(sorted(ids), (0..n).collect::<Vec<_>>());
    assert_eq!(S::len(&set), n);
    assert!(
        states
            .iter()
            .all(|state| state.polls() == 1 && state.drops() == 0),
        "iter_mut polled or dropped a future"
    );
}

/// What is changed in `n` futures through `iter_mut` is seen by their next polls.
pub fn changes_made_through_iter_mut_are_seen_by_later_polls<S: SetUnderTest>(n: usize) {
    let mut set: S::Set<Mailbox> = (0..n)
        .map(|id| Mailbox {
            id,
            output: None,
            waker: None,
            polls: 0,
        })
        .collect();
    assert!(settle(&mut set).is_empty());
    assert!(S::iter_mut(&mut set).all(|mailbox| mailbox.polls == 1));

    // Give the even ones their output in place, and wake them.
    for mailbox in S::iter_mut(&mut set).filter(|mailbox| mailbox.id % 2 == 0) {
        mailbox.output = Some(mailbox.id * 10);
        mailbox.waker.take().expect("polled once").wake();
    }
    let mut outputs = take_ready(&mut set);
    outputs.sort_unstable();
    let expected: Vec<(usize, usize)> = (0..n).step_by(2).map(|id| (id, id * 10)).collect();
    assert_eq!(outputs, expected);

    // The odd ones were not woken: still there, polled once.
    let mut left: Vec<(usize, usize)> = S::iter_mut(&mut set)
        .map(|mailbox| (mailbox.id, mailbox.polls))
        .collect();
    left.sort_unstable();
    let odd: Vec<(usize, usize)> = (1..n).step_by(2).map(|id| (id, 1)).collect();
    assert_eq!(left, odd);
}

/// futures-rs, `futures/tests/stream_futures_unordered.rs`, `iter_mut_cancel`: receivers
/// closed through `iter_mut` give `Canceled` when polled, and their senders see it.
pub fn iter_mut_cancel<S: SetUnderTest>() {
    let (a_tx, a_rx) = oneshot::channel::<i32>();
    let (b_tx, b_rx) = oneshot::channel::<i32>();
    let (c_tx, c_rx) = oneshot::channel::<i32>();
    let mut set: S::Set<oneshot::Receiver<i32>> = [a_rx, b_rx, c_rx].into_iter().collect();
    for rx in S::iter_mut(&mut set) {
        rx.close();
    }
    assert!(a_tx.is_canceled());
    assert!(b_tx.is_canceled());
    assert!(c_tx.is_canceled());
    assert_eq!(drain(&mut set), [Err(oneshot::Canceled); 3]);
}

/// futures-rs, `futures/tests/stream_futures_unordered.rs`, `iter_mut_len`.
pub fn iter_mut_len<S: SetUnderTest>() {
    let mut set: S::Set<Pending<()>> = [pending(), pending(), pending()].into_iter().collect();
    let mut iter_mut = S::iter_mut(&mut set);
    assert_eq!(iter_mut.len(), 3);
    assert!(iter_mut.next().is_some());
    assert_eq!(iter_mut.len(), 2);
    assert!(iter_mut.next().is_some());
    assert_eq!(iter_mut.len(), 1);
    assert!(iter_mut.next().is_some());
    assert_eq!(iter_mut.len(), 0);
    assert!(iter_mut.next().is_none());
}

/// futures-rs, `futures/tests/stream_futures_unordered.rs`, `into_iter_cancel`: receivers moved
/// out, closed, and collected into a new set give `Canceled`.
pub fn into_iter_cancel<S: SetUnderTest>() {
    let (a_tx, a_rx) = oneshot::channel::<i32>();
    let (b_tx, b_rx) = oneshot::channel::<i32>();
    let (c_tx, c_rx) = oneshot::channel::<i32>();
    let set: S::Set<oneshot::Receiver<i32>> = [a_rx, b_rx, c_rx].into_iter().collect();
    let mut set: S::Set<oneshot::Receiver<i32>> = S::into_iter(set)
        .map(|mut rx| {
            rx.close();
            rx
        })
        .collect();
    assert!(a_tx.is_canceled());
    assert!(b_tx.is_canceled());
    assert!(c_tx.is_canceled());
    assert_eq!(drain(&mut set), [Err(oneshot::Canceled); 3]);
}

/// futures-rs, `futures/tests/stream_futures_unordered.rs`, `into_iter_len`.
pub fn into_iter_len<S: SetUnderTest>() {
    let set: S::Set<Pending<()>> = [pending(), pending(), pending()].into_iter().collect();
    let mut into_iter = S::into_iter(set);
    assert_eq!(into_iter.len(), 3);
    assert!(into_iter.next().is_some());
    assert_eq!(into_iter.len(), 2);
    assert!(into_iter.next().is_some());
    assert_eq!(into_iter.len(), 1);
    assert!(into_iter.next().is_some());
    assert_eq!(into_iter.len(), 0);
    assert!(into_iter.next().is_none());
}

/// futures-rs, `futures/tests/stream_futures_unordered.rs`, `into_iter_partial`: an iterator
/// dropped before its end does not panic.
pub fn into_iter_partial<S: SetUnderTest>() {
    let set: S::Set<Ready<i32>> = [ready(1), ready(2), ready(3), ready(4)]
        .into_iter()
        .collect();
    let mut into_iter = S::into_iter(set);
    assert!(into_iter.next().is_some());
    assert!(into_iter.next().is_some());
    assert!(into_iter.next().is_some());
    assert_eq!(into_iter.len(), 1);
}
