//! Hand-written futures, wakers and helpers that let a test see what the set does: how often
//! each future is polled, with which waker, where it lives, and when it is dropped.
// Each test file uses a different subset of these.
#![allow(dead_code)]

use std::future::Future;
use std::marker::PhantomPinned;
use std::pin::Pin;
use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};
use std::thread::{self, Thread};

use futures_core::Stream;
use pinfold_unordered::FuturesUnordered;

/// What a [`Probe`] shares with the test.
#[derive(Debug, Default)]
pub(crate) struct ProbeState {
    polls: AtomicUsize,
    drops: AtomicUsize,
    open: AtomicBool,
    /// Where the probe was first polled; 0 until then.
    address: AtomicUsize,
    /// The waker of the latest poll.
    waker: Mutex<Option<Waker>>,
}

impl ProbeState {
    /// How many times the probe was polled.
    pub(crate) fn polls(&self) -> usize {
        self.polls.load(Ordering::SeqCst)
    }

    /// How many times the probe was dropped (never more than once, unless the set is broken).
    pub(crate) fn drops(&self) -> usize {
        self.drops.load(Ordering::SeqCst)
    }

    /// Where the probe sat when it was first polled.
    pub(crate) fn address(&self) -> usize {
        self.address.load(Ordering::SeqCst)
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

    /// Lets the probe's next poll return `Ready(id)`, without waking it.
    pub(crate) fn open(&self) {
        self.open.store(true, Ordering::SeqCst);
    }

    /// Opens the probe and wakes it with the waker of its latest poll.
    pub(crate) fn finish(&self) {
        self.open();
        self.waker().wake();
    }
}

/// A future that is `Pending` until its state is [opened](ProbeState::open), then `Ready(id)`.
///
/// It counts its polls and drops, keeps the waker of its latest poll in its state, and is
/// `!Unpin`: it records where it was first polled and panics if a later poll finds it anywhere
/// else.
#[derive(Debug)]
pub(crate) struct Probe {
    id: usize,
    state: Arc<ProbeState>,
    _pinned: PhantomPinned,
}

impl Probe {
    pub(crate) fn new(id: usize) -> (Self, Arc<ProbeState>) {
        let state = Arc::new(ProbeState::default());
        let probe = Self {
            id,
            state: state.clone(),
            _pinned: PhantomPinned,
        };
        (probe, state)
    }

    pub(crate) fn id(&self) -> usize {
        self.id
    }

    /// Where this probe is now.
    pub(crate) fn address(&self) -> usize {
        ptr::from_ref(self).addr()
    }
}

/// `n` probes with ids `0..n`, and their states in the same order.
pub(crate) fn probes(n: usize) -> (Vec<Probe>, Vec<Arc<ProbeState>>) {
    (0..n).map(Probe::new).unzip()
}

impl Future for Probe {
    type Output = usize;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<usize> {
        let this: &Self = &self;
        let here = this.address();
        if let Err(first) =
            this.state
                .address
                .compare_exchange(0, here, Ordering::SeqCst, Ordering::SeqCst)
        {
            assert_eq!(
                first, here,
                "probe {} moved after it was first polled",
                this.id
            );
        }
        this.state.polls.fetch_add(1, Ordering::SeqCst);
        if this.state.open.load(Ordering::SeqCst) {
            return Poll::Ready(this.id);
        }
        *this.state.waker.lock().unwrap() = Some(cx.waker().clone());
        Poll::Pending
    }
}

impl Drop for Probe {
    fn drop(&mut self) {
        self.state.drops.fetch_add(1, Ordering::SeqCst);
    }
}

/// A future that wakes itself and returns `Pending` on each poll until it has done so `left`
/// times, then returns `Ready(id)`. It counts its polls.
#[derive(Debug)]
pub(crate) struct Spinner {
    id: usize,
    left: usize,
    polls: Arc<AtomicUsize>,
}

impl Spinner {
    /// A spinner that finishes on its `spins + 1`-th poll.
    pub(crate) fn new(id: usize, spins: usize) -> (Self, Arc<AtomicUsize>) {
        let polls = Arc::new(AtomicUsize::new(0));
        let spinner = Self {
            id,
            left: spins,
            polls: polls.clone(),
        };
        (spinner, polls)
    }

    /// A spinner that never finishes.
    pub(crate) fn forever(id: usize) -> (Self, Arc<AtomicUsize>) {
        Self::new(id, usize::MAX)
    }
}

impl Future for Spinner {
    type Output = usize;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<usize> {
        self.polls.fetch_add(1, Ordering::SeqCst);
        if self.left == 0 {
            return Poll::Ready(self.id);
        }
        self.left -= 1;
        cx.waker().wake_by_ref();
        Poll::Pending
    }
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

/// One `poll_next` of `set` with `waker`.
pub(crate) fn poll_with<F: Future>(
    set: &mut FuturesUnordered<F>,
    waker: &Waker,
) -> Poll<Option<F::Output>> {
    Pin::new(set).poll_next(&mut Context::from_waker(waker))
}

/// One `poll_next` of `set` with a waker that does nothing.
pub(crate) fn poll_once<F: Future>(set: &mut FuturesUnordered<F>) -> Poll<Option<F::Output>> {
    poll_with(set, futures_task::noop_waker_ref())
}

/// Polls `set` until it returns `Pending` or `Ready(None)`; the outputs it gave.
pub(crate) fn take_ready<F: Future>(set: &mut FuturesUnordered<F>) -> Vec<F::Output> {
    let mut outputs = Vec::new();
    while let Poll::Ready(Some(out)) = poll_once(set) {
        outputs.push(out);
    }
    outputs
}

/// Polls `set` until it yields `None`; the outputs in the order they came. Panics if it ever
/// returns `Pending` (nothing in these sets waits for anything outside).
pub(crate) fn drain<F: Future>(set: &mut FuturesUnordered<F>) -> Vec<F::Output> {
    let mut outputs = Vec::new();
    loop {
        match poll_once(set) {
            Poll::Ready(Some(out)) => outputs.push(out),
            Poll::Ready(None) => return outputs,
            Poll::Pending => panic!("set returned Pending with {} ready futures", set.len()),
        }
    }
}

/// A deterministic pseudo-random sequence (xorshift64*), for shuffles that are the same on
/// every run.
#[derive(Debug, Clone)]
pub(crate) struct XorShift(u64);

impl XorShift {
    pub(crate) fn new(seed: u64) -> Self {
        Self(seed.max(1))
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A number in `0..bound` (`bound > 0`).
    pub(crate) fn below(&mut self, bound: usize) -> usize {
        (self.next_u64() % bound as u64) as usize
    }

    /// Shuffles `items` (Fisher-Yates).
    pub(crate) fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            items.swap(i, self.below(i + 1));
        }
    }
}

/// A waker that unparks the thread that made it.
struct Unparker(Thread);

impl Wake for Unparker {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.0.unpark();
    }
}

/// Runs `fut` to completion on this thread, parking while it is `Pending`: a lost wake hangs.
pub(crate) fn block_on<F: Future>(fut: F) -> F::Output {
    let waker = Waker::from(Arc::new(Unparker(thread::current())));
    let mut cx = Context::from_waker(&waker);
    let mut fut = std::pin::pin!(fut);
    loop {
        if let Poll::Ready(out) = fut.as_mut().poll(&mut cx) {
            return out;
        }
        thread::park();
    }
}
