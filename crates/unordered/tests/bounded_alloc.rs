//! Allocations: the set allocates its storage when it is made, and never after.
//!
//! This file holds a single test so that nothing else runs while the counting allocator is
//! counting.

use std::future::ready;
use std::task::Poll;

use futures_core::{FusedStream, Stream};
use pinfold_testkit::alloc::{CountingAlloc, measure};
use pinfold_testkit::stream::poll_once;
use pinfold_unordered::FuturesUnorderedBounded;

#[global_allocator]
static ALLOCATOR: CountingAlloc = CountingAlloc;

#[test]
fn allocates_at_most_twice_when_made_and_never_after() {
    const CAPACITY: usize = 256;
    let total: usize = if cfg!(miri) { 1_000 } else { 512_000 };

    // The counter counts: a `Vec` made inside the window is seen.
    let (_, seen) = measure(|| Vec::<u8>::with_capacity(1));
    assert_eq!(seen, 1, "the counting allocator does not count");

    let (mut set, made) = measure(|| FuturesUnorderedBounded::new(CAPACITY));
    assert!(made <= 2, "new({CAPACITY}) made {made} allocations");
    assert_eq!(set.size_hint(), (0, Some(0)));

    let ((count, sum), after) = measure(|| {
        let mut next = 0;
        let (mut count, mut sum) = (0, 0);
        // Fill the set.
        while !set.is_full() {
            set.push(ready(next));
            next += 1;
        }
        assert_eq!(set.size_hint(), (CAPACITY, Some(CAPACITY)));
        // Keep it full: take one output, push one future.
        while next < total {
            match poll_once(&mut set) {
                Poll::Ready(Some(out)) => {
                    count += 1;
                    sum += out;
                }
                _ => panic!("a full set of ready futures gave no output"),
            }
            assert_eq!(set.size_hint(), (CAPACITY - 1, Some(CAPACITY - 1)));
            set.push(ready(next));
            next += 1;
        }
        assert_eq!(set.size_hint(), (CAPACITY, Some(CAPACITY)));
        // Drain it.
        while let Poll::Ready(Some(out)) = poll_once(&mut set) {
            count += 1;
            sum += out;
        }
        assert_eq!(set.size_hint(), (0, Some(0)));
        assert!(set.is_terminated());
        (count, sum)
    });
    assert_eq!(
        after, 0,
        "pushing and draining {total} futures made {after} allocations"
    );
    assert_eq!(count, total);
    assert_eq!(sum, total * (total - 1) / 2);
    assert!(set.is_empty());
}
