//! A panic at every place user code runs in a join: a future's poll, a future's drop, an
//! output's (or error's) drop, and the task waker's clone, wake, wake_by_ref and drop.
//!
//! Each case runs a join of a mix of futures once to count those calls (the steps), then once
//! per step with a panic there. After the panic, the contract of the crate docs (*Panics*):
//!
//! - a panic out of a future's poll is fatal: every future and every output made is dropped
//!   once before the panic comes out, the join is terminated, and polling it again panics with
//!   "`JoinAll` polled after completion";
//! - any other panic leaves the join as it was: polled again with a good waker (and woken as
//!   a join must be: a poll only follows a wake), it completes with every output in order, or,
//!   for `try_join_all`, with the first error in time;
//!
//! and in every case no future is polled after it finished, and every future and every output
//! made is dropped exactly once, with no clone of the task's waker left behind.

use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll, Waker};

use futures_core::future::FusedFuture;
use pinfold_join::{join_all, try_join_all};
use pinfold_testkit::contract::panic_message;
use pinfold_testkit::future::poll_with;
use pinfold_testkit::panicking_waker::{WakerSwitches, panicking_waker};
use pinfold_testkit::waker::{WakeCounter, counting_waker};

/// What an input does.
#[derive(Debug, Clone, Copy)]
enum Kind {
    /// `Ok` at its first poll.
    Ready,
    /// `Err` at its first poll.
    ReadyErr,
    /// Wakes itself and is `Pending` this many times, then `Ok`.
    Yield(usize),
    /// `Pending`, keeping its waker, until the test fires its event; then `Ok`.
    Wait,
    /// As `Wait`, then `Err`.
    WaitErr,
}

/// What the test sees of one input.
#[derive(Default)]
struct Seen {
    finished: AtomicBool,
    polls_after_finishing: AtomicUsize,
    future_drops: AtomicUsize,
    /// Whether its output (or error) was made.
    made: AtomicBool,
    output_drops: AtomicUsize,
    /// Whether the test fired its event.
    fired: AtomicBool,
    /// The waker of its latest `Pending` poll, for a `Wait` input; dropped with the future.
    waker: Mutex<Option<Waker>>,
}

/// What a run's inputs and outputs share with the test.
struct Run {
    switches: Arc<WakerSwitches>,
    seen: Vec<Seen>,
    /// The inputs that gave an error, in time order.
    errors: Mutex<Vec<usize>>,
    /// Whether a panic unwound out of a future's poll.
    poll_panicked: AtomicBool,
}

impl Run {
    fn seen(&self, id: usize) -> &Seen {
        &self.seen[id]
    }

    /// Asserts that each of the `n` futures was dropped once, and each output made dropped
    /// once, but that of `handed_out` (the error the join returned, owned by the test).
    fn assert_each_dropped_once(
        &self,
        n: usize,
        handed_out: Option<usize>,
        context: impl Fn(&str) -> String,
    ) {
        for id in 0..n {
            let seen = self.seen(id);
            assert_eq!(
                seen.future_drops.load(Ordering::SeqCst),
                1,
                "{}",
                context(&format!("future {id} drops"))
            );
            let made = seen.made.load(Ordering::SeqCst) && handed_out != Some(id);
            assert_eq!(
                seen.output_drops.load(Ordering::SeqCst),
                usize::from(made),
                "{}",
                context(&format!("output {id} drops"))
            );
        }
    }
}

/// An input's output, or error: counts its drops, and its drop is a step.
#[derive(Debug)]
struct Out {
    id: usize,
    run: Arc<Run>,
}

impl std::fmt::Debug for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Run").finish_non_exhaustive()
    }
}

impl Drop for Out {
    fn drop(&mut self) {
        self.run
            .seen(self.id)
            .output_drops
            .fetch_add(1, Ordering::SeqCst);
        self.run.switches.step("output: drop");
    }
}

/// A future of the given kind whose poll and drop are steps.
struct Input {
    id: usize,
    kind: Kind,
    run: Arc<Run>,
}

/// Notes a panic that unwinds out of a future's poll.
struct PollGuard<'a>(&'a Run);

impl Drop for PollGuard<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.poll_panicked.store(true, Ordering::SeqCst);
        }
    }
}

impl Future for Input {
    type Output = Result<Out, Out>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<Out, Out>> {
        let run = self.run.clone();
        let _guard = PollGuard(&run);
        let id = self.id;
        run.switches.step("future: poll");
        let seen = run.seen(id);
        if seen.finished.load(Ordering::SeqCst) {
            seen.polls_after_finishing.fetch_add(1, Ordering::SeqCst);
            return Poll::Pending;
        }
        let failed = match self.kind {
            Kind::Ready => false,
            Kind::ReadyErr => true,
            Kind::Yield(0) => false,
            Kind::Yield(left) => {
                self.kind = Kind::Yield(left - 1);
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
            Kind::Wait | Kind::WaitErr if !seen.fired.load(Ordering::SeqCst) => {
                let waker = cx.waker().clone();
                let old = lock(&seen.waker).replace(waker);
                drop(old);
                return Poll::Pending;
            }
            Kind::Wait => false,
            Kind::WaitErr => true,
        };
        seen.finished.store(true, Ordering::SeqCst);
        seen.made.store(true, Ordering::SeqCst);
        let out = Out {
            id,
            run: run.clone(),
        };
        if failed {
            lock(&run.errors).push(id);
            Poll::Ready(Err(out))
        } else {
            Poll::Ready(Ok(out))
        }
    }
}

impl Drop for Input {
    fn drop(&mut self) {
        let seen = self.run.seen(self.id);
        seen.future_drops.fetch_add(1, Ordering::SeqCst);
        // The waker it kept goes with it (a step of its own if it is the task's).
        let kept = lock(&seen.waker).take();
        drop(kept);
        self.run.switches.step("future: drop");
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The join under test: `join_all` or `try_join_all` of the inputs, its result as a
/// `Result`, and the name its "polled after completion" message gives.
trait Joiner {
    type Join: Future + FusedFuture + Unpin;
    const NAME: &'static str;
    fn join(inputs: Vec<Input>) -> Self::Join;
    fn result(output: <Self::Join as Future>::Output) -> Result<Vec<Out>, Out>;
}

struct JoinAll;

impl Joiner for JoinAll {
    type Join = pinfold_join::JoinAll<Input>;
    const NAME: &'static str = "JoinAll";
    fn join(inputs: Vec<Input>) -> Self::Join {
        join_all(inputs)
    }
    fn result(output: Vec<Result<Out, Out>>) -> Result<Vec<Out>, Out> {
        Ok(output
            .into_iter()
            .map(|out| out.expect("join_all's inputs do not fail"))
            .collect())
    }
}

struct TryJoinAll;

impl Joiner for TryJoinAll {
    type Join = pinfold_join::TryJoinAll<Input>;
    const NAME: &'static str = "TryJoinAll";
    fn join(inputs: Vec<Input>) -> Self::Join {
        try_join_all(inputs)
    }
    fn result(output: Result<Vec<Out>, Out>) -> Result<Vec<Out>, Out> {
        output
    }
}

/// The waker a run polls with: the panicking one until a panic, then a good one.
enum TaskWaker {
    Panicking(Waker, Arc<WakerSwitches>),
    Good(Waker, Arc<WakeCounter>),
}

impl TaskWaker {
    fn waker(&self) -> &Waker {
        match self {
            TaskWaker::Panicking(waker, _) | TaskWaker::Good(waker, _) => waker,
        }
    }

    fn wakes(&self) -> usize {
        match self {
            TaskWaker::Panicking(_, switches) => switches.wakes(),
            TaskWaker::Good(_, counter) => counter.count(),
        }
    }
}

/// How a run went.
struct Ran {
    /// What every step was (the counting run's labels tell the message of step `k`).
    labels: Vec<&'static str>,
    /// The injected panic's message, once caught.
    panic: Option<String>,
}

/// The most polls a run takes: far more than any case needs.
const MAX_POLLS: usize = 1_000;

/// Runs `kinds` through `J`'s join with a panic at step `panic_at` (none if `None`), and checks
/// the contract after it.
fn run<J: Joiner>(kinds: &[Kind], panic_at: Option<usize>, expected_panic: Option<&str>) -> Ran {
    let n = kinds.len();
    let (task, switches) = panicking_waker();
    if let Some(step) = panic_at {
        switches.panic_at_call(step);
    }
    let run = Arc::new(Run {
        switches: switches.clone(),
        seen: (0..n).map(|_| Seen::default()).collect(),
        errors: Mutex::new(Vec::new()),
        poll_panicked: AtomicBool::new(false),
    });
    let inputs = kinds
        .iter()
        .enumerate()
        .map(|(id, &kind)| Input {
            id,
            kind,
            run: run.clone(),
        })
        .collect();
    let context = |what: &str| {
        format!(
            "{} of {kinds:?}, panic at step {panic_at:?}: {what}",
            J::NAME
        )
    };
    let mut join = J::join(inputs);
    let mut waker = TaskWaker::Panicking(task, switches.clone());
    let mut caught: Option<String> = None;
    let mut catch = |panic: Box<dyn std::any::Any + Send>, waker: &mut TaskWaker| {
        let message = panic_message(&*panic).to_string();
        assert!(
            caught.is_none(),
            "{}",
            context(&format!("a second panic: {message}"))
        );
        assert_eq!(
            Some(message.as_str()),
            expected_panic,
            "{}",
            context("not the injected panic")
        );
        caught = Some(message);
        let (good, counter) = counting_waker();
        *waker = TaskWaker::Good(good, counter);
    };
    let mut outcome = None;
    let labels;
    let mut woken = true;
    for _ in 0..MAX_POLLS {
        if !woken {
            // Fire the next event; its wake must wake the join.
            let next = (0..n).find(|&id| {
                matches!(kinds[id], Kind::Wait | Kind::WaitErr)
                    && !run.seen(id).fired.load(Ordering::SeqCst)
                    && run.seen(id).future_drops.load(Ordering::SeqCst) == 0
            });
            let Some(id) = next else {
                panic!(
                    "{}",
                    context("the join is pending and nothing is left to wake it")
                );
            };
            let before = waker.wakes();
            run.seen(id).fired.store(true, Ordering::SeqCst);
            let kept = lock(&run.seen(id).waker).take();
            let kept =
                kept.unwrap_or_else(|| panic!("{}", context("a waiting input kept no waker")));
            match catch_unwind(AssertUnwindSafe(|| kept.wake())) {
                Ok(()) => assert!(waker.wakes() > before, "{}", context("a wake was lost")),
                // The wake's own panic: nothing of the join's; poll it again all the same.
                Err(panic) => catch(panic, &mut waker),
            }
        }
        let before = waker.wakes();
        match catch_unwind(AssertUnwindSafe(|| poll_with(&mut join, waker.waker()))) {
            Ok(Poll::Ready(output)) => {
                outcome = Some(J::result(output));
                break;
            }
            Ok(Poll::Pending) => woken = waker.wakes() > before,
            Err(panic) => {
                catch(panic, &mut waker);
                woken = true;
                if run.poll_panicked.load(Ordering::SeqCst) {
                    break;
                }
            }
        }
    }
    let fatal = run.poll_panicked.load(Ordering::SeqCst);
    if fatal {
        // Fatal: everything was dropped before the panic came out.
        assert!(
            join.is_terminated(),
            "{}",
            context("not terminated after a future's panic")
        );
        run.assert_each_dropped_once(n, None, context);
        let Err(again) = catch_unwind(AssertUnwindSafe(|| {
            let _ = poll_with(&mut join, Waker::noop());
        })) else {
            panic!(
                "{}",
                context("a terminated join polled again did not panic")
            );
        };
        assert_eq!(
            panic_message(&*again),
            format!("{} polled after completion", J::NAME)
        );
        if let Err(panic) = catch_unwind(AssertUnwindSafe(|| drop(join))) {
            catch(panic, &mut waker);
        }
        labels = switches.step_labels();
    } else {
        let outcome = outcome.unwrap_or_else(|| panic!("{}", context("the join never completed")));
        assert!(join.is_terminated());
        let errors = lock(&run.errors).clone();
        match &outcome {
            Ok(outputs) => {
                assert_eq!(errors, [], "{}", context("an error was lost"));
                let ids: Vec<usize> = outputs.iter().map(|out| out.id).collect();
                assert_eq!(ids, (0..n).collect::<Vec<_>>(), "{}", context("outputs"));
                for id in 0..n {
                    assert_eq!(
                        run.seen(id).output_drops.load(Ordering::SeqCst),
                        0,
                        "{}",
                        context(&format!("output {id} dropped before it came out"))
                    );
                }
            }
            Err(err) => {
                // The first error in time, the only one made; everything else dropped by now.
                assert_eq!(errors, [err.id], "{}", context("not the first error"));
                run.assert_each_dropped_once(n, Some(err.id), |what: &str| {
                    context(&format!("{what} at the error"))
                });
            }
        }
        // The join's drop is a step too (the task's waker its wake table may hold); the
        // outputs', once they are the test's, are not.
        if let Err(panic) = catch_unwind(AssertUnwindSafe(|| drop(join))) {
            catch(panic, &mut waker);
        }
        labels = switches.step_labels();
        drop(outcome);
    }
    if panic_at.is_some() {
        assert!(
            caught.is_some(),
            "{}",
            context("the injected panic was not seen")
        );
    }
    for id in 0..n {
        assert_eq!(
            run.seen(id).polls_after_finishing.load(Ordering::SeqCst),
            0,
            "{}",
            context(&format!("future {id} polled after it finished"))
        );
    }
    run.assert_each_dropped_once(n, None, context);
    drop(waker);
    assert_eq!(
        switches.live(),
        0,
        "{}",
        context("a clone of the task's waker was leaked")
    );
    Ran {
        labels,
        panic: caught,
    }
}

/// Counts the steps of `kinds` joined by `J`, then runs it once with a panic at each.
fn panic_at_every_step<J: Joiner>(kinds: &[Kind]) {
    let counted = run::<J>(kinds, None, None);
    assert!(counted.panic.is_none());
    let steps = counted.labels.len();
    // Under Miri, about 20 steps spread over the run (and the last).
    let stride = if cfg!(miri) { (steps / 20).max(1) } else { 1 };
    for step in (1..=steps).step_by(stride).chain([steps]) {
        let expected = counted.labels[step - 1];
        let ran = run::<J>(kinds, Some(step), Some(expected));
        assert_eq!(ran.panic.as_deref(), Some(expected), "step {step}");
    }
}

use Kind::{Ready, ReadyErr, Wait, WaitErr, Yield};

#[test]
fn join_all_of_ready_futures_survives_a_panic_at_every_step() {
    panic_at_every_step::<JoinAll>(&[Ready, Ready, Ready]);
}

#[test]
fn join_all_of_a_mix_survives_a_panic_at_every_step() {
    panic_at_every_step::<JoinAll>(&[Ready, Wait, Yield(1), Ready, Wait, Yield(2)]);
}

#[test]
fn a_large_join_all_of_a_mix_survives_a_panic_at_every_step() {
    // Past 32 futures: one poll with the task's waker, not two.
    let kinds: Vec<Kind> = [Ready, Yield(1), Wait, Ready, Yield(2), Wait]
        .into_iter()
        .cycle()
        .take(34)
        .collect();
    panic_at_every_step::<JoinAll>(&kinds);
}

#[test]
fn try_join_all_of_a_mix_that_succeeds_survives_a_panic_at_every_step() {
    panic_at_every_step::<TryJoinAll>(&[Ready, Yield(1), Wait, Ready, Yield(2)]);
}

#[test]
fn try_join_all_failing_in_its_first_poll_survives_a_panic_at_every_step() {
    panic_at_every_step::<TryJoinAll>(&[Ready, Yield(1), ReadyErr, Wait, Ready]);
}

#[test]
fn try_join_all_failing_later_survives_a_panic_at_every_step() {
    panic_at_every_step::<TryJoinAll>(&[Ready, Wait, Yield(1), WaitErr, Ready, Wait, Yield(2)]);
}
