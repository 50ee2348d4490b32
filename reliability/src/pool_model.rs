//! The pool and its batching writer against a model, with a panic at every call into user code.
//!
//! A program runs on two pools at once, each polled by hand with the task's wakers (two wakers
//! on one [`WakerSwitches`], which do not `will_wake` each other):
//!
//! - **The pool**: waiters in [`acquire`](BufferPool::acquire) (a first poll, later polls with
//!   either waker, a cancel), [`try_acquire`](BufferPool::try_acquire), the release of a `Buf`
//!   here or on another thread, a `Buf` frozen into packets and the drop of a packet here or on
//!   another thread. A model says where every buffer is: free, held by the test (a `Buf`, or
//!   the packets of one), or handed to a waiter, and which waiters queued, in order.
//! - **The writer** over a second pool: writer handles as tasks, each reserving room for one
//!   message, filling it and committing it (waiting for a buffer while the pool is out of
//!   them); clones, drops and flushes of the handles; the flusher's polls, and the drop of the
//!   packets it gave, here or on another thread.
//!
//! [`sweep`] runs a program once to count the calls into the task's wakers (clone, wake,
//! wake_by_ref, drop), then once per call with that call panicking. Until the panic, after
//! every operation:
//!
//! - the pool's [`available`](BufferPool::available) is the model's free count, a waiter is
//!   ready exactly when the model handed it a buffer, first come first served, a release that
//!   hands a buffer over wakes the task, and no waiter waits while a buffer is free;
//! - every message the flusher gives was committed, arrives once, and each handle's arrive in
//!   the order it committed them.
//!
//! The run stops at the panic (it reaches the code that ran the waker: a poll, `try_acquire`,
//! a drop, a commit, a flush); then, with wakers that do not panic:
//!
//! - **nothing lost**: every waiter polled once more, the buffers free, held and claimed add
//!   up to the pool's count;
//! - **order kept**: while waiters wait, each release wakes the oldest, and only it, and it is
//!   ready (the waiters that queued before the panic in their order, then the rest);
//! - **usable**: every buffer can be taken again, and a fresh waiter is served by a release;
//! - **the writer delivers**: once its handles are dropped, the flusher gives every message
//!   committed (those whose commit panicked may or may not be in), then ends, and the second
//!   pool has all its buffers back;
//! - **nothing leaked**: no clone of the task's wakers is left.

use std::collections::BTreeSet;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use pinfold_pool::{Acquire, Buf, BufferPool, Packet, ReserveError, Writer, writer};
use pinfold_testkit::fault_clock::FaultClock;
use pinfold_testkit::panicking_waker::{
    CLONE_PANIC, DROP_PANIC, WAKE_BY_REF_PANIC, WAKE_PANIC, WakerSwitches, panicking_waker_on,
};
use pinfold_testkit::waker::{WakeCounter, counting_waker};
use proptest::prelude::*;

use crate::fault::{expecting_panics, panic_message};
use crate::program::Pick;

/// Which of the task's two wakers a poll is given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Which {
    /// The first.
    First,
    /// The second: a poll with it after one with the first replaces the waker kept.
    Second,
}

/// One operation of a program.
#[derive(Debug, Clone)]
// The fields are named in the doc of their variant.
#[allow(missing_docs)]
pub enum Op {
    /// A new waiter in `acquire`, polled once.
    Acquire { waker: Which },
    /// Poll the `waiter`-th waiter again.
    Poll { waiter: Pick, waker: Which },
    /// Drop the `waiter`-th waiter.
    Cancel { waiter: Pick },
    /// `try_acquire`.
    TryAcquire,
    /// Drop the `buf`-th `Buf` held, here or on another thread.
    Release { buf: Pick, on_thread: bool },
    /// Freeze the `buf`-th `Buf` held into `packets` packets of it.
    Freeze { buf: Pick, packets: u8 },
    /// Drop the `packet`-th packet held, here or on another thread.
    DropPacket { packet: Pick, on_thread: bool },
    /// Start a message of `len` bytes on the `handle`-th writer handle, or, if it is writing
    /// one, poll it again.
    Write { handle: Pick, len: u8, waker: Which },
    /// Clone the `handle`-th writer handle (if it is not writing).
    CloneWriter { handle: Pick },
    /// Drop the `handle`-th writer handle, and the message it is writing.
    DropWriter { handle: Pick },
    /// `Writer::flush` on the `handle`-th handle (if it is not writing).
    Flush { handle: Pick },
    /// Poll the flusher's `next_batch` once (dropped if pending), keeping the packets it gives.
    NextBatch { waker: Which },
    /// Drop every packet the flusher gave, here or on another thread.
    DropDelivered { on_thread: bool },
}

fn pick() -> impl Strategy<Value = Pick> {
    any::<u64>().prop_map(Pick)
}

fn which() -> impl Strategy<Value = Which> {
    prop_oneof![Just(Which::First), Just(Which::Second)]
}

/// An [`Op`]: the pool's and the writer's about evenly.
pub fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => which().prop_map(|waker| Op::Acquire { waker }),
        3 => (pick(), which()).prop_map(|(waiter, waker)| Op::Poll { waiter, waker }),
        1 => pick().prop_map(|waiter| Op::Cancel { waiter }),
        1 => Just(Op::TryAcquire),
        4 => (pick(), any::<bool>()).prop_map(|(buf, on_thread)| Op::Release { buf, on_thread }),
        1 => (pick(), 1..=3u8).prop_map(|(buf, packets)| Op::Freeze { buf, packets }),
        2 => (pick(), any::<bool>())
            .prop_map(|(packet, on_thread)| Op::DropPacket { packet, on_thread }),
        6 => (pick(), MIN_MESSAGE as u8..=MAX_MESSAGE as u8, which())
            .prop_map(|(handle, len, waker)| Op::Write { handle, len, waker }),
        1 => pick().prop_map(|handle| Op::CloneWriter { handle }),
        1 => pick().prop_map(|handle| Op::DropWriter { handle }),
        1 => pick().prop_map(|handle| Op::Flush { handle }),
        3 => which().prop_map(|waker| Op::NextBatch { waker }),
        2 => any::<bool>().prop_map(|on_thread| Op::DropDelivered { on_thread }),
    ]
}

/// A program: the pools' sizes and up to `max_ops` operations. A pool has 1 to 4 buffers,
/// so that waiters queue, or, one time in four, 256: then an acquire takes a batch of 2 from
/// the shared list into its thread's stock, and a release into a stock that holds two batches
/// gives one back.
pub fn program(max_ops: usize) -> impl Strategy<Value = (usize, usize, Vec<Op>)> {
    let buffers = prop_oneof![3 => 1..=4usize, 1 => Just(256usize)];
    (
        buffers,
        1..=4usize,
        prop::collection::vec(op(), 1..=max_ops),
    )
}

/// The size of the pools' buffers.
const BUFFER: usize = 32;
/// A message: its length, its handle, its sequence number (2 bytes), then its handle again.
const MIN_MESSAGE: usize = 4;
const MAX_MESSAGE: usize = 20;
/// The most writer handles made in one program (a handle's number is a byte).
const MAX_HANDLES: usize = 32;

/// The payload of a panic of the task's waker.
const WAKER_PANICS: [&str; 4] = [CLONE_PANIC, WAKE_PANIC, WAKE_BY_REF_PANIC, DROP_PANIC];

/// What went wrong, with where.
pub type Mismatch = String;

/// How a sweep went.
#[derive(Debug, Clone, Copy)]
pub struct Sweep {
    /// The calls into the task's wakers in the run without a panic.
    pub calls: usize,
}

/// Runs `program` without a panic, then once with each waker call in turn panicking, checking
/// the model and the contract after each (see the [module documentation](self)).
pub fn sweep(
    pool_buffers: usize,
    writer_buffers: usize,
    program: &[Op],
) -> Result<Sweep, Mismatch> {
    let calls = run(pool_buffers, writer_buffers, program, None)
        .map_err(|m| format!("without a panic: {m}"))?;
    for call in 1..=calls {
        run(pool_buffers, writer_buffers, program, Some(call))
            .map_err(|m| format!("panic at waker call {call} of {calls}: {m}"))?;
    }
    Ok(Sweep { calls })
}

/// `f`'s result, or the message of the waker's panic in it (any other panic goes on).
fn caught<R>(f: impl FnOnce() -> R) -> Result<R, &'static str> {
    expecting_panics(|| catch_unwind(AssertUnwindSafe(f))).map_err(|payload| {
        let message = panic_message(&*payload);
        WAKER_PANICS
            .into_iter()
            .find(|known| *known == message)
            .unwrap_or_else(|| std::panic::resume_unwind(payload))
    })
}

/// Drops `value` on a thread of its own, joined; the message of a waker's panic there.
fn drop_on_thread<T: Send>(value: T) -> Result<(), &'static str> {
    std::thread::scope(|scope| {
        scope
            .spawn(move || caught(move || drop(value)))
            .join()
            .expect("the dropping thread's panics are caught")
    })
}

/// A task's two wakers (on the run's clock), and whether it waits for a wake.
struct TaskWakers {
    wakers: [Waker; 2],
    switches: Arc<WakerSwitches>,
    /// The task's wakes counted at its last `Pending`, until it is ready.
    pending: Option<usize>,
}

impl TaskWakers {
    fn new(clock: &Arc<FaultClock>) -> Self {
        let (first, switches) = panicking_waker_on(clock.clone());
        let second = switches.another_waker();
        Self {
            wakers: [first, second],
            switches,
            pending: None,
        }
    }

    fn waker(&self, which: Which) -> &Waker {
        &self.wakers[which as usize]
    }

    /// Notes a poll's outcome: a task ready after a `Pending` must have been woken since.
    fn polled(&mut self, ready: bool, what: &str) -> Result<(), Mismatch> {
        let wakes = self.switches.wakes();
        if !ready {
            self.pending = Some(wakes);
        } else if self.pending.take() == Some(wakes) {
            return Err(format!(
                "{what} was ready with no wake since it was pending"
            ));
        }
        Ok(())
    }
}

/// A waiter of the pool.
struct Waiter<'p> {
    future: Pin<Box<Acquire<'p>>>,
    /// Whether it returned `Pending` (so it queued) with no panic since it was made.
    queued: bool,
}

/// A task writing one message: it owns its handle, and gives it back once it committed.
type Task = Pin<Box<dyn Future<Output = Result<Writer, ReserveError>>>>;

/// What a writer handle does: nothing, or write its message with this sequence number.
enum Doing {
    Idle(Writer),
    Writing(Task, u16),
}

/// A writer handle: its number (the order it was made in), what it does, its task's wakers.
struct Handle {
    id: u8,
    doing: Doing,
    task: TaskWakers,
}

struct Run<'p> {
    pool: &'p BufferPool,
    buffers: usize,
    /// The wakers of the tasks waiting in the pool.
    task: TaskWakers,
    /// Waiters in the order they queued (the model's queue), then those not queued.
    waiters: Vec<Waiter<'p>>,
    /// How many of the first waiters hold a buffer handed to them.
    handed: usize,
    /// Buffers the model says are free.
    free: usize,
    held: Vec<Buf>,
    /// Packets, each with the number of the buffer it is of.
    packets: Vec<(usize, Packet)>,
    frozen: usize,
    // The writer.
    writer_pool: &'p BufferPool,
    writer_buffers: usize,
    /// The handles alive.
    handles: Vec<Handle>,
    flusher: Option<writer::Flusher>,
    flusher_task: TaskWakers,
    clock: Arc<FaultClock>,
    /// The wakers' switches of the handles dropped, for the count of clones left at the end.
    spent: Vec<Arc<WakerSwitches>>,
    flusher_done: bool,
    delivered: Vec<Packet>,
    made_handles: u8,
    next_seq: Vec<u16>,
    /// Messages committed, by handle; and those whose commit panicked (in or not).
    committed: BTreeSet<(u8, u16)>,
    maybe: BTreeSet<(u8, u16)>,
    arrived: BTreeSet<(u8, u16)>,
    /// The last sequence number arrived from each handle.
    last_arrived: Vec<Option<u16>>,
}

/// Runs `program` with waker call `panic_at` panicking (if any): the model until the panic,
/// then the contract after it; the number of waker calls made before the checks after the
/// program.
fn run(
    buffers: usize,
    writer_buffers: usize,
    program: &[Op],
    panic_at: Option<usize>,
) -> Result<usize, Mismatch> {
    let pool = BufferPool::new(buffers, BUFFER);
    let writer_pool = BufferPool::new(writer_buffers, BUFFER);
    let clock = FaultClock::new();
    let (writer, flusher) = writer::channel(&writer_pool);
    let mut run = Run {
        pool: &pool,
        buffers,
        task: TaskWakers::new(&clock),
        waiters: Vec::new(),
        handed: 0,
        free: buffers,
        held: Vec::new(),
        packets: Vec::new(),
        frozen: 0,
        writer_pool: &writer_pool,
        writer_buffers,
        handles: vec![Handle {
            id: 0,
            doing: Doing::Idle(writer),
            task: TaskWakers::new(&clock),
        }],
        flusher: Some(flusher),
        flusher_task: TaskWakers::new(&clock),
        clock: clock.clone(),
        spent: Vec::new(),
        flusher_done: false,
        delivered: Vec::new(),
        made_handles: 1,
        next_seq: vec![0],
        committed: BTreeSet::new(),
        maybe: BTreeSet::new(),
        arrived: BTreeSet::new(),
        last_arrived: vec![None],
    };
    clock.arm(panic_at.unwrap_or(0));
    let mut panicked = None;
    for (step, op) in program.iter().enumerate() {
        match run.op(op) {
            Ok(Ok(())) => {}
            Ok(Err(message)) => {
                panicked = Some(message);
                break;
            }
            Err(mismatch) => return Err(format!("step {step} ({op:?}): {mismatch}")),
        }
        run.check()
            .map_err(|m| format!("step {step} ({op:?}), after it: {m}"))?;
    }
    if panic_at.is_some() && (panicked.is_none() || !clock.fired()) {
        return Err("the chosen waker call was not made, or its panic was swallowed".into());
    }
    let calls = clock.calls();
    clock.arm(0);
    let mut all = vec![run.task.switches.clone(), run.flusher_task.switches.clone()];
    all.extend(
        run.handles
            .iter()
            .map(|handle| handle.task.switches.clone()),
    );
    let after = if panicked.is_some() {
        ", after the panic"
    } else {
        ""
    };
    run.settle_pool()
        .map_err(|m| format!("the pool{after}: {m}"))?;
    run.settle_writer()
        .map_err(|m| format!("the writer{after}: {m}"))?;
    all.append(&mut run.spent);
    drop(run);
    let live: usize = all.iter().map(|switches| switches.live()).sum();
    if live != 0 {
        return Err(format!("{live} clones of the tasks' wakers left behind"));
    }
    Ok(calls)
}

/// What an operation did: `Err` with the waker's panic message if one panicked in it.
type Done = Result<(), &'static str>;

impl Run<'_> {
    /// Where a buffer given back goes: to the first waiter not yet handed one, or free.
    fn give_back(&mut self) {
        if self.handed < self.queued() {
            self.handed += 1;
        } else {
            self.free += 1;
        }
    }

    fn queued(&self) -> usize {
        self.waiters.iter().filter(|waiter| waiter.queued).count()
    }

    /// A release or a drop that the model says gives a buffer back: the task is woken if it
    /// went to a waiter.
    fn released(&mut self, done: Done, wakes_before: usize) -> Result<Done, Mismatch> {
        let handed = self.handed;
        self.give_back();
        if done.is_ok() && self.handed > handed && self.task.switches.wakes() != wakes_before + 1 {
            return Err("a buffer handed to a waiter did not wake its task once".into());
        }
        Ok(done)
    }

    fn op(&mut self, op: &Op) -> Result<Done, Mismatch> {
        let wakes = self.task.switches.wakes();
        match *op {
            Op::Acquire { waker } => {
                let mut future = Box::pin(self.pool.acquire());
                let waker = self.task.waker(waker);
                let poll = caught(|| future.as_mut().poll(&mut Context::from_waker(waker)));
                self.waiters.push(Waiter {
                    future,
                    queued: false,
                });
                let at = self.waiters.len() - 1;
                self.polled(at, poll)
            }
            Op::Poll { waiter, waker } => {
                if self.waiters.is_empty() {
                    return Ok(Ok(()));
                }
                let at = waiter.index(self.waiters.len());
                let waker = self.task.waker(waker);
                let future = &mut self.waiters[at].future;
                let poll = caught(|| future.as_mut().poll(&mut Context::from_waker(waker)));
                self.polled(at, poll)
            }
            Op::Cancel { waiter } => {
                if self.waiters.is_empty() {
                    return Ok(Ok(()));
                }
                let at = waiter.index(self.waiters.len());
                let gone = self.waiters.remove(at);
                let had = gone.queued && at < self.handed;
                let done = caught(move || drop(gone));
                if had {
                    self.handed -= 1;
                    return self.released(done, wakes);
                }
                Ok(done)
            }
            Op::TryAcquire => {
                let got = caught(|| self.pool.try_acquire());
                match got {
                    Ok(Some(buf)) if self.free > 0 => {
                        self.free -= 1;
                        self.held.push(buf);
                    }
                    Ok(Some(_)) => {
                        return Err("try_acquire took a buffer the model has none of".into());
                    }
                    Ok(None) if self.free > 0 => {
                        return Err(format!("try_acquire found none of {} free", self.free));
                    }
                    Ok(None) => {}
                    Err(message) => return Ok(Err(message)),
                }
                Ok(Ok(()))
            }
            Op::Release { buf, on_thread } => {
                if self.held.is_empty() {
                    return Ok(Ok(()));
                }
                let buf = self.held.remove(buf.index(self.held.len()));
                let done = if on_thread {
                    drop_on_thread(buf)
                } else {
                    caught(move || drop(buf))
                };
                self.released(done, wakes)
            }
            Op::Freeze { buf, packets } => {
                if self.held.is_empty() {
                    return Ok(Ok(()));
                }
                let packet = self.held.remove(buf.index(self.held.len())).freeze();
                self.frozen += 1;
                for _ in 1..packets {
                    self.packets.push((self.frozen, packet.clone()));
                }
                self.packets.push((self.frozen, packet));
                Ok(Ok(()))
            }
            Op::DropPacket { packet, on_thread } => {
                if self.packets.is_empty() {
                    return Ok(Ok(()));
                }
                let (of, packet) = self.packets.remove(packet.index(self.packets.len()));
                let last = !self.packets.iter().any(|(other, _)| *other == of);
                let done = if on_thread {
                    drop_on_thread(packet)
                } else {
                    caught(move || drop(packet))
                };
                if last {
                    return self.released(done, wakes);
                }
                Ok(done)
            }
            Op::Write { handle, len, waker } => self.write(handle, len, waker),
            Op::CloneWriter { handle } => {
                if self.handles.is_empty() || usize::from(self.made_handles) == MAX_HANDLES {
                    return Ok(Ok(()));
                }
                let at = handle.index(self.handles.len());
                if let Doing::Idle(writer) = &self.handles[at].doing {
                    let clone = writer.clone();
                    self.handles.push(Handle {
                        id: self.made_handles,
                        doing: Doing::Idle(clone),
                        task: TaskWakers::new(&self.clock),
                    });
                    self.made_handles += 1;
                    self.next_seq.push(0);
                    self.last_arrived.push(None);
                }
                Ok(Ok(()))
            }
            Op::DropWriter { handle } => {
                if self.handles.is_empty() {
                    return Ok(Ok(()));
                }
                let gone = self.handles.remove(handle.index(self.handles.len()));
                self.spent.push(gone.task.switches.clone());
                Ok(caught(move || drop(gone)))
            }
            Op::Flush { handle } => {
                if self.handles.is_empty() {
                    return Ok(Ok(()));
                }
                match &self.handles[handle.index(self.handles.len())].doing {
                    Doing::Idle(writer) => Ok(caught(|| writer.flush())),
                    Doing::Writing(..) => Ok(Ok(())),
                }
            }
            Op::NextBatch { waker } => {
                let Some(flusher) = self.flusher.as_mut() else {
                    return Ok(Ok(()));
                };
                let polled = poll_flusher(flusher, self.flusher_task.waker(waker));
                if let Ok(poll) = &polled {
                    self.flusher_task.polled(poll.is_ready(), "the flusher")?;
                }
                self.batch_polled(polled)
            }
            Op::DropDelivered { on_thread } => {
                let delivered = std::mem::take(&mut self.delivered);
                Ok(if on_thread {
                    drop_on_thread(delivered)
                } else {
                    caught(move || drop(delivered))
                })
            }
        }
    }

    /// Records what a poll of waiter `at` gave, against the model.
    fn polled(
        &mut self,
        at: usize,
        poll: Result<Poll<Buf>, &'static str>,
    ) -> Result<Done, Mismatch> {
        let waiter = &mut self.waiters[at];
        match poll {
            Err(message) => {
                // A first poll that panicked queued nothing; a later one keeps the waiter's
                // place, and the buffer handed to it, if any.
                Ok(Err(message))
            }
            Ok(Poll::Ready(buf)) => {
                let expected = if waiter.queued {
                    at < self.handed
                } else {
                    self.free > 0
                };
                if !expected {
                    return Err(format!(
                        "waiter {at} got a buffer before its turn ({} handed, {} free)",
                        self.handed, self.free
                    ));
                }
                if waiter.queued {
                    self.handed -= 1;
                } else {
                    self.free -= 1;
                }
                self.waiters.remove(at);
                self.held.push(buf);
                Ok(Ok(()))
            }
            Ok(Poll::Pending) => {
                if waiter.queued {
                    if at < self.handed {
                        return Err(format!("waiter {at} was handed a buffer and still waits"));
                    }
                } else {
                    if self.free > 0 {
                        return Err(format!(
                            "a new waiter waits with {} buffers free",
                            self.free
                        ));
                    }
                    // It queues behind the others.
                    let mut waiter = self.waiters.remove(at);
                    waiter.queued = true;
                    let queued = self.queued();
                    self.waiters.insert(queued, waiter);
                }
                Ok(Ok(()))
            }
        }
    }

    /// A message on the `handle`-th handle: started, or polled again.
    fn write(&mut self, handle: Pick, len: u8, which: Which) -> Result<Done, Mismatch> {
        if self.handles.is_empty() {
            return Ok(Ok(()));
        }
        let at = handle.index(self.handles.len());
        let Handle {
            id,
            doing,
            mut task,
        } = self.handles.remove(at);
        let (mut future, seq) = match doing {
            Doing::Writing(future, seq) => (future, seq),
            Doing::Idle(mut writer) => {
                let seq = self.next_seq[usize::from(id)];
                self.next_seq[usize::from(id)] += 1;
                let message = message(id, seq, usize::from(len));
                let future: Task = Box::pin(async move {
                    let mut room = writer.reserve(message.len()).await?;
                    room.copy_from_slice(&message);
                    room.commit();
                    Ok(writer)
                });
                (future, seq)
            }
        };
        let waker = task.waker(which);
        let poll = caught(|| future.as_mut().poll(&mut Context::from_waker(waker)));
        if let Ok(poll) = &poll {
            task.polled(poll.is_ready(), "a writer")?;
        }
        match poll {
            Ok(Poll::Pending) => {
                let doing = Doing::Writing(future, seq);
                self.handles.insert(at, Handle { id, doing, task });
                Ok(Ok(()))
            }
            Ok(Poll::Ready(Ok(writer))) => {
                let doing = Doing::Idle(writer);
                self.handles.insert(at, Handle { id, doing, task });
                self.committed.insert((id, seq));
                Ok(Ok(()))
            }
            Ok(Poll::Ready(Err(error))) => Err(format!("a reservation failed: {error:?}")),
            Err(panic) => {
                // The task is spent, and its handle with it; its message may have been
                // committed (a commit's wake of the flusher is the last thing it does).
                self.maybe.insert((id, seq));
                self.spent.push(task.switches.clone());
                let _ = caught(move || drop(future));
                Ok(Err(panic))
            }
        }
    }

    /// What a poll of the flusher gave: the packets are kept and read.
    fn batch_polled(&mut self, polled: Polled) -> Result<Done, Mismatch> {
        match polled {
            Ok(Poll::Ready(Some(packets))) => {
                if packets.is_empty() {
                    return Err("an empty batch".into());
                }
                for packet in &packets {
                    self.arrive(packet)?;
                }
                self.delivered.extend(packets);
                Ok(Ok(()))
            }
            Ok(Poll::Ready(None)) => {
                if !self.handles.is_empty() {
                    return Err("the flusher ended while handles live".into());
                }
                self.flusher_done = true;
                Ok(Ok(()))
            }
            Ok(Poll::Pending) => Ok(Ok(())),
            Err(panic) => Ok(Err(panic)),
        }
    }

    /// Checks the messages of a packet as they arrive.
    fn arrive(&mut self, packet: &[u8]) -> Result<(), Mismatch> {
        let mut rest = packet;
        while !rest.is_empty() {
            let len = usize::from(rest[0]);
            if !(MIN_MESSAGE..=MAX_MESSAGE).contains(&len) || len > rest.len() {
                return Err(format!("a torn message in a packet: {packet:?}"));
            }
            let (bytes, after) = rest.split_at(len);
            rest = after;
            let id = bytes[1];
            let seq = u16::from_le_bytes([bytes[2], bytes[3]]);
            if bytes != message(id, seq, len).as_slice() {
                return Err(format!("message {id}.{seq} arrived corrupted: {bytes:?}"));
            }
            let key = (id, seq);
            if !self.committed.contains(&key) && !self.maybe.contains(&key) {
                return Err(format!(
                    "message {id}.{seq} arrived and was never committed"
                ));
            }
            if !self.arrived.insert(key) {
                return Err(format!("message {id}.{seq} arrived twice"));
            }
            let last = &mut self.last_arrived[usize::from(id)];
            if last.is_some_and(|last| last >= seq) {
                return Err(format!(
                    "handle {id}'s message {seq} arrived after its message {}",
                    last.unwrap_or_default()
                ));
            }
            *last = Some(seq);
        }
        Ok(())
    }

    /// The model against the pool, after an operation without a panic.
    fn check(&self) -> Result<(), Mismatch> {
        let available = self.pool.available();
        if available != self.free {
            return Err(format!(
                "{available} buffers available, the model has {} free",
                self.free
            ));
        }
        if self.free > 0 && self.queued() > self.handed {
            return Err(format!(
                "{} waiters wait with {} buffers free",
                self.queued() - self.handed,
                self.free
            ));
        }
        let frozen: BTreeSet<usize> = self.packets.iter().map(|(of, _)| *of).collect();
        let accounted = self.free + self.held.len() + frozen.len() + self.handed;
        if accounted != self.buffers {
            return Err(format!(
                "the model lost count: {accounted} buffers of {}",
                self.buffers
            ));
        }
        Ok(())
    }

    /// After the program: every waiter served in order as buffers come back, every buffer
    /// back, the pool usable.
    fn settle_pool(&mut self) -> Result<(), Mismatch> {
        // Each waiter polled once with a waker of its own: queued waiters keep their order,
        // those not queued queue behind them now.
        let mut waiting: Vec<(Pin<Box<Acquire<'_>>>, Waker, Arc<WakeCounter>)> = Vec::new();
        for mut waiter in std::mem::take(&mut self.waiters) {
            let (waker, counter) = counting_waker();
            match waiter
                .future
                .as_mut()
                .poll(&mut Context::from_waker(&waker))
            {
                Poll::Ready(buf) => self.held.push(buf),
                Poll::Pending => waiting.push((waiter.future, waker, counter)),
            }
        }
        let frozen: BTreeSet<usize> = self.packets.iter().map(|(of, _)| *of).collect();
        let available = self.pool.available();
        let accounted = available + self.held.len() + frozen.len();
        if accounted != self.buffers {
            return Err(format!(
                "{available} available, {} held, {} frozen: {accounted} buffers of {}",
                self.held.len(),
                frozen.len(),
                self.buffers
            ));
        }
        if !waiting.is_empty() && available > 0 {
            return Err(format!(
                "{} waiters wait with {available} buffers free",
                waiting.len()
            ));
        }
        // Each buffer given back goes to the oldest waiter, and wakes only it.
        while !waiting.is_empty() {
            if let Some(buf) = self.held.pop() {
                drop(buf);
            } else if let Some((of, _)) = self.packets.first() {
                let of = *of;
                self.packets.retain(|(other, _)| *other != of);
            } else {
                return Err(format!(
                    "{} waiters wait and no buffer is out",
                    waiting.len()
                ));
            }
            let woken: Vec<usize> = (0..waiting.len())
                .filter(|&at| waiting[at].2.count() > 0)
                .collect();
            if woken != [0] {
                return Err(format!(
                    "a release woke waiters {woken:?} of {}, not the oldest",
                    waiting.len()
                ));
            }
            let (mut future, waker, _) = waiting.remove(0);
            match future.as_mut().poll(&mut Context::from_waker(&waker)) {
                Poll::Ready(buf) => self.held.push(buf),
                Poll::Pending => return Err("the oldest waiter, woken, still waits".into()),
            }
        }
        self.held.clear();
        self.packets.clear();
        let available = self.pool.available();
        if available != self.buffers {
            return Err(format!("{available} of {} buffers came back", self.buffers));
        }
        // Usable: every buffer taken again, and a new waiter served by a release.
        let all: Vec<Buf> = (0..self.buffers)
            .filter_map(|_| self.pool.try_acquire())
            .collect();
        if all.len() != self.buffers || self.pool.try_acquire().is_some() {
            return Err(format!(
                "took {} of {} buffers again",
                all.len(),
                self.buffers
            ));
        }
        let (waker, counter) = counting_waker();
        let mut fresh = Box::pin(self.pool.acquire());
        if fresh
            .as_mut()
            .poll(&mut Context::from_waker(&waker))
            .is_ready()
        {
            return Err("a waiter was served from an empty pool".into());
        }
        drop(all);
        if counter.count() != 1
            || fresh
                .as_mut()
                .poll(&mut Context::from_waker(&waker))
                .is_pending()
        {
            return Err("a new waiter was not served by a release".into());
        }
        Ok(())
    }

    /// After the program: the handles dropped, the flusher gives every committed message and
    /// ends, and the writer's pool has its buffers back.
    fn settle_writer(&mut self) -> Result<(), Mismatch> {
        self.spent.extend(
            self.handles
                .drain(..)
                .map(|handle| handle.task.switches.clone()),
        );
        self.delivered.clear();
        let (waker, _) = counting_waker();
        for _ in 0..=4 * self.writer_buffers + 8 {
            if self.flusher_done {
                break;
            }
            let Some(flusher) = self.flusher.as_mut() else {
                break;
            };
            let polled = poll_flusher(flusher, &waker);
            self.batch_polled(polled)?
                .map_err(|panic| format!("a waker that does not panic panicked: {panic}"))?;
            self.delivered.clear();
        }
        if !self.flusher_done {
            return Err("the flusher did not end once every handle was dropped".into());
        }
        let lost: Vec<_> = self.committed.difference(&self.arrived).collect();
        if !lost.is_empty() {
            return Err(format!("committed messages never arrived: {lost:?}"));
        }
        self.flusher = None;
        let available = self.writer_pool.available();
        if available != self.writer_buffers {
            return Err(format!(
                "{available} of the writer's {} buffers came back",
                self.writer_buffers
            ));
        }
        Ok(())
    }
}

/// What a poll of the flusher gives: the packets of a batch, the end, or a waker's panic.
type Polled = Result<Poll<Option<Vec<Packet>>>, &'static str>;

/// One poll of the flusher's `next_batch` (dropped if pending): the batch's packets.
fn poll_flusher(flusher: &mut writer::Flusher, waker: &Waker) -> Polled {
    caught(|| {
        let mut next = std::pin::pin!(flusher.next_batch());
        match next.as_mut().poll(&mut Context::from_waker(waker)) {
            Poll::Ready(Some(batch)) => Poll::Ready(Some(batch.to_vec())),
            Poll::Ready(None) => Poll::Ready(None),
            Poll::Pending => Poll::Pending,
        }
    })
}

/// Message `seq` of handle `id`, `len` bytes long.
fn message(id: u8, seq: u16, len: usize) -> Vec<u8> {
    let [low, high] = seq.to_le_bytes();
    let mut bytes = vec![len as u8, id, low, high];
    bytes.resize(len, id);
    bytes
}
