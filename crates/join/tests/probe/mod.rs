//! The test kit's probes, wakers, PRNG and polling helpers (see `pinfold-testkit`), and
//! outputs and flags that let a test see when a join drops what it holds.
// Each test file uses a different subset of these.
#![allow(dead_code, unused_imports)]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

pub(crate) use pinfold_testkit::future::{poll_once, poll_with};
/// `n` probes whose outputs are `output(0..n)`, and their states in the same order.
pub(crate) use pinfold_testkit::probe::probes_with as probes;
pub(crate) use pinfold_testkit::probe::{Probe, ProbeState, Spinner};
pub(crate) use pinfold_testkit::rng::XorShift;
pub(crate) use pinfold_testkit::waker::{WakeCounter, counting_waker};

/// An output that counts its drops in a shared [`DropLog`], under its id.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Tracked {
    id: usize,
    log: Arc<DropLog>,
}

impl Tracked {
    pub(crate) fn id(&self) -> usize {
        self.id
    }
}

impl Drop for Tracked {
    fn drop(&mut self) {
        self.log.drops[self.id].fetch_add(1, Ordering::SeqCst);
    }
}

/// How many times each of `n` [`Tracked`] values, ids `0..n`, was dropped.
#[derive(Debug)]
pub(crate) struct DropLog {
    drops: Vec<AtomicUsize>,
}

impl PartialEq for DropLog {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self, other)
    }
}

impl Eq for DropLog {}

impl DropLog {
    pub(crate) fn new(n: usize) -> Arc<Self> {
        Arc::new(Self {
            drops: (0..n).map(|_| AtomicUsize::new(0)).collect(),
        })
    }

    /// The tracked value with id `id`.
    pub(crate) fn tracked(self: &Arc<Self>, id: usize) -> Tracked {
        Tracked {
            id,
            log: self.clone(),
        }
    }

    /// How many times value `id` was dropped.
    pub(crate) fn drops(&self, id: usize) -> usize {
        self.drops[id].load(Ordering::SeqCst)
    }

    /// Asserts that every value was dropped exactly once.
    #[track_caller]
    pub(crate) fn assert_each_dropped_once(&self, what: &str) {
        for id in 0..self.drops.len() {
            assert_eq!(
                self.drops(id),
                1,
                "{what} {id} dropped {} times",
                self.drops(id)
            );
        }
    }
}

/// Asserts that every probe was dropped exactly once.
#[track_caller]
pub(crate) fn assert_probes_dropped_once(states: &[Arc<ProbeState>]) {
    for (id, state) in states.iter().enumerate() {
        assert_eq!(
            state.drops(),
            1,
            "future {id} dropped {} times",
            state.drops()
        );
    }
}

/// Sets a flag when dropped: put one in an `async` block to see when the block is dropped.
#[derive(Debug)]
pub(crate) struct DropFlag(pub(crate) Arc<AtomicBool>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        assert!(
            !self.0.swap(true, Ordering::SeqCst),
            "a future was dropped twice"
        );
    }
}

/// `n` flags, all unset.
pub(crate) fn flags(n: usize) -> Vec<Arc<AtomicBool>> {
    (0..n).map(|_| Arc::new(AtomicBool::new(false))).collect()
}

/// Whether `flag` is set.
pub(crate) fn is_set(flag: &AtomicBool) -> bool {
    flag.load(Ordering::SeqCst)
}
