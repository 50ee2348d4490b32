//! The test kit's probes, wakers, PRNG and polling helpers (see `pinfold-testkit`), and what is
//! particular to a `FuturesUnordered`.
// Each test file uses a different subset of these.
#![allow(dead_code, unused_imports)]

use std::future::Future;
use std::task::Poll;

pub(crate) use pinfold_testkit::future::block_on;
pub(crate) use pinfold_testkit::probe::{Probe, ProbeState, Spinner, probes};
pub(crate) use pinfold_testkit::rng::XorShift;
pub(crate) use pinfold_testkit::stream::{poll_once, poll_with, take_ready};
pub(crate) use pinfold_testkit::waker::{WakeCounter, counting_waker};
use pinfold_unordered::FuturesUnordered;

/// Polls `set` until it yields `None`; the outputs in the order they came. Panics if it ever
/// returns `Pending` (nothing in these sets waits for anything outside).
pub(crate) fn drain<F: Future>(set: &mut FuturesUnordered<F>) -> Vec<F::Output> {
    let mut outputs = Vec::new();
    loop {
        match poll_once(set) {
            Poll::Ready(Some(out)) => outputs.push(out),
            Poll::Ready(None) => return outputs,
            Poll::Pending => panic!("set returned Pending with {} ready futures", set.len()),
        }
    }
}
