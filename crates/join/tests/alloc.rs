//! Allocations, counted by a global allocator of this test binary's own: two for the arena and
//! one for the returned `Vec`, and none while polling.

mod probe;

use std::future::ready;
use std::task::Poll;

use pinfold_join::{join_all, try_join_all};
use pinfold_testkit::alloc::{CountingAlloc, measure};
use probe::{XorShift, poll_once, probes};

#[global_allocator]
static ALLOCATOR: CountingAlloc = CountingAlloc;

const N: usize = if cfg!(miri) { 50 } else { 1_000 };

#[test]
fn join_all_of_1000_ready_futures_makes_at_most_3_allocations() {
    let (outputs, allocations) = measure(|| {
        let mut join = join_all((0..N).map(ready));
        match poll_once(&mut join) {
            Poll::Ready(outputs) => outputs,
            Poll::Pending => panic!("ready futures, pending join"),
        }
    });
    assert_eq!(outputs, (0..N).collect::<Vec<_>>());
    assert_eq!(outputs.capacity(), N, "the returned Vec is sized exactly");
    assert!(
        allocations <= 3,
        "join_all of {N} ready futures: {allocations} allocations"
    );
}

#[test]
fn try_join_all_of_1000_ready_futures_makes_at_most_3_allocations() {
    let (outputs, allocations) = measure(|| {
        let mut join = try_join_all((0..N).map(|i| ready(Ok::<_, ()>(i))));
        match poll_once(&mut join) {
            Poll::Ready(outputs) => outputs,
            Poll::Pending => panic!("ready futures, pending join"),
        }
    });
    assert_eq!(outputs, Ok((0..N).collect::<Vec<_>>()));
    assert!(
        allocations <= 3,
        "try_join_all of {N} ready futures: {allocations} allocations"
    );
}

#[test]
fn async_blocks_from_a_vec_make_at_most_3_allocations_after_the_vec() {
    let futures: Vec<_> = (0..N).map(|i| async move { i * 2 }).collect();
    let (outputs, allocations) = measure(|| {
        let mut join = join_all(futures);
        match poll_once(&mut join) {
            Poll::Ready(outputs) => outputs,
            Poll::Pending => panic!("ready futures, pending join"),
        }
    });
    assert_eq!(outputs, (0..N).map(|i| i * 2).collect::<Vec<_>>());
    assert!(allocations <= 3, "{allocations} allocations");
}

#[test]
fn iterator_of_unknown_size_costs_only_the_collecting() {
    let futures = || (0..2 * N).filter(|i| i % 2 == 0).map(ready);
    // What collecting them into a `Vec` costs (it grows as it goes: `filter` has no exact size).
    let (collected, collecting) = measure(|| futures().collect::<Vec<_>>());
    drop(collected);
    let (outputs, allocations) = measure(|| {
        let mut join = join_all(futures());
        match poll_once(&mut join) {
            Poll::Ready(outputs) => outputs,
            Poll::Pending => panic!("ready futures, pending join"),
        }
    });
    assert_eq!(outputs, (0..N).map(|i| 2 * i).collect::<Vec<_>>());
    assert!(
        allocations <= collecting + 3,
        "{allocations} allocations, {collecting} of them to collect"
    );
}

#[test]
fn polling_and_waking_allocate_nothing() {
    // The probes and their states are made outside the count.
    let (futures, states) = probes(N, |i| i);
    let mut rng = XorShift::new(7);
    let order = rng.permutation(N);
    let (mut join, allocations) = measure(|| join_all(futures));
    assert!(allocations <= 2, "join_all: {allocations} allocations");

    // The first poll: each probe keeps a clone of its waker (no allocation: the arena's wakers
    // share one table).
    let ((), allocations) = measure(|| assert!(poll_once(&mut join).is_pending()));
    assert_eq!(allocations, 0);
    let mut outputs = None;
    let ((), allocations) = measure(|| {
        for batch in order.chunks(7) {
            for &i in batch {
                states[i].open();
                states[i].waker().wake_by_ref();
            }
            if let Poll::Ready(out) = poll_once(&mut join) {
                outputs = Some(out);
            }
        }
    });
    assert_eq!(outputs, Some((0..N).collect::<Vec<_>>()));
    assert_eq!(allocations, 1, "only the returned Vec may allocate");
}
