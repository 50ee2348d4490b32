//! Allocations: a map made with a capacity allocates nothing while it holds no more values than
//! that, however many values (under new keys each time) go through it, as long as its keys and
//! values allocate nothing themselves.
//!
//! This file holds a single test so that nothing else runs while the counting allocator is
//! counting.

use std::future::{Ready, ready};
use std::ops::Range;
use std::task::Poll;

use futures_core::Stream;
use futures_util::stream::{self, Iter};
use pinfold_map::{FutureMap, StreamMap};
use pinfold_testkit::alloc::{CountingAlloc, measure};
use pinfold_testkit::stream::poll_with;
use pinfold_testkit::waker::counting_waker;

#[global_allocator]
static ALLOCATOR: CountingAlloc = CountingAlloc;

/// A map under churn: the value made of `(key, version)`, and what it gives.
trait Churned: Stream<Item = (u64, u64)> + Unpin {
    fn with_capacity(capacity: usize) -> Self;
    fn len(&self) -> usize;
    /// Inserts the value made of `(key, version)` under `key`.
    fn insert(&mut self, key: u64, version: u64) -> bool;
    fn remove(&mut self, key: u64) -> bool;
    /// How many outputs the value made of `(key, version)` gives, and their sum.
    fn gives(key: u64, version: u64) -> (usize, u64);
}

/// A future of one output, `2 key + version`.
impl Churned for FutureMap<u64, Ready<u64>> {
    fn with_capacity(capacity: usize) -> Self {
        FutureMap::with_capacity(capacity)
    }
    fn len(&self) -> usize {
        self.len()
    }
    fn insert(&mut self, key: u64, version: u64) -> bool {
        self.insert(key, ready(2 * key + version))
    }
    fn remove(&mut self, key: u64) -> bool {
        self.remove(&key)
    }
    fn gives(key: u64, version: u64) -> (usize, u64) {
        (1, 2 * key + version)
    }
}

/// A stream of `(key + version) % 4` items (so some end at their first poll), `0, 1, ..`.
impl Churned for StreamMap<u64, Iter<Range<u64>>> {
    fn with_capacity(capacity: usize) -> Self {
        StreamMap::with_capacity(capacity)
    }
    fn len(&self) -> usize {
        self.len()
    }
    fn insert(&mut self, key: u64, version: u64) -> bool {
        self.insert(key, stream::iter(0..(key + version) % 4))
    }
    fn remove(&mut self, key: u64) -> bool {
        self.remove(&key)
    }
    fn gives(key: u64, version: u64) -> (usize, u64) {
        let n = (key + version) % 4;
        (n as usize, n * n.saturating_sub(1) / 2)
    }
}

/// Pushes `total` values, each under a new key, through a map made with room for `capacity`,
/// keeping it at `capacity` values; each key that is a multiple of 5 is removed right after
/// its insert, and each key that is 3 more than a multiple of 7 is given a second value that
/// replaces the first (also when the map is full: the replaced value leaves first). Returns the map's outputs as
/// `(count, sum)`, the outputs due, and the allocations made once the map was made.
fn churn<M: Churned>(capacity: usize, total: u64) -> ((usize, u64), (usize, u64), usize) {
    let mut map = M::with_capacity(capacity);
    let (task, wakes) = counting_waker();
    let ((outputs, due), allocations) = measure(|| {
        let (mut outputs, mut due) = ((0, 0), (0, 0));
        let mut key = 0;
        loop {
            while map.len() < capacity && key < total {
                assert!(!map.insert(key, 0));
                let version = if key % 5 == 0 {
                    assert!(map.remove(key));
                    None
                } else if key % 7 == 3 {
                    assert!(map.insert(key, 1));
                    Some(1)
                } else {
                    Some(0)
                };
                if let Some(version) = version {
                    let (count, sum) = M::gives(key, version);
                    due = (due.0 + count, due.1 + sum);
                }
                key += 1;
            }
            let before = wakes.count();
            match poll_with(&mut map, &task) {
                Poll::Ready(Some((_, out))) => outputs = (outputs.0 + 1, outputs.1 + out),
                Poll::Ready(None) if key == total => return (outputs, due),
                Poll::Ready(None) => {}
                Poll::Pending => assert!(wakes.count() > before, "Pending with no wake"),
            }
        }
    });
    (outputs, due, allocations)
}

#[test]
fn no_allocation_within_the_capacity_the_map_was_made_with() {
    let (capacity, total) = if cfg!(miri) { (32, 300) } else { (64, 100_000) };

    // The counter counts: a `Vec` made inside the window is seen.
    let (_, seen) = measure(|| Vec::<u8>::with_capacity(1));
    assert_eq!(seen, 1, "the counting allocator does not count");

    let (outputs, due, allocations) = churn::<FutureMap<u64, Ready<u64>>>(capacity, total);
    assert_eq!(outputs, due, "FutureMap: outputs");
    assert_eq!(
        allocations, 0,
        "FutureMap::with_capacity({capacity}): {allocations} allocations for {total} futures"
    );

    let (outputs, due, allocations) = churn::<StreamMap<u64, Iter<Range<u64>>>>(capacity, total);
    assert_eq!(outputs, due, "StreamMap: items");
    assert_eq!(
        allocations, 0,
        "StreamMap::with_capacity({capacity}): {allocations} allocations for {total} streams"
    );
}
