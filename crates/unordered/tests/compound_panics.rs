//! Two panics in one call: a future whose `poll` panics and whose `Drop` then panics too; a
//! future whose `poll` panics while the task's waker panics when the set wakes it; a set
//! dropped or cleared while two of its futures panic in `Drop`. The first panic reaches the
//! caller, nothing is dropped twice or leaked, and the set is not deaf: a wake from outside
//! after the panic reaches the task. Each case runs over both sets, the growable one also
//! with its futures in several groups.

use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll, Waker};

use pinfold_arena::Storage;
use pinfold_testkit::contract::panic_message;
use pinfold_testkit::panicking_waker::{WakerOps, panicking_waker};
use pinfold_testkit::probe::{Probe, ProbeState};
use pinfold_testkit::stream::poll_with;
use pinfold_unordered::{FuturesUnordered, FuturesUnorderedBounded, UnorderedSet};

/// What a test pushes: a probe (pending until its state finishes it), or a future that
/// panics in `poll` and, if `panics_in_drop`, in `Drop` too; or one that never finishes and
/// panics in `Drop`. Each counts its drops.
enum Job {
    Probe(Pin<Box<Probe>>),
    Bomb {
        panics_in_drop: bool,
        drops: Arc<AtomicUsize>,
    },
    PendingBomb(Arc<AtomicUsize>),
}

impl Future for Job {
    type Output = usize;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<usize> {
        match self.get_mut() {
            Job::Probe(probe) => probe.as_mut().poll(cx),
            Job::Bomb { .. } => panic!("panic in poll"),
            Job::PendingBomb(_) => Poll::Pending,
        }
    }
}

impl Drop for Job {
    fn drop(&mut self) {
        match self {
            Job::Probe(_) => {}
            Job::Bomb {
                panics_in_drop,
                drops,
            } => {
                drops.fetch_add(1, Ordering::SeqCst);
                if *panics_in_drop {
                    panic!("panic in drop");
                }
            }
            Job::PendingBomb(drops) => {
                drops.fetch_add(1, Ordering::SeqCst);
                panic!("panic in drop");
            }
        }
    }
}

fn probe(id: usize) -> (Job, Arc<ProbeState>) {
    let (probe, state) = Probe::new(id);
    (Job::Probe(Box::pin(probe)), state)
}

fn bomb(panics_in_drop: bool) -> (Job, Arc<AtomicUsize>) {
    let drops = Arc::new(AtomicUsize::new(0));
    (
        Job::Bomb {
            panics_in_drop,
            drops: drops.clone(),
        },
        drops,
    )
}

fn pending_bomb() -> (Job, Arc<AtomicUsize>) {
    let drops = Arc::new(AtomicUsize::new(0));
    (Job::PendingBomb(drops.clone()), drops)
}

/// Polls once with `waker`; the message of a panic that reached the caller, if one did.
fn poll_catching<A: Storage<Job>>(
    set: &mut UnorderedSet<Job, A>,
    waker: &Waker,
) -> Result<Poll<Option<usize>>, String> {
    catch_unwind(AssertUnwindSafe(|| poll_with(set, waker)))
        .map_err(|panic| panic_message(&*panic).to_owned())
}

/// Pushes `filler` probes that never finish (so that the growable set holds several groups
/// when `filler` is large), then the probe the test wakes from outside; polls until
/// `Pending`. The filler's states and the probe's.
fn settled_with_a_waiting_probe<A: Storage<Job>>(
    set: &mut UnorderedSet<Job, A>,
    filler: usize,
    waker: &Waker,
) -> (Vec<Arc<ProbeState>>, Arc<ProbeState>) {
    let fillers = (0..filler)
        .map(|id| {
            let (job, state) = probe(100 + id);
            set.push(job);
            state
        })
        .collect();
    let (job, waiting) = probe(1);
    set.push(job);
    assert_eq!(poll_catching(set, waker), Ok(Poll::Pending));
    (fillers, waiting)
}

/// A future panics in `poll`, and then in `Drop` as the set drops it: the poll's panic
/// reaches the caller, the future was dropped once, and a probe woken from outside afterwards
/// wakes the task and gives its output.
fn poll_panic_then_drop_panic_leaves_the_set_listening<A: Storage<Job>>(
    mut set: impl core::ops::DerefMut<Target = UnorderedSet<Job, A>>,
    filler: usize,
) {
    let (task, switches) = panicking_waker();
    let (_fillers, waiting) = settled_with_a_waiting_probe(&mut set, filler, &task);
    let (job, drops) = bomb(true);
    set.push(job);
    assert_eq!(
        poll_catching(&mut set, &task),
        Err("panic in poll".to_owned())
    );
    assert_eq!(drops.load(Ordering::SeqCst), 1, "dropped once");
    assert_eq!(set.len(), filler + 1);

    let wakes = switches.wakes();
    waiting.finish();
    assert_eq!(
        switches.wakes(),
        wakes + 1,
        "the wake after the panic reached the task"
    );
    assert_eq!(poll_catching(&mut set, &task), Ok(Poll::Ready(Some(1))));
    assert_eq!(poll_catching(&mut set, &task), Ok(Poll::Pending));
}

/// A future panics in `poll` while another is queued behind it, and the task's waker panics
/// when the set wakes the task for that one: the poll's panic reaches the caller, the queued
/// future is polled by the next call, and a probe woken from outside later wakes the task.
fn poll_panic_whose_task_wake_panics_leaves_the_set_listening<A: Storage<Job>>(
    mut set: impl core::ops::DerefMut<Target = UnorderedSet<Job, A>>,
    filler: usize,
) {
    let (task, switches) = panicking_waker();
    let (_fillers, waiting) = settled_with_a_waiting_probe(&mut set, filler, &task);
    let (job, drops) = bomb(false);
    set.push(job);
    let (queued, queued_state) = probe(2);
    set.push(queued);
    queued_state.open();
    switches.panic_once(WakerOps::ANY_WAKE);
    assert_eq!(
        poll_catching(&mut set, &task),
        Err("panic in poll".to_owned()),
        "the poll's panic, not the waker's, reaches the caller"
    );
    assert_eq!(
        switches.panics(),
        1,
        "the set woke the task for the queued future"
    );
    assert_eq!(drops.load(Ordering::SeqCst), 1);

    let wakes = switches.wakes();
    waiting.finish();
    assert_eq!(
        switches.wakes(),
        wakes + 1,
        "the wake after the panic reached the task"
    );
    let mut outputs = Vec::new();
    while let Ok(Poll::Ready(Some(out))) = poll_catching(&mut set, &task) {
        outputs.push(out);
    }
    outputs.sort_unstable();
    assert_eq!(outputs, [1, 2]);
    assert_eq!(set.len(), filler);
}

/// The set is dropped, or cleared, while it holds two futures that panic in `Drop` (and
/// others that do not): the first panic reaches the caller, no abort, and every future was
/// dropped once.
fn two_panicking_drops<A: Storage<Job>>(
    mut set: impl core::ops::DerefMut<Target = UnorderedSet<Job, A>>,
    filler: usize,
    clear: bool,
) {
    let (first, first_drops) = pending_bomb();
    set.push(first);
    let fillers: Vec<_> = (0..filler)
        .map(|id| {
            let (job, state) = probe(100 + id);
            set.push(job);
            state
        })
        .collect();
    let (second, second_drops) = pending_bomb();
    set.push(second);
    let (task, _switches) = panicking_waker();
    assert_eq!(poll_catching(&mut set, &task), Ok(Poll::Pending));

    let dropped = if clear {
        catch_unwind(AssertUnwindSafe(|| set.clear()))
    } else {
        catch_unwind(AssertUnwindSafe(|| drop(set)))
    };
    let panic = dropped.expect_err("a panic of a future's Drop reaches the caller");
    assert_eq!(panic_message(&*panic), "panic in drop");
    assert_eq!(first_drops.load(Ordering::SeqCst), 1);
    assert_eq!(second_drops.load(Ordering::SeqCst), 1);
    for state in &fillers {
        assert_eq!(state.drops(), 1);
    }
}

/// Enough futures for a growable set of 32 slots first to hold three groups.
const GROUPS: usize = 80;

#[test]
fn bounded_poll_panic_then_drop_panic_leaves_the_set_listening() {
    poll_panic_then_drop_panic_leaves_the_set_listening(FuturesUnorderedBounded::new(4), 2);
}

#[test]
fn growable_poll_panic_then_drop_panic_leaves_the_set_listening() {
    poll_panic_then_drop_panic_leaves_the_set_listening(FuturesUnordered::new(), 2);
    poll_panic_then_drop_panic_leaves_the_set_listening(FuturesUnordered::new(), GROUPS);
}

#[test]
fn bounded_poll_panic_whose_task_wake_panics_leaves_the_set_listening() {
    poll_panic_whose_task_wake_panics_leaves_the_set_listening(FuturesUnorderedBounded::new(5), 2);
}

#[test]
fn growable_poll_panic_whose_task_wake_panics_leaves_the_set_listening() {
    poll_panic_whose_task_wake_panics_leaves_the_set_listening(FuturesUnordered::new(), 2);
    poll_panic_whose_task_wake_panics_leaves_the_set_listening(FuturesUnordered::new(), GROUPS);
}

#[test]
fn bounded_set_dropped_with_two_panicking_drops_drops_every_future() {
    pinfold_testkit::panic_hook::no_forced_backtraces();
    two_panicking_drops(FuturesUnorderedBounded::new(4), 2, false);
}

#[test]
fn growable_set_dropped_with_two_panicking_drops_drops_every_future() {
    pinfold_testkit::panic_hook::no_forced_backtraces();
    two_panicking_drops(FuturesUnordered::new(), 2, false);
    // The two in different groups.
    two_panicking_drops(FuturesUnordered::new(), GROUPS, false);
}

#[test]
fn bounded_set_cleared_with_two_panicking_drops_drops_every_future() {
    two_panicking_drops(FuturesUnorderedBounded::new(4), 2, true);
}

#[test]
fn growable_set_cleared_with_two_panicking_drops_drops_every_future() {
    two_panicking_drops(FuturesUnordered::new(), GROUPS, true);
}

/// An output that counts its drops and panics in `Drop`.
#[derive(Debug)]
struct PanickingOutput(Arc<AtomicUsize>);

impl Drop for PanickingOutput {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
        panic!("panic in the output's drop")
    }
}

/// A future that finishes at once with a [`PanickingOutput`], and panics in `Drop` as the set
/// drops it after it finished: its output is dropped as that panic unwinds, and panics too.
struct FinishesThenBombs {
    output: Option<PanickingOutput>,
    drops: Arc<AtomicUsize>,
}

impl Future for FinishesThenBombs {
    type Output = PanickingOutput;

    fn poll(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<PanickingOutput> {
        Poll::Ready(self.output.take().expect("polled once"))
    }
}

impl Drop for FinishesThenBombs {
    fn drop(&mut self) {
        self.drops.fetch_add(1, Ordering::SeqCst);
        panic!("panic in drop")
    }
}

/// The future's `Drop` panics as the set drops it after it finished, and then its output's
/// `Drop` panics as that panic unwinds: the future's panic reaches the caller, no abort, each
/// dropped once, and the set gives the next future's output.
fn finished_future_and_output_panic_in_drop<A: Storage<FinishesThenBombs>>(
    mut set: impl core::ops::DerefMut<Target = UnorderedSet<FinishesThenBombs, A>>,
) {
    pinfold_testkit::panic_hook::no_forced_backtraces();
    let (drops, output_drops) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    for _ in 0..2 {
        set.push(FinishesThenBombs {
            output: Some(PanickingOutput(output_drops.clone())),
            drops: drops.clone(),
        });
    }
    for polled in 1..=2 {
        let panic = catch_unwind(AssertUnwindSafe(|| poll_with(&mut *set, Waker::noop())))
            .expect_err("the future's Drop panics");
        assert_eq!(panic_message(&*panic), "panic in drop");
        assert_eq!(drops.load(Ordering::SeqCst), polled);
        assert_eq!(output_drops.load(Ordering::SeqCst), polled);
    }
    assert!(matches!(
        poll_with(&mut *set, Waker::noop()),
        Poll::Ready(None)
    ));
}

#[test]
fn bounded_finished_future_and_output_panicking_in_drop_do_not_abort() {
    finished_future_and_output_panic_in_drop(FuturesUnorderedBounded::new(2));
}

#[test]
fn growable_finished_future_and_output_panicking_in_drop_do_not_abort() {
    finished_future_and_output_panic_in_drop(FuturesUnordered::new());
}
