//! A stream of futures the test feeds by hand, for the stream buffers.
//!
//! [`Source::poll_pull`] is a stream's `poll_next`; a test makes it a `Stream` with
//! `futures_util::stream::poll_fn`. The handle pushes items and ends the stream, waking the
//! consumer as a channel would, and counts what was pushed and pulled, so that a test can check
//! how far ahead of its output a buffer reads.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};

/// The consumer's end: pull items with [`poll_pull`](Self::poll_pull).
#[derive(Debug)]
pub struct Source<F> {
    shared: Arc<Mutex<State<F>>>,
}

/// The test's end: push items, end the stream, count.
#[derive(Debug)]
pub struct SourceHandle<F> {
    shared: Arc<Mutex<State<F>>>,
}

#[derive(Debug)]
struct State<F> {
    queue: VecDeque<F>,
    ended: bool,
    waker: Option<Waker>,
    pushed: usize,
    pulled: usize,
}

/// A new, empty, open source.
pub fn source<F>() -> (SourceHandle<F>, Source<F>) {
    let shared = Arc::new(Mutex::new(State {
        queue: VecDeque::new(),
        ended: false,
        waker: None,
        pushed: 0,
        pulled: 0,
    }));
    (
        SourceHandle {
            shared: shared.clone(),
        },
        Source { shared },
    )
}

fn lock<F>(shared: &Mutex<State<F>>) -> MutexGuard<'_, State<F>> {
    // A panic in a test's drop of an item may poison the lock; the state is still whole.
    shared
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl<F> Source<F> {
    /// The next item, `None` once the stream has ended and every item was pulled, or `Pending`
    /// (the consumer is woken by the next push or the end).
    pub fn poll_pull(&mut self, cx: &mut Context<'_>) -> Poll<Option<F>> {
        let mut state = lock(&self.shared);
        if let Some(item) = state.queue.pop_front() {
            state.pulled += 1;
            return Poll::Ready(Some(item));
        }
        if state.ended {
            return Poll::Ready(None);
        }
        if !state
            .waker
            .as_ref()
            .is_some_and(|w| w.will_wake(cx.waker()))
        {
            state.waker = Some(cx.waker().clone());
        }
        Poll::Pending
    }
}

impl<F> SourceHandle<F> {
    /// Adds `item` at the end and wakes the consumer.
    pub fn push(&self, item: F) {
        let waker = {
            let mut state = lock(&self.shared);
            assert!(!state.ended, "push after the source ended");
            state.queue.push_back(item);
            state.pushed += 1;
            state.waker.take()
        };
        if let Some(waker) = waker {
            waker.wake();
        }
    }

    /// Ends the stream (after the items already pushed) and wakes the consumer.
    pub fn end(&self) {
        let waker = {
            let mut state = lock(&self.shared);
            state.ended = true;
            state.waker.take()
        };
        if let Some(waker) = waker {
            waker.wake();
        }
    }

    /// Whether [`end`](Self::end) was called.
    pub fn is_ended(&self) -> bool {
        lock(&self.shared).ended
    }

    /// How many items were pushed.
    pub fn pushed(&self) -> usize {
        lock(&self.shared).pushed
    }

    /// How many items the consumer pulled.
    pub fn pulled(&self) -> usize {
        lock(&self.shared).pulled
    }

    /// How many items wait to be pulled.
    pub fn waiting(&self) -> usize {
        lock(&self.shared).queue.len()
    }
}
