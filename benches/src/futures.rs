//! The futures the workloads are made of.

use core::future::Future;
use core::pin::Pin;
use core::sync::atomic::{AtomicBool, Ordering};
use core::task::{Context, Poll, Waker};
use std::sync::Mutex;

use futures_core::Stream;

/// The inputs of the join workloads: `n` futures, each ready after `yields` yields, giving its
/// index.
pub fn join_inputs(n: usize, yields: u32) -> impl ExactSizeIterator<Item = YieldK<u64>> {
    (0..n).map(move |i| YieldK::new(yields, i as u64))
}

/// The inputs of the `try_join_all` workloads: [`join_inputs`], each giving `Ok(index)`.
pub fn try_join_inputs(
    n: usize,
    yields: u32,
) -> impl ExactSizeIterator<Item = YieldK<Result<u64, ()>>> {
    (0..n).map(move |i| YieldK::new(yields, Ok(i as u64)))
}

/// A future that wakes itself (`cx.waker().wake_by_ref()`) and returns `Pending` `k` times,
/// then returns its value. `YieldK::new(1, v)` is "ready after one yield".
#[derive(Debug, Clone)]
pub struct YieldK<T> {
    left: u32,
    value: Option<T>,
}

/// `left` of a [`YieldK::forever`]: pending for good, never waking itself.
const FOREVER: u32 = u32::MAX;

impl<T> YieldK<T> {
    /// A future that yields `k` times, then gives `value`.
    pub fn new(k: u32, value: T) -> Self {
        assert!(k < FOREVER, "YieldK::new: k must be below u32::MAX");
        Self {
            left: k,
            value: Some(value),
        }
    }

    /// A future that stays pending and never wakes itself: a long-lived future (a
    /// connection, a subscription) that a set holds while others come and go. Its `value` is
    /// never given.
    pub fn forever(value: T) -> Self {
        Self {
            left: FOREVER,
            value: Some(value),
        }
    }
}

impl<T: Unpin> Future for YieldK<T> {
    type Output = T;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<T> {
        if self.left == FOREVER {
            return Poll::Pending;
        }
        if self.left == 0 {
            return Poll::Ready(self.value.take().expect("YieldK polled after it finished"));
        }
        self.left -= 1;
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

/// A value of 8 bytes that never finishes: a future that is pending on every poll and never
/// registers the waker it is given, so nothing ever wakes it. What the rows that hold many
/// values at once (`held_*`, `*_held_*`) fill their sets and joins with, so that a run's peak
/// of live bytes over the values held is what the set, merge or join takes per value, the
/// value's own 8 bytes included. Each poll is counted with its number (`idle_polls`), so
/// that a row can drive a set until every value it holds was polled once, however many calls
/// the set takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Idle(pub u64);

impl Future for Idle {
    type Output = u64;

    #[inline]
    fn poll(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<u64> {
        count_idle_poll(self.0);
        Poll::Pending
    }
}

/// The stream form of [`Idle`]: 8 bytes, pending on every poll (counted as [`Idle`]'s), never
/// registering the waker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IdleStream(pub u64);

impl Stream for IdleStream {
    type Item = u64;

    #[inline]
    fn poll_next(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<Option<u64>> {
        count_idle_poll(self.0);
        Poll::Pending
    }
}

/// The polls of [`Idle`] and [`IdleStream`] values on a thread: how many, and the sum of the
/// values' numbers, so that `n` polls of the values `0 .. n` each once can be told from `n`
/// polls of which one polled a value again in place of another.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct IdlePolls {
    pub(crate) count: u64,
    sum: u64,
}

impl IdlePolls {
    /// What polling each of the values `0 .. n` once adds.
    pub(crate) fn each_once(n: u64) -> Self {
        Self {
            count: n,
            sum: n * n.saturating_sub(1) / 2,
        }
    }

    /// The polls since `earlier`.
    pub(crate) fn since(self, earlier: Self) -> Self {
        Self {
            count: self.count - earlier.count,
            sum: self.sum - earlier.sum,
        }
    }
}

std::thread_local! {
    /// The polls of [`Idle`] and [`IdleStream`] values on this thread.
    static IDLE_POLLS: core::cell::Cell<IdlePolls> = const {
        core::cell::Cell::new(IdlePolls { count: 0, sum: 0 })
    };
}

/// Counts a poll of the [`Idle`] or [`IdleStream`] numbered `number` on this thread.
#[inline]
fn count_idle_poll(number: u64) {
    IDLE_POLLS.with(|polls| {
        let IdlePolls { count, sum } = polls.get();
        polls.set(IdlePolls {
            count: count + 1,
            sum: sum + number,
        });
    });
}

/// The polls of [`Idle`] and [`IdleStream`] values on this thread so far.
pub(crate) fn idle_polls() -> IdlePolls {
    IDLE_POLLS.with(core::cell::Cell::get)
}

const _: () = assert!(size_of::<Idle>() == 8 && size_of::<IdleStream>() == 8);

/// A one-shot flag another thread sets: the far end of a [`Signal`]. Reusable (see
/// [`reset`](SignalCell::reset)), so that a benchmark allocates its cells once.
#[derive(Debug, Default)]
pub struct SignalCell {
    fired: AtomicBool,
    waker: Mutex<Option<Waker>>,
}

impl SignalCell {
    /// A cell that has not fired.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the flag and wakes the waiting [`Signal`], if it registered a waker.
    pub fn fire(&self) {
        // Release: pairs with the Acquire loads in `Signal::poll`.
        self.fired.store(true, Ordering::Release);
        let waker = self.lock().take();
        if let Some(waker) = waker {
            waker.wake();
        }
    }

    /// Clears the flag and forgets the registered waker, for the next round. Only call it
    /// when no thread can be firing the cell.
    pub fn reset(&self) {
        self.fired.store(false, Ordering::Relaxed);
        *self.lock() = None;
    }

    /// Whether a [`Signal`] registered a waker that has not been woken yet.
    pub fn is_registered(&self) -> bool {
        self.lock().is_some()
    }

    /// A future that finishes with `value` once the cell has fired.
    pub fn signal(&self, value: u64) -> Signal<'_> {
        Signal { cell: self, value }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Waker>> {
        self.waker
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// Finishes with its value once its [`SignalCell`] has fired; registers (clones) the waker of
/// the poll that found it not fired, unless the registered one would wake the same task.
#[derive(Debug)]
pub struct Signal<'a> {
    cell: &'a SignalCell,
    value: u64,
}

impl Future for Signal<'_> {
    type Output = u64;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<u64> {
        // Acquire: pairs with the Release store in `SignalCell::fire`.
        if self.cell.fired.load(Ordering::Acquire) {
            return Poll::Ready(self.value);
        }
        {
            let mut registered = self.cell.lock();
            match &*registered {
                Some(waker) if waker.will_wake(cx.waker()) => {}
                _ => *registered = Some(cx.waker().clone()),
            }
        }
        // Fired between the first check and the registration: `fire` may have found no waker.
        if self.cell.fired.load(Ordering::Acquire) {
            Poll::Ready(self.value)
        } else {
            Poll::Pending
        }
    }
}

/// A stream over a run of [`SignalCell`]s: item `k` (`first + k`) comes once cell `k` has
/// fired (so items come in order even when the cells fire out of order), and the stream ends
/// after the last cell's item. Registers the waker of the poll that finds its next cell not
/// fired, as [`Signal`] does.
#[derive(Debug)]
pub struct SignalStream<'a> {
    cells: &'a [SignalCell],
    next: usize,
    first: u64,
}

impl<'a> SignalStream<'a> {
    /// A stream of `cells.len()` items, `first`, `first + 1`, ...
    pub fn new(cells: &'a [SignalCell], first: u64) -> Self {
        Self {
            cells,
            next: 0,
            first,
        }
    }
}

impl Stream for SignalStream<'_> {
    type Item = u64;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<u64>> {
        let Some(cell) = self.cells.get(self.next) else {
            return Poll::Ready(None);
        };
        let item = self.first + self.next as u64;
        match Pin::new(&mut cell.signal(item)).poll(cx) {
            Poll::Ready(item) => {
                self.next += 1;
                Poll::Ready(Some(item))
            }
            Poll::Pending => Poll::Pending,
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.cells.len() - self.next;
        (left, Some(left))
    }
}

/// A future of the keyed churn workload ([`keyed_churn_block_on`](crate::keyed_churn_block_on)):
/// pending on its first poll, where it wakes itself. On its second poll a *kept* one gives
/// its value; a *doomed* one stays pending for good without waking itself again (it waits for
/// something that does not come before it is cancelled), so it leaves its set only when it is
/// removed by its key, and never finishes before that.
#[derive(Debug, Clone)]
pub struct ChurnFuture {
    value: u64,
    kept: bool,
    polled: bool,
}

impl ChurnFuture {
    /// A future that finishes with `value` on its second poll.
    pub fn kept(value: u64) -> Self {
        Self {
            value,
            kept: true,
            polled: false,
        }
    }

    /// A future that never finishes: pending on every poll, waking itself on the first only.
    pub fn doomed(value: u64) -> Self {
        Self {
            value,
            kept: false,
            polled: false,
        }
    }
}

impl Future for ChurnFuture {
    type Output = u64;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<u64> {
        if !self.polled {
            self.polled = true;
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        if self.kept {
            Poll::Ready(self.value)
        } else {
            Poll::Pending
        }
    }
}
