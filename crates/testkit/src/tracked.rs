//! A stream or a future around another that counts what is done with it (its polls, its end,
//! its drop) and can panic in a chosen poll.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};

use futures_core::Stream;

/// What a [`Tracked`] value shares with the test.
#[derive(Debug, Default)]
pub struct Counts {
    polls: AtomicUsize,
    ends: AtomicUsize,
    drops: AtomicUsize,
}

impl Counts {
    /// How many times the value was polled.
    pub fn polls(&self) -> usize {
        self.polls.load(Ordering::SeqCst)
    }

    /// Whether the value ended: a stream returned `Ready(None)`, a future returned `Ready`.
    pub fn ended(&self) -> bool {
        self.ends.load(Ordering::SeqCst) > 0
    }

    /// How many times the value was dropped.
    pub fn drops(&self) -> usize {
        self.drops.load(Ordering::SeqCst)
    }
}

/// The message of a [`Tracked`] value's panic.
pub const TRACKED_PANIC: &str = "the tracked value panics as told";

/// A stream (around an `Unpin` stream) or a future (around an `Unpin` future) that counts its
/// polls, its end and its drop, carries an id, can panic in a given poll, and panics if polled
/// after its end.
///
/// ```
/// use pinfold_testkit::future::poll_once;
/// use pinfold_testkit::tracked::Tracked;
///
/// let (mut tracked, counts) = Tracked::new(0, std::future::ready(7));
/// assert_eq!(poll_once(&mut tracked), std::task::Poll::Ready(7));
/// assert!(counts.ended());
/// drop(tracked);
/// assert_eq!((counts.polls(), counts.drops()), (1, 1));
/// ```
#[derive(Debug)]
pub struct Tracked<T> {
    id: usize,
    inner: T,
    counts: Arc<Counts>,
    /// The poll (counted from 1) that panics.
    panic_at: Option<usize>,
}

impl<T> Tracked<T> {
    /// `inner`, tracked under `id`, and its counts.
    pub fn new(id: usize, inner: T) -> (Self, Arc<Counts>) {
        let counts = Arc::new(Counts::default());
        let tracked = Self {
            id,
            inner,
            counts: counts.clone(),
            panic_at: None,
        };
        (tracked, counts)
    }

    /// The same value, panicking with [`TRACKED_PANIC`] in its `poll`-th poll.
    pub fn panicking_at(mut self, poll: usize) -> Self {
        self.panic_at = Some(poll);
        self
    }

    /// The id it was made with.
    pub fn id(&self) -> usize {
        self.id
    }

    /// Counts a poll; panics if the value ended or this is the poll that panics.
    fn count_poll(&self) {
        assert!(
            !self.counts.ended(),
            "tracked value {} polled after its end",
            self.id
        );
        let polls = self.counts.polls.fetch_add(1, Ordering::SeqCst) + 1;
        if self.panic_at == Some(polls) {
            panic!("{TRACKED_PANIC}");
        }
    }

    fn count_end(&self) {
        self.counts.ends.fetch_add(1, Ordering::SeqCst);
    }
}

impl<S: Stream + Unpin> Stream for Tracked<S> {
    type Item = S::Item;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<S::Item>> {
        self.count_poll();
        let polled = Pin::new(&mut self.inner).poll_next(cx);
        if let Poll::Ready(None) = polled {
            self.count_end();
        }
        polled
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.inner.size_hint()
    }
}

impl<F: Future + Unpin> Future for Tracked<F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        self.count_poll();
        let polled = Pin::new(&mut self.inner).poll(cx);
        if polled.is_ready() {
            self.count_end();
        }
        polled
    }
}

impl<T> Drop for Tracked<T> {
    fn drop(&mut self) {
        self.counts.drops.fetch_add(1, Ordering::SeqCst);
    }
}
