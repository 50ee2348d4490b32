//! Fairness: one `poll_next` polls each future at most once, and yields to the executor
//! (waking its task) instead of spinning on futures that wake themselves, without starving any
//! (the contract is `pinfold_testkit::contract::fairness`); and across groups: each future is
//! polled once per round whatever its group, from one queue for all groups.

use std::future::{Ready, ready};
use std::task::Poll;

use futures_util::future::Either;
use pinfold_testkit::probe::Spinner;
use pinfold_testkit::stream::{poll_once, poll_with};
use pinfold_testkit::waker::counting_waker;
use pinfold_unordered::{FuturesUnordered, Key};

pinfold_testkit::set_under_test!(Unordered: FuturesUnordered::with_capacity, Key);
pinfold_testkit::contract_tests!(Unordered: fairness);

#[test]
fn one_poll_polls_each_future_at_most_once_across_groups() {
    // 200 futures that wake themselves on every poll: groups of 32, 32, 64 and 128.
    let n = 200;
    let (spinners, polls): (Vec<_>, Vec<_>) = (0..n).map(Spinner::forever).unzip();
    let mut set: FuturesUnordered<Spinner> = spinners.into_iter().collect();
    assert_eq!(set.capacity(), 256);
    let (waker, counter) = counting_waker();
    // Under Miri a few calls are enough: each call polls all 200 futures, whatever their group.
    let calls = if cfg!(miri) { 6 } else { 600 };
    for call in 0..calls {
        let before: Vec<usize> = polls
            .iter()
            .map(|p| p.load(std::sync::atomic::Ordering::SeqCst))
            .collect();
        let wakes = counter.count();
        assert!(poll_with(&mut set, &waker).is_pending());
        assert!(
            counter.count() > wakes,
            "call {call} returned Pending without waking its task"
        );
        let after: Vec<usize> = polls
            .iter()
            .map(|p| p.load(std::sync::atomic::Ordering::SeqCst))
            .collect();
        for id in 0..n {
            assert!(
                after[id] - before[id] <= 1,
                "call {call} polled spinner {id} twice"
            );
        }
        // Every future, whatever its group, is polled once per round: the counts never
        // differ by more than one.
        let (min, max) = (after.iter().min().unwrap(), after.iter().max().unwrap());
        assert!(
            max - min <= 1,
            "call {call}: polls range from {min} to {max}"
        );
    }
    // Self-wakes do not cut a call short: each call polled every future once.
    for p in &polls {
        assert_eq!(p.load(std::sync::atomic::Ordering::SeqCst), calls);
    }
}

/// A set of futures looping on `yield_now` (tokio's, which defers its wake to the runtime, and
/// one that wakes itself during its poll) lets the other tasks of a current-thread runtime run
/// while it drains.
#[test]
#[cfg_attr(
    miri,
    ignore = "tokio's runtime under Miri is slow; the rule is the arena's"
)]
fn a_set_of_yield_loops_lets_another_task_of_a_current_thread_runtime_run() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

    use futures_util::StreamExt;

    const YIELDS: usize = 50;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let ticks = Arc::new(AtomicUsize::new(0));
    let done = Arc::new(AtomicBool::new(false));
    runtime.block_on(async {
        let ticker = tokio::spawn({
            let (ticks, done) = (ticks.clone(), done.clone());
            async move {
                while !done.load(Ordering::SeqCst) {
                    ticks.fetch_add(1, Ordering::SeqCst);
                    tokio::task::yield_now().await;
                }
            }
        });
        let mut set = FuturesUnordered::new();
        for n in 0..4 {
            set.push(Either::Left(async move {
                for _ in 0..YIELDS {
                    tokio::task::yield_now().await;
                }
                n
            }));
            // Wakes itself `YIELDS` times during its own poll, then gives its output.
            let (spinner, _) = Spinner::new(10 + n, YIELDS);
            set.push(Either::Right(spinner));
        }
        let mut outputs: Vec<usize> = set.collect().await;
        done.store(true, Ordering::SeqCst);
        ticker.await.unwrap();
        outputs.sort_unstable();
        assert_eq!(outputs, [0, 1, 2, 3, 10, 11, 12, 13]);
    });
    // The set needed at least `YIELDS` calls; the ticker ran between them.
    let ticks = ticks.load(Ordering::SeqCst);
    assert!(ticks >= YIELDS, "the other task ran {ticks} times");
}

#[test]
fn a_future_that_always_wakes_itself_starves_no_other() {
    // 99 ready futures, and one that never finishes, in the largest group.
    let mut set = FuturesUnordered::new();
    for n in 0..99 {
        set.push(Either::Left(ready(n)));
    }
    set.push(Either::Right(Spinner::forever(99).0));
    let mut outputs = Vec::new();
    for _ in 0..300 {
        if let Poll::Ready(Some(out)) = poll_once(&mut set) {
            outputs.push(out);
        }
    }
    outputs.sort_unstable();
    assert_eq!(outputs, (0..99).collect::<Vec<_>>());
    assert_eq!(set.len(), 1);
}

#[test]
fn outputs_come_in_push_order_across_groups() {
    // Groups of 32 (ids 0..32), 32 (32..64) and 64 (64..128), every future ready: the groups
    // share one queue, so the outputs come in push order, whatever the group.
    let mut set: FuturesUnordered<Ready<usize>> = (0..128).map(ready).collect();
    assert_eq!(set.capacity(), 128);
    let mut outputs = Vec::new();
    while let Poll::Ready(Some(out)) = poll_once(&mut set) {
        outputs.push(out);
    }
    assert_eq!(outputs, (0..128).collect::<Vec<_>>());
}

#[test]
fn a_group_refilled_as_it_gives_outputs_does_not_starve_the_next() {
    // Two groups of 32, every future ready. Each output of the first group is replaced at once
    // by a new ready future, which goes into the slot just freed: the first group always has
    // queued futures, but each new one is queued behind the second group's, which come first.
    let mut set: FuturesUnordered<Ready<usize>> = (0..64).map(ready).collect();
    assert_eq!(set.capacity(), 64);
    let mut outputs = Vec::new();
    let mut next = 1000;
    for _ in 0..96 {
        match poll_once(&mut set) {
            Poll::Ready(Some(out)) => {
                outputs.push(out);
                if !(32..1000).contains(&out) {
                    set.push(ready(next));
                    next += 1;
                }
            }
            other => panic!("expected an output, got {other:?}"),
        }
    }
    assert_eq!(
        set.capacity(),
        64,
        "the refills reused the first group's slots"
    );
    let expected: Vec<usize> = (0..32).chain(32..64).chain(1000..1032).collect();
    assert_eq!(outputs, expected);
}

/// The same contract on the bounded set.
mod bounded {
    use pinfold_unordered::{FuturesUnorderedBounded, Key};

    pinfold_testkit::set_under_test!(Bounded: FuturesUnorderedBounded::new, Key);
    pinfold_testkit::contract_tests!(Bounded: fairness);
}
