//! The window: running plus held never above it, the source left alone while it is full, a
//! stuck head with and without it, and `window(n)` against `futures`' `buffered(n)`.

mod support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::Poll;
use std::time::Duration;

use futures_core::Stream;
use futures_util::{StreamExt, stream};
use pinfold_buffer::BufferExt;
use support::{
    Counted, CountingSource, Gate, Gauge, counting_waker, gates, poll_with, random, settle,
};
use tokio::time::{Instant, sleep};

#[tokio::test(start_paused = true)]
#[cfg_attr(miri, ignore)]
async fn running_plus_held_never_exceeds_the_window() {
    const WINDOW: usize = 20;
    let n = 3_000;
    // Every 50th future is slow, so outputs pile up behind it.
    let mut delays = random(n, 10, 99);
    for delay in delays.iter_mut().step_by(50) {
        *delay = 100;
    }
    let pulled = Arc::new(AtomicUsize::new(0));
    let yielded = Arc::new(AtomicUsize::new(0));
    let most_outstanding = Arc::new(AtomicUsize::new(0));
    let source_polls = Arc::new(AtomicUsize::new(0));
    let mut items = delays.into_iter().enumerate();
    let gauge = Gauge::default();
    let source = {
        let (pulled, yielded) = (pulled.clone(), yielded.clone());
        let (most_outstanding, source_polls) = (most_outstanding.clone(), source_polls.clone());
        let gauge = gauge.clone();
        stream::poll_fn(move |_| {
            source_polls.fetch_add(1, Ordering::SeqCst);
            // Running plus held is what was pulled and not yet yielded.
            let outstanding = pulled.load(Ordering::SeqCst) - yielded.load(Ordering::SeqCst);
            assert!(outstanding < WINDOW, "source polled with a full window");
            let Some((id, millis)) = items.next() else {
                return Poll::Ready(None);
            };
            pulled.fetch_add(1, Ordering::SeqCst);
            most_outstanding.fetch_max(outstanding + 1, Ordering::SeqCst);
            let guard = gauge.enter();
            Poll::Ready(Some(async move {
                sleep(Duration::from_millis(millis)).await;
                drop(guard);
                id
            }))
        })
    };
    let mut buffer = source.ordered_buffer(8).window(WINDOW);
    let mut outputs = Vec::new();
    while let Some(id) = buffer.next().await {
        yielded.fetch_add(1, Ordering::SeqCst);
        outputs.push(id);
    }
    assert_eq!(outputs, (0..n).collect::<Vec<_>>());
    assert_eq!(
        most_outstanding.load(Ordering::SeqCst),
        WINDOW,
        "the window fills behind a slow head"
    );
    assert_eq!(gauge.max(), 8, "at most 8 running");
    assert_eq!(pulled.load(Ordering::SeqCst), n);
    assert_eq!(
        source_polls.load(Ordering::SeqCst),
        n + 1,
        "polled once per item and once to see its end, never in vain"
    );
}

#[test]
fn the_source_is_not_polled_while_the_window_is_full() {
    // The head never finishes on its own; everything behind it is ready at once.
    let head = Gate::new(0);
    let futures = std::iter::once(head.0).chain((1..100).map(|id| Gate::ready(id).0));
    let (source, counts) = CountingSource::new(futures);
    let mut buffer = source.ordered_buffer(2).window(4);

    assert_eq!(settle(&mut buffer), []);
    assert_eq!(counts.pulled(), 4, "the window holds 4");
    assert_eq!(buffer.size_hint(), (100, Some(100)));
    let polls = counts.polls();
    assert_eq!(polls, 4, "the source was polled only when there was room");

    // More polls, with nothing woken: the adapter neither pulls nor spins.
    let (waker, wakes) = counting_waker();
    for _ in 0..10 {
        assert_eq!(poll_with(&mut buffer, &waker), Poll::Pending);
    }
    assert_eq!(counts.polls(), polls);
    assert_eq!(
        wakes.count(),
        0,
        "a full window is not a reason to wake the task"
    );

    head.1.open();
    assert_eq!(settle(&mut buffer), (0..100).collect::<Vec<_>>());
    assert_eq!(counts.pulled(), 100);
    assert_eq!(counts.polls(), 101, "one more poll to see the end");
}

/// A stuck head, then `n - 1` futures that finish at once with outputs counted by `outputs`.
fn stuck_head(
    n: usize,
    outputs: &Gauge,
) -> (
    impl Stream<Item = impl Future<Output = Option<Counted>>> + Unpin,
    Arc<support::SourceCounts>,
) {
    let outputs = outputs.clone();
    let (source, counts) = CountingSource::new(0..n);
    let source = source.map(move |id| {
        let counted = Counted::new(id, &outputs);
        async move {
            if id == 0 {
                std::future::pending::<()>().await;
            }
            Some(counted)
        }
    });
    (source, counts)
}

#[test]
fn a_stuck_head_without_a_window_holds_every_output() {
    // The documented trade-off: nothing bounds the outputs held behind a stuck head.
    let n = if cfg!(miri) { 40 } else { 1_000 };
    let outputs = Gauge::default();
    let (source, counts) = stuck_head(n, &outputs);
    let mut buffer = source.ordered_buffer(4);
    assert!(settle(&mut buffer).is_empty());
    assert_eq!(counts.pulled(), n, "the whole source was pulled");
    assert_eq!(
        outputs.now(),
        n,
        "every output is alive: n - 1 held, one never made"
    );
    assert_eq!(buffer.size_hint(), (n, Some(n)));
}

#[test]
fn a_stuck_head_with_window_8_pulls_at_most_8_items() {
    let n = if cfg!(miri) { 40 } else { 1_000 };
    let outputs = Gauge::default();
    let (source, counts) = stuck_head(n, &outputs);
    let mut buffer = source.ordered_buffer(4).window(8);
    assert!(settle(&mut buffer).is_empty());
    assert_eq!(counts.pulled(), 8);
    assert_eq!(outputs.total(), 8);
    assert_eq!(buffer.size_hint(), (n, Some(n)));
    drop(buffer);
    assert_eq!(outputs.now(), 0);
}

#[test]
fn a_window_smaller_than_the_concurrency_lowers_it() {
    let (futures, states) = gates(10);
    let (source, counts) = CountingSource::new(futures);
    let mut buffer = source.ordered_buffer(8).window(3);
    assert!(settle(&mut buffer).is_empty());
    assert_eq!(counts.pulled(), 3);
    assert_eq!(states.iter().filter(|state| state.polls() > 0).count(), 3);
    for state in &states {
        state.open();
    }
    assert_eq!(settle(&mut buffer), (0..10).collect::<Vec<_>>());
}

#[test]
#[should_panic(expected = "ordered_buffer: window must be greater than 0")]
fn window_0_panics() {
    let _ = stream::iter([std::future::ready(1)])
        .ordered_buffer(2)
        .window(0);
}

/// When each future was pulled from the source and first polled, relative to `start`.
#[derive(Debug, Default, Clone)]
struct Timeline {
    pulled: Arc<Mutex<Vec<Duration>>>,
    started: Arc<Mutex<Vec<(usize, Duration)>>>,
}

impl Timeline {
    fn source(
        &self,
        delays: Vec<u64>,
        start: Instant,
    ) -> impl Stream<Item = impl Future<Output = usize>> + Unpin {
        let this = self.clone();
        stream::iter(delays.into_iter().enumerate()).map(move |(id, millis)| {
            this.pulled.lock().unwrap().push(start.elapsed());
            let started = this.started.clone();
            async move {
                started.lock().unwrap().push((id, start.elapsed()));
                sleep(Duration::from_millis(millis)).await;
                id
            }
        })
    }

    fn take(&self) -> (Vec<Duration>, Vec<(usize, Duration)>) {
        let mut started = std::mem::take(&mut *self.started.lock().unwrap());
        started.sort_unstable();
        (std::mem::take(&mut *self.pulled.lock().unwrap()), started)
    }
}

#[tokio::test(start_paused = true)]
#[cfg_attr(miri, ignore)]
async fn window_of_concurrency_is_futures_buffered() {
    for (n, concurrency, seed) in [(200, 4, 1), (1_000, 10, 2), (500, 50, 3)] {
        let mut delays = random(n, 12, seed);
        // A slow head, and a few slow ones after it.
        delays[0] = 100;
        for delay in delays.iter_mut().step_by(37) {
            *delay += 40;
        }
        let timeline = Timeline::default();

        let start = Instant::now();
        let ours: Vec<usize> = timeline
            .source(delays.clone(), start)
            .ordered_buffer(concurrency)
            .window(concurrency)
            .collect()
            .await;
        let ours_time = start.elapsed();
        let ours_timeline = timeline.take();

        let start = Instant::now();
        let theirs: Vec<usize> = timeline
            .source(delays, start)
            .buffered(concurrency)
            .collect()
            .await;
        let theirs_time = start.elapsed();
        let theirs_timeline = timeline.take();

        assert_eq!(ours, theirs);
        assert_eq!(
            ours_time, theirs_time,
            "n = {n}, concurrency = {concurrency}"
        );
        assert_eq!(ours_timeline.0, theirs_timeline.0, "same pull times");
        assert_eq!(ours_timeline.1, theirs_timeline.1, "same start times");
    }
}
