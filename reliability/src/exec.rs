//! A one-task executor that polls only when it was woken, like a real one.
//!
//! A set that loses a wake keeps an output back; an executor that polls in a loop would find it
//! anyway and hide the bug. [`Exec`] polls when the task's waker fired since the last poll, or
//! when the task itself just changed what it polls (pushed a future: a task that pushes goes on
//! to poll), or after an output (a consumer polls for the next one). It stops when neither holds:
//! then everything that can make progress without a new wake has, and outputs can be compared.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::task::{Context, Poll, Wake, Waker};

/// The task's waker: records that it fired.
#[derive(Debug, Default)]
pub struct WakeFlag {
    woken: AtomicBool,
    wakes: AtomicUsize,
}

impl WakeFlag {
    /// Whether the waker fired since the last call, clearing the flag.
    pub fn take(&self) -> bool {
        self.woken.swap(false, Ordering::SeqCst)
    }

    /// How many times the waker fired in all.
    pub fn wakes(&self) -> usize {
        self.wakes.load(Ordering::SeqCst)
    }
}

impl Wake for WakeFlag {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.wakes.fetch_add(1, Ordering::SeqCst);
        self.woken.store(true, Ordering::SeqCst);
    }
}

/// The task polled more often than its limit without settling: the set never stops asking to
/// be polled (it starves the executor) or spins.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Livelock {
    /// How many polls it took before giving up.
    pub polls: usize,
}

/// What one [`Exec::run`] saw.
#[derive(Debug)]
pub struct Run<T> {
    /// The outputs, in the order they came.
    pub outputs: Vec<T>,
    /// Whether the stream ended (`Ready(None)`) or the future completed.
    pub ended: bool,
    /// How many times it polled.
    pub polls: usize,
}

/// A one-task executor. See the [module documentation](self).
#[derive(Debug)]
pub struct Exec {
    flag: Arc<WakeFlag>,
    waker: Waker,
    dirty: bool,
}

impl Default for Exec {
    fn default() -> Self {
        Self::new()
    }
}

impl Exec {
    /// An executor whose task is not woken and has nothing to do.
    pub fn new() -> Self {
        let flag = Arc::new(WakeFlag::default());
        let waker = Waker::from(flag.clone());
        Self {
            flag,
            waker,
            dirty: false,
        }
    }

    /// The task's waker, as the polled value sees it.
    pub fn waker(&self) -> &Waker {
        &self.waker
    }

    /// The task's wake record.
    pub fn flag(&self) -> &Arc<WakeFlag> {
        &self.flag
    }

    /// The task changed what it polls (pushed a future, made a new set): it polls next.
    pub fn mark_dirty(&mut self) {
        self.dirty = true;
    }

    /// Polls `poll` (a stream's `poll_next`) while the task was woken or has work of its own,
    /// collecting outputs, until it settles: `Pending` with no wake since, or the end of the
    /// stream. More than `limit` polls is a [`Livelock`].
    ///
    /// If `poll` panics, the panic propagates and the task is left marked to poll again, as a
    /// caller that catches the panic and goes on would.
    pub fn run<T>(
        &mut self,
        limit: usize,
        mut poll: impl FnMut(&mut Context<'_>) -> Poll<Option<T>>,
    ) -> Result<Run<T>, Livelock> {
        let mut run = Run {
            outputs: Vec::new(),
            ended: false,
            polls: 0,
        };
        loop {
            let woken = self.flag.take();
            if !(woken || self.dirty) {
                return Ok(run);
            }
            if run.polls >= limit {
                self.dirty = true;
                return Err(Livelock { polls: run.polls });
            }
            run.polls += 1;
            // Left set if `poll` panics.
            self.dirty = true;
            let polled = poll(&mut Context::from_waker(&self.waker));
            self.dirty = false;
            match polled {
                Poll::Ready(Some(out)) => {
                    run.outputs.push(out);
                    self.dirty = true;
                }
                Poll::Ready(None) => {
                    run.ended = true;
                    return Ok(run);
                }
                Poll::Pending => {}
            }
        }
    }

    /// Polls once, woken or not (a spurious poll). After `Ready` the task stays marked to poll
    /// again, as a consumer that just got an output does.
    pub fn poll_once<T>(&mut self, poll: impl FnOnce(&mut Context<'_>) -> Poll<T>) -> Poll<T> {
        self.dirty = true;
        let polled = poll(&mut Context::from_waker(&self.waker));
        self.dirty = polled.is_ready();
        polled
    }
}
