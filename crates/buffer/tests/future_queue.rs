//! `future_queue` and `future_queue_grouped`: the `future-queue` crate's contract (weights
//! within the max weight, clamping, weight 0, groups, start order, which queue is served when a
//! future finishes), its test cases, and the life of the queue (panics, drop, size hints, the
//! end of the stream, sources that wait, many futures of weight 0). Timings are in tokio's
//! paused virtual time, where they are exact.

mod support;

use std::collections::HashMap;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use futures_core::{FusedStream, Stream};
use futures_util::{StreamExt, stream};
use pinfold_buffer::{BufferExt, Limit, ProgressStreamExt};
use pinfold_testkit::rng::XorShift;
use support::{Counted, Gate, Gauge, counting_waker, poll_once, poll_with};
use tokio::time::{Instant, sleep};

type BoxFuture = Pin<Box<dyn Future<Output = usize> + Send>>;

fn ms(millis: u64) -> Duration {
    Duration::from_millis(millis)
}

/// The groups of the workloads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Group {
    A,
    B,
    C,
    D,
}

const GROUPS: [Group; 4] = [Group::A, Group::B, Group::C, Group::D];

/// One future of a workload: its weight and group, how long after the one before it the
/// source gives it, and how long it runs once started.
#[derive(Clone, Copy, Debug)]
struct Job {
    weight: usize,
    group: Option<Group>,
    arrive_ms: u64,
    run_ms: u64,
}

fn job(weight: usize, group: Option<Group>, run_ms: u64) -> Job {
    Job {
        weight,
        group,
        arrive_ms: 0,
        run_ms,
    }
}

/// The limits the futures check themselves against as they start.
#[derive(Clone, Debug)]
struct Limits {
    max: usize,
    groups: HashMap<Group, usize>,
}

/// What the futures saw: the weights running (clamped as the queue clamps them), when each
/// started, and the order they started in.
#[derive(Debug, Default)]
struct Seen {
    running: usize,
    group_running: HashMap<Group, usize>,
    starts: Vec<Option<Duration>>,
    order: Vec<usize>,
}

impl Seen {
    fn start(&mut self, id: usize, job: Job, limits: &Limits, at: Duration) {
        self.running += job.weight.min(limits.max);
        assert!(
            self.running <= limits.max,
            "future {id} started with weight {} running, over the max weight {}",
            self.running,
            limits.max
        );
        if let Some(group) = job.group {
            let max = limits.groups[&group];
            let running = self.group_running.entry(group).or_default();
            *running += job.weight.min(max);
            assert!(
                *running <= max,
                "future {id} started with weight {running} running in group {group:?}, over \
                 its max weight {max}"
            );
        }
        self.starts[id] = Some(at);
        self.order.push(id);
    }

    fn finish(&mut self, job: Job, limits: &Limits) {
        self.running -= job.weight.min(limits.max);
        if let Some(group) = job.group {
            *self.group_running.get_mut(&group).unwrap() -= job.weight.min(limits.groups[&group]);
        }
    }
}

/// The source of a workload: each job after its arrival delay (so the source is `Pending`
/// between them), as `(job, future)`; the future checks the limits as it starts.
fn source(
    jobs: &[Job],
    limits: &Limits,
    seen: &Arc<Mutex<Seen>>,
    start: Instant,
) -> impl Stream<Item = (Job, BoxFuture)> + Send + Unpin + use<> {
    seen.lock().unwrap().starts = vec![None; jobs.len()];
    let (limits, seen, jobs) = (limits.clone(), seen.clone(), jobs.to_vec());
    Box::pin(
        stream::iter(jobs.into_iter().enumerate()).then(move |(id, job)| {
            let (limits, seen) = (limits.clone(), seen.clone());
            async move {
                if job.arrive_ms > 0 {
                    sleep(ms(job.arrive_ms)).await;
                }
                let future: BoxFuture = Box::pin(async move {
                    seen.lock()
                        .unwrap()
                        .start(id, job, &limits, start.elapsed());
                    sleep(ms(job.run_ms)).await;
                    seen.lock().unwrap().finish(job, &limits);
                    id
                });
                (job, future)
            }
        }),
    )
}

fn paused_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap()
}

/// Runs `jobs` through `future_queue(max)`; gives when each started. Checks that each
/// finished once and that the weight running never went over the max.
fn run(max: usize, jobs: &[Job]) -> Vec<Duration> {
    let limits = Limits {
        max,
        groups: HashMap::new(),
    };
    let seen = Arc::new(Mutex::new(Seen::default()));
    paused_runtime().block_on(async {
        let start = Instant::now();
        let mut queue = source(jobs, &limits, &seen, start)
            .map(|(job, future)| (job.weight, future))
            .future_queue(max);
        let mut outputs = Vec::new();
        while let Some(id) = queue.next().await {
            outputs.push(id);
        }
        assert_eq!(queue.current_weight(), 0);
        finished_once(outputs, jobs.len());
    });
    let seen = seen.lock().unwrap();
    assert_eq!(seen.running, 0);
    seen.starts.iter().map(|start| start.unwrap()).collect()
}

/// Runs `jobs` through `future_queue_grouped(max, groups)`, the groups keyed by `Arc<Group>`
/// and named by `Group` (so through `Borrow`); gives when each started and the order they
/// started in. Checks that each finished once and that no max weight was exceeded.
fn run_grouped(max: usize, groups: &[(Group, usize)], jobs: &[Job]) -> (Vec<Duration>, Vec<usize>) {
    let limits = Limits {
        max,
        groups: groups.iter().copied().collect(),
    };
    let seen = Arc::new(Mutex::new(Seen::default()));
    paused_runtime().block_on(async {
        let start = Instant::now();
        let keys = groups.iter().map(|&(group, max)| (Arc::new(group), max));
        let mut queue = source(jobs, &limits, &seen, start)
            .map(|(job, future)| (job.weight, job.group, future))
            .future_queue_grouped(max, keys);
        let mut outputs = Vec::new();
        while let Some(id) = queue.next().await {
            outputs.push(id);
        }
        assert_eq!(queue.current_global_weight(), 0);
        for &(group, _) in groups {
            assert_eq!(queue.current_group_weight(&group), Some(0));
        }
        finished_once(outputs, jobs.len());
    });
    let seen = seen.lock().unwrap();
    let starts = seen.starts.iter().map(|start| start.unwrap()).collect();
    (starts, seen.order.clone())
}

fn finished_once(mut outputs: Vec<usize>, n: usize) {
    outputs.sort_unstable();
    assert_eq!(
        outputs,
        (0..n).collect::<Vec<_>>(),
        "every future finished once"
    );
}

// The contract.

#[test]
#[cfg_attr(miri, ignore)]
fn the_weights_running_stay_within_the_max_weight() {
    // 3 + 2 > 4: the second waits for the first; 1 fits beside the second.
    let starts = run(4, &[job(3, None, 30), job(2, None, 10), job(1, None, 10)]);
    assert_eq!(starts, [ms(0), ms(30), ms(30)]);
}

#[test]
#[cfg_attr(miri, ignore)]
fn a_weight_above_the_max_weight_counts_as_the_max_weight() {
    // Weight 10 under a max weight of 3 runs, alone: it counts 3.
    let starts = run(3, &[job(10, None, 20), job(1, None, 10), job(10, None, 10)]);
    assert_eq!(starts, [ms(0), ms(20), ms(30)]);
}

#[test]
#[cfg_attr(miri, ignore)]
fn a_weight_of_0_counts_nothing() {
    // The max weight is taken by the first future; those of weight 0 start beside it.
    let starts = run(
        1,
        &[
            job(1, None, 50),
            job(0, None, 10),
            job(0, None, 10),
            job(1, None, 10),
        ],
    );
    assert_eq!(starts, [ms(0), ms(0), ms(0), ms(50)]);
}

#[test]
#[cfg_attr(miri, ignore)]
fn futures_start_in_the_order_of_the_source() {
    // The second (3) does not fit beside the first (2) under 4; the third (1) would, but
    // waits behind it.
    let starts = run(4, &[job(2, None, 30), job(3, None, 10), job(1, None, 10)]);
    assert_eq!(starts, [ms(0), ms(30), ms(30)]);
}

#[test]
#[cfg_attr(miri, ignore)]
fn with_weights_of_1_it_runs_max_weight_futures_at_once() {
    let jobs = vec![job(1, None, 10); 10];
    let starts = run(3, &jobs);
    let expected: Vec<Duration> = (0..10).map(|i| ms(10 * (i / 3))).collect();
    assert_eq!(starts, expected);
}

#[test]
#[cfg_attr(miri, ignore)]
fn a_future_in_a_group_counts_against_both_max_weights() {
    use Group::*;
    // Group A holds 2 at once, the queue 3: the third of A waits for A's room, the ungrouped
    // one for the queue's.
    let (starts, _) = run_grouped(
        3,
        &[(A, 2)],
        &[
            job(1, Some(A), 10),
            job(1, Some(A), 20),
            job(1, Some(A), 10),
            job(1, None, 10),
            job(1, None, 10),
        ],
    );
    assert_eq!(starts, [ms(0), ms(0), ms(10), ms(0), ms(10)]);
}

#[test]
#[cfg_attr(miri, ignore)]
fn a_weight_above_a_groups_max_weight_counts_as_the_groups_max_weight() {
    use Group::*;
    // Weight 5 counts 2 in group A (of max weight 2) and 5 against the queue's 8: the
    // ungrouped future of weight 3 fits beside it, the second of A does not.
    let (starts, _) = run_grouped(
        8,
        &[(A, 2)],
        &[job(5, Some(A), 20), job(1, Some(A), 10), job(3, None, 10)],
    );
    assert_eq!(starts, [ms(0), ms(20), ms(0)]);
}

#[test]
#[cfg_attr(miri, ignore)]
fn a_group_starts_its_futures_in_queue_order_and_stops_at_the_first_that_does_not_fit() {
    use Group::*;
    // Group A of max weight 3: 2 runs; the next 2 does not fit and is queued; the 1 behind it
    // would fit, but waits behind it. When the first finishes, the 2 starts, then the 1 beside
    // it (2 + 1 = 3).
    let (starts, order) = run_grouped(
        10,
        &[(A, 3)],
        &[
            job(2, Some(A), 10),
            job(2, Some(A), 30),
            job(1, Some(A), 10),
        ],
    );
    assert_eq!(starts, [ms(0), ms(10), ms(10)]);
    assert_eq!(order, [0, 1, 2]);
}

#[test]
#[cfg_attr(miri, ignore)]
fn a_groups_futures_from_the_source_queue_behind_its_waiting_ones() {
    use Group::*;
    // The second of A (weight 2) does not fit A (max weight 2) beside the first and waits in
    // A's queue; the third and fourth (weight 1) would fit A, but join the queue behind it.
    let (_, order) = run_grouped(
        3,
        &[(A, 2)],
        &[
            job(1, Some(A), 50),
            job(2, Some(A), 10),
            job(1, Some(A), 10),
            job(1, Some(A), 10),
        ],
    );
    assert_eq!(order, [0, 1, 2, 3]);
}

#[test]
#[cfg_attr(miri, ignore)]
fn a_finished_future_frees_room_for_its_own_group_before_the_source() {
    use Group::*;
    // The queue holds 2. a0 and b0 run; a1 waits in A's queue (A holds 1); u0 waits at the
    // source (the queue is full). When a0 finishes, a1 takes its room, not u0.
    let (starts, _) = run_grouped(
        2,
        &[(A, 1), (B, 1)],
        &[
            job(1, Some(A), 10),
            job(1, Some(A), 10),
            job(1, Some(B), 30),
            job(1, None, 10),
        ],
    );
    assert_eq!(starts, [ms(0), ms(10), ms(0), ms(20)]);
}

#[test]
#[cfg_attr(miri, ignore)]
fn a_finished_future_frees_room_for_its_own_group_before_the_groups_ahead_of_it() {
    use Group::*;
    // The queue holds 3, A 2, B 1. a0 (1), b0 (1) and u0 (1) run; a1 (2) waits in A's queue
    // (A holds 1 + 2 > 2), b1 (1) in B's. When a0 finishes, a1 fits A but not the queue
    // (2 + 2 > 3). When b0 finishes, B is served first: b1 starts, and a1 (A, ahead of B)
    // waits until b1 finishes. Served in the groups' order from A, a1 would have started at
    // 20 ms and b1 at 30.
    let (starts, _) = run_grouped(
        3,
        &[(A, 2), (B, 1)],
        &[
            job(1, Some(A), 10),
            job(2, Some(A), 10),
            job(1, Some(B), 20),
            job(1, Some(B), 10),
            job(1, None, 100),
        ],
    );
    assert_eq!(starts, [ms(0), ms(30), ms(0), ms(20), ms(0)]);
}

#[test]
#[cfg_attr(miri, ignore)]
fn after_its_own_group_the_groups_after_it_come_before_those_ahead_of_it() {
    use Group::*;
    // The queue holds 4, A 2, B 1, C 2. a0, c0, b0 and u0 (1 each) run; a1 (2) waits in A's
    // queue, c1 (2) in C's. a0 finishes at 10 (1 free, a1 needs 2); u1 comes at 11 and takes
    // it; c0 finishes at 12 (1 free, c1 needs 2). b0 finishes at 20, freeing 2 for one of a1
    // and c1: after B comes C, so c1 starts at 20 and a1 once c1 finishes (30). Served from
    // the first group after B's, a1 would have started at 20.
    let (starts, _) = run_grouped(
        4,
        &[(A, 2), (B, 1), (C, 2)],
        &[
            job(1, Some(A), 10),
            job(2, Some(A), 10),
            job(1, Some(C), 12),
            job(2, Some(C), 10),
            job(1, Some(B), 20),
            job(1, None, 100),
            Job {
                arrive_ms: 11,
                ..job(1, None, 100)
            },
        ],
    );
    assert_eq!(starts, [ms(0), ms(30), ms(0), ms(20), ms(0), ms(0), ms(11)]);
}

#[test]
#[cfg_attr(miri, ignore)]
fn a_finished_future_frees_room_for_the_other_groups_before_the_source() {
    use Group::*;
    // The queue holds 3, B 1, C 2. b0 (1) and c2 (2) run; b1 (2) waits in B's queue; u3
    // waits at the source. When b0 finishes, b1 does not fit the queue beside c2 (2 + 2 > 3),
    // but u3 (1) does. When c2 finishes, b1 (B's queue) starts before u4 (the source), which
    // starts when b1 finishes. Served from the source first, u4 would have started at 30 ms,
    // and b1 would have waited for a future of B to finish, with none running.
    let (starts, _) = run_grouped(
        3,
        &[(B, 1), (C, 2)],
        &[
            job(1, Some(B), 10),
            job(2, Some(B), 10),
            job(2, Some(C), 30),
            job(1, None, 100),
            job(1, None, 10),
        ],
    );
    assert_eq!(starts, [ms(0), ms(30), ms(0), ms(10), ms(40)]);
}

#[test]
fn a_max_weight_of_0_panics() {
    let message = panic_message(|| {
        let _ = stream::iter([(1, async {})]).future_queue(0);
    });
    assert_eq!(message, "future_queue: max_weight must be greater than 0");
    let message = panic_message(|| {
        let _ = stream::iter([(1, None::<&str>, async {})]).future_queue_grouped(0, [("a", 1)]);
    });
    assert_eq!(
        message,
        "future_queue_grouped: max_weight must be greater than 0"
    );
}

#[test]
fn a_groups_max_weight_of_0_panics() {
    let message = panic_message(|| {
        let _ = stream::iter([(1, None::<&str>, async {})]).future_queue_grouped(4, [("a", 0)]);
    });
    assert_eq!(
        message,
        "future_queue_grouped: the max weight of group \"a\" must be greater than 0"
    );
}

#[test]
fn an_unknown_group_panics_and_the_queue_goes_on() {
    let items = [(1, Some("a"), 0), (1, Some("nope"), 1), (1, None, 2)];
    let mut queue = stream::iter(items)
        .map(|(weight, group, id)| (weight, group, async move { id }))
        .future_queue_grouped(1, [("a", 1)]);
    let (waker, _) = counting_waker();
    // The first poll starts the first future, then takes the unknown group's item.
    let message = panic_message(AssertUnwindSafe(|| {
        let _ = poll_with(&mut queue, &waker);
    }));
    assert_eq!(
        message,
        "future_queue_grouped: unknown group \"nope\" (the groups are [\"a\"])"
    );
    assert_eq!(poll_with(&mut queue, &waker), Poll::Ready(Some(0)));
    assert_eq!(poll_with(&mut queue, &waker), Poll::Ready(Some(2)));
    assert_eq!(poll_with(&mut queue, &waker), Poll::Ready(None));
}

#[test]
fn an_output_is_kept_through_a_refill_whose_source_panics() {
    // Max weight 1: 0 runs, 1 waits for room. 0 finishes and its weight starts 1; the source,
    // polled for the next item in the same call, panics once. 0's output comes on the next
    // call, then 1's, and the queue ends.
    let mut queue = support::two_then_a_panic()
        .map(|i| (1, async move { i }))
        .future_queue(1);
    let (outputs, panics) = support::poll_through_panics(&mut queue, |queue| {
        assert!(
            !queue.is_terminated(),
            "an output is kept for the next call"
        );
        assert_eq!(
            queue.size_hint().0,
            2,
            "the kept output and the future waiting"
        );
    });
    assert_eq!(panics, 1);
    assert_eq!(outputs, [0, 1]);
    assert!(queue.is_terminated());
}

#[test]
fn a_grouped_queue_keeps_an_output_through_a_refill_whose_source_panics() {
    let mut queue = support::two_then_a_panic()
        .map(|i| (1, Some("a"), async move { i }))
        .future_queue_grouped(2, [("a", 1)]);
    let (outputs, panics) = support::poll_through_panics(&mut queue, |queue| {
        assert!(
            !queue.is_terminated(),
            "an output is kept for the next call"
        );
    });
    assert_eq!(panics, 1);
    assert_eq!(outputs, [0, 1]);
    assert!(queue.is_terminated());
}

#[test]
fn a_queue_driven_after_a_refill_whose_source_panics_polls_its_running_futures() {
    // Max weight 2: 0 (ready) and 1 (a gate) start, the source is pending, then 0 finishes and
    // the source, polled for the refill, panics. 0's output is kept for the next `poll_next`;
    // meanwhile, driving the queue (as `drive_while` does while the consumer works) still
    // polls 1, which was opened: a consumer waiting for it would otherwise wait for ever.
    let (source, gate) = support::ready_and_gate_then_a_panic(1);
    let mut queue = source.map(|gate| (1, gate)).future_queue(2);
    let (waker, _) = counting_waker();
    assert!(catch_unwind(AssertUnwindSafe(|| poll_with(&mut queue, &waker))).is_err());
    support::driving_after_a_panic_polls_the_opened_gate(&mut queue, &gate);
}

// future-queue's test cases.

/// Ported from future-queue's `tests/integration/properties.rs`, `test_examples`, first case: one
/// future of weight 0 (no delays) under a max weight of 1.
#[test]
fn ported_test_examples_weight_0_future_queue() {
    assert_eq!(run(1, &[job(0, None, 0)]), [ms(0)]);
}

/// Ported from future-queue's `tests/integration/properties.rs`, `test_examples`, second case: one
/// ungrouped future of weight 0 under a max weight of 1, four groups of max weight 1.
#[test]
#[cfg_attr(miri, ignore)]
fn ported_test_examples_weight_0_future_queue_grouped() {
    use Group::*;
    let (starts, _) = run_grouped(1, &[(A, 1), (B, 1), (C, 1), (D, 1)], &[job(0, None, 0)]);
    assert_eq!(starts, [ms(0)]);
}

/// A random workload as future-queue's property tests draw them: a max weight in `1..64`, up
/// to 512 futures (fewer under Miri) of weight `0..8`, each running `0..1000` ms and given by
/// the source after a delay that is mostly none or short, so that they come in bursts (6 in 10
/// none, 3 in 10 `1..20` ms, 1 in 10 `0..1000` ms), and (grouped) each in one of four groups
/// (or none) of max weight `1..64`.
fn random_workload(rng: &mut XorShift, grouped: bool) -> (usize, Vec<(Group, usize)>, Vec<Job>) {
    let max = 1 + rng.below(63);
    let groups = GROUPS
        .iter()
        .map(|&group| (group, 1 + rng.below(63)))
        .collect();
    let n = rng.below(if cfg!(miri) { 16 } else { 512 });
    let jobs = (0..n)
        .map(|_| Job {
            weight: rng.below(8),
            group: if grouped {
                [
                    None,
                    Some(Group::A),
                    Some(Group::B),
                    Some(Group::C),
                    Some(Group::D),
                ][rng.below(5)]
            } else {
                None
            },
            arrive_ms: match rng.below(10) {
                0..6 => 0,
                6..9 => 1 + rng.up_to(18),
                _ => rng.up_to(999),
            },
            run_ms: rng.up_to(999),
        })
        .collect();
    (max, groups, jobs)
}

/// Ported from future-queue's `tests/integration/properties.rs`, `proptest_future_queue`, with its
/// checks: futures start in the order of the source, the weight running never goes over the
/// max weight, every future finishes, and the current weight is 0 at the end. Random
/// workloads from fixed seeds in place of proptest's.
#[test]
#[cfg_attr(miri, ignore)]
fn ported_proptest_future_queue() {
    let mut rng = XorShift::new(0xF0_7E_0E);
    for _ in 0..24 {
        let (max, _, jobs) = random_workload(&mut rng, false);
        let starts = run(max, &jobs);
        assert!(
            starts.windows(2).all(|pair| pair[0] <= pair[1]),
            "futures start in the order of the source"
        );
    }
}

/// Ported from future-queue's `tests/integration/properties.rs`, `proptest_future_queue_grouped`,
/// with its checks: neither the max weight nor a group's is exceeded, every future finishes,
/// and the current weights are 0 at the end; the groups are keyed by `Arc<Group>`, as there,
/// so that items name them through `Borrow`. Random workloads from fixed seeds in place of
/// proptest's. Also checks that the ungrouped futures start in the order of the source.
#[test]
#[cfg_attr(miri, ignore)]
fn ported_proptest_future_queue_grouped() {
    let mut rng = XorShift::new(0x6_2_0_0_9);
    for _ in 0..24 {
        let (max, groups, jobs) = random_workload(&mut rng, true);
        let (_, order) = run_grouped(max, &groups, &jobs);
        let ungrouped: Vec<usize> = order
            .iter()
            .copied()
            .filter(|&id| jobs[id].group.is_none())
            .collect();
        assert!(ungrouped.windows(2).all(|pair| pair[0] < pair[1]));
        for group in GROUPS {
            let in_group: Vec<usize> = order
                .iter()
                .copied()
                .filter(|&id| jobs[id].group == Some(group))
                .collect();
            assert!(
                in_group.windows(2).all(|pair| pair[0] < pair[1]),
                "group {group:?} starts its futures in queue order"
            );
        }
    }
}

/// Ported from future-queue's `tests/integration/group_weights.rs`,
/// `group_weights_track_running_futures`: the weights of each group follow its futures as
/// they start and finish, a weight above a group's max weight counts as it there (and as
/// itself against the max weight), and an unknown group has no weights.
#[test]
fn ported_group_weights_track_running_futures() {
    use futures_channel::oneshot;
    let (send_small, receive_small) = oneshot::channel::<()>();
    let (send_large, receive_large) = oneshot::channel::<()>();
    let items = [
        (2, Some("group1"), receive_small),
        (7, Some("group2"), receive_large),
    ];
    let mut queue = stream::iter(items).future_queue_grouped(10, [("group1", 5), ("group2", 3)]);
    assert_eq!(queue.current_group_weight("group1"), Some(0));
    assert_eq!(queue.current_group_weight("group2"), Some(0));
    assert_eq!(queue.max_group_weight("group1"), Some(5));
    assert_eq!(queue.max_group_weight("group2"), Some(3));
    assert_eq!(queue.current_group_weight("unknown"), None);
    assert_eq!(queue.max_group_weight("unknown"), None);

    assert_eq!(poll_once(&mut queue), Poll::Pending);
    assert_eq!(queue.current_group_weight("group1"), Some(2));
    assert_eq!(queue.current_group_weight("group2"), Some(3));
    assert_eq!(queue.current_global_weight(), 9);

    send_small.send(()).unwrap();
    assert_eq!(futures_executor::block_on(queue.next()), Some(Ok(())));
    assert_eq!(queue.current_group_weight("group1"), Some(0));
    assert_eq!(queue.current_group_weight("group2"), Some(3));
    send_large.send(()).unwrap();
    assert_eq!(futures_executor::block_on(queue.next()), Some(Ok(())));
    assert_eq!(queue.current_group_weight("group2"), Some(0));
    assert_eq!(futures_executor::block_on(queue.next()), None);
}

/// Ported from future-queue's `tests/integration/stream_wakeups.rs`,
/// `grouped_picks_up_items_arriving_while_futures_run`: an item the source gives while a
/// future runs starts at once, not when that future finishes.
#[tokio::test(start_paused = true)]
#[cfg_attr(miri, ignore)]
async fn ported_grouped_picks_up_items_arriving_while_futures_run() {
    fn item(
        weight: usize,
        group: Option<&'static str>,
        name: &'static str,
        delay: Duration,
    ) -> (usize, Option<&'static str>, BoxFuture<&'static str>) {
        (
            weight,
            group,
            Box::pin(async move {
                sleep(delay).await;
                name
            }),
        )
    }
    type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

    let (send, receive) = futures_channel::mpsc::unbounded();
    let mut queue = receive.future_queue_grouped(4, [("group1", 1)]);
    let start = Instant::now();
    send.unbounded_send(item(1, None, "long", Duration::from_secs(100)))
        .unwrap();
    let late = send.clone();
    tokio::spawn(async move {
        sleep(Duration::from_secs(1)).await;
        late.unbounded_send(item(1, Some("group1"), "late", ms(10)))
            .unwrap();
    });
    drop(send);
    assert_eq!(queue.next().await, Some("late"));
    assert_eq!(start.elapsed(), ms(1010));
    assert_eq!(queue.next().await, Some("long"));
    assert_eq!(start.elapsed(), Duration::from_secs(100));
    assert_eq!(queue.next().await, None);
}

/// Ported from future-queue's crate example of `future_queue` (`src/lib.rs`): two channels of
/// weights 1 and 2 under a max weight of 10 run at once; their outputs come as they are sent.
#[test]
fn ported_crate_example_future_queue() {
    use futures_channel::oneshot;
    let (send_one, recv_one) = oneshot::channel();
    let (send_two, recv_two) = oneshot::channel();
    let mut queue = stream::iter([(1, recv_one), (2, recv_two)]).future_queue(10);
    futures_executor::block_on(async {
        send_two.send("hello").unwrap();
        assert_eq!(queue.next().await, Some(Ok("hello")));
        send_one.send("world").unwrap();
        assert_eq!(queue.next().await, Some(Ok("world")));
        assert_eq!(queue.next().await, None);
    });
}

/// Ported from future-queue's crate example of `future_queue_grouped` (`src/lib.rs`): one
/// future in `group1` (max weight 5) and one ungrouped, under a max weight of 10.
#[test]
fn ported_crate_example_future_queue_grouped() {
    use futures_channel::oneshot;
    let (send_one, recv_one) = oneshot::channel();
    let (send_two, recv_two) = oneshot::channel();
    let mut queue = stream::iter([(1, Some("group1"), recv_one), (2, None, recv_two)])
        .future_queue_grouped(10, [("group1", 5)]);
    futures_executor::block_on(async {
        send_two.send("hello").unwrap();
        assert_eq!(queue.next().await, Some(Ok("hello")));
        send_one.send("world").unwrap();
        assert_eq!(queue.next().await, Some(Ok("world")));
        assert_eq!(queue.next().await, None);
    });
}

// Limits.

#[test]
fn a_limit_sets_the_max_weight_and_clamps_weights_to_it() {
    let limit = Limit::new(2);
    let (gates, states) = support::gates(3);
    let mut queue = stream::iter(gates.into_iter().map(|gate| (5, gate)))
        .future_queue(8)
        .limit(limit.clone());
    assert_eq!(poll_once(&mut queue), Poll::Pending);
    // Weight 5 counts 2, the limit: one runs.
    assert_eq!(queue.current_weight(), 2);
    assert_eq!(
        states.iter().map(|s| s.polls()).collect::<Vec<_>>(),
        [1, 0, 0]
    );
    // Raised to 6: a weight counts 5, and the limit is read as the next future's turn
    // comes; 2 + 5 > 6, so the second waits for the first.
    limit.set(6);
    assert_eq!(poll_once(&mut queue), Poll::Pending);
    assert_eq!(queue.current_weight(), 2);
    states[0].open();
    assert_eq!(poll_once(&mut queue), Poll::Ready(Some(0)));
    assert_eq!(queue.current_weight(), 5);
    states[1].open();
    states[2].open();
    let rest: Vec<usize> = futures_executor::block_on(queue.collect());
    assert_eq!(rest, [1, 2]);
}

#[test]
fn a_raised_limit_wakes_a_queue_that_waits_for_it() {
    let limit = Limit::new(1);
    let (gates, states) = support::gates(2);
    let mut queue = stream::iter(gates.into_iter().map(|gate| (1, gate)))
        .future_queue(4)
        .limit(limit.clone());
    let (waker, wakes) = counting_waker();
    assert_eq!(poll_with(&mut queue, &waker), Poll::Pending);
    assert_eq!(states[1].polls(), 0);
    let before = wakes.count();
    limit.set(2);
    assert!(wakes.count() > before, "the raise woke the queue");
    assert_eq!(poll_with(&mut queue, &waker), Poll::Pending);
    assert_eq!(states[1].polls(), 1);
    assert_eq!(queue.current_weight(), 2);
}

#[test]
fn a_lowered_limit_lets_the_futures_running_finish_and_starts_none_until_there_is_room() {
    let limit = Limit::new(4);
    let (gates, states) = support::gates(6);
    let mut queue = stream::iter(gates.into_iter().map(|gate| (1, gate)))
        .future_queue(8)
        .limit(limit.clone());
    assert_eq!(poll_once(&mut queue), Poll::Pending);
    assert_eq!(queue.current_weight(), 4);
    limit.set(2);
    // Two finish: 2 running, at the limit; none starts.
    states[0].open();
    states[1].open();
    assert_eq!(poll_once(&mut queue), Poll::Ready(Some(0)));
    assert_eq!(poll_once(&mut queue), Poll::Ready(Some(1)));
    assert_eq!(queue.current_weight(), 2);
    assert_eq!(states[4].polls(), 0);
    // One more finishes: one starts in its place.
    states[2].open();
    assert_eq!(poll_once(&mut queue), Poll::Ready(Some(2)));
    assert_eq!(queue.current_weight(), 2);
    assert_eq!(poll_once(&mut queue), Poll::Pending);
    assert_eq!((states[4].polls(), states[5].polls()), (1, 0));
}

// Group limits.

#[test]
fn a_group_limit_sets_the_groups_max_weight_and_clamps_weights_to_it() {
    let limit = Limit::new(2);
    let (gates, states) = support::gates(4);
    let groups = [Some("a"), Some("a"), Some("a"), None];
    let mut queue = stream::iter(
        gates
            .into_iter()
            .zip(groups)
            .map(|(gate, group)| (3, group, gate)),
    )
    .future_queue_grouped(16, [("a", 4)])
    .group_limit("a", limit.clone());
    assert_eq!(poll_once(&mut queue), Poll::Pending);
    // In group "a" a weight of 3 counts 2, the limit: one runs, the next waits in the
    // group's queue, and the future of no group behind them starts.
    assert_eq!(queue.current_group_weight("a"), Some(2));
    assert_eq!(limit.in_use(), 2);
    assert_eq!(
        states.iter().map(|s| s.polls()).collect::<Vec<_>>(),
        [1, 0, 0, 1]
    );
    assert_eq!(
        queue.max_group_weight("a"),
        Some(4),
        "the max weight it was made with"
    );
    // Raised to 4: a weight counts 3 now; 2 + 3 > 4, so the next waits for the first.
    limit.set(4);
    assert_eq!(poll_once(&mut queue), Poll::Pending);
    assert_eq!(states[1].polls(), 0);
    states[0].open();
    assert_eq!(poll_once(&mut queue), Poll::Ready(Some(0)));
    assert_eq!(queue.current_group_weight("a"), Some(3));
    assert_eq!(limit.in_use(), 3);
    for state in &states {
        state.open();
    }
    let mut rest: Vec<usize> = futures_executor::block_on(queue.collect());
    rest.sort_unstable();
    assert_eq!(rest, [1, 2, 3]);
    assert_eq!(limit.in_use(), 0);
}

#[test]
fn a_raised_group_limit_wakes_the_queue_and_starts_the_groups_queued_futures() {
    let limit = Limit::new(1);
    let (gates, states) = support::gates(3);
    let mut queue = stream::iter(gates.into_iter().map(|gate| (1, Some("a"), gate)))
        .future_queue_grouped(8, [("a", 8)])
        .group_limit("a", limit.clone());
    let (waker, wakes) = counting_waker();
    assert_eq!(poll_with(&mut queue, &waker), Poll::Pending);
    assert_eq!(states[1].polls(), 0);
    let before = wakes.count();
    limit.set(3);
    assert!(wakes.count() > before, "the raise woke the queue");
    assert_eq!(poll_with(&mut queue, &waker), Poll::Pending);
    assert_eq!((states[1].polls(), states[2].polls()), (1, 1));
    assert_eq!(queue.current_group_weight("a"), Some(3));
}

#[test]
fn a_lowered_group_limit_lets_the_groups_futures_finish_and_starts_none_until_there_is_room() {
    let limit = Limit::new(3);
    let (gates, states) = support::gates(5);
    let mut queue = stream::iter(gates.into_iter().map(|gate| (1, Some("a"), gate)))
        .future_queue_grouped(8, [("a", 8)])
        .group_limit("a", limit.clone());
    assert_eq!(poll_once(&mut queue), Poll::Pending);
    assert_eq!(queue.current_group_weight("a"), Some(3));
    limit.set(1);
    states[0].open();
    states[1].open();
    assert_eq!(poll_once(&mut queue), Poll::Ready(Some(0)));
    assert_eq!(poll_once(&mut queue), Poll::Ready(Some(1)));
    // One runs, at the limit: none started in their place.
    assert_eq!(queue.current_group_weight("a"), Some(1));
    assert_eq!(states[3].polls(), 0);
    states[2].open();
    assert_eq!(poll_once(&mut queue), Poll::Ready(Some(2)));
    assert_eq!(poll_once(&mut queue), Poll::Pending);
    assert_eq!((states[3].polls(), states[4].polls()), (1, 0));
    assert_eq!(limit.in_use(), 1);
}

#[test]
fn a_group_limit_given_while_the_group_runs_counts_what_runs() {
    let (gates, states) = support::gates(3);
    let queue = stream::iter(gates.into_iter().map(|gate| (2, Some("a"), gate)))
        .future_queue_grouped(8, [("a", 4)]);
    let mut queue = Box::pin(queue);
    assert_eq!(poll_once(&mut queue), Poll::Pending);
    assert_eq!(queue.current_group_weight("a"), Some(4));
    let limit = Limit::new(2);
    let mut queue = Pin::into_inner(queue).group_limit("a", limit.clone());
    assert_eq!(
        limit.in_use(),
        4,
        "the weight running counts against the limit"
    );
    states[0].open();
    states[1].open();
    assert_eq!(poll_once(&mut queue), Poll::Ready(Some(0)));
    // 2 running, at the limit: the third waits for the second.
    assert_eq!(limit.in_use(), 2);
    assert_eq!(queue.current_group_weight("a"), Some(2));
    assert_eq!(poll_once(&mut queue), Poll::Ready(Some(1)));
    assert_eq!(poll_once(&mut queue), Poll::Pending);
    assert_eq!(states[2].polls(), 1, "it started when the second finished");
    assert_eq!(limit.in_use(), 2);
    drop(queue);
    assert_eq!(limit.in_use(), 0, "a dropped queue gives its units back");
}

#[test]
#[cfg_attr(miri, ignore)]
fn groups_of_two_queues_sharing_a_limit_never_exceed_it_together() {
    // Two queues on one runtime, each with a group steered by the same limit of 3: the
    // weight the two groups run together stays within it, and each queue finishes.
    let limit = Limit::new(3);
    let running = Arc::new(Mutex::new((0usize, 0usize)));
    let make = |base: usize| {
        let (running, limit) = (running.clone(), limit.clone());
        stream::iter(0..20usize)
            .map(move |i| {
                let running = running.clone();
                let weight = 1 + i % 2;
                (weight, Some("db"), async move {
                    {
                        let mut running = running.lock().unwrap();
                        running.0 += weight;
                        running.1 = running.1.max(running.0);
                    }
                    sleep(ms(1 + (i % 3) as u64)).await;
                    running.lock().unwrap().0 -= weight;
                    base + i
                })
            })
            .future_queue_grouped(8, [("db", 8)])
            .group_limit("db", limit)
    };
    let (first, second) = paused_runtime().block_on(async {
        let first = tokio::spawn(make(0).collect::<Vec<usize>>());
        let second = tokio::spawn(make(100).collect::<Vec<usize>>());
        (first.await.unwrap(), second.await.unwrap())
    });
    finished_once(first, 20);
    finished_once(second.into_iter().map(|i| i - 100).collect(), 20);
    let (now, max) = *running.lock().unwrap();
    assert_eq!(now, 0);
    assert!(
        max <= 3,
        "the two groups ran {max} together, over the limit of 3"
    );
    assert_eq!(max, 3, "the limit was used in full");
    assert_eq!(limit.in_use(), 0);
}

#[test]
fn a_group_limit_on_an_unknown_group_panics_naming_it() {
    let queue = stream::iter([(1, Some("a"), async { 0 })]).future_queue_grouped(1, [("a", 1)]);
    let limit = Limit::new(1);
    let message = panic_message(AssertUnwindSafe(|| {
        let _ = queue.group_limit("b", limit.clone());
    }));
    assert_eq!(
        message,
        "future_queue_grouped: group_limit: unknown group \"b\" (the groups are [\"a\"])"
    );
    assert_eq!(limit.in_use(), 0);
}

#[test]
fn a_limit_steering_the_max_weight_and_a_group_of_one_queue_panics_naming_the_group() {
    // Each future of the group would count its weight against the limit twice, once for the
    // group and once for the queue: with a limit of 1 none could ever start, and the queue
    // would wake itself on every poll while it waits.
    let limit = Limit::new(1);
    let source = || stream::iter([(1, Some("a"), async { 0 })]);
    let message = panic_message(AssertUnwindSafe(|| {
        let _ = source()
            .future_queue_grouped(4, [("a", 4)])
            .limit(limit.clone())
            .group_limit("a", limit.clone());
    }));
    assert_eq!(
        message,
        "future_queue_grouped: group_limit: the limit given to group \"a\" steers the queue's \
         max weight already (a future of the group would count its weight against it twice)"
    );
    let message = panic_message(AssertUnwindSafe(|| {
        let _ = source()
            .future_queue_grouped(4, [("a", 4)])
            .group_limit("a", limit.clone())
            .limit(limit.clone());
    }));
    assert_eq!(
        message,
        "future_queue_grouped: limit: the limit steers group \"a\" already (a future of the \
         group would count its weight against it twice)"
    );
    assert_eq!(limit.in_use(), 0);
    // A limit of the queue's and another of a group's, and one limit for two groups, are fine.
    let other = Limit::new(1);
    let outputs: Vec<usize> = futures_executor::block_on(
        stream::iter([(1, Some("a"), 0), (1, Some("b"), 1)])
            .map(|(weight, group, n)| (weight, group, async move { n }))
            .future_queue_grouped(4, [("a", 4), ("b", 4)])
            .limit(other.clone())
            .group_limit("a", limit.clone())
            .group_limit("b", limit.clone())
            .collect(),
    );
    assert_eq!(outputs, [0, 1]);
    assert_eq!((limit.in_use(), other.in_use()), (0, 0));
}

#[test]
fn a_group_future_whose_poll_panics_gives_its_group_limits_units_back() {
    let limit = Limit::new(2);
    let mut queue = stream::iter([0usize, 1, 2])
        .map(|i| {
            (1, Some("a"), async move {
                if i == 0 {
                    panic!("the future panics");
                }
                i
            })
        })
        .future_queue_grouped(4, [("a", 4)])
        .group_limit("a", limit.clone());
    let (waker, _) = counting_waker();
    let message = panic_message(AssertUnwindSafe(|| {
        let _ = poll_with(&mut queue, &waker);
    }));
    assert_eq!(message, "the future panics");
    assert!(limit.in_use() <= 2);
    let mut rest = Vec::new();
    while let Poll::Ready(Some(i)) = poll_with(&mut queue, &waker) {
        rest.push(i);
    }
    rest.sort_unstable();
    assert_eq!(rest, [1, 2]);
    assert_eq!(limit.in_use(), 0);
}

#[test]
fn a_driven_queue_keeps_an_outputs_weight_until_it_is_taken() {
    use pinfold_buffer::ProgressStream;
    let (gates, states) = support::gates(2);
    let mut queue = stream::iter(gates.into_iter().map(|gate| (1, gate))).future_queue(1);
    let (waker, _) = counting_waker();
    let mut cx = Context::from_waker(&waker);
    assert_eq!(Pin::new(&mut queue).poll_progress(&mut cx), Poll::Pending);
    states[0].open();
    // The first finishes while driven: its output keeps its weight, so the second does not
    // start, and nothing more can move until the output is taken.
    assert_eq!(Pin::new(&mut queue).poll_progress(&mut cx), Poll::Ready(()));
    assert_eq!(queue.current_weight(), 1);
    assert_eq!(states[1].polls(), 0);
    assert_eq!(poll_with(&mut queue, &waker), Poll::Ready(Some(0)));
    assert_eq!(poll_with(&mut queue, &waker), Poll::Pending);
    assert_eq!(states[1].polls(), 1);
}

// The life of the queue.

/// A future that is ready at once and panics in its poll, or its drop, if told to.
struct Faulty {
    id: usize,
    panics: bool,
    panics_in_drop: bool,
}

impl Drop for Faulty {
    fn drop(&mut self) {
        if self.panics_in_drop && !std::thread::panicking() {
            panic!("future {} panics in its drop", self.id);
        }
    }
}

impl Future for Faulty {
    type Output = usize;

    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<usize> {
        assert!(!self.panics, "future {} panics in its poll", self.id);
        Poll::Ready(self.id)
    }
}

#[test]
fn a_future_that_panics_in_its_poll_or_drop_frees_its_weight_and_the_queue_goes_on() {
    let items = (0..6).map(|id| (2, if id % 2 == 0 { Some("a") } else { None }, id));
    let mut queue = stream::iter(items)
        .map(|(weight, group, id)| {
            (
                weight,
                group,
                Faulty {
                    id,
                    panics: id == 2,
                    panics_in_drop: id == 4,
                },
            )
        })
        .future_queue_grouped(2, [("a", 2)]);
    let (waker, _) = counting_waker();
    let (mut outputs, mut panics) = (Vec::new(), 0);
    loop {
        match catch_unwind(AssertUnwindSafe(|| poll_with(&mut queue, &waker))) {
            Ok(Poll::Ready(Some(id))) => outputs.push(id),
            Ok(Poll::Ready(None)) => break,
            Ok(Poll::Pending) => panic!("ready futures only"),
            Err(_) => {
                panics += 1;
                assert_eq!(queue.current_global_weight(), 0, "the weight is free again");
                assert_eq!(queue.current_group_weight("a"), Some(0));
            }
        }
    }
    // Future 4's output is dropped with it.
    assert_eq!((outputs, panics), (vec![0, 1, 3, 5], 2));
    assert!(queue.is_terminated());
}

#[test]
fn dropping_the_queue_drops_every_future_running_or_waiting_once() {
    let gauge = Gauge::default();
    let future = |gauge: &Gauge, id: usize| {
        let counted = Counted::new(id, gauge);
        async move {
            let counted = counted; // the whole of it, not its id alone
            std::future::pending::<()>().await;
            counted.id
        }
    };
    let items: Vec<_> = (0..8)
        .map(|id| (1, Some(if id < 6 { "a" } else { "b" }), future(&gauge, id)))
        .collect();
    let mut queue = stream::iter(items).future_queue_grouped(3, [("a", 1), ("b", 1)]);
    assert_eq!(poll_once(&mut queue), Poll::Pending);
    // a0 and b6 run; a1..a5 wait in A's queue; b7 in B's.
    assert_eq!(queue.current_global_weight(), 2);
    assert_eq!(queue.size_hint(), (8, Some(8)));
    assert_eq!(gauge.now(), 8);
    drop(queue);
    assert_eq!(gauge.now(), 0);
    assert_eq!(gauge.total(), 8);
}

#[test]
fn size_hint_counts_running_waiting_and_the_source() {
    let (gates, _states) = support::gates(10);
    let mut queue = stream::iter(gates.into_iter().map(|gate| (2, gate))).future_queue(4);
    assert_eq!(queue.size_hint(), (10, Some(10)));
    assert_eq!(poll_once(&mut queue), Poll::Pending);
    // Two run, one waits for room, seven are in the source.
    assert_eq!(queue.size_hint(), (10, Some(10)));
    let mut queue = stream::repeat_with(|| (1, Gate::new(0).0)).future_queue(2);
    assert_eq!(poll_once(&mut queue), Poll::Pending);
    assert_eq!(queue.size_hint(), (usize::MAX, None));
}

#[test]
fn the_ended_stream_is_terminated_and_gives_none_again() {
    let mut queue = stream::iter([(1, async { 7 })]).future_queue(1);
    assert!(!queue.is_terminated());
    assert_eq!(poll_once(&mut queue), Poll::Ready(Some(7)));
    assert_eq!(poll_once(&mut queue), Poll::Ready(None));
    assert!(queue.is_terminated());
    assert_eq!(queue.size_hint(), (0, Some(0)));
    assert_eq!(poll_once(&mut queue), Poll::Ready(None));
}

#[test]
fn an_empty_source_ends_the_stream() {
    let mut queue = stream::empty::<(usize, std::future::Ready<u8>)>().future_queue(3);
    assert_eq!(poll_once(&mut queue), Poll::Ready(None));
    assert!(queue.is_terminated());
    let mut queue = stream::empty::<(usize, Option<u8>, std::future::Ready<u8>)>()
        .future_queue_grouped(3, [(1u8, 1)]);
    assert_eq!(poll_once(&mut queue), Poll::Ready(None));
}

#[test]
fn a_source_that_waits_then_gives_more() {
    let (send, receive) = futures_channel::mpsc::unbounded();
    let mut queue = receive.future_queue(2);
    let (waker, wakes) = counting_waker();
    assert_eq!(poll_with(&mut queue, &waker), Poll::Pending);
    send.unbounded_send((1, std::future::ready(1))).unwrap();
    assert!(wakes.count() > 0, "the source woke the queue");
    assert_eq!(poll_with(&mut queue, &waker), Poll::Ready(Some(1)));
    assert_eq!(poll_with(&mut queue, &waker), Poll::Pending);
    send.unbounded_send((5, std::future::ready(2))).unwrap();
    drop(send);
    assert_eq!(poll_with(&mut queue, &waker), Poll::Ready(Some(2)));
    assert_eq!(poll_with(&mut queue, &waker), Poll::Ready(None));
}

#[test]
fn many_futures_of_weight_0_start_beside_a_full_queue() {
    let n = if cfg!(miri) { 100 } else { 10_000 };
    type Boxed = Pin<Box<dyn Future<Output = usize>>>;
    let (gate, state) = Gate::new(usize::MAX);
    let heavy = stream::iter([(1, Box::pin(gate) as Boxed)]);
    let light = stream::iter(0..n).map(|id| (0, Box::pin(async move { id }) as Boxed));
    let mut queue = heavy.chain(light).future_queue(1);
    let mut outputs = Vec::new();
    // The gate holds the max weight; every future of weight 0 runs and finishes meanwhile.
    while let Poll::Ready(Some(id)) = poll_once(&mut queue) {
        outputs.push(id);
    }
    assert_eq!(outputs, (0..n).collect::<Vec<_>>());
    assert_eq!(queue.current_weight(), 1);
    state.open();
    assert_eq!(poll_once(&mut queue), Poll::Ready(Some(usize::MAX)));
    assert_eq!(poll_once(&mut queue), Poll::Ready(None));
}

#[tokio::test(start_paused = true)]
#[cfg_attr(miri, ignore)]
async fn the_queue_is_driven_while_the_consumer_works() {
    // Four futures of weight 1 under a max weight of 2, each three steps of 10 ms; each
    // output takes 30 ms to handle. Driven, the next two run while the first two are
    // handled.
    let start = Instant::now();
    let mut handled = Vec::new();
    stream::iter(0..4)
        .map(|id| {
            (1, async move {
                for _ in 0..3 {
                    sleep(ms(10)).await;
                }
                id
            })
        })
        .future_queue(2)
        .for_each_driven(|id| {
            handled.push(id);
            sleep(ms(30))
        })
        .await;
    handled.sort_unstable();
    assert_eq!(handled, [0, 1, 2, 3]);
    // 30 ms for the first two, then four outputs of 30 ms each: the last two finished while
    // the first two were handled.
    assert_eq!(start.elapsed(), ms(150));
}

#[test]
fn debug_names_the_queue_and_its_groups() {
    let queue =
        stream::iter([(1, Some("a"), std::future::ready(1))]).future_queue_grouped(3, [("a", 2)]);
    let text = format!("{queue:?}");
    assert!(text.starts_with("FutureQueueGrouped {"), "{text}");
    assert!(text.contains("\"a\": Group { max_weight: 2"), "{text}");
    let queue = stream::iter([(1, std::future::ready(1))]).future_queue(3);
    assert!(format!("{queue:?}").contains("max_weight: 3"));
}

fn panic_message(f: impl FnOnce() + std::panic::UnwindSafe) -> String {
    let panic = catch_unwind(f).expect_err("it panics");
    pinfold_testkit::contract::panic_message(&*panic).to_string()
}

/// A driven queue whose next future waits for units of a shared limit that another buffer
/// holds, with no output to take: it is not stuck (taking an item would not help, and there
/// is none), so `poll_progress` is `Pending`, and the other buffer's units coming back wake
/// the task.
#[test]
fn a_driven_queue_waiting_for_a_shared_limit_is_pending() {
    use pinfold_buffer::ProgressStream;
    let limit = Limit::new(2);
    let mut holder = stream::iter([std::future::pending::<()>(), std::future::pending()])
        .unordered_buffer(2)
        .limit(limit.clone());
    assert!(poll_once(&mut holder).is_pending());
    assert_eq!(limit.in_use(), 2);
    let mut queue = stream::iter([(1, async { 5 })])
        .future_queue(4)
        .limit(limit.clone());
    let (waker, wakes) = counting_waker();
    let mut cx = Context::from_waker(&waker);
    assert_eq!(Pin::new(&mut queue).poll_progress(&mut cx), Poll::Pending);
    drop(holder);
    assert_eq!(wakes.count(), 1);
    assert_eq!(Pin::new(&mut queue).poll_progress(&mut cx), Poll::Ready(()));
    assert_eq!(poll_with(&mut queue, &waker), Poll::Ready(Some(5)));
}

/// The queues cross threads as future-queue's and the crate's other buffers do: `Send` and
/// `Sync` when their source and its futures are, `Unpin` when the source is.
#[test]
fn the_queues_are_send_sync_and_unpin_when_their_parts_are() {
    use pinfold_buffer::{
        FutureQueue, FutureQueueGrouped, OrderedFutureQueue, OrderedFutureQueueGrouped,
    };
    use pinfold_testkit::auto_traits::{send, sync, unpin};
    type Source = stream::Iter<std::vec::IntoIter<(usize, std::future::Ready<u8>)>>;
    type Grouped =
        stream::Iter<std::vec::IntoIter<(usize, Option<&'static str>, std::future::Ready<u8>)>>;
    send::<FutureQueue<Source>>();
    sync::<FutureQueue<Source>>();
    unpin::<FutureQueue<Source>>();
    send::<FutureQueueGrouped<Grouped, &'static str>>();
    sync::<FutureQueueGrouped<Grouped, &'static str>>();
    unpin::<FutureQueueGrouped<Grouped, &'static str>>();
    send::<OrderedFutureQueue<Source>>();
    sync::<OrderedFutureQueue<Source>>();
    unpin::<OrderedFutureQueue<Source>>();
    send::<OrderedFutureQueueGrouped<Grouped, &'static str>>();
    sync::<OrderedFutureQueueGrouped<Grouped, &'static str>>();
    unpin::<OrderedFutureQueueGrouped<Grouped, &'static str>>();
}
