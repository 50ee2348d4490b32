//! A pool of threads to wake from: "wake slot i from thread t", run to its end before the test's
//! next operation, so that cross-thread wakes stay deterministic.

use std::panic::{self, AssertUnwindSafe};
use std::sync::mpsc;
use std::thread::{self, JoinHandle};

use crate::program::Via;

type Job = Box<dyn FnOnce() + Send>;
type Done = mpsc::SyncSender<thread::Result<()>>;

/// `n` threads, each running the jobs it is given one at a time.
#[derive(Debug)]
pub struct WakeThreads {
    jobs: Vec<mpsc::Sender<(Job, Done)>>,
    threads: Vec<JoinHandle<()>>,
}

impl WakeThreads {
    /// Starts `n` threads.
    pub fn new(n: usize) -> Self {
        let (jobs, threads) = (0..n)
            .map(|t| {
                let (send, receive) = mpsc::channel::<(Job, Done)>();
                let thread = thread::Builder::new()
                    .name(format!("waker {t}"))
                    .spawn(move || {
                        for (job, done) in receive {
                            let result = panic::catch_unwind(AssertUnwindSafe(job));
                            // The caller waits for this; it is gone only if it panicked.
                            let _ = done.send(result);
                        }
                    })
                    .expect("spawn a waker thread");
                (send, thread)
            })
            .unzip();
        Self { jobs, threads }
    }

    /// How many threads there are.
    pub fn len(&self) -> usize {
        self.jobs.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.jobs.is_empty()
    }

    /// Runs `job` on thread `t % len` and waits until it has finished. A panic in `job` is
    /// resumed here.
    pub fn run_on(&self, t: usize, job: impl FnOnce() + Send + 'static) {
        let (done, finished) = mpsc::sync_channel(1);
        self.jobs[t % self.jobs.len()]
            .send((Box::new(job), done))
            .expect("waker threads live as long as the pool");
        match finished.recv().expect("a waker thread answers every job") {
            Ok(()) => {}
            Err(panic) => panic::resume_unwind(panic),
        }
    }
}

impl WakeThreads {
    /// Runs `job` where `via` says: here, or on waker thread `t` (waiting until it has
    /// finished).
    pub fn run_via(&self, via: Via, job: impl FnOnce() + Send + 'static) {
        match via {
            Via::Here => job(),
            Via::Thread(t) => self.run_on(usize::from(t), job),
        }
    }
}

impl Drop for WakeThreads {
    fn drop(&mut self) {
        self.jobs.clear();
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }
}
