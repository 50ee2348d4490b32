//! Hand-written futures, outputs, wakers and a PRNG that let a test see what a join does: how
//! often each future is polled, when it and its output are dropped, and in what order.
// Each test file uses a different subset of these.
#![allow(dead_code)]

use std::cell::Cell;
use std::future::Future;
use std::marker::PhantomPinned;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};

/// What a [`Probe`] shares with the test.
#[derive(Debug, Default)]
pub(crate) struct ProbeState {
    polls: AtomicUsize,
    drops: AtomicUsize,
    open: AtomicBool,
    /// The waker of the latest poll.
    waker: Mutex<Option<Waker>>,
}

impl ProbeState {
    /// How many times the probe was polled.
    pub(crate) fn polls(&self) -> usize {
        self.polls.load(Ordering::SeqCst)
    }

    /// How many times the probe was dropped (never more than once, unless the join is broken).
    pub(crate) fn drops(&self) -> usize {
        self.drops.load(Ordering::SeqCst)
    }

    /// Whether the probe was ever polled.
    pub(crate) fn was_polled(&self) -> bool {
        self.polls() > 0
    }

    /// A clone of the waker the probe was last polled with.
    ///
    /// # Panics
    /// If the probe was never polled.
    pub(crate) fn waker(&self) -> Waker {
        self.waker
            .lock()
            .unwrap()
            .clone()
            .expect("the probe was never polled")
    }

    /// Lets the probe's next poll return its output, without waking it.
    pub(crate) fn open(&self) {
        self.open.store(true, Ordering::SeqCst);
    }

    /// Opens the probe and wakes it with the waker of its latest poll.
    pub(crate) fn finish(&self) {
        self.open();
        self.waker().wake();
    }
}

/// A future that is `Pending` until its state is [opened](ProbeState::open), then `Ready` with
/// the output it was made with. It counts its polls and drops, keeps the waker of its latest
/// poll in its state, panics if polled after `Ready`, and is `!Unpin`.
pub(crate) struct Probe<T> {
    output: Cell<Option<T>>,
    state: Arc<ProbeState>,
    _pinned: PhantomPinned,
}

impl<T> Probe<T> {
    pub(crate) fn new(output: T) -> (Self, Arc<ProbeState>) {
        let state = Arc::new(ProbeState::default());
        let probe = Self {
            output: Cell::new(Some(output)),
            state: state.clone(),
            _pinned: PhantomPinned,
        };
        (probe, state)
    }
}

/// `n` probes whose outputs are `output(0..n)`, and their states in the same order.
pub(crate) fn probes<T>(
    n: usize,
    output: impl FnMut(usize) -> T,
) -> (Vec<Probe<T>>, Vec<Arc<ProbeState>>) {
    (0..n).map(output).map(Probe::new).unzip()
}

impl<T> Future for Probe<T> {
    type Output = T;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<T> {
        // The probe is `!Unpin` only so that the join must keep it pinned; its output sits in
        // a `Cell`, so a shared reference is all the poll needs.
        let this: &Self = self.into_ref().get_ref();
        this.state.polls.fetch_add(1, Ordering::SeqCst);
        if this.state.open.load(Ordering::SeqCst) {
            let output = this
                .output
                .take()
                .expect("probe polled after it returned Ready");
            return Poll::Ready(output);
        }
        *this.state.waker.lock().unwrap() = Some(cx.waker().clone());
        Poll::Pending
    }
}

impl<T> Drop for Probe<T> {
    fn drop(&mut self) {
        self.state.drops.fetch_add(1, Ordering::SeqCst);
    }
}

/// An output that counts its drops in a shared [`DropLog`], under its id.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Tracked {
    id: usize,
    log: Arc<DropLog>,
}

impl Tracked {
    pub(crate) fn id(&self) -> usize {
        self.id
    }
}

impl Drop for Tracked {
    fn drop(&mut self) {
        self.log.drops[self.id].fetch_add(1, Ordering::SeqCst);
    }
}

/// How many times each of `n` [`Tracked`] values, ids `0..n`, was dropped.
#[derive(Debug)]
pub(crate) struct DropLog {
    drops: Vec<AtomicUsize>,
}

impl PartialEq for DropLog {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self, other)
    }
}

impl Eq for DropLog {}

impl DropLog {
    pub(crate) fn new(n: usize) -> Arc<Self> {
        Arc::new(Self {
            drops: (0..n).map(|_| AtomicUsize::new(0)).collect(),
        })
    }

    /// The tracked value with id `id`.
    pub(crate) fn tracked(self: &Arc<Self>, id: usize) -> Tracked {
        Tracked {
            id,
            log: self.clone(),
        }
    }

    /// How many times value `id` was dropped.
    pub(crate) fn drops(&self, id: usize) -> usize {
        self.drops[id].load(Ordering::SeqCst)
    }

    /// Asserts that every value was dropped exactly once.
    #[track_caller]
    pub(crate) fn assert_each_dropped_once(&self, what: &str) {
        for id in 0..self.drops.len() {
            assert_eq!(
                self.drops(id),
                1,
                "{what} {id} dropped {} times",
                self.drops(id)
            );
        }
    }
}

/// Asserts that every probe was dropped exactly once.
#[track_caller]
pub(crate) fn assert_probes_dropped_once(states: &[Arc<ProbeState>]) {
    for (id, state) in states.iter().enumerate() {
        assert_eq!(
            state.drops(),
            1,
            "future {id} dropped {} times",
            state.drops()
        );
    }
}

/// Sets a flag when dropped: put one in an `async` block to see when the block is dropped.
#[derive(Debug)]
pub(crate) struct DropFlag(pub(crate) Arc<AtomicBool>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        assert!(
            !self.0.swap(true, Ordering::SeqCst),
            "a future was dropped twice"
        );
    }
}

/// `n` flags, all unset.
pub(crate) fn flags(n: usize) -> Vec<Arc<AtomicBool>> {
    (0..n).map(|_| Arc::new(AtomicBool::new(false))).collect()
}

/// Whether `flag` is set.
pub(crate) fn is_set(flag: &AtomicBool) -> bool {
    flag.load(Ordering::SeqCst)
}

/// A waker that counts how often it was woken.
#[derive(Debug, Default)]
pub(crate) struct WakeCounter(AtomicUsize);

impl WakeCounter {
    pub(crate) fn count(&self) -> usize {
        self.0.load(Ordering::SeqCst)
    }
}

impl Wake for WakeCounter {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// A waker that counts its wakes, and the counter.
pub(crate) fn counting_waker() -> (Waker, Arc<WakeCounter>) {
    let counter = Arc::new(WakeCounter::default());
    (Waker::from(counter.clone()), counter)
}

/// One poll of `fut` with `waker`.
pub(crate) fn poll_with<F: Future + Unpin>(fut: &mut F, waker: &Waker) -> Poll<F::Output> {
    Pin::new(fut).poll(&mut Context::from_waker(waker))
}

/// One poll of `fut` with a waker that does nothing.
pub(crate) fn poll_once<F: Future + Unpin>(fut: &mut F) -> Poll<F::Output> {
    poll_with(fut, futures_task::noop_waker_ref())
}

/// A xorshift64 pseudo-random generator: the same seed gives the same sequence.
#[derive(Debug, Clone)]
pub(crate) struct XorShift(u64);

impl XorShift {
    pub(crate) fn new(seed: u64) -> Self {
        // Zero is xorshift's one fixed point.
        Self(seed.max(1))
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    /// A number in `0..n`; `n` must not be 0.
    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// `0..n` in a random order.
    pub(crate) fn permutation(&mut self, n: usize) -> Vec<usize> {
        let mut order: Vec<usize> = (0..n).collect();
        for i in (1..n).rev() {
            order.swap(i, self.below(i + 1));
        }
        order
    }
}
