//! [`Crew`]: threads spawned once that run a job together, a round at a time, for the
//! multi-thread groups (`pool.rs`, `writer.rs`).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

/// Threads, spawned once, that run a job together once per [`round`](Crew::round).
pub struct Crew {
    start: Arc<Barrier>,
    done: Arc<Barrier>,
    stop: Arc<AtomicBool>,
    handles: Vec<JoinHandle<()>>,
}

impl Crew {
    /// `threads` threads that each run `job` once a round.
    pub fn new(threads: usize, job: impl Fn() + Send + Sync + 'static) -> Self {
        let job = Arc::new(job);
        let start = Arc::new(Barrier::new(threads + 1));
        let done = Arc::new(Barrier::new(threads + 1));
        let stop = Arc::new(AtomicBool::new(false));
        let handles = (0..threads)
            .map(|_| {
                let (job, start, done, stop) =
                    (job.clone(), start.clone(), done.clone(), stop.clone());
                thread::spawn(move || {
                    loop {
                        start.wait();
                        if stop.load(Ordering::Acquire) {
                            return;
                        }
                        crate::timed(&*job);
                        done.wait();
                    }
                })
            })
            .collect();
        Self {
            start,
            done,
            stop,
            handles,
        }
    }

    /// Runs one round: the wall time from the threads' release to the last one's end.
    pub fn round(&self) -> Duration {
        let began = Instant::now();
        self.start.wait();
        self.done.wait();
        began.elapsed()
    }
}

impl std::fmt::Debug for Crew {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Crew")
            .field("threads", &self.handles.len())
            .finish_non_exhaustive()
    }
}

impl Drop for Crew {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        self.start.wait();
        for handle in self.handles.drain(..) {
            handle.join().expect("a crew thread panicked");
        }
    }
}
