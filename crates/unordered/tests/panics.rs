//! Panic safety: a future that panics in `poll` (or in `Drop`) is gone afterwards, the set's
//! length drops by one, and the set keeps working.

use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};

use futures_util::future::Either;
use pinfold_testkit::probe::{Probe, ProbeState, probes};
use pinfold_testkit::stream::{drain_ready, poll_once};
use pinfold_unordered::FuturesUnordered;

/// A future that panics when polled, or finishes and panics when dropped; it counts its drops.
#[derive(Debug)]
struct Bomb {
    in_poll: bool,
    drops: Arc<AtomicUsize>,
}

impl Future for Bomb {
    type Output = usize;

    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<usize> {
        if self.in_poll {
            panic!("boom in poll");
        }
        Poll::Ready(usize::MAX)
    }
}

impl Drop for Bomb {
    fn drop(&mut self) {
        self.drops.fetch_add(1, Ordering::SeqCst);
        if !self.in_poll {
            panic!("boom in drop");
        }
    }
}

/// The futures of these tests: probes, and one bomb.
type Mixed = Either<Probe, Bomb>;

/// A set of 100 probes with a bomb in its largest group (pushed after probe 80), the probes'
/// states, and the bomb's drop count. Nothing is polled yet.
fn set_with_a_bomb(
    in_poll: bool,
) -> (
    FuturesUnordered<Mixed>,
    Vec<Arc<ProbeState>>,
    Arc<AtomicUsize>,
) {
    let (futures, states) = probes(100);
    let drops = Arc::new(AtomicUsize::new(0));
    let mut set = FuturesUnordered::new();
    for (id, probe) in futures.into_iter().enumerate() {
        set.push(Either::Left(probe));
        if id == 80 {
            set.push(Either::Right(Bomb {
                in_poll,
                drops: drops.clone(),
            }));
        }
    }
    (set, states, drops)
}

/// Finishes every probe, drains the set and checks each probe gave its output and was dropped
/// once.
fn finish_and_check(set: &mut FuturesUnordered<Mixed>, states: &[Arc<ProbeState>]) {
    for state in states {
        if state.polls() == 0 {
            // Not reached before the panic: let the next polls find it open.
            state.open();
        } else {
            state.finish();
        }
    }
    let mut outputs = drain_ready(set);
    outputs.sort_unstable();
    assert_eq!(outputs, (0..100).collect::<Vec<_>>());
    for state in states {
        assert_eq!(state.drops(), 1);
    }
}

#[test]
fn a_future_that_panics_in_poll_is_dropped_and_the_set_keeps_working() {
    let (mut set, states, drops) = set_with_a_bomb(true);
    assert_eq!(set.len(), 101);
    let panic = catch_unwind(AssertUnwindSafe(|| poll_once(&mut set))).unwrap_err();
    assert_eq!(panic.downcast_ref::<&str>(), Some(&"boom in poll"));
    assert_eq!(set.len(), 100);
    assert_eq!(
        drops.load(Ordering::SeqCst),
        1,
        "the bomb was dropped in place"
    );
    assert_eq!(set.iter().count(), 100);

    // The set goes on: probes not polled before the panic are polled now, and pushes work.
    set.push(Either::Left(Probe::new(100).0));
    assert!(poll_once(&mut set).is_pending());
    assert_eq!(set.len(), 101);
    assert!(states.iter().all(|state| state.polls() >= 1));
    assert!(
        set.iter()
            .any(|fut| matches!(fut, Either::Left(probe) if probe.id() == 100))
    );
    set.clear();
    for state in &states {
        assert_eq!(state.drops(), 1);
    }
    let (futures, states) = probes(100);
    set.extend(futures.into_iter().map(Either::Left));
    assert!(poll_once(&mut set).is_pending());
    finish_and_check(&mut set, &states);
}

#[test]
fn a_future_that_panics_in_drop_leaves_the_set_consistent() {
    let (mut set, states, drops) = set_with_a_bomb(false);
    let panic = catch_unwind(AssertUnwindSafe(|| poll_once(&mut set))).unwrap_err();
    assert_eq!(panic.downcast_ref::<&str>(), Some(&"boom in drop"));
    assert_eq!(drops.load(Ordering::SeqCst), 1);
    assert_eq!(set.len(), 100);
    assert_eq!(set.iter().count(), 100);
    finish_and_check(&mut set, &states);
    assert_eq!(poll_once(&mut set), Poll::Ready(None));
}
