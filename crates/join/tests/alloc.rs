//! Allocations, counted by a global allocator of this test binary's own: one for the futures'
//! storage, one for the wake table (only if a future is still pending after the first polls),
//! one for the returned `Vec` (unless the outputs fit in the storage), and none otherwise.

mod probe;

use std::future::ready;
use std::task::Poll;

use pinfold_join::{join_all, try_join_all};
use pinfold_testkit::alloc::{CountingAlloc, measure, measure_bytes};
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
    // The outputs reuse the futures' storage only when that leaves little spare room: at most
    // 2 KiB of storage, or at most twice the outputs' size (see the crate docs, *Allocations*).
    let bytes = outputs.capacity() * size_of::<usize>();
    assert!(
        bytes <= 2048 || outputs.capacity() <= 2 * N,
        "the returned Vec has capacity {} for {N} outputs",
        outputs.capacity()
    );
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
    assert_eq!(allocations, 1, "join_all: the futures' storage only");

    // The first poll: each probe keeps a clone of the task's waker (the first poll of a join
    // of more than 32 futures polls with the task's waker; no allocation).
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
    // The second poll allocates the wake table (the futures' own wakers share it); the last
    // the returned Vec, unless the outputs fit in the futures' storage.
    assert!(
        (1..=2).contains(&allocations),
        "{allocations} allocations: only the wake table and the returned Vec may allocate"
    );
}

/// Runs `join_all` of `n` futures made by `make`, polling it until it is ready (firing
/// `finish` after the first poll), and counts every allocation from the call on, the
/// returned `Vec` included.
fn allocations_of<F: std::future::Future<Output = usize>>(
    n: usize,
    make: impl FnMut(usize) -> F,
    finish: impl Fn(),
) -> usize {
    let futures: Vec<F> = (0..n).map(make).collect();
    let (outputs, allocations) = measure(|| {
        let mut join = join_all(futures);
        let mut polls = 0;
        loop {
            if let Poll::Ready(outputs) = poll_once(&mut join) {
                break outputs;
            }
            polls += 1;
            if polls == 1 {
                finish();
            }
            assert!(polls < 10, "the join does not finish");
        }
    });
    assert_eq!(outputs, (0..n).collect::<Vec<_>>());
    allocations
}

#[test]
fn every_size_makes_at_most_3_allocations_with_the_vec() {
    // Small to large joins, with futures that are ready, that yield once, and that wait for a
    // wake that comes after the first poll.
    for n in [0, 1, 10, if cfg!(miri) { 100 } else { 1_000 }] {
        let ready_allocs = allocations_of(n, ready, || {});
        let yield_allocs = allocations_of(
            n,
            |i| {
                let (spinner, _polls) = probe::Spinner::new(i, 1);
                spinner
            },
            || {},
        );
        let (probes, states) = probes(n, |i| i);
        let mut probes = probes.into_iter();
        let wait_allocs = allocations_of(
            n,
            |_| probes.next().unwrap(),
            || {
                for state in &states {
                    state.finish();
                }
            },
        );
        for (what, allocations) in [
            ("ready", ready_allocs),
            ("yield-once", yield_allocs),
            ("woken", wait_allocs),
        ] {
            assert!(
                allocations <= 3,
                "join_all of {n} {what} futures: {allocations} allocations"
            );
        }
        // No future at all: nothing to allocate.
        if n == 0 {
            assert_eq!((ready_allocs, yield_allocs, wait_allocs), (0, 0, 0));
        }
        // Ready futures: at most their storage, which becomes the returned `Vec` (their
        // outputs fit in it with little spare room); none here, as they come in a `Vec` whose
        // block `collect` reuses.
        assert!(
            ready_allocs <= 1,
            "join_all of {n} ready futures: {ready_allocs}"
        );
    }
}

#[test]
fn a_finished_join_has_freed_its_wake_table_before_its_outputs_were_allocated() {
    // Futures that wake themselves twice: a later poll arms the join (allocates the wake
    // table), the last finishes it. Their outputs (`usize`) are a third of their size, too
    // small to take over their storage, so the outputs get a `Vec` of their own (the storage
    // is over 2 KiB, also under Miri).
    const N: usize = if cfg!(miri) { 200 } else { 1_000 };
    let (futures, _polls): (Vec<_>, Vec<_>) = (0..N).map(|i| probe::Spinner::new(i, 2)).unzip();
    let mut join = join_all(futures);
    // What the pending polls left live: the wake table.
    let mut table = 0;
    let (outputs, last) = loop {
        let (poll, bytes) = measure_bytes(|| poll_once(&mut join));
        match poll {
            Poll::Ready(outputs) => break (outputs, bytes),
            Poll::Pending => table += bytes.change,
        }
    };
    assert_eq!(outputs, (0..N).collect::<Vec<_>>());
    let output_bytes = (outputs.capacity() * size_of::<usize>()) as isize;
    assert!(table > 0, "no pending poll allocated a wake table");
    assert!(
        output_bytes <= table,
        "premise: the outputs are smaller than the wake table"
    );
    // The wake table goes before the outputs' `Vec` comes, so finishing the join never holds
    // more than the armed join held: its futures and the table, not those and the outputs.
    assert_eq!(
        last.peak, 0,
        "finishing the join held {} bytes more than the armed join did",
        last.peak
    );
    // And the finished join holds nothing: dropping it frees no byte.
    let ((), dropped) = measure_bytes(|| drop(join));
    assert_eq!(
        dropped.change, 0,
        "the finished join still held {} bytes",
        -dropped.change
    );
}
