//! The task that polls the set under test.

use std::sync::Arc;
use std::task::{Wake, Waker};

use loom::alloc::Track;
use loom::sync::atomic::{AtomicUsize, Ordering};

use crate::Workers;

/// The parent task of a set: hands out a waker that counts its wakes in a loom atomic.
///
/// Each `Parent` is a distinct task: wakers of two parents do not `will_wake` each other, so a
/// model can re-poll a set with another task's waker and check that the new one is the one
/// woken. The shared state carries a loom [`Track`], so a parent waker that the set clones and
/// never drops fails the model as a leak.
#[derive(Debug)]
pub struct Parent {
    state: Arc<ParentState>,
}

#[derive(Debug)]
struct ParentState {
    wakes: AtomicUsize,
    _alive: Track<()>,
}

impl Wake for ParentState {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        // Release: what the waking thread did before the wake (set its bit in the ready set) happens
        // before the executor's next poll, which sees the wake with an Acquire load below. An
        // executor's run queue gives the same guarantee, and no more.
        self.wakes.fetch_add(1, Ordering::Release);
    }
}

impl Parent {
    /// A task that has not been woken.
    pub fn new() -> Self {
        Self {
            state: Arc::new(ParentState {
                wakes: AtomicUsize::new(0),
                _alive: Track::new(()),
            }),
        }
    }

    /// A waker for this task.
    pub fn waker(&self) -> Waker {
        Waker::from(Arc::clone(&self.state))
    }

    /// How many times the task was woken since the last [`take_wakes`](Self::take_wakes).
    pub fn wakes(&self) -> usize {
        // Acquire pairs with the Release in `wake_by_ref`.
        self.state.wakes.load(Ordering::Acquire)
    }

    /// How many times the task was woken since the last call; resets the count.
    pub fn take_wakes(&self) -> usize {
        // Acquire pairs with the Release in `wake_by_ref`.
        self.state.wakes.swap(0, Ordering::Acquire)
    }

    /// How many wakers of this task exist besides the `Parent` itself (clones held by the set
    /// under test, or not yet dropped).
    pub fn wakers_alive(&self) -> usize {
        Arc::strong_count(&self.state) - 1
    }

    /// Waits, as an executor would, for this task to be woken after a poll returned `Pending`.
    ///
    /// # Panics
    /// With "lost wake" if every worker has finished and the task was still not woken: the set
    /// returned `Pending` and nothing will ever poll it again, although the models only return
    /// `Pending` while a worker still has a wake to deliver.
    pub fn wait(&self, workers: &Workers) {
        loop {
            if self.wakes() > 0 {
                return;
            }
            if workers.all_finished() {
                // Every worker's wakes happen before its finish (Release/Acquire in `Workers`),
                // so this load sees them all.
                assert!(
                    self.wakes() > 0,
                    "lost wake: the set returned Pending, every waker has fired, and the parent \
                     task was never woken"
                );
                return;
            }
            loom::thread::yield_now();
        }
    }
}

impl Default for Parent {
    fn default() -> Self {
        Self::new()
    }
}
