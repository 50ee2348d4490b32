//! Work conservation and the seed workloads of the `fast_ordered_buffer` crate's README, in
//! tokio's paused virtual time, where elapsed times are exact and may be asserted.

mod support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_core::Stream;
use futures_util::{StreamExt, stream};
use pinfold_buffer::{BufferExt, FobStreamExt};
use support::random;
use tokio::time::{Instant, sleep};

/// Futures that sleep `delays[id]` milliseconds and return `id`, recording in `starts` when
/// each was first polled, relative to `start`.
fn sleeps(
    delays: Vec<u64>,
    start: Instant,
    starts: &Arc<Mutex<Vec<Option<Duration>>>>,
) -> impl Stream<Item = impl Future<Output = usize> + Send + use<>> + Send + Unpin + use<> {
    *starts.lock().unwrap() = vec![None; delays.len()];
    let starts = starts.clone();
    stream::iter(delays.into_iter().enumerate()).map(move |(id, millis)| {
        let starts = starts.clone();
        async move {
            starts.lock().unwrap()[id] = Some(start.elapsed());
            sleep(Duration::from_millis(millis)).await;
            id
        }
    })
}

/// Runs `delays` through the adapter `adapt` makes; the outputs, the virtual time taken, and
/// when each future started.
async fn run<S>(
    delays: &[u64],
    adapt: impl FnOnce(std::pin::Pin<Box<dyn Stream<Item = BoxedSleep> + Send>>) -> S,
) -> (Vec<usize>, Duration, Vec<Duration>)
where
    S: Stream<Item = usize>,
{
    let starts = Arc::new(Mutex::new(Vec::new()));
    let start = Instant::now();
    let source = sleeps(delays.to_vec(), start, &starts).map(|fut| Box::pin(fut) as BoxedSleep);
    let outputs: Vec<usize> = adapt(Box::pin(source)).collect().await;
    let elapsed = start.elapsed();
    let starts = starts
        .lock()
        .unwrap()
        .iter()
        .map(|start| start.expect("every future started"))
        .collect();
    (outputs, elapsed, starts)
}

type BoxedSleep = std::pin::Pin<Box<dyn Future<Output = usize> + Send>>;

#[tokio::test(start_paused = true)]
#[cfg_attr(miri, ignore)]
async fn a_slow_head_does_not_hold_up_the_next_futures() {
    // n = 2: the head takes 100 ms, the others 10 ms each.
    let delays = [100, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10];
    let ms = Duration::from_millis;
    let in_order: Vec<usize> = (0..delays.len()).collect();

    let (outputs, elapsed, starts) = run(&delays, |s| s.ordered_buffer(2)).await;
    assert_eq!(outputs, in_order);
    assert_eq!(
        starts[2],
        ms(10),
        "the third future starts when the second ends"
    );
    // Futures 1.. run one after another beside the head: 11 x 10 ms.
    assert_eq!(starts[11], ms(100));
    assert_eq!(elapsed, ms(110));

    let (outputs, elapsed, starts) = run(&delays, |s| s.fast_ordered_buffer(2)).await;
    assert_eq!(outputs, in_order);
    assert_eq!((starts[2], elapsed), (ms(10), ms(110)));

    let (mut outputs, elapsed, starts) = run(&delays, |s| s.unordered_buffer(2)).await;
    outputs.sort_unstable();
    assert_eq!(outputs, in_order);
    assert_eq!((starts[2], elapsed), (ms(10), ms(110)));

    // The head-of-line blocking this avoids: futures' `buffered(2)` starts the third future
    // only once the head is out.
    let (outputs, elapsed, starts) = run(&delays, |s| s.buffered(2)).await;
    assert_eq!(outputs, in_order);
    assert_eq!(starts[2], ms(100));
    assert_eq!(elapsed, ms(150));
}

/// One of the README's workloads: `n` futures with random delays of 0 to 7 ms at
/// `concurrency`. Returns the virtual times of ordered_buffer, unordered_buffer and buffered.
async fn seed_workload(n: usize, concurrency: usize, seed: u64) -> [Duration; 3] {
    let delays = random(n, 7, seed);
    let in_order: Vec<usize> = (0..n).collect();

    let (outputs, ordered, _) = run(&delays, |s| s.ordered_buffer(concurrency)).await;
    assert_eq!(outputs, in_order);
    let (mut outputs, unordered, _) = run(&delays, |s| s.unordered_buffer(concurrency)).await;
    outputs.sort_unstable();
    assert_eq!(outputs, in_order);
    let (outputs, buffered, _) = run(&delays, |s| s.buffered(concurrency)).await;
    assert_eq!(outputs, in_order);

    eprintln!(
        "{n} futures, concurrency {concurrency}: ordered_buffer {ordered:?}, \
         unordered_buffer {unordered:?}, futures buffered {buffered:?}"
    );
    [ordered, unordered, buffered]
}

fn assert_within_one_percent_and_faster_than_buffered(
    [ordered, unordered, buffered]: [Duration; 3],
) {
    assert!(
        ordered.as_nanos() * 100 <= unordered.as_nanos() * 101,
        "ordered_buffer took {ordered:?}, more than 1% over unordered_buffer's {unordered:?}"
    );
    assert!(
        ordered < buffered,
        "ordered_buffer took {ordered:?}, buffered {buffered:?}"
    );
}

#[tokio::test(start_paused = true)]
#[cfg_attr(miri, ignore)]
async fn seed_workload_10k_futures_at_concurrency_50() {
    assert_within_one_percent_and_faster_than_buffered(seed_workload(10_000, 50, 0x10_000).await);
}

#[tokio::test(start_paused = true)]
#[cfg_attr(miri, ignore)]
async fn seed_workload_1k_futures_at_concurrency_10() {
    assert_within_one_percent_and_faster_than_buffered(seed_workload(1_000, 10, 0x1_000).await);
}
