//! Moving the futures out of the set (`into_iter`, for `F: Unpin`) and changing them in place
//! (`iter_mut`), over sets that span several groups and sets whose groups were released:
//! every future comes out once, the length is exact at each step, each future is dropped
//! exactly once (given out, left in an iterator dropped part-way, or finished before), and
//! `into_iter` allocates nothing.

mod probe;

use std::future::{Future, Pending, pending, ready};
use std::iter::FusedIterator;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll, Waker};

use futures_channel::oneshot;
use pinfold_testkit::alloc::{CountingAlloc, measure};
use pinfold_testkit::contract::panic_message;
use pinfold_testkit::stream::{drain, settle};
use pinfold_testkit::tracked::{TRACKED_PANIC, Tracked};
use pinfold_unordered::{FuturesUnordered, IntoIter};
use probe::{Probe, ProbeState, XorShift, poll_once, take_ready};

// It counts the allocations of the thread that makes them, so the other tests of this file,
// running beside `into_iter_allocates_nothing`, do not disturb its count.
#[global_allocator]
static ALLOCATOR: CountingAlloc = CountingAlloc;

/// A probe in a box: `Unpin`, so the set can give it back, and still counting its polls and
/// drops and keeping the waker of its latest poll.
type Boxed = Pin<Box<Probe>>;

/// A set holding boxed probes with ids `0..n`, and their states.
fn boxed_set(n: usize) -> (FuturesUnordered<Boxed>, Vec<Arc<ProbeState>>) {
    let mut set = FuturesUnordered::new();
    let states = (0..n)
        .map(|id| {
            let (probe, state) = Probe::new(id);
            set.push(Box::pin(probe));
            state
        })
        .collect();
    (set, states)
}

/// [`boxed_set`], each probe polled once (pending, its waker kept in its state).
fn polled_set(n: usize) -> (FuturesUnordered<Boxed>, Vec<Arc<ProbeState>>) {
    let (mut set, states) = boxed_set(n);
    assert!(settle(&mut set).is_empty());
    assert!(states.iter().all(|state| state.polls() == 1));
    (set, states)
}

/// Finishes the probes `ids` through the set's wakers, `batch` at a time, taking the outputs
/// after each batch; the outputs, sorted.
fn finish(
    set: &mut FuturesUnordered<Boxed>,
    states: &[Arc<ProbeState>],
    ids: &[usize],
    batch: usize,
) -> Vec<usize> {
    let mut outputs = Vec::new();
    for chunk in ids.chunks(batch) {
        for &id in chunk {
            states[id].finish();
        }
        outputs.extend(take_ready(set));
    }
    sorted(outputs)
}

/// Drives `iter` to its end, asserting before each step that `len` and `size_hint` give the
/// number left, `n` at first; the ids of the futures it gave, which it drops.
fn ids_checking_len(iter: &mut IntoIter<Boxed>, n: usize) -> Vec<usize> {
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

fn sorted(mut ids: Vec<usize>) -> Vec<usize> {
    ids.sort_unstable();
    ids
}

/// Asserts that every probe was dropped exactly once and that nothing holds it any more.
#[track_caller]
fn assert_each_dropped_once_and_freed(states: &[Arc<ProbeState>]) {
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

#[test]
fn into_iter_is_exact_size_fused_send_and_sync() {
    fn exact_fused_send_sync<I: ExactSizeIterator + FusedIterator + Send + Sync>(_: &I) {}
    exact_fused_send_sync(&FuturesUnordered::<Pending<()>>::new().into_iter());
}

#[test]
fn into_iter_runs_while_another_thread_wakes_the_futures() {
    let n = if cfg!(miri) { 64 } else { 1_000 };
    let (set, states) = polled_set(n);
    let wakers: Vec<Waker> = states.iter().map(|state| state.waker()).collect();
    let waking = std::thread::spawn(move || {
        for _ in 0..3 {
            for waker in &wakers {
                waker.wake_by_ref();
            }
        }
    });
    let ids: Vec<usize> = set.into_iter().map(|fut| fut.id()).collect();
    waking
        .join()
        .expect("waking a consumed set's futures does not panic");
    assert_eq!(sorted(ids), (0..n).collect::<Vec<_>>());
    assert_each_dropped_once_and_freed(&states);
}

#[test]
fn into_iter_gives_every_future_of_a_set_of_several_groups_once() {
    let n = if cfg!(miri) { 200 } else { 1_000 };
    let (set, states) = polled_set(n);
    // Groups of 32, 32, 64, 128 (and 256, 512).
    assert_eq!(set.capacity(), if cfg!(miri) { 256 } else { 1_024 });

    let mut iter = set.into_iter();
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

#[test]
fn into_iter_gives_futures_that_were_never_polled() {
    let n = 70;
    let (set, states) = boxed_set(n);
    let given: Vec<Boxed> = set.into_iter().collect();
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

#[test]
fn into_iter_of_an_empty_set_gives_nothing() {
    let mut iter = FuturesUnordered::<Boxed>::new().into_iter();
    assert_eq!(iter.len(), 0);
    assert!(iter.next().is_none());
    assert_eq!(
        FuturesUnordered::<Boxed>::with_capacity(64)
            .into_iter()
            .count(),
        0
    );

    // Emptied by its outputs, its first group kept.
    let mut set: FuturesUnordered<_> = (0..40).map(ready).collect();
    assert_eq!(sorted(drain(&mut set)), (0..40).collect::<Vec<_>>());
    assert_eq!(set.into_iter().len(), 0);
}

#[test]
fn dropping_into_iter_part_way_drops_the_rest_once() {
    // Groups of 32, 32 and 64: stop inside a group, at its edges, and in the last one.
    let n = 100;
    let stops: &[usize] = if cfg!(miri) {
        &[0, 31, 33, 65, 100]
    } else {
        &[0, 1, 31, 32, 33, 64, 65, 99, 100]
    };
    for &taken in stops {
        let (set, states) = polled_set(n);
        let mut iter = set.into_iter();
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

#[test]
fn dropping_into_iter_part_way_drops_the_rest_when_one_drop_panics() {
    // Groups of 32, 32 and 64; the future whose drop panics is in the second one.
    let n = 100;
    let mut set = FuturesUnordered::new();
    let mut drops = Vec::new();
    for id in 0..n {
        let (idle, count) = if id == 50 {
            Idle::panicking_on_drop(id)
        } else {
            Idle::new(id)
        };
        set.push(idle);
        drops.push(count);
    }
    let mut iter = set.into_iter();
    let first = iter.next().expect("futures in the set");
    let first_id = first.id;
    let dropped = catch_unwind(AssertUnwindSafe(|| drop(iter)));
    for (id, count) in drops.iter().enumerate() {
        let expected = usize::from(id != first_id);
        assert_eq!(count.load(Ordering::SeqCst), expected, "future {id}");
    }
    let dropped_first = catch_unwind(AssertUnwindSafe(|| drop(first)));
    // Future 50's drop panicked where it ran, and only there.
    let panic = match (dropped, dropped_first) {
        (Err(panic), Ok(())) if first_id != 50 => panic,
        (Ok(()), Err(panic)) if first_id == 50 => panic,
        _ => panic!("future 50's drop panicked in the wrong place (future {first_id} given)"),
    };
    assert_eq!(panic_message(&*panic), "idle future 50 panics in drop");
    assert!(drops.iter().all(|count| count.load(Ordering::SeqCst) == 1));
}

#[test]
fn a_partly_polled_set_of_several_groups_drops_each_future_once_and_leaks_nothing() {
    let n = if cfg!(miri) { 200 } else { 1_000 };
    let (mut set, states) = polled_set(n);
    let mut rng = XorShift::new(0x1e7);

    // A random third finish and give their outputs, from every group (their slots are free,
    // their wakers alive).
    let order = rng.permutation(n);
    let (finished, rest) = order.split_at(n / 3);
    assert_eq!(
        finish(&mut set, &states, finished, 50),
        sorted(finished.to_vec())
    );
    // Half of the others are woken and not polled again before the set is consumed.
    for &id in rest.iter().step_by(2) {
        states[id].waker().wake();
    }
    // Every future's latest waker outlives the set.
    let wakers: Vec<Waker> = states.iter().map(|state| state.waker()).collect();

    let mut iter = set.into_iter();
    let ids = ids_checking_len(&mut iter, rest.len());
    assert_eq!(sorted(ids), sorted(rest.to_vec()));
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

#[test]
fn into_iter_after_groups_were_released_gives_the_futures_left() {
    let n = if cfg!(miri) { 150 } else { 1_000 };
    let keep = 20;
    let (mut set, states) = polled_set(n);
    let peak = set.capacity();

    // The oldest `keep` stay (in the first group); the rest finish, and the empty groups above
    // are released.
    let later: Vec<usize> = (keep..n).collect();
    assert_eq!(finish(&mut set, &states, &later, 100), later);
    assert_eq!(set.len(), keep);
    assert!(
        set.capacity() < peak,
        "no group was released: {} slots of {peak} left",
        set.capacity()
    );
    let wakers: Vec<Waker> = states.iter().map(|state| state.waker()).collect();

    let mut iter = set.into_iter();
    let ids = ids_checking_len(&mut iter, keep);
    assert_eq!(sorted(ids), (0..keep).collect::<Vec<_>>());
    drop(iter);
    assert_each_dropped_once_and_freed(&states);
    for waker in wakers {
        waker.wake();
    }
}

#[test]
fn into_iter_after_groups_were_released_and_refilled() {
    // Released groups come back when the set grows again; into_iter sees old and new futures.
    let n = if cfg!(miri) { 100 } else { 600 };
    let (mut set, mut states) = polled_set(n);
    let later: Vec<usize> = (10..n).collect();
    finish(&mut set, &states, &later, 100);
    let shrunk = set.capacity();
    for id in n..2 * n {
        let (probe, state) = Probe::new(id);
        set.push(Box::pin(probe));
        states.push(state);
    }
    assert!(set.capacity() > shrunk, "no group was added");
    assert!(settle(&mut set).is_empty());

    let mut iter = set.into_iter();
    let ids = ids_checking_len(&mut iter, 10 + n);
    let expected: Vec<usize> = (0..10).chain(n..2 * n).collect();
    assert_eq!(sorted(ids), expected);
    drop(iter);
    assert_each_dropped_once_and_freed(&states);
}

#[test]
fn into_iter_after_a_future_panicked_gives_the_others() {
    // The set is left unsettled by the panic (its length recounted on the next use).
    let n = 40;
    let mut set = FuturesUnordered::new();
    let mut counts = Vec::new();
    for id in 0..n {
        let (tracked, count) = Tracked::new(id, pending::<usize>());
        set.push(if id == 35 {
            tracked.panicking_at(1)
        } else {
            tracked
        });
        counts.push(count);
    }
    loop {
        match catch_unwind(AssertUnwindSafe(|| poll_once(&mut set))) {
            Ok(Poll::Pending) => assert!(counts[35].polls() > 0, "future 35 never polled"),
            Ok(other) => panic!("idle futures gave {other:?}"),
            Err(panic) => {
                assert_eq!(panic_message(&*panic), TRACKED_PANIC);
                break;
            }
        }
    }
    assert_eq!(counts[35].drops(), 1, "the panicking future was dropped");
    assert_eq!(set.len(), n - 1);
    assert_eq!(set.iter_mut().len(), n - 1);
    assert_eq!(set.iter_mut().count(), n - 1);

    let mut iter = set.into_iter();
    assert_eq!(iter.len(), n - 1);
    let ids: Vec<usize> = iter.by_ref().map(|fut| fut.id()).collect();
    assert_eq!(
        sorted(ids),
        (0..n).filter(|&id| id != 35).collect::<Vec<_>>()
    );
    assert!(counts.iter().all(|count| count.drops() == 1));
}

#[test]
fn into_iter_allocates_nothing() {
    let n = if cfg!(miri) { 200 } else { 1_000 };
    let (_, seen) = measure(|| Vec::<u8>::with_capacity(1));
    assert_eq!(seen, 1, "the counting allocator does not count");

    // Polled futures in several groups, with wakers alive, some finished.
    let (mut set, states) = polled_set(n);
    let finished: Vec<usize> = (0..n).step_by(4).collect();
    finish(&mut set, &states, &finished, 50);
    let left = set.len();

    let (sum, allocations) = measure(|| {
        let mut iter = set.into_iter();
        // Half given (and dropped), half dropped with the iterator.
        let sum: usize = iter.by_ref().take(left / 2).map(|fut| fut.id()).sum();
        drop(iter);
        sum
    });
    assert_eq!(allocations, 0, "into_iter made {allocations} allocations");
    assert!(sum > 0);
    assert_each_dropped_once_and_freed(&states);
}

#[test]
fn iter_mut_visits_every_future_of_several_groups_once_with_an_exact_len() {
    let n = if cfg!(miri) { 200 } else { 1_000 };
    let (mut set, states) = polled_set(n);
    let mut iter = set.iter_mut();
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
    assert_eq!(set.len(), n);
    assert!(
        states
            .iter()
            .all(|state| state.polls() == 1 && state.drops() == 0),
        "iter_mut polled or dropped a future"
    );
}

#[test]
fn changes_made_through_iter_mut_are_seen_by_later_polls() {
    let n = if cfg!(miri) { 100 } else { 300 };
    let mut set: FuturesUnordered<_> = (0..n)
        .map(|id| Mailbox {
            id,
            output: None,
            waker: None,
            polls: 0,
        })
        .collect();
    assert!(settle(&mut set).is_empty());
    assert!(set.iter_mut().all(|mailbox| mailbox.polls == 1));

    // Give the even ones their output in place, and wake them.
    for mailbox in set.iter_mut().filter(|mailbox| mailbox.id % 2 == 0) {
        mailbox.output = Some(mailbox.id * 10);
        mailbox.waker.take().expect("polled once").wake();
    }
    let mut outputs = take_ready(&mut set);
    outputs.sort_unstable();
    let expected: Vec<(usize, usize)> = (0..n).step_by(2).map(|id| (id, id * 10)).collect();
    assert_eq!(outputs, expected);

    // The odd ones were not woken: still there, polled once.
    let mut left: Vec<(usize, usize)> = set
        .iter_mut()
        .map(|mailbox| (mailbox.id, mailbox.polls))
        .collect();
    left.sort_unstable();
    let odd: Vec<(usize, usize)> = (1..n).step_by(2).map(|id| (id, 1)).collect();
    assert_eq!(left, odd);
}

/// futures-rs, `futures/tests/stream_futures_unordered.rs`, `iter_mut_cancel`: receivers
/// closed through `iter_mut` give `Canceled` when polled, and their senders see it.
#[test]
fn iter_mut_cancel() {
    let (a_tx, a_rx) = oneshot::channel::<i32>();
    let (b_tx, b_rx) = oneshot::channel::<i32>();
    let (c_tx, c_rx) = oneshot::channel::<i32>();
    let mut set: FuturesUnordered<_> = [a_rx, b_rx, c_rx].into_iter().collect();
    for rx in set.iter_mut() {
        rx.close();
    }
    assert!(a_tx.is_canceled());
    assert!(b_tx.is_canceled());
    assert!(c_tx.is_canceled());
    assert_eq!(drain(&mut set), [Err(oneshot::Canceled); 3]);
}

/// futures-rs, `futures/tests/stream_futures_unordered.rs`, `iter_mut_len`.
#[test]
fn iter_mut_len() {
    let mut set: FuturesUnordered<_> = [pending::<()>(), pending(), pending()]
        .into_iter()
        .collect();
    let mut iter_mut = set.iter_mut();
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
#[test]
fn into_iter_cancel() {
    let (a_tx, a_rx) = oneshot::channel::<i32>();
    let (b_tx, b_rx) = oneshot::channel::<i32>();
    let (c_tx, c_rx) = oneshot::channel::<i32>();
    let set: FuturesUnordered<_> = [a_rx, b_rx, c_rx].into_iter().collect();
    let mut set: FuturesUnordered<_> = set
        .into_iter()
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
#[test]
fn into_iter_len() {
    let set: FuturesUnordered<_> = [pending::<()>(), pending(), pending()]
        .into_iter()
        .collect();
    let mut into_iter = set.into_iter();
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
#[test]
fn into_iter_partial() {
    let set: FuturesUnordered<_> = [ready(1), ready(2), ready(3), ready(4)]
        .into_iter()
        .collect();
    let mut into_iter = set.into_iter();
    assert!(into_iter.next().is_some());
    assert!(into_iter.next().is_some());
    assert!(into_iter.next().is_some());
    assert_eq!(into_iter.len(), 1);
}
