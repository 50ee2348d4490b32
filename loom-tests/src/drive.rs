//! Polling a set to its outputs, as an executor would.

use std::task::{Context, Poll};

use crate::{Parent, Workers};

/// How many polls [`drive`] allows before it calls the set livelocked. The models need far
/// fewer; a set that keeps waking itself (a slot queued twice, say) runs into it.
pub const MAX_POLLS: usize = 16;

/// Polls a set until it has produced `expected` outputs, waiting for a wake after each
/// `Pending`, and returns the outputs in the order they came.
///
/// The `i`th poll uses the waker of `parents[i % parents.len()]`, so with two parents every
/// poll registers a different task than the last, and only that task's wake lets the next
/// poll happen.
///
/// # Panics
/// On a lost wake (see [`Parent::wait`]), if the set ends (`Ready(None)`) early, or if it takes
/// more than [`MAX_POLLS`] polls.
pub fn drive<T>(
    parents: &[&Parent],
    workers: &Workers,
    expected: usize,
    mut poll: impl FnMut(&mut Context<'_>) -> Poll<Option<T>>,
) -> Vec<T> {
    let mut outputs = Vec::with_capacity(expected);
    for round in 0..MAX_POLLS {
        if outputs.len() == expected {
            return outputs;
        }
        let parent = parents[round % parents.len()];
        parent.take_wakes();
        let waker = parent.waker();
        match poll(&mut Context::from_waker(&waker)) {
            Poll::Ready(Some(output)) => outputs.push(output),
            Poll::Ready(None) => panic!(
                "the set ended after {} of {expected} outputs",
                outputs.len()
            ),
            Poll::Pending => {
                parent.wait(workers);
                // An executor runs other tasks before it polls this one again; in the model,
                // that lets a worker caught half-way through a wake finish it. (Without it, a
                // register that meets a wake in progress wakes its own task each time, and the
                // owner could spin on that forever while the worker never runs.)
                loom::thread::yield_now();
            }
        }
    }
    assert_eq!(
        outputs.len(),
        expected,
        "livelock: {MAX_POLLS} polls and not every output came"
    );
    outputs
}
