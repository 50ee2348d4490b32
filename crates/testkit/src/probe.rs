//! Hand-written futures that let a test see what is done with them: how often each is polled,
//! with which waker, where it lives, and when it is dropped.

use std::future::Future;
use std::marker::PhantomPinned;
use std::pin::Pin;
use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

/// What a [`Probe`] shares with the test.
#[derive(Debug, Default)]
pub struct ProbeState {
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
    pub fn polls(&self) -> usize {
        self.polls.load(Ordering::SeqCst)
    }

    /// Whether the probe was ever polled.
    pub fn was_polled(&self) -> bool {
        self.polls() > 0
    }

    /// How many times the probe was dropped (never more than once, unless its owner is
    /// broken).
    pub fn drops(&self) -> usize {
        self.drops.load(Ordering::SeqCst)
    }

    /// Where the probe sat when it was first polled.
    pub fn address(&self) -> usize {
        self.address.load(Ordering::SeqCst)
    }

    /// A clone of the waker the probe was last polled with.
    ///
    /// # Panics
    /// If the probe was never polled.
    pub fn waker(&self) -> Waker {
        self.waker
            .lock()
            .unwrap()
            .clone()
            .expect("the probe was never polled")
    }

    /// Lets the probe's next poll return its output, without waking it.
    pub fn open(&self) {
        self.open.store(true, Ordering::SeqCst);
    }

    /// Opens the probe and wakes it with the waker of its latest poll.
    ///
    /// # Panics
    /// If the probe was never polled.
    pub fn finish(&self) {
        let waker = {
            let waker = self.waker.lock().unwrap();
            self.open();
            waker.clone().expect("the probe was never polled")
        };
        waker.wake();
    }
}

/// A future that is `Pending` until its state is [opened](ProbeState::open), then `Ready` with
/// its output (its id, for a `Probe<usize>` made by [`Probe::new`]).
///
/// It counts its polls and drops, keeps the waker of its latest poll in its state, and panics
/// if polled after `Ready`. It is `!Unpin`: it records where it was first polled and panics if
/// a later poll finds it anywhere else.
#[derive(Debug)]
pub struct Probe<T = usize> {
    id: usize,
    /// Taken by the poll that returns `Ready`. In a `Mutex` because the probe is `!Unpin`, so
    /// a poll has only a shared reference to it.
    output: Mutex<Option<T>>,
    state: Arc<ProbeState>,
    _pinned: PhantomPinned,
}

impl Probe<usize> {
    /// A probe whose output is its id.
    pub fn new(id: usize) -> (Self, Arc<ProbeState>) {
        Self::with_output(id, id)
    }
}

impl<T> Probe<T> {
    /// A probe with id `id` whose output is `output`.
    pub fn with_output(id: usize, output: T) -> (Self, Arc<ProbeState>) {
        let state = Arc::new(ProbeState::default());
        let probe = Self {
            id,
            output: Mutex::new(Some(output)),
            state: state.clone(),
            _pinned: PhantomPinned,
        };
        (probe, state)
    }

    /// The id it was made with.
    pub fn id(&self) -> usize {
        self.id
    }

    /// Where this probe is now.
    pub fn address(&self) -> usize {
        ptr::from_ref(self).addr()
    }
}

/// `n` probes with ids `0..n` (their outputs), and their states in the same order.
pub fn probes(n: usize) -> (Vec<Probe>, Vec<Arc<ProbeState>>) {
    (0..n).map(Probe::new).unzip()
}

/// `n` probes with ids `0..n` whose outputs are `output(id)`, and their states in the same
/// order.
pub fn probes_with<T>(
    n: usize,
    mut output: impl FnMut(usize) -> T,
) -> (Vec<Probe<T>>, Vec<Arc<ProbeState>>) {
    (0..n).map(|id| Probe::with_output(id, output(id))).unzip()
}

impl<T> Future for Probe<T> {
    type Output = T;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<T> {
        let this: &Self = self.into_ref().get_ref();
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
        // The check and the registration under the lock `finish` takes: a finish either comes
        // before the check (which sees it) or after the registration (and wakes this poll's
        // waker), as the `Future` contract asks.
        let mut waker = this.state.waker.lock().unwrap();
        if this.state.open.load(Ordering::SeqCst) {
            drop(waker);
            let output = this
                .output
                .lock()
                .unwrap()
                .take()
                .expect("probe polled after it returned Ready");
            return Poll::Ready(output);
        }
        *waker = Some(cx.waker().clone());
        Poll::Pending
    }
}

impl<T> Drop for Probe<T> {
    fn drop(&mut self) {
        self.state.drops.fetch_add(1, Ordering::SeqCst);
    }
}

/// A future that wakes itself and returns `Pending` on each poll until it has done so `spins`
/// times, then returns `Ready(id)`. It counts its polls.
#[derive(Debug)]
pub struct Spinner {
    id: usize,
    left: usize,
    polls: Arc<AtomicUsize>,
}

impl Spinner {
    /// A spinner that finishes on its `spins + 1`-th poll, and its poll count.
    pub fn new(id: usize, spins: usize) -> (Self, Arc<AtomicUsize>) {
        let polls = Arc::new(AtomicUsize::new(0));
        let spinner = Self {
            id,
            left: spins,
            polls: polls.clone(),
        };
        (spinner, polls)
    }

    /// A spinner that never finishes, and its poll count.
    pub fn forever(id: usize) -> (Self, Arc<AtomicUsize>) {
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
