//! What the buffers allocate while they run: nothing per future, also when several of them
//! share one `Limit`.

mod support;

use std::future::{pending, ready};

use futures_util::{StreamExt, stream};
use pinfold_buffer::{BufferExt, Limit};
use pinfold_testkit::alloc::{CountingAlloc, measure};
use support::{counting_waker, poll_once, poll_with};

#[global_allocator]
static ALLOCATOR: CountingAlloc = CountingAlloc;

/// Two buffers share a limit, the second waiting for a unit: each output of the first gives
/// its unit back and wakes the second, and none of that allocates.
#[test]
fn a_shared_limit_allocates_nothing_per_future() {
    let n = if cfg!(miri) { 20 } else { 1_000 };
    let limit = Limit::new(1);
    let mut first = stream::iter((0..n).map(ready))
        .unordered_buffer(4)
        .limit(limit.clone());
    let mut second = stream::iter([pending::<()>()])
        .unordered_buffer(4)
        .limit(limit.clone());
    let (waker, wakes) = counting_waker();
    // The first output, and the second's first wait, outside the count: registering a
    // waker the first time may allocate.
    assert_eq!(poll_once(&mut first), std::task::Poll::Ready(Some(0)));
    assert!(poll_with(&mut second, &waker).is_pending());
    let (outputs, allocations) = measure(|| {
        let mut outputs = 0;
        for _ in 1..n {
            if poll_once(&mut first).is_ready() {
                outputs += 1;
            }
            // The unit given back woke the second; it finds none free and waits again.
            let _ = poll_with(&mut second, &waker);
        }
        outputs
    });
    assert_eq!(outputs, n - 1);
    assert!(wakes.count() > 0);
    assert_eq!(allocations, 0);
}

/// The allocations of a weighted queue over `n` ready futures of weights 1 to 4, two fifths in
/// no group and the rest in three groups, as they run to the end (the queue made inside, and
/// boxed).
fn weighted_queue_allocations(n: usize, ordered: bool) -> usize {
    let items = move || {
        stream::iter(0..n).map(|i| {
            let group = [Some("a"), Some("b"), Some("c"), None, None][i % 5];
            (1 + i % 4, group, ready(i))
        })
    };
    let groups = [("a", 8), ("b", 12), ("c", 16)];
    let (sum, allocations) = measure(|| {
        let sum =
            |queue| futures_executor::block_on(StreamExt::fold(queue, 0, |sum, i| ready(sum + i)));
        if ordered {
            sum(items()
                .ordered_future_queue_grouped(32, groups)
                .boxed_local())
        } else {
            sum(items().future_queue_grouped(32, groups).boxed_local())
        }
    });
    assert_eq!(sum, (0..n).sum::<usize>());
    allocations
}

/// A weighted queue allocates its groups, its arena and its queues once, however many
/// futures go through it: nothing per future.
#[test]
fn a_weighted_queue_allocates_nothing_per_future() {
    let (few, many) = if cfg!(miri) { (40, 200) } else { (100, 10_000) };
    for ordered in [false, true] {
        let (base, more) = (
            weighted_queue_allocations(few, ordered),
            weighted_queue_allocations(many, ordered),
        );
        assert!(
            more <= base && base <= 12,
            "{more} allocations for {many} futures, {base} for {few} (ordered: {ordered})"
        );
    }
}
