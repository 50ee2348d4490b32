//! Driving a future by hand: one poll with a given waker, or to completion on this thread with
//! a guard against lost wakes.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll, Wake, Waker};
use std::thread::{self, Thread};
use std::time::{Duration, Instant};

/// One poll of `fut` with `waker`.
pub fn poll_with<F: Future + Unpin>(fut: &mut F, waker: &Waker) -> Poll<F::Output> {
    Pin::new(fut).poll(&mut Context::from_waker(waker))
}

/// One poll of `fut` with a waker that does nothing.
pub fn poll_once<F: Future + Unpin>(fut: &mut F) -> Poll<F::Output> {
    poll_with(fut, Waker::noop())
}

/// How long [`block_on`] waits for a wake before it calls the wake lost: a deadlock guard, far
/// above any real delay (and reached at once under Miri, whose clock jumps when every thread
/// sleeps), not a timing assertion. 60 s, or `PINFOLD_LOST_WAKE_SECS` seconds when set
/// (`cargo xtask mutants` sets 10, so that a mutant that loses a wake fails in seconds rather
/// than at the mutant's time limit).
/// Read once per process, so that a `block_on` allocates nothing for it.
pub fn lost_wake() -> Duration {
    static LIMIT: std::sync::OnceLock<Duration> = std::sync::OnceLock::new();
    *LIMIT.get_or_init(|| {
        let seconds = std::env::var("PINFOLD_LOST_WAKE_SECS")
            .ok()
            .and_then(|seconds| seconds.parse().ok())
            .unwrap_or(60);
        Duration::from_secs(seconds)
    })
}

/// The waker of [`block_on`]: records that it was woken and unparks the thread that made it.
struct Unparker {
    thread: Thread,
    woken: AtomicBool,
}

impl Wake for Unparker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.woken.store(true, Ordering::SeqCst);
        self.thread.unpark();
    }
}

/// Runs `fut` to completion on this thread, parking while it is `Pending`, and polling it again
/// only once its waker was woken (a spurious unpark does not poll it). Allocates once (the
/// waker).
///
/// # Panics
/// If `fut` stays pending and nothing wakes it for [`lost_wake`], so that a lost wake fails
/// the test instead of hanging it.
pub fn block_on<F: Future>(fut: F) -> F::Output {
    let unparker = Arc::new(Unparker {
        thread: thread::current(),
        woken: AtomicBool::new(false),
    });
    let waker = Waker::from(unparker.clone());
    let mut cx = Context::from_waker(&waker);
    let mut fut = std::pin::pin!(fut);
    let lost_wake = lost_wake();
    loop {
        if let Poll::Ready(out) = fut.as_mut().poll(&mut cx) {
            return out;
        }
        let parked = Instant::now();
        while !unparker.woken.swap(false, Ordering::SeqCst) {
            assert!(
                parked.elapsed() < lost_wake,
                "pending and not woken for {lost_wake:?}: a wake was lost"
            );
            thread::park_timeout(lost_wake);
        }
    }
}

/// A gate that [`borrows_itself`] futures wait at: [`open`](Gate::open) lets them through and
/// wakes the one waiting. Cloning gives another handle to the same gate.
#[derive(Debug, Clone, Default)]
pub struct Gate(Arc<GateState>);

#[derive(Debug, Default)]
struct GateState {
    open: AtomicBool,
    waker: std::sync::Mutex<Option<Waker>>,
}

impl Gate {
    /// A closed gate.
    pub fn new() -> Self {
        Self::default()
    }

    /// Opens the gate and wakes the future waiting at it, if any.
    pub fn open(&self) {
        self.0.open.store(true, Ordering::SeqCst);
        let waker = self.0.waker.lock().unwrap().take();
        if let Some(waker) = waker {
            waker.wake();
        }
    }

    fn poll_open(&self, cx: &mut Context<'_>) -> Poll<()> {
        let mut waker = self.0.waker.lock().unwrap();
        if self.0.open.load(Ordering::SeqCst) {
            return Poll::Ready(());
        }
        *waker = Some(cx.waker().clone());
        Poll::Pending
    }
}

/// A future that keeps a `&mut` into its own state across `Pending` (as `read(&mut buf).await`
/// does): it borrows a local, waits at `gate`, then writes `value` through the borrow and
/// gives what it wrote. A primitive that makes a shared reference covering it while it waits
/// (its bookkeeping going through `&[Slot<F>]`, say) takes that borrow's permission away,
/// which Miri reports as undefined behaviour when the future writes.
pub async fn borrows_itself(gate: Gate, value: u8) -> u8 {
    let mut state = [0u8; 16];
    let borrowed = &mut state[5];
    std::future::poll_fn(|cx| gate.poll_open(cx)).await;
    *borrowed = value;
    state[5]
}
