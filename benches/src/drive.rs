//! Driving futures and sets of futures by hand: with a no-op waker (the caller polls in a
//! loop), under futures-executor's `block_on` (a real waker, as users run them), or with a
//! waker that unparks the driving thread.

use core::future::{Future, poll_fn};
use core::pin::{Pin, pin};
use core::task::{Context, Poll, Waker};
use std::collections::VecDeque;

use futures_core::Stream;

use crate::futures::{ChurnFuture, IdlePolls, idle_polls};

/// Polls `stream` once.
pub fn poll_next<S: Stream + Unpin + ?Sized>(
    stream: &mut S,
    cx: &mut Context<'_>,
) -> Poll<Option<S::Item>> {
    Pin::new(stream).poll_next(cx)
}

/// Runs `total` futures through `set`, at most `in_flight` at a time: fills it, then pushes a
/// new future (`make(i)` for the `i`th) each time one finishes, until all have finished.
/// Polls with a no-op waker, in a loop: a future that is not ready is simply polled again, so
/// the futures must make progress without being woken (ready futures, futures that wake
/// themselves). Returns the wrapping sum of the outputs.
pub fn keep_full<S, F>(
    set: &mut S,
    total: usize,
    in_flight: usize,
    mut make: impl FnMut(usize) -> F,
    mut push: impl FnMut(&mut S, F),
) -> u64
where
    S: Stream<Item = u64> + Unpin,
{
    let mut cx = Context::from_waker(Waker::noop());
    let mut next = 0;
    while next < total.min(in_flight) {
        push(set, make(next));
        next += 1;
    }
    let mut sum = 0u64;
    loop {
        match poll_next(set, &mut cx) {
            Poll::Ready(Some(out)) => {
                sum = sum.wrapping_add(out);
                if next < total {
                    push(set, make(next));
                    next += 1;
                }
            }
            Poll::Ready(None) => return sum,
            Poll::Pending => {}
        }
    }
}

/// [`keep_full`] for futures that need an executor (timers): awaits each output instead of
/// polling in a loop.
pub async fn keep_full_async<S, F>(
    set: &mut S,
    total: usize,
    in_flight: usize,
    mut make: impl FnMut(usize) -> F,
    mut push: impl FnMut(&mut S, F),
) -> u64
where
    S: Stream<Item = u64> + Unpin,
{
    let mut next = 0;
    while next < total.min(in_flight) {
        push(set, make(next));
        next += 1;
    }
    let mut sum = 0u64;
    while let Some(out) = poll_fn(|cx| poll_next(set, cx)).await {
        sum = sum.wrapping_add(out);
        if next < total {
            push(set, make(next));
            next += 1;
        }
    }
    sum
}

/// [`keep_full`] under futures-executor's `block_on`, as users run a set: awaits each output
/// (with `poll_fn`) instead of polling in a loop, so every wake goes through a real waker to
/// the executor, and a set that returns `Pending` without arranging a wake hangs.
pub fn keep_full_block_on<S, F>(
    set: &mut S,
    total: usize,
    in_flight: usize,
    make: impl FnMut(usize) -> F,
    push: impl FnMut(&mut S, F),
) -> u64
where
    S: Stream<Item = u64> + Unpin,
{
    futures_executor::block_on(keep_full_async(set, total, in_flight, make, push))
}

/// Takes outputs from `set`, polling it with a no-op waker in a loop, as long as `more(set)`
/// says so (checked before each poll); returns their wrapping sum. For sets that keep futures
/// that never finish: stop while they are all that is left.
pub fn drain_while<S>(set: &mut S, mut more: impl FnMut(&S) -> bool) -> u64
where
    S: Stream<Item = u64> + Unpin,
{
    let mut cx = Context::from_waker(Waker::noop());
    let mut sum = 0u64;
    while more(set) {
        if let Poll::Ready(Some(out)) = poll_next(set, &mut cx) {
            sum = sum.wrapping_add(out);
        }
    }
    sum
}

/// [`drain_while`] under futures-executor's `block_on`: awaits each output.
///
/// # Panics
/// If the set ends while `more` still holds.
pub fn drain_while_block_on<S>(set: &mut S, mut more: impl FnMut(&S) -> bool) -> u64
where
    S: Stream<Item = u64> + Unpin,
{
    futures_executor::block_on(async {
        let mut sum = 0u64;
        while more(set) {
            let out = poll_fn(|cx| poll_next(set, cx)).await;
            sum = sum.wrapping_add(out.expect("the set ended while outputs were still due"));
        }
        sum
    })
}

/// How a workload is driven, for the workloads that run both ways (the group of the second
/// has the [`suffix`](Driver::suffix) `_block_on`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Driver {
    /// Polled in a loop with a no-op waker ([`keep_full`], [`drain_while`], [`spin_on`]): what
    /// the set costs, with no wake reaching a task.
    Spin,
    /// Under futures-executor's `block_on` ([`keep_full_block_on`], [`drain_while_block_on`],
    /// `futures_executor::block_on`): a real waker, as users run them. Each wake a set passes
    /// on reaches the executor's thread notifier; `block_on` polls again only after one.
    BlockOn,
}

impl Driver {
    /// Both drivers, in the order their groups run.
    pub const BOTH: [Driver; 2] = [Driver::Spin, Driver::BlockOn];

    /// The suffix of the group's name: none for [`Spin`](Driver::Spin), `_block_on`.
    pub fn suffix(self) -> &'static str {
        match self {
            Driver::Spin => "",
            Driver::BlockOn => "_block_on",
        }
    }

    /// The name of the group of workload `base` under this driver.
    pub fn group(self, base: &str) -> String {
        format!("{base}{}", self.suffix())
    }

    /// [`keep_full`] or [`keep_full_block_on`].
    pub fn keep_full<S, F>(
        self,
        set: &mut S,
        total: usize,
        in_flight: usize,
        make: impl FnMut(usize) -> F,
        push: impl FnMut(&mut S, F),
    ) -> u64
    where
        S: Stream<Item = u64> + Unpin,
    {
        match self {
            Driver::Spin => keep_full(set, total, in_flight, make, push),
            Driver::BlockOn => keep_full_block_on(set, total, in_flight, make, push),
        }
    }

    /// [`drain_while`] or [`drain_while_block_on`].
    pub fn drain_while<S>(self, set: &mut S, more: impl FnMut(&S) -> bool) -> u64
    where
        S: Stream<Item = u64> + Unpin,
    {
        match self {
            Driver::Spin => drain_while(set, more),
            Driver::BlockOn => drain_while_block_on(set, more),
        }
    }

    /// Runs `fut` to completion: [`spin_on`] or `futures_executor::block_on`.
    pub fn run<F: Future>(self, fut: F) -> F::Output {
        match self {
            Driver::Spin => spin_on(fut),
            Driver::BlockOn => futures_executor::block_on(fut),
        }
    }
}

/// What a stream of indexes gave (see [`tally_block_on`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tally {
    /// How many items.
    pub count: u64,
    /// Their wrapping sum.
    pub sum: u64,
    /// Whether each item was its position (0, 1, 2, ...): the input order, when item `i` of
    /// the input gives `i`.
    pub in_order: bool,
}

impl Tally {
    /// The tally of `0, 1, ..., n - 1` in that order: every index once, in input order.
    pub fn indexes(n: usize) -> Self {
        let n = n as u64;
        Self {
            count: n,
            sum: n * n.saturating_sub(1) / 2,
            in_order: true,
        }
    }
}

/// Runs `stream` to its end under futures-executor's `block_on`, awaiting each item (with
/// `poll_fn`), and tallies the items without storing them (so without allocating).
pub fn tally_block_on<S: Stream<Item = u64>>(stream: S) -> Tally {
    tally_block_on_by(stream, |out| out)
}

/// [`tally_block_on`] of a stream of other items than `u64`: each item is read by `value`,
/// whose result is tallied.
pub fn tally_block_on_by<S: Stream>(stream: S, value: impl Fn(S::Item) -> u64) -> Tally {
    futures_executor::block_on(async {
        let mut stream = pin!(stream);
        let mut tally = Tally {
            count: 0,
            sum: 0,
            in_order: true,
        };
        while let Some(item) = poll_fn(|cx| stream.as_mut().poll_next(cx)).await {
            let out = value(item);
            tally.in_order &= out == tally.count;
            tally.count += 1;
            tally.sum = tally.sum.wrapping_add(out);
        }
        tally
    })
}

/// What a [`keyed_churn_block_on`] run saw.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ChurnTally {
    /// Outputs of futures that finished (the kept ones).
    pub completed: u64,
    /// The wrapping sum of those outputs.
    pub sum: u64,
    /// Futures removed by key (each one still in the set, not finished).
    pub removed: u64,
    /// Outputs `completed` turned down: what a set gives for a future removed by cancelling it
    /// in place (futures-util's `Abortable`: `Err(Aborted)`), not by taking it out.
    pub discarded: u64,
}

impl ChurnTally {
    /// The tally of a run of `total` futures in which every kept future finished once and
    /// every doomed one was removed (and none discarded unless `discards`).
    pub fn expected(total: usize, discards: bool) -> Self {
        // The kept futures are the even indexes: 0 + 2 + ... = 2 × (0 + 1 + ... + (k - 1)).
        let kept = total.div_ceil(2) as u64;
        let doomed = (total / 2) as u64;
        Self {
            completed: kept,
            sum: kept * kept.saturating_sub(1),
            removed: doomed,
            discarded: if discards { doomed } else { 0 },
        }
    }
}

/// The keyed churn, as a future ([`keyed_churn_block_on`] runs it under futures-executor's
/// `block_on`): `total` [`ChurnFuture`]s go through
/// `set`, which is kept full at `capacity` futures (counting those inserted and neither
/// finished nor removed). Future `i` is *kept* if `i` is even, *doomed* if odd: both are
/// pending on their first poll, where they wake themselves; a kept one finishes on its second
/// poll, a doomed one then stays pending for good, so it leaves the set only by its key. Each
/// time a kept future's output arrives, the driver removes the oldest doomed future still in
/// the set (`remove(key)`, which must find it: it cannot have finished), then refills the set
/// (a kept and a doomed future). Once every future has been inserted and no kept one is left,
/// it removes the remaining doomed ones and takes outputs until the set ends.
///
/// `insert` adds a future and gives its key; `remove` removes by key and says whether the
/// future was there; `completed` gives the value of an output, or `None` for an output to
/// discard (a cancelled future's). Awaits each output with `poll_fn`. Allocates, besides what
/// the set does, the queue of doomed keys (once).
///
/// # Panics
/// If `capacity` is below 2, or `remove` does not find a doomed future.
pub async fn keyed_churn<S, K, T>(
    set: &mut S,
    total: usize,
    capacity: usize,
    mut insert: impl FnMut(&mut S, ChurnFuture) -> K,
    mut remove: impl FnMut(&mut S, K) -> bool,
    mut completed: impl FnMut(T) -> Option<u64>,
) -> ChurnTally
where
    S: Stream<Item = T> + Unpin,
{
    assert!(
        capacity >= 2,
        "keyed churn keeps a kept and a doomed future at least"
    );
    let mut tally = ChurnTally::default();
    let mut doomed: VecDeque<K> = VecDeque::with_capacity(capacity / 2 + 1);
    let mut next = 0;
    // Inserted, neither finished nor removed: all of them, and the kept ones.
    let mut live = 0;
    let mut kept_live = 0;
    let mut remove_oldest = |set: &mut S, doomed: &mut VecDeque<K>, tally: &mut ChurnTally| {
        let key = doomed.pop_front()?;
        assert!(
            remove(set, key),
            "a doomed future is still in the set when it is removed"
        );
        tally.removed += 1;
        Some(())
    };
    loop {
        while live < capacity && next < total {
            let value = next as u64;
            if next % 2 == 0 {
                insert(set, ChurnFuture::kept(value));
                kept_live += 1;
            } else {
                doomed.push_back(insert(set, ChurnFuture::doomed(value)));
            }
            live += 1;
            next += 1;
        }
        if kept_live == 0 {
            while remove_oldest(set, &mut doomed, &mut tally).is_some() {
                live -= 1;
            }
        }
        match poll_fn(|cx| poll_next(set, cx)).await {
            Some(out) => match completed(out) {
                Some(value) => {
                    tally.completed += 1;
                    tally.sum = tally.sum.wrapping_add(value);
                    live -= 1;
                    kept_live -= 1;
                    if remove_oldest(set, &mut doomed, &mut tally).is_some() {
                        live -= 1;
                    }
                }
                None => tally.discarded += 1,
            },
            None => return tally,
        }
    }
}

/// [`keyed_churn`] under futures-executor's `block_on`.
///
/// # Panics
/// If `capacity` is below 2, or `remove` does not find a doomed future.
pub fn keyed_churn_block_on<S, K, T>(
    set: &mut S,
    total: usize,
    capacity: usize,
    insert: impl FnMut(&mut S, ChurnFuture) -> K,
    remove: impl FnMut(&mut S, K) -> bool,
    completed: impl FnMut(T) -> Option<u64>,
) -> ChurnTally
where
    S: Stream<Item = T> + Unpin,
{
    futures_executor::block_on(keyed_churn(set, total, capacity, insert, remove, completed))
}

/// Polls `stream` with a no-op waker until it has polled `values` [`Idle`](crate::Idle) or
/// [`IdleStream`](crate::IdleStream) values in all (each of the `values` it holds, numbered `0 ..
/// values`, once: nothing wakes them), checking that each call is pending, and drops it: the run of
/// a row that holds values that never finish, after it built `stream` (a set or a merge of them). A
/// set that polls all it holds in one call takes one call; one that yields after a few polls
/// (futures-buffered's, after 61) takes as many as it needs, so every set does the same work.
/// Returns how many calls it took.
///
/// # Panics
/// If a call gives an item or the end, or polls no value.
pub fn poll_each_once_pending<S: Stream>(stream: S, values: u64) -> usize {
    let mut stream = pin!(stream);
    each_once(values, |cx| {
        assert!(
            stream.as_mut().poll_next(cx).is_pending(),
            "no value it holds finishes"
        );
    })
}

/// [`poll_each_once_pending`] for a future (a join of values that never finish). Returns how
/// many polls it took.
///
/// # Panics
/// If a poll gives the output, or polls no value.
pub fn poll_future_each_once_pending<F: Future>(fut: F, values: u64) -> usize {
    let mut fut = pin!(fut);
    each_once(values, |cx| {
        assert!(
            fut.as_mut().poll(cx).is_pending(),
            "no value it joins finishes"
        );
    })
}

/// Calls `poll` with a no-op waker's context until `values` idle values were polled in all,
/// and checks that they were the values numbered `0 .. values`, each once; returns how many
/// calls that took.
fn each_once(values: u64, mut poll: impl FnMut(&mut Context<'_>)) -> usize {
    let mut cx = Context::from_waker(Waker::noop());
    let start = idle_polls();
    let mut calls = 0;
    loop {
        calls += 1;
        let before = idle_polls().count;
        poll(&mut cx);
        let polled = idle_polls().since(start);
        assert!(
            polled.count <= values,
            "more polls than values: a value was polled twice, or more than {values} are held"
        );
        if polled.count == values {
            assert_eq!(
                polled,
                IdlePolls::each_once(values),
                "{values} polls, but not of each of the values 0 .. {values} once"
            );
            return calls;
        }
        assert!(idle_polls().count > before, "a call polled no value");
    }
}

/// Polls `fut` with a no-op waker until it is ready.
pub fn spin_on<F: Future>(fut: F) -> F::Output {
    let mut fut = pin!(fut);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(out) = fut.as_mut().poll(&mut cx) {
            return out;
        }
    }
}

/// Runs `fut` on this thread: polls it, and parks the thread while it is pending until its
/// waker unparks it. Allocates once (the waker). It is `pinfold_testkit::future::block_on`,
/// the tests' copy: it panics if the future stays pending, not woken, for 60 s (a lost wake:
/// the futures of this suite finish in milliseconds).
pub use pinfold_testkit::future::block_on as block_on_parking;
