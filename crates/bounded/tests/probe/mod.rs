//! The test kit's probes, wakers and polling helpers (see `pinfold-testkit`), and what is
//! particular to a `FuturesUnorderedBounded`.
// Each test file uses a different subset of these.
#![allow(dead_code, unused_imports)]

use std::future::Future;
use std::task::Poll;

use pinfold_bounded::FuturesUnorderedBounded;
pub(crate) use pinfold_testkit::probe::{Probe, ProbeState, Spinner, probes};
pub(crate) use pinfold_testkit::stream::{poll_once, poll_with};
pub(crate) use pinfold_testkit::waker::{WakeCounter, counting_waker};

/// Polls `set` until it returns `Pending` without having woken its own task, that is, until
/// every future that was woken has been polled. Panics on an output, or if the set keeps
/// yielding (a set of futures that do not wake themselves must settle).
pub(crate) fn settle<F: Future>(set: &mut FuturesUnorderedBounded<F>) {
    let (task, wakes) = counting_waker();
    for _ in 0..=set.len() {
        let before = wakes.count();
        match poll_with(set, &task) {
            Poll::Pending if wakes.count() == before => return,
            Poll::Pending => {}
            Poll::Ready(Some(_)) => panic!("a future finished while settling"),
            Poll::Ready(None) => return,
        }
    }
    panic!("the set kept yielding");
}
