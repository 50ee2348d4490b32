//! Hand-written futures and wakers that let a test see what the set does: how often each future
//! is polled, with which waker, where it lives, and when it is dropped.
// Each test file uses a different subset of these.
#![allow(dead_code)]

use std::future::Future;
use std::marker::PhantomPinned;
use std::pin::Pin;
use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};

use futures_util::StreamExt;
use pinfold_bounded::FuturesUnorderedBounded;

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
    set: &mut FuturesUnorderedBounded<F>,
    waker: &Waker,
) -> Poll<Option<F::Output>> {
    set.poll_next_unpin(&mut Context::from_waker(waker))
}

/// One `poll_next` of `set` with a waker that does nothing.
pub(crate) fn poll_once<F: Future>(
    set: &mut FuturesUnorderedBounded<F>,
) -> Poll<Option<F::Output>> {
    poll_with(set, futures_task::noop_waker_ref())
}

/// Polls `set` until it returns `Pending` without having woken its own task, that is, until
/// every future that was woken has been polled. Panics on an output, or if the set keeps
/// yielding (a set of futures that do not wake themselves must settle).
pub(crate) fn settle<F: Future>(set: &mut FuturesUnorderedBounded<F>) {
    let (task, wakes) = counting_waker();
    for _ in 0..=set.len() {
        let before = wakes.count();
        match poll_with(set, &task) {
            Poll::Pending if wakes.count() == before => return,
            Poll::Pending => {}
            Poll::Ready(Some(_)) => panic!("a future finished while settling"),
            Poll::Ready(None) => return,
        }
    }
    panic!("the set kept yielding");
}
