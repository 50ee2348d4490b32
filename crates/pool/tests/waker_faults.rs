//! Every call the pool makes into a task's waker (`clone`, `wake`, `drop`: user code) panics in
//! turn. One schedule of pool operations runs once to count those calls, then once per call
//! with that call panicking; the run stops at the panic. Then the pool agrees with a model of
//! where each buffer is: free, held by a `Buf` or `Packet`, or handed to a waiter (which
//! returns it when polled), adding up to the capacity. No waiter waits while a buffer is free,
//! waiters are served in the order they queued, every buffer comes back, a full pool serves
//! fresh waiters in order once buffers are released, and no clone of the waker leaks.

mod support;

use std::any::Any;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Poll, Waker};
use std::thread;

use pinfold_pool::{Acquire, Buf, BufferPool, Packet};
use pinfold_testkit::panicking_waker::{
    CLONE_PANIC, DROP_PANIC, WAKE_BY_REF_PANIC, WAKE_PANIC, WakerOps, WakerSwitches,
    panicking_waker,
};
use support::{counting_waker, panic_message, poll_with};

/// Which of the task's two wakers a poll is given: they share their switches (so their calls
/// are counted together) and do not `will_wake` each other.
#[derive(Debug, Clone, Copy)]
enum TaskWaker {
    First = 0,
    Second = 1,
}

/// What a poll returned, when no waker panicked in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Ready,
    Pending,
}

struct Waiter<'p> {
    name: &'static str,
    future: Pin<Box<Acquire<'p>>>,
}

/// The pool, what the schedule holds of it, and the model of its waiters.
struct Run<'p> {
    pool: &'p BufferPool,
    wakers: [Waker; 2],
    switches: Arc<WakerSwitches>,
    held: Vec<Buf>,
    /// The packets of each frozen buffer.
    packets: Vec<Vec<Packet>>,
    /// Waiters whose poll returned `Pending`, in the order they queued: each is still queued
    /// or was handed a buffer.
    queued: Vec<Waiter<'p>>,
    /// Waiters whose first poll panicked: they never queued.
    unqueued: Vec<Waiter<'p>>,
    /// Whether a waker panicked: the schedule stops there.
    panicked: bool,
    /// The waker call made to panic, for the messages.
    panic_at: Option<usize>,
}

/// Whether `payload` is a panic of the task's waker; any other panic goes on unwinding.
fn is_waker_panic(payload: Box<dyn Any + Send>) -> bool {
    let message = panic_message(&*payload);
    if [CLONE_PANIC, WAKE_PANIC, WAKE_BY_REF_PANIC, DROP_PANIC].contains(&message) {
        return true;
    }
    resume_unwind(payload)
}

/// `f`'s result, or `None` if the task's waker panicked in it.
fn caught<R>(f: impl FnOnce() -> R) -> Option<R> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(value) => Some(value),
        Err(payload) => {
            assert!(is_waker_panic(payload));
            None
        }
    }
}

impl<'p> Run<'p> {
    fn new(pool: &'p BufferPool, panic_at: Option<usize>) -> Self {
        let (first, switches) = panicking_waker();
        let second = switches.another_waker();
        if let Some(call) = panic_at {
            switches.panic_at_call(call);
        }
        Self {
            pool,
            wakers: [first, second],
            switches,
            held: Vec::new(),
            packets: Vec::new(),
            queued: Vec::new(),
            unqueued: Vec::new(),
            panicked: false,
            panic_at,
        }
    }

    /// Buffers held by a `Buf` or by packets.
    fn held_buffers(&self) -> usize {
        self.held.len() + self.packets.len()
    }

    /// Makes the next clone of the task's waker give the oldest held buffer back first.
    fn release_in_next_clone(&mut self) {
        let buf = self.held.remove(0);
        self.switches.run_once(WakerOps::CLONE, move || drop(buf));
    }

    /// Records what a poll of `waiter` gave: its buffer, or that it waits.
    fn polled(&mut self, waiter: Waiter<'p>, poll: Option<Poll<Buf>>, expect: Outcome) {
        let name = waiter.name;
        match poll {
            Some(Poll::Ready(buf)) => {
                assert_eq!(expect, Outcome::Ready, "{name}: got a buffer");
                self.held.push(buf);
            }
            Some(Poll::Pending) => {
                assert_eq!(expect, Outcome::Pending, "{name}: waits");
                self.queued.push(waiter);
            }
            None => {
                self.panicked = true;
                self.unqueued.push(waiter);
            }
        }
        assert!(
            !self.switches.has_action(),
            "{name}: the waker was not cloned"
        );
    }

    /// A new acquire named `name`, polled once with the first waker.
    fn first_poll(&mut self, name: &'static str, expect: Outcome) {
        if self.panicked {
            return;
        }
        let mut future = Box::pin(self.pool.acquire());
        let poll = caught(|| poll_with(&mut future, &self.wakers[0]));
        self.polled(Waiter { name, future }, poll, expect);
    }

    /// As [`first_poll`](Self::first_poll), on a full pool, with the waker's clone giving a
    /// buffer back: the poll finds it under the lock.
    fn first_poll_releasing(&mut self, name: &'static str, expect: Outcome) {
        if self.panicked {
            return;
        }
        self.release_in_next_clone();
        self.first_poll(name, expect);
    }

    /// Polls the queued waiter `name` again, with `waker`.
    fn repoll(&mut self, name: &'static str, waker: TaskWaker, expect: Outcome) {
        if self.panicked {
            return;
        }
        let at = self.queued.iter().position(|w| w.name == name);
        let mut waiter = self.queued.remove(at.expect("a queued waiter"));
        let poll = caught(|| poll_with(&mut waiter.future, &self.wakers[waker as usize]));
        match poll {
            Some(Poll::Ready(buf)) => {
                assert_eq!(expect, Outcome::Ready, "{name}: got a buffer");
                self.held.push(buf);
            }
            // Still queued, or handed a buffer: its place is kept.
            Some(Poll::Pending) | None => {
                if poll.is_some() {
                    assert_eq!(expect, Outcome::Pending, "{name}: waits");
                }
                self.panicked |= poll.is_none();
                self.queued.insert(at.unwrap(), waiter);
            }
        }
        assert!(
            !self.switches.has_action(),
            "{name}: the waker was not cloned"
        );
    }

    /// As [`repoll`](Self::repoll), with the new waker's clone giving a buffer back, which is
    /// handed to the oldest waiter.
    fn repoll_releasing(&mut self, name: &'static str, waker: TaskWaker, expect: Outcome) {
        if self.panicked {
            return;
        }
        self.release_in_next_clone();
        self.repoll(name, waker, expect);
    }

    /// Drops the queued waiter `name`.
    fn cancel(&mut self, name: &'static str) {
        if self.panicked {
            return;
        }
        let at = self.queued.iter().position(|w| w.name == name);
        let waiter = self.queued.remove(at.expect("a queued waiter"));
        self.panicked = caught(|| drop(waiter)).is_none();
    }

    /// Drops the oldest held `Buf`.
    fn release(&mut self) {
        if self.panicked {
            return;
        }
        let buf = self.held.remove(0);
        self.panicked = caught(|| drop(buf)).is_none();
    }

    /// Drops the oldest held `Buf` on another thread.
    fn release_on_thread(&mut self) {
        if self.panicked {
            return;
        }
        let buf = self.held.remove(0);
        if let Err(payload) = thread::spawn(move || drop(buf)).join() {
            self.panicked = is_waker_panic(payload);
        }
    }

    /// Freezes the oldest held `Buf` into a packet.
    fn freeze(&mut self) {
        if self.panicked {
            return;
        }
        let buf = self.held.remove(0);
        self.packets.push(vec![buf.freeze()]);
    }

    /// Clones a packet of the oldest frozen buffer.
    fn clone_packet(&mut self) {
        if self.panicked {
            return;
        }
        let packet = self.packets[0][0].clone();
        self.packets[0].push(packet);
    }

    /// Drops a packet of the oldest frozen buffer (the last one gives the buffer back).
    fn drop_packet(&mut self) {
        if self.panicked {
            return;
        }
        let packet = self.packets[0].pop().expect("a packet");
        if self.packets[0].is_empty() {
            self.packets.remove(0);
        }
        self.panicked = caught(|| drop(packet)).is_none();
    }

    /// Gives the oldest held buffer back: a `Buf`, or every packet of a frozen buffer.
    fn release_any(&mut self) {
        if self.held.is_empty() {
            self.packets.remove(0);
        } else {
            self.held.remove(0);
        }
    }

    /// The pool agrees with the model, every waiter is served in the order it queued, every
    /// buffer comes back, a full pool serves fresh waiters, and no waker clone leaked.
    fn check(mut self) {
        let pool = self.pool;
        let capacity = pool.capacity();
        let (probe, wakes) = counting_waker();

        // Every buffer is free, held, or handed to a waiter (which returns it now).
        let free = pool.available();
        let held = self.held_buffers();
        let mut handed = 0;
        for mut waiter in std::mem::take(&mut self.queued) {
            match poll_with(&mut waiter.future, &probe) {
                Poll::Ready(buf) => {
                    handed += 1;
                    self.held.push(buf);
                }
                Poll::Pending => self.queued.push(waiter),
            }
        }
        let at = self.panic_at;
        assert_eq!(
            free + held + handed,
            capacity,
            "panic at call {at:?}: free {free} + held {held} + handed to waiters {handed} is \
             not the capacity"
        );

        // A waiter whose first poll panicked takes a free buffer, or queues last.
        for mut waiter in std::mem::take(&mut self.unqueued) {
            match poll_with(&mut waiter.future, &probe) {
                Poll::Ready(buf) => self.held.push(buf),
                Poll::Pending => self.queued.push(waiter),
            }
        }
        if !self.queued.is_empty() {
            assert_eq!(
                pool.available(),
                0,
                "panic at call {at:?}: a buffer is free while tasks wait"
            );
        }

        // Each release serves the oldest waiter, and only it, and wakes it.
        while !self.queued.is_empty() {
            let before = wakes.count();
            self.release_any();
            assert_eq!(
                wakes.count(),
                before + 1,
                "panic at call {at:?}: a release woke no waiter"
            );
            let mut first = self.queued.remove(0);
            let Poll::Ready(buf) = poll_with(&mut first.future, &probe) else {
                panic!(
                    "panic at call {at:?}: {} queued first and was not served",
                    first.name
                );
            };
            self.held.push(buf);
            for later in &mut self.queued {
                assert!(
                    poll_with(&mut later.future, &probe).is_pending(),
                    "panic at call {at:?}: {} was served before {}",
                    later.name,
                    first.name
                );
            }
        }
        self.held.clear();
        self.packets.clear();
        assert_eq!(
            pool.available(),
            capacity,
            "panic at call {at:?}: a buffer did not come back"
        );
        full_pool_serves_fresh_waiters_in_order(pool);
        assert_eq!(
            self.switches.live(),
            2,
            "panic at call {at:?}: a clone of the task's waker leaked"
        );
    }
}

/// With every buffer held, two fresh acquires wait, and get the buffers in the order they
/// started waiting as the buffers come back.
fn full_pool_serves_fresh_waiters_in_order(pool: &BufferPool) {
    let (probe, wakes) = counting_waker();
    let mut bufs: Vec<Buf> = (0..pool.capacity())
        .map(|_| pool.try_acquire().expect("a free buffer"))
        .collect();
    let mut first = Box::pin(pool.acquire());
    let mut second = Box::pin(pool.acquire());
    assert!(poll_with(&mut first, &probe).is_pending());
    assert!(poll_with(&mut second, &probe).is_pending());
    bufs.pop();
    assert_eq!(wakes.count(), 1);
    assert!(poll_with(&mut second, &probe).is_pending());
    let Poll::Ready(a) = poll_with(&mut first, &probe) else {
        panic!("the first waiter was not served by the first release");
    };
    bufs.pop();
    assert_eq!(wakes.count(), 2);
    let Poll::Ready(b) = poll_with(&mut second, &probe) else {
        panic!("the second waiter was not served by the second release");
    };
    drop((a, b, bufs, first, second));
    assert_eq!(pool.available(), pool.capacity());
}

/// The schedule: every kind of place the pool calls the task's waker. The comments say which
/// calls each step makes when nothing panics.
fn schedule(run: &mut Run<'_>) {
    use Outcome::{Pending, Ready};
    use TaskWaker::{First, Second};
    // Free buffers: no waker call. Then the pool is full.
    run.first_poll("a", Ready);
    run.first_poll("b", Ready);
    // Clone (which gives a's buffer back), found under the lock: drop of the clone.
    run.first_poll_releasing("c", Ready);
    // Clone each.
    run.first_poll("x", Pending);
    run.first_poll("y", Pending);
    // The same waker: no call. A new one: its clone, the old one's drop.
    run.repoll("x", First, Pending);
    run.repoll("x", Second, Pending);
    // Drop of y's waker.
    run.cancel("y");
    run.first_poll("z", Pending);
    // Hand-off to the oldest waiter, x: wake.
    run.release();
    run.repoll("x", First, Ready);
    // z's new waker's clone gives a buffer back, handed to z (wake); drop of the clone.
    run.repoll_releasing("z", Second, Ready);
    // Packets: the last drop hands the buffer to p (wake).
    run.freeze();
    run.clone_packet();
    run.first_poll("p", Pending);
    run.first_poll("q", Pending);
    run.drop_packet();
    run.drop_packet();
    // p, handed a buffer it never took, passes it to q: wake.
    run.cancel("p");
    run.first_poll("r", Pending);
    // Hand-off to r from another thread: wake there.
    run.release_on_thread();
    run.repoll("q", First, Ready);
    run.repoll("r", First, Ready);
}

/// Runs the schedule with waker call `panic_at` panicking, checks the pool, and returns how
/// many waker calls the schedule made.
fn run_schedule(panic_at: Option<usize>) -> usize {
    let pool = BufferPool::new(2, 8);
    let mut run = Run::new(&pool, panic_at);
    schedule(&mut run);
    let calls = run.switches.calls();
    match panic_at {
        Some(call) => {
            assert!(run.panicked, "call {call} did not panic");
            assert_eq!(run.switches.panics(), 1);
        }
        None => assert!(!run.panicked),
    }
    run.check();
    calls
}

#[test]
fn a_panic_at_any_waker_call_of_the_pool_loses_no_buffer_and_no_place_in_line() {
    let calls = run_schedule(None);
    // Each step asserted its outcome, so the run went where the schedule says.
    assert!(calls > 0, "the schedule made no waker call");
    for call in 1..=calls {
        run_schedule(Some(call));
    }
}
