//! Buffers sharing one `Limit`'s budget: a unit given back, and a raise, wake the buffer the
//! budget stopped.
//!
//! Each model runs real `UnorderedBuffer`s steered by one limit of 1, each buffer polled to its
//! end by loom's `block_on` on a thread of its own. A buffer that returned `Pending` because
//! the budget stopped it is polled again only if `Limit` wakes it, so a lost wake shows as a
//! deadlock. A future of a buffer waits on a `Gate` that another thread opens: the buffer
//! holds its unit across polls while the other buffer asks for one.
//!
//! Asserts: every output comes, the futures running together never outnumber the limit's
//! value when they started, and every unit is given back.
#![cfg(pinfold_loom)]

use std::future::{Future, poll_fn};
use std::pin::{Pin, pin};
use std::task::{Context, Poll, Waker};

use futures_core::Stream;
use loom::future::{AtomicWaker, block_on};
use loom::sync::Arc;
use loom::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use loom::thread;
use loom_tests::check;
use pinfold_buffer::{BufferExt, Limit, iter_stream};

type Job = Pin<Box<dyn Future<Output = usize> + Send>>;

/// A one-shot signal from another thread: a future waiting on it finishes once it is opened.
#[derive(Debug)]
struct Gate {
    open: AtomicBool,
    waker: AtomicWaker,
}

impl Gate {
    fn new() -> Arc<Self> {
        Arc::new(Self {
            open: AtomicBool::new(false),
            waker: AtomicWaker::new(),
        })
    }

    fn open(&self) {
        // Release pairs with the Acquire in `wait`.
        self.open.store(true, Ordering::Release);
        self.waker.wake();
    }
}

/// A future that outputs `id` once `gate` is open.
fn wait(gate: &Arc<Gate>, id: usize) -> impl Future<Output = usize> + Send + 'static {
    let gate = Arc::clone(gate);
    poll_fn(move |cx| {
        gate.waker.register_by_ref(cx.waker());
        // Acquire pairs with the Release in `open`.
        if gate.open.load(Ordering::Acquire) {
            Poll::Ready(id)
        } else {
            Poll::Pending
        }
    })
}

/// `job`, counted in `running` from its first poll to its output; fails if the futures running
/// across the buffers then outnumber the limit's value.
fn counted(
    running: &Arc<AtomicUsize>,
    limit: &Limit,
    job: impl Future<Output = usize> + Send + 'static,
) -> Job {
    let running = Arc::clone(running);
    let limit = limit.clone();
    Box::pin(async move {
        let before = running.fetch_add(1, Ordering::SeqCst);
        assert!(
            before < limit.get(),
            "{} futures run at once under a limit of {}",
            before + 1,
            limit.get()
        );
        let out = job.await;
        running.fetch_sub(1, Ordering::SeqCst);
        out
    })
}

/// Every output of an unordered buffer of `jobs` steered by `limit`, polled to its end.
fn run(limit: &Limit, jobs: Vec<Job>) -> Vec<usize> {
    let mut buffer = pin!(iter_stream(jobs).unordered_buffer(2).limit(limit.clone()));
    let mut outputs = Vec::new();
    while let Some(out) = block_on(poll_fn(|cx| buffer.as_mut().poll_next(cx))) {
        outputs.push(out);
    }
    outputs.sort_unstable();
    outputs
}

#[test]
fn buffer_limit_shared_unit_given_back_wakes_the_other_buffer() {
    check(
        "buffer_limit_shared_unit_given_back_wakes_the_other_buffer",
        || {
            let limit = Limit::new(1);
            let running = Arc::new(AtomicUsize::new(0));
            let gates = [Gate::new(), Gate::new()];
            let threads: Vec<_> = (0..2)
                .map(|me| {
                    let limit = limit.clone();
                    let jobs = vec![
                        counted(&running, &limit, wait(&gates[me], me)),
                        counted(&running, &limit, async move { 2 + me }),
                    ];
                    let other = Arc::clone(&gates[1 - me]);
                    thread::spawn(move || {
                        other.open();
                        run(&limit, jobs)
                    })
                })
                .collect();
            for (me, thread) in threads.into_iter().enumerate() {
                assert_eq!(thread.join().unwrap(), [me, 2 + me]);
            }
            assert_eq!(limit.in_use(), 0, "every unit is given back");
        },
    );
}

#[test]
fn buffer_limit_shared_raise_wakes_the_waiting_buffer() {
    check("buffer_limit_shared_raise_wakes_the_waiting_buffer", || {
        let limit = Limit::new(1);
        let running = Arc::new(AtomicUsize::new(0));
        let gate = Gate::new();
        // The first buffer takes the unit and holds it until the second buffer is done: the
        // second can start only once the limit is raised.
        let mut holder = Box::pin(
            iter_stream(vec![counted(&running, &limit, wait(&gate, 0))])
                .unordered_buffer(1)
                .limit(limit.clone()),
        );
        let noop = &mut Context::from_waker(Waker::noop());
        assert!(holder.as_mut().poll_next(noop).is_pending());
        assert_eq!(limit.in_use(), 1);
        let holder = thread::spawn(move || block_on(poll_fn(|cx| holder.as_mut().poll_next(cx))));
        let waiter = {
            let limit = limit.clone();
            let running = Arc::clone(&running);
            thread::spawn(move || {
                let outputs = run(&limit, vec![counted(&running, &limit, async { 1 })]);
                gate.open();
                outputs
            })
        };
        limit.set(2);
        assert_eq!(waiter.join().unwrap(), [1]);
        assert_eq!(holder.join().unwrap(), Some(0));
        assert_eq!(limit.in_use(), 0, "every unit is given back");
    });
}
