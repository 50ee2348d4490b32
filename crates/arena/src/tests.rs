//! Unit tests of the arena through its public API.

use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};

use pinfold_testkit::alloc::{CountingAlloc, measure};

use crate::{Arena, Budget, Hub, Queued, Step};

#[global_allocator]
static ALLOCATOR: CountingAlloc = CountingAlloc;

/// A waker that counts its wakes.
#[derive(Default)]
struct CountingWaker(AtomicUsize);

impl Wake for CountingWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }
    fn wake_by_ref(self: &Arc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

fn counting_waker() -> (Arc<CountingWaker>, Waker) {
    let counter = Arc::new(CountingWaker::default());
    (counter.clone(), Waker::from(counter))
}

/// A future that is pending until `done` is set, counting its polls and keeping its last
/// waker where the test can reach it.
#[derive(Default, Debug)]
struct Gate {
    polls: AtomicUsize,
    done: std::sync::atomic::AtomicBool,
    waker: Mutex<Option<Waker>>,
}

#[derive(Debug)]
struct GateFuture(Arc<Gate>);

impl Future for GateFuture {
    type Output = ();
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        self.0.polls.fetch_add(1, Ordering::SeqCst);
        if self.0.done.load(Ordering::SeqCst) {
            return Poll::Ready(());
        }
        *self.0.waker.lock().unwrap() = Some(cx.waker().clone());
        Poll::Pending
    }
}

impl Gate {
    fn open(&self) {
        self.done.store(true, Ordering::SeqCst);
        if let Some(w) = self.waker.lock().unwrap().take() {
            w.wake();
        }
    }
    fn polls(&self) -> usize {
        self.polls.load(Ordering::SeqCst)
    }
}

fn poll_future<F: Future>(fut: Pin<&mut F>, cx: &mut Context<'_>) -> Step<F::Output> {
    match fut.poll(cx) {
        Poll::Ready(out) => Step::Done(out),
        Poll::Pending => Step::Pending,
    }
}

fn next<F: Future>(arena: &mut Arena<F>, waker: &Waker) -> Poll<Option<F::Output>> {
    let mut cx = Context::from_waker(waker);
    arena
        .poll_next(&mut cx, |_, fut, cx| poll_future(fut, cx))
        .map(|o| o.map(|(_, out)| out))
}

/// Counts drops of its instances.
#[derive(Debug)]
struct DropCounter(Arc<AtomicUsize>);

impl Drop for DropCounter {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

#[test]
fn new_allocates_twice_and_use_allocates_nothing() {
    let (mut arena, n) = measure(|| Arena::new(256));
    assert!(n <= 2, "Arena::new(256) made {n} allocations");
    let rounds = if cfg!(miri) { 600 } else { 100_000 };
    let ((), n) = measure(|| {
        let waker = Waker::noop();
        for i in 0..rounds {
            if arena.is_full() {
                assert!(matches!(next(&mut arena, waker), Poll::Ready(Some(_))));
            }
            arena.insert(std::future::ready(i)).unwrap();
        }
        while let Poll::Ready(Some(_)) = next(&mut arena, waker) {}
        arena.clear();
    });
    assert_eq!(n, 0, "inserting and polling allocated");
    assert!(arena.is_empty());
}

#[test]
fn zero_capacity_refuses_everything() {
    let mut arena = Arena::new(0);
    assert!(arena.insert(std::future::ready(7)).is_err());
    assert!(arena.is_full());
    assert!(matches!(next(&mut arena, Waker::noop()), Poll::Ready(None)));
}

#[test]
fn pending_value_is_polled_once_per_burst_of_wakes() {
    let gate = Arc::new(Gate::default());
    let mut arena = Arena::new(4);
    arena.insert(GateFuture(gate.clone())).unwrap();
    let (parent, parent_waker) = counting_waker();
    assert!(next(&mut arena, &parent_waker).is_pending());
    assert_eq!(gate.polls(), 1);
    // Not woken: not polled.
    assert!(next(&mut arena, &parent_waker).is_pending());
    assert_eq!(gate.polls(), 1);
    // Woken ten times: polled once, and the parent woken once.
    let waker = gate.waker.lock().unwrap().clone().unwrap();
    for _ in 0..10 {
        waker.wake_by_ref();
    }
    assert_eq!(parent.0.load(Ordering::SeqCst), 1);
    assert!(next(&mut arena, &parent_waker).is_pending());
    assert_eq!(gate.polls(), 2);
    gate.open();
    assert_eq!(next(&mut arena, &parent_waker), Poll::Ready(Some(())));
    assert_eq!(gate.polls(), 3);
}

#[test]
fn burst_over_many_slots_wakes_the_parent_once() {
    let capacity = if cfg!(miri) { 200 } else { 5000 };
    let gates: Vec<_> = (0..capacity).map(|_| Arc::new(Gate::default())).collect();
    let mut arena = Arena::new(capacity);
    for gate in &gates {
        arena.insert(GateFuture(gate.clone())).unwrap();
    }
    let (parent, parent_waker) = counting_waker();
    assert!(next(&mut arena, &parent_waker).is_pending());
    for gate in &gates {
        gate.open();
    }
    assert_eq!(parent.0.load(Ordering::SeqCst), 1);
    let mut outputs = 0;
    loop {
        match next(&mut arena, &parent_waker) {
            Poll::Ready(Some(())) => outputs += 1,
            Poll::Ready(None) => break,
            Poll::Pending => panic!("pending with every future done"),
        }
    }
    assert_eq!(outputs, capacity);
    assert!(gates.iter().all(|g| g.polls() == 2));
}

#[test]
fn wakes_from_other_threads_are_not_lost() {
    let count = if cfg!(miri) { 8 } else { 500 };
    let gates: Vec<_> = (0..count).map(|_| Arc::new(Gate::default())).collect();
    let mut arena = Arena::new(count);
    for gate in &gates {
        arena.insert(GateFuture(gate.clone())).unwrap();
    }
    let thread = std::thread::current();
    let parent_waker = Waker::from(Arc::new(ThreadWaker(thread)));
    assert!(next(&mut arena, &parent_waker).is_pending());
    let openers: Vec<_> = gates
        .chunks(count / 4)
        .map(|chunk| {
            let chunk = chunk.to_vec();
            std::thread::spawn(move || chunk.iter().for_each(|g| g.open()))
        })
        .collect();
    let mut outputs = 0;
    loop {
        match next(&mut arena, &parent_waker) {
            Poll::Ready(Some(())) => outputs += 1,
            Poll::Ready(None) => break,
            Poll::Pending => std::thread::park(),
        }
    }
    openers.into_iter().for_each(|t| t.join().unwrap());
    assert_eq!(outputs, count);
}

struct ThreadWaker(std::thread::Thread);

impl Wake for ThreadWaker {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }
}

#[test]
fn waker_outliving_its_value_and_the_arena_does_nothing() {
    let drops = Arc::new(AtomicUsize::new(0));
    let mut arena: Arena<(DropCounter, GateFuture)> = Arena::new(2);
    let gate = Arc::new(Gate::default());
    let index = arena
        .insert((DropCounter(drops.clone()), GateFuture(gate.clone())))
        .unwrap();
    let stale = arena.waker(index);
    assert!(arena.remove(index));
    assert_eq!(drops.load(Ordering::SeqCst), 1);
    assert!(!arena.remove(index));
    // Waking the empty slot polls nothing.
    stale.wake_by_ref();
    arena.collect_woken();
    let polled = arena.poll_queued(&mut Budget::new(1), &mut |_, _, _| -> Step<()> {
        unreachable!("an empty slot was polled")
    });
    assert_eq!(polled, Queued::Empty);
    let clone = stale.clone();
    drop(arena);
    stale.wake();
    clone.wake_by_ref();
    drop(clone);
    assert_eq!(drops.load(Ordering::SeqCst), 1);
}

#[test]
fn dropping_the_arena_drops_every_value_once() {
    let drops = Arc::new(AtomicUsize::new(0));
    let mut arena = Arena::new(8);
    for _ in 0..5 {
        arena.insert(DropCounter(drops.clone())).unwrap();
    }
    arena.remove(2);
    assert_eq!(drops.load(Ordering::SeqCst), 1);
    drop(arena);
    assert_eq!(drops.load(Ordering::SeqCst), 5);
}

#[test]
fn clear_drops_everything_and_keeps_the_arena_usable() {
    let drops = Arc::new(AtomicUsize::new(0));
    let mut arena = Arena::new(3);
    for _ in 0..3 {
        arena.insert(DropCounter(drops.clone())).unwrap();
    }
    arena.clear();
    assert_eq!(drops.load(Ordering::SeqCst), 3);
    assert!(arena.is_empty());
    for _ in 0..3 {
        arena.insert(DropCounter(drops.clone())).unwrap();
    }
    assert!(arena.is_full());
    assert_eq!(arena.iter().count(), 3);
}

#[test]
fn one_call_polls_each_value_at_most_once_and_yields() {
    /// Wakes itself on every poll and counts its polls.
    #[derive(Debug)]
    struct Spinner(Arc<AtomicUsize>);
    impl Future for Spinner {
        type Output = ();
        fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
            self.0.fetch_add(1, Ordering::SeqCst);
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    }
    let counters: Vec<_> = (0..10).map(|_| Arc::new(AtomicUsize::new(0))).collect();
    let mut arena = Arena::new(10);
    for c in &counters {
        arena.insert(Spinner(c.clone())).unwrap();
    }
    let (parent, parent_waker) = counting_waker();
    for call in 1..=20 {
        let wakes_before = parent.0.load(Ordering::SeqCst);
        assert!(next(&mut arena, &parent_waker).is_pending());
        assert!(counters.iter().all(|c| c.load(Ordering::SeqCst) <= call));
        assert!(
            parent.0.load(Ordering::SeqCst) > wakes_before,
            "returned Pending without waking its task"
        );
    }
    // Every spinner got its turns: two per call, round robin.
    let total: usize = counters.iter().map(|c| c.load(Ordering::SeqCst)).sum();
    assert_eq!(total, 40);
    assert!(counters.iter().all(|c| c.load(Ordering::SeqCst) == 4));
}

#[test]
fn panic_in_poll_drops_the_value_and_frees_its_slot() {
    let drops = Arc::new(AtomicUsize::new(0));
    let mut arena = Arena::new(2);
    arena.insert(DropCounter(drops.clone())).unwrap();
    arena.insert(DropCounter(drops.clone())).unwrap();
    let mut budget = Budget::new(arena.len());
    let result = catch_unwind(AssertUnwindSafe(|| {
        arena.poll_queued(&mut budget, &mut |_, _, _| -> Step<()> { panic!("boom") })
    }));
    assert!(result.is_err());
    assert_eq!(drops.load(Ordering::SeqCst), 1);
    assert_eq!(arena.len(), 1);
    assert!(!arena.is_full());
    arena.insert(DropCounter(drops.clone())).unwrap();
    assert_eq!(arena.len(), 2);
}

#[test]
fn panic_in_drop_leaves_the_arena_consistent() {
    /// Panics when dropped if armed.
    #[derive(Debug)]
    struct PanicOnDrop(bool, Arc<AtomicUsize>);
    impl Drop for PanicOnDrop {
        fn drop(&mut self) {
            self.1.fetch_add(1, Ordering::SeqCst);
            if self.0 {
                panic!("drop");
            }
        }
    }
    let drops = Arc::new(AtomicUsize::new(0));
    let mut arena = Arena::new(2);
    let index = arena.insert(PanicOnDrop(true, drops.clone())).unwrap();
    assert!(catch_unwind(AssertUnwindSafe(|| arena.remove(index))).is_err());
    assert_eq!(drops.load(Ordering::SeqCst), 1);
    assert!(arena.is_empty());
    assert!(arena.get(index).is_none());
    arena.insert(PanicOnDrop(false, drops.clone())).unwrap();
    arena.insert(PanicOnDrop(false, drops.clone())).unwrap();
    assert!(arena.is_full());
    drop(arena);
    assert_eq!(drops.load(Ordering::SeqCst), 3);
}

#[test]
fn keep_and_repoll_leave_the_value_in_place() {
    let mut arena = Arena::new(2);
    let a = arena.insert(1u32).unwrap();
    let mut budget = Budget::new(arena.len());
    let first = arena.poll_queued(&mut budget, &mut |i, v, _| Step::Repoll((i, *v)));
    assert_eq!(first, Queued::Ready(a, (a, 1)));
    assert!(arena.has_queued(), "Repoll queues the slot again");
    assert_eq!(
        arena.poll_queued(&mut budget, &mut |_, _, _| Step::Keep(())),
        Queued::Yield,
        "a budget of one is spent after one poll"
    );
    let mut budget = Budget::new(arena.len());
    let again = arena.poll_queued(&mut budget, &mut |i, v, _| Step::Keep((i, *v)));
    assert_eq!(again, Queued::Ready(a, (a, 1)));
    assert!(!arena.has_queued(), "Keep does not");
    assert_eq!(arena.get(a), Some(&1));
    arena.waker(a).wake();
    assert!(arena.collect_woken());
}

#[test]
fn a_hub_learns_which_arenas_were_woken_and_wakes_its_task_once() {
    let hub = Hub::new();
    let (parent, parent_waker) = counting_waker();
    let mut small: Arena<u8> = Arena::with_hub(4, &hub, 0);
    let mut large: Arena<u8> = Arena::with_hub(100, &hub, 5);
    let a = small.insert(1).unwrap();
    let b = large.insert(2).unwrap();
    let c = large.insert(3).unwrap();
    hub.register(&parent_waker);
    small.waker(a).wake();
    large.waker(b).wake();
    large.waker(c).wake();
    assert_eq!(parent.0.load(Ordering::SeqCst), 1);
    assert_eq!(hub.take_ready(), 0b100001);
    assert!(small.collect_woken());
    assert!(large.collect_woken());
    assert_eq!(hub.take_ready(), 0);
}

#[test]
fn iterators_visit_every_value_once() {
    let mut arena = Arena::new(5);
    for v in 0..5u32 {
        arena.insert(v).unwrap();
    }
    arena.remove(1);
    arena.remove(3);
    let seen: Vec<_> = arena.iter().map(|(_, v)| *v).collect();
    assert_eq!(seen, [0, 2, 4]);
    assert_eq!(arena.iter().len(), 3);
    for (_, v) in arena.iter_pin_mut() {
        *v.get_mut() += 10;
    }
    let seen: Vec<_> = arena.iter().map(|(_, v)| *v).collect();
    assert_eq!(seen, [10, 12, 14]);
    assert_eq!(arena.take(0), Some(10));
    assert_eq!(arena.len(), 2);
}

#[test]
fn clear_drops_every_value_even_when_one_drop_panics() {
    /// Panics when dropped if armed.
    #[derive(Debug)]
    struct Loud(bool, Arc<AtomicUsize>);
    impl Drop for Loud {
        fn drop(&mut self) {
            self.1.fetch_add(1, Ordering::SeqCst);
            assert!(!self.0, "drop");
        }
    }
    let drops = Arc::new(AtomicUsize::new(0));
    let mut arena = Arena::new(4);
    for armed in [false, true, false, true] {
        arena.insert(Loud(armed, drops.clone())).unwrap();
    }
    assert!(catch_unwind(AssertUnwindSafe(|| arena.clear())).is_err());
    assert_eq!(drops.load(Ordering::SeqCst), 4);
    assert!(arena.is_empty());
}

#[test]
fn streams_are_polled_again_after_each_item_and_dropped_when_they_end() {
    /// A stream of `0..n` that is pending before every item, waking itself.
    #[derive(Debug)]
    struct Count {
        next: u32,
        end: u32,
        ready: bool,
    }
    impl Count {
        fn poll_item(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<u32>> {
            if self.next == self.end {
                return Poll::Ready(None);
            }
            if !std::mem::replace(&mut self.ready, false) {
                self.ready = true;
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
            self.next += 1;
            Poll::Ready(Some(self.next - 1))
        }
    }
    let mut arena = Arena::new(3);
    for end in [2, 0, 3] {
        arena
            .insert(Count {
                next: 0,
                end,
                ready: false,
            })
            .unwrap();
    }
    let (_, parent_waker) = counting_waker();
    let mut cx = Context::from_waker(&parent_waker);
    let mut items = Vec::new();
    for _ in 0..100 {
        let polled = arena.poll_next(&mut cx, |slot, stream, cx| match stream.poll_item(cx) {
            Poll::Ready(Some(item)) => Step::Repoll((slot, Some(item))),
            Poll::Ready(None) => Step::Done((slot, None)),
            Poll::Pending => Step::Pending,
        });
        match polled {
            Poll::Ready(Some((_, (slot, Some(item))))) => items.push((slot, item)),
            Poll::Ready(Some((_, (_, None)))) => {}
            Poll::Ready(None) => break,
            Poll::Pending => {}
        }
    }
    assert!(arena.is_empty(), "every stream ended and was dropped");
    items.sort_unstable();
    assert_eq!(items, [(0, 0), (0, 1), (2, 0), (2, 1), (2, 2)]);
}
