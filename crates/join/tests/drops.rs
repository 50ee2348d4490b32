//! Drop accounting: whenever a join is dropped (cancelled), every future and every output,
//! finished, kept, returned or never produced, is dropped exactly once.

mod probe;

use std::task::Poll;
use std::time::Duration;

use pinfold_join::{join_all, try_join_all};
use probe::{
    DropFlag, DropLog, XorShift, assert_probes_dropped_once, flags, is_set, poll_once, probes,
};

/// How many random scripts each test runs.
const SEEDS: u64 = if cfg!(miri) { 25 } else { 1_000 };

/// What a script does between two polls: finish (open and wake) some probes, and open some
/// without waking them (ready, but not polled until woken).
fn advance(
    rng: &mut XorShift,
    order: &[usize],
    next: &mut usize,
    states: &[std::sync::Arc<probe::ProbeState>],
) {
    for _ in 0..rng.below(4) {
        let Some(&i) = order.get(*next) else { return };
        *next += 1;
        if rng.below(4) == 0 {
            states[i].open();
        } else {
            states[i].finish();
        }
    }
}

#[test]
fn join_all_cancelled_at_random_points_drops_everything_exactly_once() {
    for seed in 1..=SEEDS {
        let mut rng = XorShift::new(seed);
        let n = rng.below(40);
        let log = DropLog::new(n);
        let (futures, states) = probes(n, |i| log.tracked(i));
        let mut join = join_all(futures);
        let order = rng.permutation(n);
        let mut next = 0;
        let polls = rng.below(n + 3);
        for _ in 0..polls {
            if let Poll::Ready(outputs) = poll_once(&mut join) {
                let ids: Vec<usize> = outputs.iter().map(probe::Tracked::id).collect();
                assert_eq!(ids, (0..n).collect::<Vec<_>>(), "seed {seed}");
                // Every future went before the outputs came out.
                assert_probes_dropped_once(&states);
                break;
            }
            advance(&mut rng, &order, &mut next, &states);
        }
        for (i, state) in states.iter().enumerate() {
            assert!(state.drops() <= 1, "seed {seed}: future {i} dropped twice");
            assert!(log.drops(i) <= 1, "seed {seed}: output {i} dropped twice");
        }
        drop(join);
        assert_probes_dropped_once(&states);
        log.assert_each_dropped_once("output");
    }
}

#[test]
fn try_join_all_cancelled_at_random_points_drops_everything_exactly_once() {
    for seed in 1..=SEEDS {
        let mut rng = XorShift::new(seed);
        let n = rng.below(40);
        // About half the scripts have one failing future.
        let err = rng.below(2 * n + 1);
        let log = DropLog::new(n);
        let (futures, states) = probes(n, |i| {
            if i == err {
                Err(log.tracked(i))
            } else {
                Ok(log.tracked(i))
            }
        });
        let mut join = try_join_all(futures);
        let order = rng.permutation(n);
        let mut next = 0;
        let polls = rng.below(n + 3);
        for _ in 0..polls {
            match poll_once(&mut join) {
                Poll::Ready(Ok(values)) => {
                    assert!(err >= n, "seed {seed}: Ok despite a failing future");
                    assert_eq!(values.len(), n);
                    assert_probes_dropped_once(&states);
                    break;
                }
                Poll::Ready(Err(error)) => {
                    assert_eq!(error.id(), err, "seed {seed}");
                    // Everything else went before the error came out.
                    assert_probes_dropped_once(&states);
                    for i in (0..n).filter(|&i| i != err) {
                        assert_eq!(log.drops(i), 1, "seed {seed}: value {i} not dropped");
                    }
                    break;
                }
                Poll::Pending => advance(&mut rng, &order, &mut next, &states),
            }
        }
        for (i, state) in states.iter().enumerate() {
            assert!(state.drops() <= 1, "seed {seed}: future {i} dropped twice");
            assert!(log.drops(i) <= 1, "seed {seed}: output {i} dropped twice");
        }
        drop(join);
        assert_probes_dropped_once(&states);
        log.assert_each_dropped_once("output");
    }
}

#[tokio::test(start_paused = true)]
#[cfg_attr(miri, ignore)]
async fn join_all_cancelled_by_a_timeout_drops_everything_exactly_once() {
    for seed in 1..=50 {
        let mut rng = XorShift::new(seed);
        let n = 1 + rng.below(200);
        let log = DropLog::new(n);
        let dropped = flags(n);
        let futures: Vec<_> = (0..n)
            .map(|i| {
                let flag = DropFlag(dropped[i].clone());
                let output = log.tracked(i);
                let delay = Duration::from_millis(rng.below(100) as u64 + 1);
                async move {
                    let _flag = flag;
                    tokio::time::sleep(delay).await;
                    output
                }
            })
            .collect();
        let deadline = Duration::from_millis(rng.below(110) as u64);
        let outputs = tokio::time::timeout(deadline, join_all(futures)).await;
        if let Ok(outputs) = &outputs {
            assert_eq!(outputs.len(), n);
        }
        drop(outputs);
        assert!(
            dropped.iter().all(|f| is_set(f)),
            "seed {seed}: a future leaked"
        );
        log.assert_each_dropped_once("output");
    }
}
