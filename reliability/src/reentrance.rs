//! Re-entrance: parent wakers (the task wakers a primitive is polled with) that poll the
//! primitive from inside `wake`, through a `Mutex` from any thread or through a `RefCell` on
//! the owning thread, or that drop it there; and any primitive behind one type, so that the
//! tests of `tests/faults.rs` run each of these against every kind.

use std::cell::RefCell;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};
use std::thread::{self, ThreadId};

use futures_core::Stream;
use futures_util::stream;
use pinfold_buffer::BufferExt;

use crate::ctl::{Ctl, CtlHandle, Out, Spec, World};

/// Any primitive, polled for its outputs.
pub enum Primitive {
    /// A set or a stream buffer.
    Stream(Pin<Box<dyn Stream<Item = Out> + Send>>),
    /// A join, and whether it completed.
    Join(Pin<Box<dyn Future<Output = Vec<Out>> + Send>>, bool),
}

impl fmt::Debug for Primitive {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Primitive::Stream(_) => f.write_str("Primitive::Stream"),
            Primitive::Join(_, done) => write!(f, "Primitive::Join(done: {done})"),
        }
    }
}

impl Primitive {
    /// Takes every output ready now; `Ready` once the stream ended or the join completed.
    pub fn poll_into(&mut self, cx: &mut Context<'_>, outputs: &mut Vec<Out>) -> Poll<()> {
        self.poll_each(cx, outputs, &|| {})
    }

    /// [`poll_into`](Self::poll_into), calling `before` before each poll of the primitive.
    pub fn poll_each(
        &mut self,
        cx: &mut Context<'_>,
        outputs: &mut Vec<Out>,
        before: &dyn Fn(),
    ) -> Poll<()> {
        before();
        match self {
            Primitive::Stream(stream) => loop {
                match stream.as_mut().poll_next(cx) {
                    Poll::Ready(Some(out)) => {
                        outputs.push(out);
                        before();
                    }
                    Poll::Ready(None) => return Poll::Ready(()),
                    Poll::Pending => return Poll::Pending,
                }
            },
            Primitive::Join(_, true) => Poll::Ready(()),
            Primitive::Join(join, done) => match join.as_mut().poll(cx) {
                Poll::Ready(joined) => {
                    outputs.extend(joined);
                    *done = true;
                    Poll::Ready(())
                }
                Poll::Pending => Poll::Pending,
            },
        }
    }
}

/// The primitives the re-entrance and starvation tests run, by name.
pub const KINDS: [&str; 6] = [
    "FuturesUnorderedBounded",
    "FuturesUnordered",
    "join_all",
    "ordered_buffer",
    "ordered_buffer window",
    "unordered_buffer",
];

/// A primitive of `kind` (one of [`KINDS`]) holding `futures`.
pub fn primitive(kind: &str, futures: Vec<Ctl<Out>>) -> Primitive {
    match kind {
        "FuturesUnorderedBounded" => Primitive::Stream(Box::pin(
            pinfold_unordered::FuturesUnorderedBounded::from_iter(futures),
        )),
        "FuturesUnordered" => Primitive::Stream(Box::pin(
            pinfold_unordered::FuturesUnordered::from_iter(futures),
        )),
        "join_all" => Primitive::Join(Box::pin(pinfold_join::join_all(futures)), false),
        "ordered_buffer" => Primitive::Stream(Box::pin(stream::iter(futures).ordered_buffer(8))),
        "ordered_buffer window" => {
            Primitive::Stream(Box::pin(stream::iter(futures).ordered_buffer(8).window(12)))
        }
        "unordered_buffer" => {
            Primitive::Stream(Box::pin(stream::iter(futures).unordered_buffer(8)))
        }
        _ => unreachable!("unknown kind {kind}"),
    }
}

/// `n` futures, every fourth of which wakes itself twice once completed (so that wakes come
/// from inside the primitive's own poll too).
pub fn futures(world: &mut World, n: usize) -> (Vec<Ctl<Out>>, Vec<CtlHandle>) {
    (0..n)
        .map(|i| {
            world.ctl(Spec {
                yields: if i % 4 == 3 { 2 } else { 0 },
                ..Spec::default()
            })
        })
        .unzip()
}

/// A parent waker that polls the primitive from inside `wake`, if it can lock it.
#[derive(Debug)]
pub struct LockingParent {
    /// `None` once the test took it out (the primitive holds this waker: a cycle to break).
    pub primitive: Mutex<Option<Primitive>>,
    /// The ids of the outputs, in the order they came.
    pub outputs: Mutex<Vec<u32>>,
    /// Woken since the primitive was last polled.
    pub woken: AtomicBool,
    /// The stream ended or the join completed.
    pub finished: AtomicBool,
    /// Polls run from inside a wake.
    pub reentered: AtomicUsize,
    /// Wakes that found the primitive locked (being polled).
    pub refused: AtomicUsize,
}

impl LockingParent {
    /// Polls the primitive while woken, unless another thread holds it (it sees the wake flag
    /// after it unlocks).
    pub fn run(self: &Arc<Self>, from_wake: bool) {
        loop {
            let Ok(mut guard) = self.primitive.try_lock() else {
                self.refused.fetch_add(1, Ordering::SeqCst);
                return;
            };
            let Some(primitive) = guard.as_mut() else {
                return;
            };
            if from_wake {
                self.reentered.fetch_add(1, Ordering::SeqCst);
            }
            let waker = Waker::from(self.clone());
            let mut cx = Context::from_waker(&waker);
            let mut outputs = Vec::new();
            loop {
                self.woken.store(false, Ordering::SeqCst);
                if primitive.poll_into(&mut cx, &mut outputs).is_ready() {
                    self.finished.store(true, Ordering::SeqCst);
                    break;
                }
                if !self.woken.load(Ordering::SeqCst) {
                    break;
                }
            }
            drop(guard);
            self.outputs
                .lock()
                .unwrap()
                .extend(outputs.iter().map(Out::id));
            drop(outputs);
            if self.finished.load(Ordering::SeqCst) || !self.woken.load(Ordering::SeqCst) {
                return;
            }
        }
    }
}

impl Wake for LockingParent {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.woken.store(true, Ordering::SeqCst);
        self.run(true);
    }
}

thread_local! {
    /// Polls the primitive of the `RefCell` test; borrowed while it runs.
    pub static HOOK: RefCell<Option<Box<dyn FnMut()>>> = const { RefCell::new(None) };
}

/// A parent waker that, on the owning thread, polls the primitive from inside `wake` through
/// a `RefCell` (refused while a poll is running); elsewhere it only records the wake.
#[derive(Debug)]
pub struct RefCellParent {
    /// The thread whose wakes poll.
    pub owner: ThreadId,
    /// Woken since the primitive was last polled.
    pub woken: AtomicBool,
    /// Polls run from inside a wake.
    pub reentered: AtomicUsize,
    /// Wakes that found the hook borrowed (a poll running).
    pub refused: AtomicUsize,
}

impl Wake for RefCellParent {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.woken.store(true, Ordering::SeqCst);
        if thread::current().id() != self.owner {
            return;
        }
        HOOK.with(|hook| match hook.try_borrow_mut() {
            Ok(mut hook) => {
                if let Some(poll) = hook.as_mut() {
                    self.reentered.fetch_add(1, Ordering::SeqCst);
                    poll();
                }
            }
            Err(_) => {
                self.refused.fetch_add(1, Ordering::SeqCst);
            }
        });
    }
}

thread_local! {
    /// The primitive of the drop-from-wake test, dropped by its parent waker.
    pub static DOOMED: RefCell<Option<Primitive>> = const { RefCell::new(None) };
}

/// A parent waker that, on the owning thread, drops the primitive from inside `wake`: the
/// primitive's wake path is still on the stack below it.
#[derive(Debug)]
pub struct DroppingParent {
    /// The thread whose wakes drop the primitive.
    pub owner: ThreadId,
    /// Whether a wake dropped it.
    pub dropped: AtomicBool,
}

impl Wake for DroppingParent {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        if thread::current().id() != self.owner {
            return;
        }
        let doomed = DOOMED.with(|doomed| doomed.try_borrow_mut().ok()?.take());
        if let Some(primitive) = doomed {
            drop(primitive);
            self.dropped.store(true, Ordering::SeqCst);
        }
    }
}
