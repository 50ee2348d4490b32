//! Sets, merges and any stream driven while their consumer works (`driven`, then
//! `for_each_driven` or `drive_while`), in tokio's paused virtual time, where elapsed times are
//! exact and may be asserted: the scenarios of futures-rs issue #2387 (titled "Footgun lurking
//! in FuturesUnordered"), for the sets it names.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use futures_core::{FusedStream, Stream};
use futures_util::{StreamExt, stream};
use pinfold_buffer::{
    BufferExt, Driven, FuturesOrdered, FuturesOrderedBounded, ProgressStream, ProgressStreamExt,
};
use pinfold_unordered::{FuturesUnordered, FuturesUnorderedBounded};
use tokio::sync::Mutex;
use tokio::time::{Instant, sleep, timeout};

type Job = Pin<Box<dyn Future<Output = u64> + Send>>;

/// Future `id` takes `3 (id + 1)` sleeps of 10 ms in a row: it needs a poll every 10 ms to
/// finish at `30 (id + 1)` ms.
fn in_steps(id: u64) -> Job {
    Box::pin(async move {
        for _ in 0..3 * (id + 1) {
            sleep(Duration::from_millis(10)).await;
        }
        id
    })
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap()
}

/// Four futures of 30 to 120 ms, a consumer of 30 ms an item: driven, each output is ready
/// when the consumer is (30, 60, 90, 120 ms) and the whole takes 150 ms, the longest future
/// plus one item's work; taken with `next` alone, the futures stall while the consumer works.
fn driven_then_undriven<S>(make: impl Fn() -> S) -> (Duration, Duration)
where
    S: Stream<Item = u64> + Unpin,
{
    runtime().block_on(async {
        let start = Instant::now();
        let mut seen = Vec::new();
        make()
            .driven(4)
            .for_each_driven(|id| {
                seen.push(id);
                sleep(Duration::from_millis(30))
            })
            .await;
        let driven = start.elapsed();
        assert_eq!(seen, [0, 1, 2, 3]);

        let start = Instant::now();
        let mut set = make();
        while let Some(_id) = set.next().await {
            sleep(Duration::from_millis(30)).await;
        }
        (driven, start.elapsed())
    })
}

#[test]
fn a_driven_set_finishes_in_the_longest_future_plus_one_item_of_work() {
    let (driven, undriven) =
        driven_then_undriven(|| (0..4).map(in_steps).collect::<FuturesUnordered<_>>());
    assert_eq!(driven, Duration::from_millis(150));
    // Taken with `next` alone: the sum of the futures' 120 ms and the consumer's 120 ms.
    assert_eq!(undriven, Duration::from_millis(240));
}

#[test]
fn a_driven_bounded_set_finishes_in_the_longest_future_plus_one_item_of_work() {
    let (driven, undriven) = driven_then_undriven(|| {
        let mut set = FuturesUnorderedBounded::new(4);
        for id in 0..4 {
            set.push(in_steps(id));
        }
        set
    });
    assert_eq!(driven, Duration::from_millis(150));
    // Taken with `next` alone: the sum of the futures' 120 ms and the consumer's 120 ms.
    assert_eq!(undriven, Duration::from_millis(240));
}

#[test]
fn a_driven_merge_finishes_in_the_longest_stream_plus_one_item_of_work() {
    let (driven, _) =
        driven_then_undriven(|| pinfold_merge::merge((0..4).map(|id| stream::once(in_steps(id)))));
    assert_eq!(driven, Duration::from_millis(150));
}

/// The consumer waits for a lock that a future in the set holds until its next poll: driven,
/// the set lets it go; taken with `next` alone, nothing polls that future and the consumer
/// waits for ever (here: until the timeout).
#[test]
fn a_consumer_waiting_on_a_lock_a_future_of_the_set_holds_completes_when_driven() {
    runtime().block_on(async {
        let make = |lock: &Arc<Mutex<u64>>| {
            let mut set: FuturesUnordered<Job> = FuturesUnordered::new();
            let held = lock.clone();
            set.push(Box::pin(async move {
                let mut guard = held.lock().await;
                sleep(Duration::from_millis(10)).await;
                *guard += 1;
                0
            }));
            set.push(Box::pin(async { 1 }));
            set
        };

        let lock = Arc::new(Mutex::new(0));
        let driven = make(&lock).driven(2).for_each_driven(|_| {
            let lock = lock.clone();
            async move { *lock.lock().await += 10 }
        });
        timeout(Duration::from_secs(60), driven)
            .await
            .expect("a driven set lets the lock go");
        assert_eq!(*lock.lock().await, 21);

        let lock = Arc::new(Mutex::new(0));
        let mut set = make(&lock);
        let undriven = async {
            while let Some(_id) = set.next().await {
                *lock.lock().await += 10;
            }
        };
        assert!(
            timeout(Duration::from_secs(60), undriven).await.is_err(),
            "without driving, the consumer waits on a lock nobody lets go"
        );
    });
}

/// `ready` futures ready at once, behind one that takes `lock` and holds it across a sleep:
/// pushed in that order, so the first poll of the set leaves the lock taken.
fn a_lock_holder_and_ready_futures(lock: &Arc<Mutex<u64>>, ready: u64) -> Vec<Job> {
    let held = lock.clone();
    let holder: Job = Box::pin(async move {
        let mut guard = held.lock().await;
        sleep(Duration::from_millis(10)).await;
        *guard += 1;
        0
    });
    let mut jobs = vec![holder];
    jobs.extend((1..=ready).map(|id| -> Job { Box::pin(async move { id }) }));
    jobs
}

/// Drives the set `drive` makes of a lock holder and three ready futures with a consumer that
/// takes the lock for each output: more outputs are ready than the limit of 1 the set is
/// driven with, and the set must still poll the holder, or the consumer waits for ever.
fn a_consumer_waits_on_the_lock_with_more_outputs_ready_than_the_limit<S>(
    drive: impl FnOnce(Vec<Job>) -> Driven<S>,
) where
    S: Stream<Item = u64>,
{
    runtime().block_on(async {
        let lock = Arc::new(Mutex::new(0));
        let mut seen = Vec::new();
        let driven = drive(a_lock_holder_and_ready_futures(&lock, 3)).for_each_driven(|id| {
            seen.push(id);
            let lock = lock.clone();
            async move { *lock.lock().await += 10 }
        });
        timeout(Duration::from_secs(60), driven)
            .await
            .expect("the set goes on polling the lock holder at its limit");
        seen.sort();
        assert_eq!(seen, [0, 1, 2, 3]);
        assert_eq!(*lock.lock().await, 41);
    });
}

#[test]
fn a_set_driven_at_its_limit_still_polls_a_future_holding_the_consumer_s_lock() {
    a_consumer_waits_on_the_lock_with_more_outputs_ready_than_the_limit(|jobs| {
        jobs.into_iter().collect::<FuturesUnordered<_>>().driven(1)
    });
}

#[test]
fn a_bounded_set_driven_at_its_limit_still_polls_a_future_holding_the_consumer_s_lock() {
    a_consumer_waits_on_the_lock_with_more_outputs_ready_than_the_limit(|jobs| {
        let mut set = FuturesUnorderedBounded::new(jobs.len());
        for job in jobs {
            set.push(job);
        }
        set.driven(1)
    });
}

#[test]
fn an_ordered_set_driven_at_its_limit_still_polls_a_future_holding_the_consumer_s_lock() {
    a_consumer_waits_on_the_lock_with_more_outputs_ready_than_the_limit(|jobs| {
        // Pushed to the front, the holder comes last: the three ready outputs come first.
        let mut set = FuturesOrdered::new();
        for job in jobs {
            set.push_front(job);
        }
        set.driven(1)
    });
    a_consumer_waits_on_the_lock_with_more_outputs_ready_than_the_limit(|jobs| {
        let mut set = FuturesOrderedBounded::new(jobs.len());
        for job in jobs {
            set.push_front(job);
        }
        set.driven(1)
    });
}

/// An always-ready stream driven at its limit: a merge of them holds exactly the limit, and
/// the streams are not polled again until an item is taken.
#[test]
fn a_merge_driven_at_its_limit_holds_the_limit_and_polls_nothing_more() {
    let mut cx = Context::from_waker(futures_task::noop_waker_ref());
    let counting = |next| Counting {
        next,
        end: u64::MAX,
        polls: 0,
    };
    let mut driven = pinfold_merge::merge([counting(0), counting(1_000)]).driven(3);
    for _ in 0..3 {
        assert_eq!(
            Pin::new(&mut driven).poll_progress(&mut cx),
            Poll::Ready(()),
            "at its limit, nothing more moves until an item is taken"
        );
        assert_eq!(driven.held(), 3);
        let polls: usize = driven.get_ref().iter().map(|stream| stream.polls).sum();
        assert_eq!(polls, 3, "no stream polled past the limit");
    }
    assert!(Pin::new(&mut driven).poll_next(&mut cx).is_ready());
    assert_eq!(
        Pin::new(&mut driven).poll_progress(&mut cx),
        Poll::Ready(())
    );
    assert_eq!(driven.held(), 3, "one item taken, one more taken ahead");
}

/// A stream that counts its polls and is ready with its next item every time.
struct Counting {
    next: u64,
    end: u64,
    polls: usize,
}

impl Stream for Counting {
    type Item = u64;

    fn poll_next(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<u64>> {
        self.polls += 1;
        if self.next == self.end {
            return Poll::Ready(None);
        }
        self.next += 1;
        Poll::Ready(Some(self.next - 1))
    }
}

impl FusedStream for Counting {
    fn is_terminated(&self) -> bool {
        self.next == self.end
    }
}

#[test]
fn driving_holds_at_most_the_limit_and_gives_the_items_in_order() {
    let mut cx = Context::from_waker(futures_task::noop_waker_ref());
    let mut driven = Counting {
        next: 0,
        end: 10,
        polls: 0,
    }
    .driven(3);
    assert_eq!(
        Pin::new(&mut driven).poll_progress(&mut cx),
        Poll::Ready(())
    );
    assert_eq!(driven.held(), 3);
    assert_eq!(driven.get_ref().polls, 3, "no item taken past the limit");
    assert_eq!(
        Pin::new(&mut driven).poll_progress(&mut cx),
        Poll::Ready(()),
        "a full hold polls nothing"
    );
    assert_eq!(driven.get_ref().polls, 3);
    assert_eq!(driven.size_hint().0, 3);
    let items: Vec<u64> = futures_executor::block_on(driven.by_ref().collect());
    assert_eq!(items, (0..10).collect::<Vec<_>>());
    assert!(driven.is_terminated());
}

#[test]
fn the_end_comes_after_the_items_held() {
    let mut cx = Context::from_waker(futures_task::noop_waker_ref());
    let mut driven = stream::iter([1, 2]).fuse().driven(5);
    assert_eq!(
        Pin::new(&mut driven).poll_progress(&mut cx),
        Poll::Ready(())
    );
    assert_eq!(driven.held(), 2);
    assert!(!driven.is_terminated(), "items are held");
    let debug = format!("{driven:?}");
    for part in [
        "Driven",
        "held: 2",
        "limit: 5",
        "hold: Limit",
        "ended: true",
    ] {
        assert!(debug.contains(part), "{part} in {debug}");
    }
    assert_eq!(
        Pin::new(&mut driven).poll_next(&mut cx),
        Poll::Ready(Some(1))
    );
    assert_eq!(
        Pin::new(&mut driven).poll_next(&mut cx),
        Poll::Ready(Some(2))
    );
    assert_eq!(Pin::new(&mut driven).poll_next(&mut cx), Poll::Ready(None));
    assert!(driven.is_terminated());
}

/// Drives `driven` once with a no-op waker.
fn progress<S: Stream + Unpin>(driven: &mut Driven<S>) -> Poll<()> {
    let mut cx = Context::from_waker(futures_task::noop_waker_ref());
    Pin::new(driven).poll_progress(&mut cx)
}

/// Takes the next item with a no-op waker.
fn next_now<S: Stream + Unpin>(driven: &mut Driven<S>) -> Poll<Option<S::Item>> {
    let mut cx = Context::from_waker(futures_task::noop_waker_ref());
    Pin::new(driven).poll_next(&mut cx)
}

#[test]
fn a_set_driven_while_empty_runs_a_future_pushed_through_get_mut() {
    let mut driven = FuturesUnordered::new().driven(2);
    assert_eq!(progress(&mut driven), Poll::Ready(()), "empty: it ended");
    driven.get_mut().push(std::future::ready(7));
    assert_eq!(next_now(&mut driven), Poll::Ready(Some(7)));
    assert_eq!(next_now(&mut driven), Poll::Ready(None));
    assert!(driven.is_terminated());

    // Through `get_pin_mut`, and the end taken by `next` before the push.
    assert_eq!(progress(&mut driven), Poll::Ready(()));
    assert_eq!(next_now(&mut driven), Poll::Ready(None));
    Pin::new(&mut driven)
        .get_pin_mut()
        .get_mut()
        .push(std::future::ready(8));
    assert!(!driven.is_terminated());
    assert_eq!(progress(&mut driven), Poll::Ready(()));
    assert_eq!(driven.held(), 1);
    assert!(!driven.is_terminated(), "an output is held");
    assert_eq!(next_now(&mut driven), Poll::Ready(Some(8)));
    assert_eq!(next_now(&mut driven), Poll::Ready(None));
}

#[test]
fn a_driven_set_is_not_terminated_while_it_holds_a_future() {
    let mut driven = FuturesUnorderedBounded::new(2).driven(1);
    assert_eq!(progress(&mut driven), Poll::Ready(()));
    let (tx, rx) = futures_channel::oneshot::channel::<u32>();
    driven.get_mut().push(rx);
    assert!(!driven.is_terminated());
    assert_eq!(progress(&mut driven), Poll::Pending);
    assert!(!driven.is_terminated(), "the future runs");
    assert_eq!(next_now(&mut driven), Poll::Pending);
    assert!(!driven.is_terminated());
    tx.send(3).unwrap();
    assert_eq!(progress(&mut driven), Poll::Ready(()));
    assert!(!driven.is_terminated(), "its output is held");
    assert_eq!(next_now(&mut driven), Poll::Ready(Some(Ok(3))));
    assert_eq!(next_now(&mut driven), Poll::Ready(None));
    assert!(driven.is_terminated());
}

/// Emptied, refilled and emptied again, driven all along: every round's outputs come, then
/// its end, once.
#[test]
fn a_driven_set_and_merge_go_through_empty_refill_empty_cycles() {
    let mut set = FuturesUnordered::new().driven(2);
    let mut merge = pinfold_merge::Merge::new().driven(2);
    for round in 0..4u64 {
        for _ in 0..2 {
            assert_eq!(progress(&mut set), Poll::Ready(()));
            assert_eq!(progress(&mut merge), Poll::Ready(()));
        }
        assert!(
            set.is_terminated() && merge.is_terminated(),
            "empty, nothing held"
        );
        assert_eq!(next_now(&mut set), Poll::Ready(None));
        assert_eq!(next_now(&mut merge), Poll::Ready(None));
        assert!(set.is_terminated() && merge.is_terminated());

        for n in 0..3 {
            set.get_mut().push(std::future::ready(round * 10 + n));
            merge
                .get_mut()
                .push(stream::iter([round * 10 + n, round * 10 + n]));
        }
        assert!(!set.is_terminated() && !merge.is_terminated());
        assert_eq!(progress(&mut set), Poll::Ready(()));
        assert_eq!(progress(&mut merge), Poll::Ready(()));
        assert_eq!(merge.held(), 2, "a merge keeps to its limit");
        let mut outputs: Vec<u64> = futures_executor::block_on(set.by_ref().collect());
        outputs.sort();
        assert_eq!(outputs, [0, 1, 2].map(|n| round * 10 + n));
        let mut items: Vec<u64> = futures_executor::block_on(merge.by_ref().collect());
        items.sort();
        assert_eq!(items, [0, 0, 1, 1, 2, 2].map(|n| round * 10 + n));
        assert!(set.is_terminated() && merge.is_terminated());
    }
}

#[test]
#[should_panic(expected = "driven: limit must be greater than 0")]
fn a_limit_of_zero_panics_with_a_message() {
    let _ = stream::iter([1]).driven(0);
}
