//! Panics: a future that panics in `poll` is dropped and its panic reaches the caller; a
//! future whose `Drop` panics is not undefined behaviour; either way the future is gone
//! afterwards, the set's length drops by one, and the set keeps working. The cases in `cases`
//! run over each set; those of a growable set's largest group are its own.

use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};

use futures_util::future::Either;
use pinfold_testkit::probe::{Probe, ProbeState, probes};
use pinfold_testkit::stream::{drain_ready, poll_once};
use pinfold_unordered::{FuturesUnordered, FuturesUnorderedBounded};

/// A future that panics when polled, or finishes and panics when dropped; it counts its drops.
#[derive(Debug)]
struct Bomb {
    in_poll: bool,
    drops: Arc<AtomicUsize>,
}

impl Future for Bomb {
    type Output = usize;

    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<usize> {
        if self.in_poll {
            panic!("boom in poll");
        }
        Poll::Ready(usize::MAX)
    }
}

impl Drop for Bomb {
    fn drop(&mut self) {
        self.drops.fetch_add(1, Ordering::SeqCst);
        if !self.in_poll {
            panic!("boom in drop");
        }
    }
}

/// The futures of these tests: probes, and one bomb.
type Mixed = Either<Probe, Bomb>;

/// A set of 100 probes with a bomb in its largest group (pushed after probe 80), the probes'
/// states, and the bomb's drop count. Nothing is polled yet.
fn set_with_a_bomb(
    in_poll: bool,
) -> (
    FuturesUnordered<Mixed>,
    Vec<Arc<ProbeState>>,
    Arc<AtomicUsize>,
) {
    let (futures, states) = probes(100);
    let drops = Arc::new(AtomicUsize::new(0));
    let mut set = FuturesUnordered::new();
    for (id, probe) in futures.into_iter().enumerate() {
        set.push(Either::Left(probe));
        if id == 80 {
            set.push(Either::Right(Bomb {
                in_poll,
                drops: drops.clone(),
            }));
        }
    }
    (set, states, drops)
}

/// Finishes every probe, drains the set and checks each probe gave its output and was dropped
/// once.
fn finish_and_check(set: &mut FuturesUnordered<Mixed>, states: &[Arc<ProbeState>]) {
    for state in states {
        if state.polls() == 0 {
            // Not reached before the panic: let the next polls find it open.
            state.open();
        } else {
            state.finish();
        }
    }
    let mut outputs = drain_ready(set);
    outputs.sort_unstable();
    assert_eq!(outputs, (0..100).collect::<Vec<_>>());
    for state in states {
        assert_eq!(state.drops(), 1);
    }
}

#[test]
fn a_future_of_the_largest_group_that_panics_in_poll_is_dropped_and_the_set_keeps_working() {
    let (mut set, states, drops) = set_with_a_bomb(true);
    assert_eq!(set.len(), 101);
    let panic = catch_unwind(AssertUnwindSafe(|| poll_once(&mut set))).unwrap_err();
    assert_eq!(panic.downcast_ref::<&str>(), Some(&"boom in poll"));
    assert_eq!(set.len(), 100);
    assert_eq!(
        drops.load(Ordering::SeqCst),
        1,
        "the bomb was dropped in place"
    );
    assert_eq!(set.iter().count(), 100);

    // The set goes on: probes not polled before the panic are polled now, and pushes work.
    set.push(Either::Left(Probe::new(100).0));
    assert!(poll_once(&mut set).is_pending());
    assert_eq!(set.len(), 101);
    assert!(states.iter().all(|state| state.polls() >= 1));
    assert!(
        set.iter()
            .any(|fut| matches!(fut, Either::Left(probe) if probe.id() == 100))
    );
    set.clear();
    for state in &states {
        assert_eq!(state.drops(), 1);
    }
    let (futures, states) = probes(100);
    set.extend(futures.into_iter().map(Either::Left));
    assert!(poll_once(&mut set).is_pending());
    finish_and_check(&mut set, &states);
}

#[test]
fn a_future_of_the_largest_group_that_panics_in_drop_leaves_the_set_consistent() {
    let (mut set, states, drops) = set_with_a_bomb(false);
    let panic = catch_unwind(AssertUnwindSafe(|| poll_once(&mut set))).unwrap_err();
    assert_eq!(panic.downcast_ref::<&str>(), Some(&"boom in drop"));
    assert_eq!(drops.load(Ordering::SeqCst), 1);
    assert_eq!(set.len(), 100);
    assert_eq!(set.iter().count(), 100);
    finish_and_check(&mut set, &states);
    assert_eq!(poll_once(&mut set), Poll::Ready(None));
}

#[test]
fn a_full_push_of_a_future_whose_drop_panics_panics_as_full_and_drops_it_once() {
    let drops = Arc::new(AtomicUsize::new(0));
    let mut set = FuturesUnorderedBounded::new(1);
    set.push(Either::Left(Probe::new(0).0));
    let bomb = Bomb {
        in_poll: false,
        drops: drops.clone(),
    };
    // The refused future is dropped while the push's panic unwinds: its own panic is dropped,
    // where drop glue would abort the process.
    let panic = catch_unwind(AssertUnwindSafe(|| set.push(Either::Right(bomb)))).unwrap_err();
    assert_eq!(
        panic.downcast_ref::<String>().map(String::as_str),
        Some("FuturesUnorderedBounded is full (capacity 1)")
    );
    assert_eq!(drops.load(Ordering::SeqCst), 1);
    assert_eq!(set.len(), 1);
    assert!(poll_once(&mut set).is_pending());
}

#[test]
fn panic_in_poll_reaches_the_caller_and_drops_the_future() {
    cases::panic_in_poll_reaches_the_caller_and_drops_the_future(FuturesUnordered::with_capacity(
        3,
    ));
}

#[test]
fn set_keeps_working_after_many_poll_panics() {
    cases::set_keeps_working_after_many_poll_panics(FuturesUnordered::with_capacity(4));
}

#[test]
fn panic_in_drop_of_a_finished_future_reaches_the_caller() {
    cases::panic_in_drop_of_a_finished_future_reaches_the_caller(FuturesUnordered::with_capacity(
        3,
    ));
}

#[test]
fn panic_in_drop_leaves_the_other_futures_in_place() {
    cases::panic_in_drop_leaves_the_other_futures_in_place(FuturesUnordered::with_capacity(4));
}

#[test]
fn panic_in_drop_during_clear_leaves_the_set_usable() {
    cases::panic_in_drop_during_clear_leaves_the_set_usable(FuturesUnordered::with_capacity(3));
}

#[test]
fn panic_in_drop_while_dropping_the_set_drops_the_rest() {
    cases::panic_in_drop_while_dropping_the_set_drops_the_rest(FuturesUnordered::with_capacity(4));
}

/// The cases both sets share: `set` is empty, made with room for the futures each case
/// pushes (three or four) and no more.
mod cases {
    use std::future::Future;
    use std::panic::{AssertUnwindSafe, catch_unwind};
    use std::pin::Pin;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::task::{Context, Poll};

    use pinfold_arena::Storage;
    use pinfold_testkit::contract::panic_message;
    use pinfold_testkit::stream::{poll_once, settle};
    use pinfold_unordered::UnorderedSet;

    /// What the tests push: a future that finishes, one that panics in `poll`, one that panics in
    /// `Drop`, or one that never finishes (and that nothing wakes). Each counts its drops.
    enum Task {
        Ready(usize),
        PanicInPoll,
        PanicInDrop(usize),
        Wait(usize),
    }

    pub(super) struct Tracked {
        task: Task,
        drops: Arc<AtomicUsize>,
    }

    impl Tracked {
        fn new(task: Task) -> (Self, Arc<AtomicUsize>) {
            let drops = Arc::new(AtomicUsize::new(0));
            (
                Self {
                    task,
                    drops: drops.clone(),
                },
                drops,
            )
        }
    }

    impl Future for Tracked {
        type Output = usize;

        fn poll(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<usize> {
            match &self.task {
                Task::Ready(id) | Task::PanicInDrop(id) => Poll::Ready(*id),
                Task::PanicInPoll => panic!("panic in poll"),
                Task::Wait(_) => Poll::Pending,
            }
        }
    }

    impl Drop for Tracked {
        fn drop(&mut self) {
            self.drops.fetch_add(1, Ordering::SeqCst);
            if let Task::PanicInDrop(_) = self.task {
                panic!("panic in drop");
            }
        }
    }

    fn catch_poll<A: Storage<Tracked>>(
        set: &mut UnorderedSet<Tracked, A>,
    ) -> Result<Poll<Option<usize>>, String> {
        catch_unwind(AssertUnwindSafe(|| poll_once(set)))
            .map_err(|panic| panic_message(&*panic).to_owned())
    }

    pub(super) fn panic_in_poll_reaches_the_caller_and_drops_the_future<A: Storage<Tracked>>(
        mut set: impl core::ops::DerefMut<Target = UnorderedSet<Tracked, A>>,
    ) {
        let (bomb, bomb_drops) = Tracked::new(Task::PanicInPoll);
        let (waiter, waiter_drops) = Tracked::new(Task::Wait(1));
        set.push(waiter);
        set.push(bomb);
        settle_until_panic(&mut set, "panic in poll");
        assert_eq!(bomb_drops.load(Ordering::SeqCst), 1);
        assert_eq!(set.len(), 1);
        assert!(set.len() < set.capacity(), "the slot is free again");
        assert_eq!(waiter_drops.load(Ordering::SeqCst), 0);

        // Still usable: a new future is polled and finishes, the survivor (which nothing wakes)
        // stays in place.
        let (more, more_drops) = Tracked::new(Task::Ready(2));
        set.push(more);
        assert_eq!(drain_woken(&mut set, 1), [2]);
        assert_eq!(more_drops.load(Ordering::SeqCst), 1);
        assert_eq!(set.len(), 1);
        assert!(matches!(set.iter().next().unwrap().task, Task::Wait(1)));
        drop(set);
        assert_eq!(waiter_drops.load(Ordering::SeqCst), 1);
        assert_eq!(bomb_drops.load(Ordering::SeqCst), 1);
    }

    /// Polls until one call panics with `expected`.
    fn settle_until_panic<A: Storage<Tracked>>(set: &mut UnorderedSet<Tracked, A>, expected: &str) {
        for _ in 0..=set.len() {
            match catch_poll(set) {
                Err(message) => {
                    assert_eq!(message, expected);
                    return;
                }
                Ok(Poll::Pending) => {}
                Ok(other) => panic!("expected a panic, got {other:?}"),
            }
        }
        panic!("no panic reached the caller");
    }

    /// Polls until `Pending`, collecting `outputs` outputs; panics on a caught panic.
    fn drain_woken<A: Storage<Tracked>>(
        set: &mut UnorderedSet<Tracked, A>,
        outputs: usize,
    ) -> Vec<usize> {
        let mut out = Vec::new();
        for _ in 0..outputs + 2 {
            match catch_poll(set).expect("unexpected panic") {
                Poll::Ready(Some(id)) => out.push(id),
                Poll::Ready(None) | Poll::Pending => break,
            }
        }
        assert_eq!(out.len(), outputs);
        out
    }

    pub(super) fn set_keeps_working_after_many_poll_panics<A: Storage<Tracked>>(
        mut set: impl core::ops::DerefMut<Target = UnorderedSet<Tracked, A>>,
    ) {
        let rounds = if cfg!(miri) { 3 } else { 50 };
        let mut drops = Vec::new();
        for round in 0..rounds {
            let (bomb, bomb_drops) = Tracked::new(Task::PanicInPoll);
            let (ok, ok_drops) = Tracked::new(Task::Ready(round));
            set.push(bomb);
            set.push(ok);
            drops.push(bomb_drops);
            drops.push(ok_drops);
            let mut outputs = Vec::new();
            let mut panics = 0;
            for _ in 0..4 {
                match catch_poll(&mut set) {
                    Ok(Poll::Ready(Some(out))) => outputs.push(out),
                    Ok(Poll::Ready(None)) => break,
                    Ok(Poll::Pending) => {}
                    Err(message) => {
                        assert_eq!(message, "panic in poll");
                        panics += 1;
                    }
                }
            }
            assert_eq!(panics, 1, "round {round}");
            assert_eq!(outputs, [round], "round {round}");
            assert!(set.is_empty(), "round {round}");
        }
        for (i, count) in drops.iter().enumerate() {
            assert_eq!(count.load(Ordering::SeqCst), 1, "future {i}");
        }
    }

    pub(super) fn panic_in_drop_of_a_finished_future_reaches_the_caller<A: Storage<Tracked>>(
        mut set: impl core::ops::DerefMut<Target = UnorderedSet<Tracked, A>>,
    ) {
        let (bomb, bomb_drops) = Tracked::new(Task::PanicInDrop(0));
        set.push(bomb);
        let result = catch_poll(&mut set);
        assert_eq!(result, Err("panic in drop".to_owned()));
        assert_eq!(bomb_drops.load(Ordering::SeqCst), 1);
        assert_eq!(set.len(), 0);
        assert_eq!(catch_poll(&mut set), Ok(Poll::Ready(None)));

        // Still usable: fill it and drain it.
        let mut drops = Vec::new();
        for id in 1..4 {
            let (ready, count) = Tracked::new(Task::Ready(id));
            set.push(ready);
            drops.push(count);
        }
        assert_eq!(set.len(), set.capacity(), "full again");
        let mut outputs = drain_woken(&mut set, 3);
        outputs.sort_unstable();
        assert_eq!(outputs, [1, 2, 3]);
        assert_eq!(catch_poll(&mut set), Ok(Poll::Ready(None)));
        for count in &drops {
            assert_eq!(count.load(Ordering::SeqCst), 1);
        }
        assert_eq!(bomb_drops.load(Ordering::SeqCst), 1);
    }

    pub(super) fn panic_in_drop_leaves_the_other_futures_in_place<A: Storage<Tracked>>(
        mut set: impl core::ops::DerefMut<Target = UnorderedSet<Tracked, A>>,
    ) {
        let mut waiters = Vec::new();
        for id in 0..3 {
            let (waiter, drops) = Tracked::new(Task::Wait(id));
            set.push(waiter);
            waiters.push(drops);
        }
        assert!(settle(&mut *set).is_empty());
        let (bomb, bomb_drops) = Tracked::new(Task::PanicInDrop(9));
        set.push(bomb);
        assert_eq!(catch_poll(&mut set), Err("panic in drop".to_owned()));
        assert_eq!(bomb_drops.load(Ordering::SeqCst), 1);
        assert_eq!(set.len(), 3);
        let mut ids: Vec<usize> = set
            .iter()
            .map(|tracked| match tracked.task {
                Task::Wait(id) => id,
                _ => panic!("a finished future is still in the set"),
            })
            .collect();
        ids.sort_unstable();
        assert_eq!(ids, [0, 1, 2]);
        for drops in &waiters {
            assert_eq!(drops.load(Ordering::SeqCst), 0);
        }
        set.clear();
        for drops in &waiters {
            assert_eq!(drops.load(Ordering::SeqCst), 1);
        }
    }

    pub(super) fn panic_in_drop_during_clear_leaves_the_set_usable<A: Storage<Tracked>>(
        mut set: impl core::ops::DerefMut<Target = UnorderedSet<Tracked, A>>,
    ) {
        let (bomb, bomb_drops) = Tracked::new(Task::PanicInDrop(0));
        let (waiter, waiter_drops) = Tracked::new(Task::Wait(1));
        set.push(waiter);
        set.push(bomb);
        let cleared = catch_unwind(AssertUnwindSafe(|| set.clear()));
        assert_eq!(
            panic_message(&*cleared.expect_err("the Drop panic did not reach the caller")),
            "panic in drop"
        );
        assert_eq!(bomb_drops.load(Ordering::SeqCst), 1);
        // The set is consistent whether or not the clear went on past the panic; clearing again
        // drops whatever is left, once.
        set.clear();
        assert!(set.is_empty());
        assert_eq!(waiter_drops.load(Ordering::SeqCst), 1);
        let (ready, ready_drops) = Tracked::new(Task::Ready(5));
        set.push(ready);
        assert_eq!(catch_poll(&mut set), Ok(Poll::Ready(Some(5))));
        assert_eq!(ready_drops.load(Ordering::SeqCst), 1);
    }

    pub(super) fn panic_in_drop_while_dropping_the_set_drops_the_rest<A: Storage<Tracked>>(
        mut set: impl core::ops::DerefMut<Target = UnorderedSet<Tracked, A>>,
    ) {
        let mut waiters = Vec::new();
        let (first, first_drops) = Tracked::new(Task::Wait(0));
        set.push(first);
        waiters.push(first_drops);
        let (bomb, bomb_drops) = Tracked::new(Task::PanicInDrop(1));
        set.push(bomb);
        for id in 2..4 {
            let (waiter, drops) = Tracked::new(Task::Wait(id));
            set.push(waiter);
            waiters.push(drops);
        }
        let dropped = catch_unwind(AssertUnwindSafe(|| drop(set)));
        assert_eq!(
            panic_message(&*dropped.expect_err("the Drop panic did not reach the caller")),
            "panic in drop"
        );
        assert_eq!(bomb_drops.load(Ordering::SeqCst), 1);
        for (i, drops) in waiters.iter().enumerate() {
            assert_eq!(drops.load(Ordering::SeqCst), 1, "waiter {i}");
        }
    }
}

/// The same cases on the bounded set.
mod bounded {
    use pinfold_unordered::FuturesUnorderedBounded;

    #[test]
    fn panic_in_poll_reaches_the_caller_and_drops_the_future() {
        super::cases::panic_in_poll_reaches_the_caller_and_drops_the_future(
            FuturesUnorderedBounded::new(3),
        );
    }

    #[test]
    fn set_keeps_working_after_many_poll_panics() {
        super::cases::set_keeps_working_after_many_poll_panics(FuturesUnorderedBounded::new(4));
    }

    #[test]
    fn panic_in_drop_of_a_finished_future_reaches_the_caller() {
        super::cases::panic_in_drop_of_a_finished_future_reaches_the_caller(
            FuturesUnorderedBounded::new(3),
        );
    }

    #[test]
    fn panic_in_drop_leaves_the_other_futures_in_place() {
        super::cases::panic_in_drop_leaves_the_other_futures_in_place(
            FuturesUnorderedBounded::new(4),
        );
    }

    #[test]
    fn panic_in_drop_during_clear_leaves_the_set_usable() {
        super::cases::panic_in_drop_during_clear_leaves_the_set_usable(
            FuturesUnorderedBounded::new(3),
        );
    }

    #[test]
    fn panic_in_drop_while_dropping_the_set_drops_the_rest() {
        super::cases::panic_in_drop_while_dropping_the_set_drops_the_rest(
            FuturesUnorderedBounded::new(4),
        );
    }
}
