//! A time limit that fails: past it, the process aborts.
//!
//! A test that hangs (a lost wake, a deadlock, a poll that never returns) must fail, never pass
//! and never run forever. `tokio::time::timeout` catches a future that stays `Pending`, but not
//! a poll that never returns or a thread stuck in a lock; the watchdog catches everything.

use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use crate::sizes::time_limit;

/// Aborts the process if it is not dropped within its limit. Dropping it disarms it.
#[derive(Debug)]
pub struct Watchdog {
    disarm: Option<mpsc::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Watchdog {
    /// Arms a watchdog for the test `name`: if it is still armed after `limit` (multiplied by
    /// `PINFOLD_TIMEOUT_SCALE`), it prints which test hung and aborts the process.
    pub fn arm(name: &str, limit: Duration) -> Self {
        let limit = time_limit(limit);
        let name = name.to_owned();
        let (disarm, disarmed) = mpsc::channel::<()>();
        let started = Instant::now();
        let thread = thread::Builder::new()
            .name(format!("watchdog {name}"))
            .spawn(move || {
                if let Err(RecvTimeoutError::Timeout) = disarmed.recv_timeout(limit) {
                    eprintln!(
                        "watchdog: `{name}` is still running after {:.1?} (limit {limit:?}): \
                         it hangs; aborting the process so that the test fails",
                        started.elapsed()
                    );
                    std::process::abort();
                }
            })
            .expect("spawn the watchdog thread");
        Self {
            disarm: Some(disarm),
            thread: Some(thread),
        }
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        drop(self.disarm.take());
        if let Some(thread) = self.thread.take() {
            // The thread only waits on the channel just closed; it cannot fail.
            let _ = thread.join();
        }
    }
}
