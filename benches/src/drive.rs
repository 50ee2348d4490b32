//! Driving futures and sets of futures by hand: with a no-op waker (the caller polls in a
//! loop) or with a waker that unparks the driving thread.

use core::future::{Future, poll_fn};
use core::pin::{Pin, pin};
use core::task::{Context, Poll, Waker};
use std::sync::Arc;
use std::task::Wake;
use std::thread::{self, Thread};
use std::time::{Duration, Instant};

use futures_core::Stream;

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

/// Unparks the thread that made it.
struct Unparker(Thread);

impl Wake for Unparker {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.0.unpark();
    }
}

/// How long [`block_on_parking`] waits without being woken before it declares a wake lost.
const STALL: Duration = Duration::from_secs(10);

/// Runs `fut` on this thread: polls it, and parks the thread whenever it is pending until its
/// waker unparks it. Allocates once (the waker).
///
/// # Panics
/// If the thread is not woken for 10 s while the future is pending (a lost wake: the futures
/// of this suite finish in milliseconds).
pub fn block_on_parking<F: Future>(fut: F) -> F::Output {
    let waker = Waker::from(Arc::new(Unparker(thread::current())));
    let mut cx = Context::from_waker(&waker);
    let mut fut = pin!(fut);
    loop {
        if let Poll::Ready(out) = fut.as_mut().poll(&mut cx) {
            return out;
        }
        let parked = Instant::now();
        thread::park_timeout(STALL);
        assert!(
            parked.elapsed() < STALL,
            "lost wake: the future stayed pending {STALL:?} without its waker being woken"
        );
    }
}
