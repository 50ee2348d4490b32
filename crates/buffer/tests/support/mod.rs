//! The test kit's PRNG, wakers and stream drivers (see `pinfold-testkit`), and what is
//! particular to the buffer adapters: counters that see what an adapter holds, a future the
//! test opens by hand, and sources that count their polls.
// Each test file uses a different subset of these.
#![allow(dead_code, unused_imports)]

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

use futures_core::Stream;
pub(crate) use pinfold_testkit::probe::Spinner;
use pinfold_testkit::rng::XorShift;
pub(crate) use pinfold_testkit::stream::{drain, poll_once, poll_with, settle};
pub(crate) use pinfold_testkit::waker::{WakeCounter, counting_waker};

/// `n` numbers in `0..=max`, the same for the same seed.
pub(crate) fn random(n: usize, max: u64, seed: u64) -> Vec<u64> {
    let mut rng = XorShift::new(seed);
    (0..n).map(|_| rng.up_to(max)).collect()
}

/// How many things are alive now, and the most there ever were at once.
#[derive(Debug, Clone, Default)]
pub(crate) struct Gauge(Arc<GaugeCounts>);

#[derive(Debug, Default)]
pub(crate) struct GaugeCounts {
    now: AtomicUsize,
    max: AtomicUsize,
    total: AtomicUsize,
}

impl Gauge {
    /// Counts one more thing alive until the guard is dropped.
    pub(crate) fn enter(&self) -> GaugeGuard {
        let now = self.0.now.fetch_add(1, Ordering::SeqCst) + 1;
        self.0.max.fetch_max(now, Ordering::SeqCst);
        self.0.total.fetch_add(1, Ordering::SeqCst);
        GaugeGuard(self.0.clone())
    }

    pub(crate) fn now(&self) -> usize {
        self.0.now.load(Ordering::SeqCst)
    }

    pub(crate) fn max(&self) -> usize {
        self.0.max.load(Ordering::SeqCst)
    }

    /// How many guards were ever made.
    pub(crate) fn total(&self) -> usize {
        self.0.total.load(Ordering::SeqCst)
    }
}

/// One thing alive for a [`Gauge`]; it counts down when dropped.
#[derive(Debug)]
pub(crate) struct GaugeGuard(Arc<GaugeCounts>);

impl Drop for GaugeGuard {
    fn drop(&mut self) {
        self.0.now.fetch_sub(1, Ordering::SeqCst);
    }
}

/// An output that a gauge counts while it is alive.
#[derive(Debug)]
pub(crate) struct Counted {
    pub(crate) id: usize,
    _guard: GaugeGuard,
}

impl Counted {
    pub(crate) fn new(id: usize, gauge: &Gauge) -> Self {
        Self {
            id,
            _guard: gauge.enter(),
        }
    }
}

/// What a [`Gate`] shares with the test.
#[derive(Debug, Default)]
pub(crate) struct GateState {
    open: AtomicBool,
    polls: AtomicUsize,
    drops: AtomicUsize,
    waker: Mutex<Option<Waker>>,
}

impl GateState {
    pub(crate) fn polls(&self) -> usize {
        self.polls.load(Ordering::SeqCst)
    }

    pub(crate) fn drops(&self) -> usize {
        self.drops.load(Ordering::SeqCst)
    }

    /// Lets the gate finish and wakes it with the waker of its latest poll, if it was polled.
    pub(crate) fn open(&self) {
        self.open.store(true, Ordering::SeqCst);
        if let Some(waker) = self.waker.lock().unwrap().take() {
            waker.wake();
        }
    }
}

/// A future that is `Pending` until the test [opens](GateState::open) it, then `Ready(id)`.
/// It counts its polls and drops.
#[derive(Debug)]
pub(crate) struct Gate {
    id: usize,
    state: Arc<GateState>,
}

impl Gate {
    pub(crate) fn new(id: usize) -> (Self, Arc<GateState>) {
        let state = Arc::new(GateState::default());
        (
            Self {
                id,
                state: state.clone(),
            },
            state,
        )
    }

    /// A gate that is open already.
    pub(crate) fn ready(id: usize) -> (Self, Arc<GateState>) {
        let (gate, state) = Self::new(id);
        state.open.store(true, Ordering::SeqCst);
        (gate, state)
    }
}

/// `n` closed gates with ids `0..n`, and their states in the same order.
pub(crate) fn gates(n: usize) -> (Vec<Gate>, Vec<Arc<GateState>>) {
    (0..n).map(Gate::new).unzip()
}

impl Future for Gate {
    type Output = usize;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<usize> {
        self.state.polls.fetch_add(1, Ordering::SeqCst);
        if self.state.open.load(Ordering::SeqCst) {
            return Poll::Ready(self.id);
        }
        *self.state.waker.lock().unwrap() = Some(cx.waker().clone());
        Poll::Pending
    }
}

impl Drop for Gate {
    fn drop(&mut self) {
        self.state.drops.fetch_add(1, Ordering::SeqCst);
    }
}

/// A source that counts its polls and the items it gave, and panics if polled after it
/// returned `None`.
#[derive(Debug)]
pub(crate) struct CountingSource<I> {
    items: I,
    ended: bool,
    counts: Arc<SourceCounts>,
}

/// What a [`CountingSource`] shares with the test.
#[derive(Debug, Default)]
pub(crate) struct SourceCounts {
    polls: AtomicUsize,
    pulled: AtomicUsize,
}

impl SourceCounts {
    pub(crate) fn polls(&self) -> usize {
        self.polls.load(Ordering::SeqCst)
    }

    pub(crate) fn pulled(&self) -> usize {
        self.pulled.load(Ordering::SeqCst)
    }
}

impl<I: Iterator> CountingSource<I> {
    pub(crate) fn new(items: impl IntoIterator<IntoIter = I>) -> (Self, Arc<SourceCounts>) {
        let counts = Arc::new(SourceCounts::default());
        let source = Self {
            items: items.into_iter(),
            ended: false,
            counts: counts.clone(),
        };
        (source, counts)
    }
}

impl<I: Iterator + Unpin> Stream for CountingSource<I> {
    type Item = I::Item;

    fn poll_next(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<I::Item>> {
        assert!(!self.ended, "the source was polled after it returned None");
        self.counts.polls.fetch_add(1, Ordering::SeqCst);
        let item = self.items.next();
        match item {
            Some(_) => self.counts.pulled.fetch_add(1, Ordering::SeqCst),
            None => {
                self.ended = true;
                0
            }
        };
        Poll::Ready(item)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.items.size_hint()
    }
}

/// A source that gives 0 and 1, panics the third time it is polled, then ends.
pub(crate) fn two_then_a_panic() -> impl Stream<Item = usize> + Unpin {
    let mut polls = 0;
    futures_util::stream::poll_fn(move |_| {
        polls += 1;
        match polls {
            1 | 2 => Poll::Ready(Some(polls - 1)),
            3 => panic!("the source panics"),
            _ => Poll::Ready(None),
        }
    })
}

/// A source of an open gate (0) and a closed one (1), then, after `pending` calls that are
/// `Pending`, a call that panics, then its end; and the closed gate's state. A buffer of two
/// starts both; 0 finishes, and the refill after it panics.
pub(crate) fn ready_and_gate_then_a_panic(
    pending: usize,
) -> (impl Stream<Item = Gate> + Unpin, Arc<GateState>) {
    let (ready, _) = Gate::ready(0);
    let (gate, state) = Gate::new(1);
    let mut items = vec![gate, ready];
    let mut polls = 0;
    let source = futures_util::stream::poll_fn(move |_| {
        polls += 1;
        match polls {
            1 | 2 => Poll::Ready(items.pop()),
            n if n <= 2 + pending => Poll::Pending,
            n if n == 3 + pending => panic!("the source panics"),
            _ => Poll::Ready(None),
        }
    });
    (source, state)
}

/// Drives `stream`, whose last `poll_next` panicked in the refill after an output (kept for
/// the next call), once the gate of `gate` is open: the opened future is polled, as a
/// consumer waiting for it in `drive_while` needs. Then the kept output (0), the gate's (1),
/// and the end come.
pub(crate) fn driving_after_a_panic_polls_the_opened_gate<S>(stream: &mut S, gate: &GateState)
where
    S: pinfold_buffer::ProgressStream<Item = usize> + futures_core::FusedStream + Unpin,
{
    let (waker, _) = counting_waker();
    let polled = gate.polls();
    gate.open();
    let _ = Pin::new(&mut *stream).poll_progress(&mut Context::from_waker(&waker));
    assert_eq!(gate.polls(), polled + 1, "the opened future is polled");
    assert_eq!(poll_with(&mut *stream, &waker), Poll::Ready(Some(0)));
    assert_eq!(poll_with(&mut *stream, &waker), Poll::Ready(Some(1)));
    assert_eq!(poll_with(&mut *stream, &waker), Poll::Ready(None));
    assert!(stream.is_terminated());
}

/// Polls `stream` (whose futures are all ready) until it ends, at most 10 calls, catching each
/// panic and calling `after_panic` after it: gives the outputs and how many calls panicked.
/// Panics if a call is `Pending`.
pub(crate) fn poll_through_panics<S: Stream + Unpin>(
    stream: &mut S,
    mut after_panic: impl FnMut(&S),
) -> (Vec<S::Item>, usize)
where
    S::Item: std::fmt::Debug,
{
    use std::panic::{AssertUnwindSafe, catch_unwind};
    let (waker, _) = counting_waker();
    let mut outputs = Vec::new();
    let mut panics = 0;
    for _ in 0..10 {
        match catch_unwind(AssertUnwindSafe(|| poll_with(&mut *stream, &waker))) {
            Ok(Poll::Ready(Some(item))) => outputs.push(item),
            Ok(Poll::Ready(None)) => break,
            Ok(Poll::Pending) => panic!("ready futures only, outputs {outputs:?}"),
            Err(_) => {
                panics += 1;
                after_panic(stream);
            }
        }
    }
    (outputs, panics)
}
