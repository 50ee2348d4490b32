//! The threads that fire wakers.

use loom::sync::Arc;
use loom::sync::atomic::{AtomicUsize, Ordering};
use loom::thread::JoinHandle;

/// Spawned loom threads, and a count of those that have finished.
#[derive(Debug)]
pub struct Workers {
    finished: Arc<AtomicUsize>,
    handles: Vec<JoinHandle<()>>,
    spawned: usize,
}

impl Workers {
    /// No workers yet.
    pub fn new() -> Self {
        Self {
            finished: Arc::new(AtomicUsize::new(0)),
            handles: Vec::new(),
            spawned: 0,
        }
    }

    /// Runs `work` on a new loom thread.
    pub fn spawn(&mut self, work: impl FnOnce() + Send + 'static) {
        let finished = Arc::clone(&self.finished);
        self.spawned += 1;
        self.handles.push(loom::thread::spawn(move || {
            work();
            // Release: everything the worker did happens before `all_finished` sees it.
            finished.fetch_add(1, Ordering::Release);
        }));
    }

    /// Whether every worker has returned from its work (its captured values may still be
    /// being dropped).
    pub fn all_finished(&self) -> bool {
        // Acquire pairs with the Release in `spawn`.
        self.finished.load(Ordering::Acquire) == self.spawned
    }

    /// Waits for every worker to finish, captured values dropped included.
    pub fn join(&mut self) {
        for handle in self.handles.drain(..) {
            handle.join().expect("a worker panicked");
        }
    }
}

impl Default for Workers {
    fn default() -> Self {
        Self::new()
    }
}
