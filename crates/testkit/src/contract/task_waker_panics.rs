//! A task waker (the user's, given to `poll_next`) whose `clone`, `wake`, `wake_by_ref` or
//! `drop` panics: the panic reaches whoever made the call that ran it, and the set stays
//! usable. No wake is lost afterwards, no future is dropped for it, and no waker is leaked.
//!
//! A leak of the set's own memory (a wake table kept alive by a reference lost in the unwind)
//! shows under Miri, which fails a test that leaks.

use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll, Waker};
use std::thread;

use super::{SetUnderTest, panic_message};
use crate::panicking_waker::{
    CLONE_PANIC, DROP_PANIC, WAKE_BY_REF_PANIC, WAKE_PANIC, WakerOps, panicking_waker,
};
use crate::probe::{Probe, ProbeState, Spinner, probes};
use crate::stream::poll_with;
use crate::waker::counting_waker;

/// A set holding `n` probes, and their states.
fn probe_set<S: SetUnderTest>(n: usize) -> (S::Set<Probe>, Vec<Arc<ProbeState>>) {
    let mut set = S::with_capacity(n);
    let (futures, states) = probes(n);
    for probe in futures {
        S::insert(&mut set, probe);
    }
    (set, states)
}

/// Asserts that no probe was dropped: each is still in the set.
fn assert_all_alive<S: SetUnderTest>(set: &S::Set<Probe>, states: &[Arc<ProbeState>]) {
    for (id, state) in states.iter().enumerate() {
        assert_eq!(
            state.drops(),
            0,
            "probe {id} was dropped for the waker's panic"
        );
    }
    assert_eq!(S::len(set), states.len());
}

/// Polls `set` with `task` until it returns `Pending` without having woken `task` (`woken`
/// counts its wakes): every woken future was polled, and `task` is the waker to wake next.
fn settle<S: SetUnderTest>(set: &mut S::Set<Probe>, task: &Waker, woken: &dyn Fn() -> usize) {
    for _ in 0..=S::len(set) {
        let before = woken();
        match poll_with(set, task) {
            Poll::Pending if woken() == before => return,
            Poll::Pending => {}
            ready => panic!("no probe was finished, yet the set gave {ready:?}"),
        }
    }
    panic!("the set kept waking its task");
}

/// Finishes each unfinished probe in turn from another thread, each time after the set
/// returned `Pending` to `task` (a stream owes a wake only after `Pending`), asserting that the
/// wake reaches `task` and that the probe's output comes next, while the probes not finished
/// yet stay alive; ends with the stream's end.
fn outputs_follow_wakes_from_other_threads<S: SetUnderTest>(
    set: &mut S::Set<Probe>,
    states: &[Arc<ProbeState>],
    task: &Waker,
    woken: &dyn Fn() -> usize,
) {
    let mut unfinished: Vec<usize> = (0..states.len())
        .filter(|&id| states[id].drops() == 0)
        .collect();
    while let Some(&id) = unfinished.first() {
        settle::<S>(set, task, woken);
        let before = woken();
        let finisher = states[id].clone();
        thread::spawn(move || finisher.finish()).join().unwrap();
        assert!(
            woken() > before,
            "probe {id} was woken on another thread, but its set's task was not: a lost wake"
        );
        assert_eq!(poll_with(set, task), Poll::Ready(Some(id)));
        assert_eq!(states[id].drops(), 1);
        unfinished.remove(0);
        for &later in &unfinished {
            assert_eq!(
                states[later].drops(),
                0,
                "probe {later} was dropped unfinished"
            );
        }
    }
    assert_eq!(poll_with(set, task), Poll::Ready(None));
}

/// (a) The task waker's `clone` panics in the poll that registers it: the panic propagates
/// out of `poll_next`; polled again with a good waker, the set wakes that waker when a future
/// is woken from another thread, and every output comes.
pub fn a_panic_in_clone_while_registering_loses_no_wake<S: SetUnderTest>() {
    let (mut set, states) = probe_set::<S>(3);
    let (task, switches) = panicking_waker();
    switches.panic_once(WakerOps::CLONE);
    let polled = catch_unwind(AssertUnwindSafe(|| poll_with(&mut set, &task)));
    let panic = polled.expect_err("the clone's panic did not reach the caller of poll_next");
    assert_eq!(panic_message(&*panic), CLONE_PANIC);
    assert_all_alive::<S>(&set, &states);

    let (good, wakes) = counting_waker();
    outputs_follow_wakes_from_other_threads::<S>(&mut set, &states, &good, &|| wakes.count());
    drop(set);
    drop(states);
    drop(good);
    assert_eq!(switches.live(), 1, "a clone of the task waker was leaked");
    assert_eq!(Arc::strong_count(&wakes), 1, "the good waker was leaked");
}

/// (b) The waker registered by an earlier poll panics when it is dropped, replaced by a new
/// task waker: the panic propagates out of `poll_next`, and the new waker gets every wake
/// after it.
pub fn a_panic_in_drop_of_the_replaced_waker_loses_no_wake<S: SetUnderTest>() {
    let (mut set, states) = probe_set::<S>(3);
    let (task, switches) = panicking_waker();
    assert!(poll_with(&mut set, &task).is_pending());
    assert!(
        switches.live() >= 2,
        "the set kept no clone of its task's waker"
    );
    switches.panic_once(WakerOps::DROP);

    let (good, wakes) = counting_waker();
    let polled = catch_unwind(AssertUnwindSafe(|| poll_with(&mut set, &good)));
    let panic = polled.expect_err("the drop's panic did not reach the caller of poll_next");
    assert_eq!(panic_message(&*panic), DROP_PANIC);
    assert_all_alive::<S>(&set, &states);

    outputs_follow_wakes_from_other_threads::<S>(&mut set, &states, &good, &|| wakes.count());
    drop(set);
    drop(states);
    drop(good);
    assert_eq!(
        switches.live(),
        1,
        "a clone of the old task waker was leaked"
    );
    assert_eq!(Arc::strong_count(&wakes), 1, "the good waker was leaked");
}

/// (c) A future's waker woken by value on another thread runs the task waker's wake, which
/// panics: that thread sees the panic; the set still gives the woken future's output when
/// polled again, later wakes reach the task, and nothing is dropped or leaked.
pub fn a_panic_in_the_task_wakers_wake_reaches_the_waking_thread<S: SetUnderTest>() {
    let (mut set, states) = probe_set::<S>(3);
    let (task, switches) = panicking_waker();
    assert!(poll_with(&mut set, &task).is_pending());
    // By value or by reference: how the set wakes its task is its own business.
    switches.panic_once(WakerOps::ANY_WAKE);

    states[1].open();
    let waker = states[1].waker();
    let woke = thread::spawn(move || waker.wake()).join();
    let panic = woke.expect_err("the task waker's panic did not reach the waking thread");
    let message = panic_message(&*panic);
    assert!(
        message == WAKE_PANIC || message == WAKE_BY_REF_PANIC,
        "unexpected panic: {message}"
    );
    assert_all_alive::<S>(&set, &states);

    assert_eq!(poll_with(&mut set, &task), Poll::Ready(Some(1)));
    assert_eq!(states[1].drops(), 1);
    outputs_follow_wakes_from_other_threads::<S>(&mut set, &states, &task, &|| switches.wakes());
    drop(set);
    drop(states);
    assert_eq!(switches.live(), 1, "a clone of the task waker was leaked");
}

/// (d) A future's waker woken by reference, on the polling thread between polls, runs the
/// task waker's wake, which panics: the panic reaches the waking code, no future is dropped,
/// and the output comes.
pub fn a_panic_in_the_task_wakers_wake_by_ref_drops_no_future<S: SetUnderTest>() {
    let (mut set, states) = probe_set::<S>(3);
    let (task, switches) = panicking_waker();
    assert!(poll_with(&mut set, &task).is_pending());
    switches.panic_once(WakerOps::ANY_WAKE);

    states[2].open();
    let waker = states[2].waker();
    let woke = catch_unwind(AssertUnwindSafe(|| waker.wake_by_ref()));
    assert!(
        woke.is_err(),
        "the task waker's panic did not reach the waking code"
    );
    assert_all_alive::<S>(&set, &states);

    assert_eq!(poll_with(&mut set, &task), Poll::Ready(Some(2)));
    outputs_follow_wakes_from_other_threads::<S>(&mut set, &states, &task, &|| switches.wakes());
    drop((set, states, waker));
    assert_eq!(switches.live(), 1, "a clone of the task waker was leaked");
}

/// A future that counts its drops around a [`Spinner`].
struct Counted {
    spinner: Spinner,
    drops: Arc<AtomicUsize>,
}

impl Future for Counted {
    type Output = usize;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<usize> {
        Pin::new(&mut self.spinner).poll(cx)
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.drops.fetch_add(1, Ordering::SeqCst);
    }
}

/// (d) Futures that wake themselves make the set wake its task (when it yields, or from the
/// futures' own wakes): the first such wake panics. The panic propagates out of `poll_next`,
/// but it is not blamed on the future being polled: no future is dropped before it finishes,
/// each is polled as often as it needs, and every output comes.
pub fn a_task_waker_panic_in_a_self_waking_round_blames_no_future<S: SetUnderTest>() {
    let n = 4;
    let spins = 3;
    let mut set = S::with_capacity(n);
    let mut polls = Vec::new();
    let mut drops = Vec::new();
    for id in 0..n {
        let (spinner, count) = Spinner::new(id, spins);
        let dropped = Arc::new(AtomicUsize::new(0));
        S::insert(
            &mut set,
            Counted {
                spinner,
                drops: dropped.clone(),
            },
        );
        polls.push(count);
        drops.push(dropped);
    }
    let (task, switches) = panicking_waker();
    switches.panic_once(WakerOps::ANY_WAKE);

    let mut outputs = Vec::new();
    let mut panics = 0;
    for _ in 0..4 * (spins + 2) * n {
        match catch_unwind(AssertUnwindSafe(|| poll_with(&mut set, &task))) {
            Ok(Poll::Ready(Some(id))) => {
                outputs.push(id);
                assert_eq!(drops[id].load(Ordering::SeqCst), 1);
            }
            Ok(Poll::Ready(None)) => break,
            Ok(Poll::Pending) => {}
            Err(panic) => {
                let message = panic_message(&*panic);
                assert!(
                    message == WAKE_PANIC || message == WAKE_BY_REF_PANIC,
                    "unexpected panic: {message}"
                );
                panics += 1;
                for (id, dropped) in drops.iter().enumerate() {
                    if !outputs.contains(&id) {
                        assert_eq!(
                            dropped.load(Ordering::SeqCst),
                            0,
                            "future {id} was dropped for the task waker's panic"
                        );
                    }
                }
            }
        }
    }
    assert_eq!(panics, 1, "the task waker was never woken");
    outputs.sort_unstable();
    assert_eq!(outputs, (0..n).collect::<Vec<_>>());
    for (id, count) in polls.iter().enumerate() {
        assert_eq!(
            count.load(Ordering::SeqCst),
            spins + 1,
            "future {id}'s polls"
        );
        assert_eq!(drops[id].load(Ordering::SeqCst), 1, "future {id}'s drops");
    }
    drop(set);
    assert_eq!(switches.live(), 1, "a clone of the task waker was leaked");
}

/// (e) A call that yields because it polled too many futures again in vain (each woken, and
/// `Pending` again without waking itself) wakes its task at once; that wake panics. Later
/// wakes still reach the task: the set does not stay deaf.
pub fn a_panic_in_the_task_wakers_wake_at_a_yield_leaves_later_wakes_reaching_the_task<
    S: SetUnderTest,
>() {
    // More futures than a call polls again in vain before it yields (32, the arena's
    // `MAX_VAIN_REPOLLS`).
    let n = 40;
    let (mut set, states) = probe_set::<S>(n);
    let (task, switches) = panicking_waker();
    assert!(poll_with(&mut set, &task).is_pending());
    for state in &states {
        state.waker().wake();
    }
    let wakes = switches.wakes();
    switches.panic_once(WakerOps::ANY_WAKE);
    let yielded = catch_unwind(AssertUnwindSafe(|| poll_with(&mut set, &task)));
    assert!(
        yielded.is_err(),
        "the call did not yield through the task waker (polled {:?})",
        states.iter().map(|s| s.polls()).collect::<Vec<_>>()
    );
    assert_eq!(
        switches.wakes(),
        wakes,
        "the task waker's wake did not panic"
    );
    assert_all_alive::<S>(&set, &states);

    // The first future was polled again before the yield; its wake now must reach the task.
    states[0].finish();
    assert!(
        switches.wakes() > wakes,
        "a wake after the panicking yield did not reach the task"
    );
    let first = (0..=n)
        .map(|_| poll_with(&mut set, &task))
        .find(Poll::is_ready);
    assert_eq!(first, Some(Poll::Ready(Some(0))));
    outputs_follow_wakes_from_other_threads::<S>(&mut set, &states, &task, &|| switches.wakes());
    drop((set, states));
    assert_eq!(switches.live(), 1, "a clone of the task waker was leaked");
}
