//! Outputs come back in input order whatever order the futures finish in, for every kind of
//! input iterator, including empty ones and ones whose `size_hint` is wrong.

mod probe;

use std::future::{Future, Ready, ready};
use std::task::Poll;
use std::time::Duration;

use futures_core::future::FusedFuture;
use pinfold_join::{JoinAll, TryJoinAll, join_all, try_join_all};
use probe::{XorShift, poll_once, probes};
use tokio::time::{Instant, sleep};

/// `n` pseudo-random durations of up to a second, in whole milliseconds.
fn random_delays(seed: u64, n: usize) -> Vec<Duration> {
    let mut rng = XorShift::new(seed);
    (0..n)
        .map(|_| Duration::from_millis(rng.below(1_000) as u64 + 1))
        .collect()
}

#[tokio::test(start_paused = true)]
#[cfg_attr(miri, ignore)]
async fn outputs_in_input_order_for_random_completion_orders() {
    for seed in 1..=5 {
        let delays = random_delays(seed, 1_000);
        let start = Instant::now();
        let outputs = join_all(delays.iter().enumerate().map(|(i, &delay)| async move {
            sleep(delay).await;
            i
        }))
        .await;
        assert_eq!(outputs, (0..1_000).collect::<Vec<_>>(), "seed {seed}");
        // They ran concurrently: the join took as long as the slowest, in virtual time.
        assert_eq!(
            start.elapsed(),
            *delays.iter().max().unwrap(),
            "seed {seed}"
        );
    }
}

#[tokio::test(start_paused = true)]
#[cfg_attr(miri, ignore)]
async fn try_join_all_ok_values_in_input_order_for_random_completion_orders() {
    for seed in 11..=15 {
        let delays = random_delays(seed, 1_000);
        let outputs = try_join_all(delays.iter().enumerate().map(|(i, &delay)| async move {
            sleep(delay).await;
            Ok::<_, String>(i * 3)
        }))
        .await;
        assert_eq!(
            outputs,
            Ok((0..1_000).map(|i| i * 3).collect::<Vec<_>>()),
            "seed {seed}"
        );
    }
}

#[test]
fn outputs_in_input_order_when_futures_finish_in_random_order() {
    let n = if cfg!(miri) { 60 } else { 1_000 };
    for seed in 1..=4 {
        let mut rng = XorShift::new(seed);
        let (futures, states) = probes(n, |i| i);
        let mut join = join_all(futures);
        assert!(poll_once(&mut join).is_pending());
        let order = rng.permutation(n);
        let mut finished = 0;
        while finished < n {
            // Finish a random batch, then poll.
            let batch = 1 + rng.below(n / 10 + 1);
            for &i in order.iter().skip(finished).take(batch) {
                states[i].finish();
            }
            finished = (finished + batch).min(n);
            let polled = poll_once(&mut join);
            if finished < n {
                assert!(
                    polled.is_pending(),
                    "ready with {} unfinished",
                    n - finished
                );
            } else {
                assert_eq!(
                    polled,
                    Poll::Ready((0..n).collect::<Vec<_>>()),
                    "seed {seed}"
                );
            }
        }
        assert!(join.is_terminated());
    }
}

#[test]
fn empty_input_is_ready_with_an_empty_vec_on_the_first_poll() {
    let mut join = join_all(Vec::<Ready<u8>>::new());
    assert!(!join.is_terminated());
    assert_eq!(poll_once(&mut join), Poll::Ready(vec![]));
    assert!(join.is_terminated());

    let mut join = try_join_all(Vec::<Ready<Result<u8, ()>>>::new());
    assert_eq!(poll_once(&mut join), Poll::Ready(Ok(vec![])));
    assert!(join.is_terminated());

    // An iterator whose size is not known in advance, that turns out empty.
    let mut join = join_all((0..10).filter(|_| false).map(ready));
    assert_eq!(poll_once(&mut join), Poll::Ready(Vec::<i32>::new()));
}

#[test]
fn ready_futures_complete_on_the_first_poll() {
    let mut join = join_all((0..100).map(ready));
    assert_eq!(
        poll_once(&mut join),
        Poll::Ready((0..100).collect::<Vec<_>>())
    );
}

#[test]
fn iterator_of_unknown_size_keeps_input_order() {
    let (futures, states) = probes(50, |i| i);
    // `filter` has no exact size hint: the futures are counted first.
    let mut join = join_all(futures.into_iter().filter(|_| true));
    assert!(poll_once(&mut join).is_pending());
    for state in states.iter().rev() {
        state.finish();
    }
    assert_eq!(
        poll_once(&mut join),
        Poll::Ready((0..50).collect::<Vec<_>>())
    );
}

/// An iterator that claims an exact size it does not have.
struct Liar<I> {
    inner: I,
    claimed: usize,
}

impl<I: Iterator> Iterator for Liar<I> {
    type Item = I::Item;

    fn next(&mut self) -> Option<I::Item> {
        self.inner.next()
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.claimed, Some(self.claimed))
    }
}

#[test]
fn iterator_yielding_more_than_its_exact_size_hint_loses_nothing() {
    let (futures, states) = probes(10, |i| i);
    let mut join = join_all(Liar {
        inner: futures.into_iter(),
        claimed: 4,
    });
    assert!(poll_once(&mut join).is_pending());
    assert!(
        states.iter().all(|s| s.polls() == 1),
        "every future runs at once"
    );
    for state in states.iter().rev() {
        state.finish();
    }
    assert_eq!(
        poll_once(&mut join),
        Poll::Ready((0..10).collect::<Vec<_>>())
    );
    assert!(states.iter().all(|s| s.polls() == 2 && s.drops() == 1));
    assert_eq!(
        format!("{join:?}"),
        "JoinAll { len: 10, running: 0, terminated: true, .. }"
    );
}

#[test]
fn iterator_yielding_fewer_than_its_exact_size_hint_is_not_asked_again() {
    /// Ends after `n` items, then would yield again if asked (it is not fused).
    struct Restarting {
        next: usize,
        n: usize,
    }
    impl Iterator for Restarting {
        type Item = Ready<usize>;
        fn next(&mut self) -> Option<Ready<usize>> {
            self.next += 1;
            (self.next != self.n + 1).then(|| ready(self.next - 1))
        }
        fn size_hint(&self) -> (usize, Option<usize>) {
            (10, Some(10))
        }
    }
    let mut join = join_all(Restarting { next: 0, n: 3 });
    assert_eq!(poll_once(&mut join), Poll::Ready(vec![0, 1, 2]));
}

#[test]
fn try_join_all_accepts_any_future_of_a_result() {
    async fn parse(s: &str) -> Result<i32, std::num::ParseIntError> {
        s.parse()
    }
    let mut join = Box::pin(try_join_all(["1", "-2", "3"].map(parse)));
    let polled = join.as_mut().poll(&mut std::task::Context::from_waker(
        futures_task::noop_waker_ref(),
    ));
    assert_eq!(polled, Poll::Ready(Ok(vec![1, -2, 3])));
}

#[test]
fn debug_shows_len_running_and_termination() {
    let (futures, states) = probes(3, |i| i);
    let mut join = join_all(futures);
    assert_eq!(
        format!("{join:?}"),
        "JoinAll { len: 3, running: 3, terminated: false, .. }"
    );
    assert!(poll_once(&mut join).is_pending());
    states[1].finish();
    assert!(poll_once(&mut join).is_pending());
    assert_eq!(
        format!("{join:?}"),
        "JoinAll { len: 3, running: 2, terminated: false, .. }"
    );

    let join = try_join_all([ready(Ok::<u8, ()>(1))]);
    assert_eq!(
        format!("{join:?}"),
        "TryJoinAll { len: 1, running: 1, terminated: false, .. }"
    );
}

#[test]
fn joins_are_unpin_and_send_whatever_the_future() {
    fn unpin_and_send<T: Unpin + Send>(_: &T) {}
    // `Probe` is `!Unpin`.
    let (futures, _states) = probes(2, |i| i);
    let join: JoinAll<_> = join_all(futures);
    unpin_and_send(&join);
    let (futures, _states) = probes(2, Ok::<usize, String>);
    let join: TryJoinAll<_> = try_join_all(futures);
    unpin_and_send(&join);
}
