//! A panic of the task's waker (its clone when a join registers it, its drop when the join
//! drops a future that kept it) passes through the join's `poll` and leaves the join as it
//! was: what finished in that poll stays finished, an error stays kept, and polling again with
//! a good waker completes the join.

mod probe;

use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::Poll;

use futures_channel::oneshot::Sender;
use futures_core::future::FusedFuture;
use pinfold_join::{join_all, try_join_all};
use pinfold_testkit::contract::panic_message;
use pinfold_testkit::panicking_waker::{CLONE_PANIC, DROP_PANIC, WakerOps, panicking_waker};
use probe::{Spinner, counting_waker, poll_with, probes};

#[test]
fn a_future_finished_before_the_registration_panics_is_counted_as_finished() {
    let (futures, states) = probes(2, |i| i);
    let mut join = join_all(futures);
    let (task, switches) = panicking_waker();
    // The two polls with the task's waker: both wait.
    assert!(poll_with(&mut join, &task).is_pending());
    assert!(poll_with(&mut join, &task).is_pending());
    // The next poll gives each its own waker: input 0 finishes in it, input 1 waits, and the
    // join's registration of the task's waker (its clone) panics.
    states[0].open();
    switches.panic_once(WakerOps::CLONE);
    let panic = catch_unwind(AssertUnwindSafe(|| poll_with(&mut join, &task)))
        .expect_err("the registration did not panic");
    assert_eq!(panic_message(&*panic), CLONE_PANIC);
    assert!(!join.is_terminated());
    assert_eq!(states[0].drops(), 1, "the finished input was not dropped");

    let (good, _) = counting_waker();
    assert!(poll_with(&mut join, &good).is_pending());
    states[1].finish();
    assert_eq!(poll_with(&mut join, &good), Poll::Ready(vec![0, 1]));
    assert_eq!(states[1].drops(), 1);
}

/// An input of a `try_join_all`.
type Input = Pin<Box<dyn Future<Output = Result<usize, String>>>>;

/// Input 0 waits (keeping a clone of the task's waker in its channel); input 1 yields once
/// (its wake is noted in the pass, to be passed on after it); input 2, an `async` block, fails
/// in the pass.
struct WaitingYieldingFailing {
    inputs: Vec<Input>,
    /// Keeps input 0 waiting.
    _sender: Sender<Result<usize, String>>,
    spinner_polls: Arc<AtomicUsize>,
    failed_polls: Arc<AtomicUsize>,
}

fn waiting_yielding_failing() -> WaitingYieldingFailing {
    let (sender, receiver) = futures_channel::oneshot::channel();
    let (spinner, spinner_polls) = Spinner::new(1, 1);
    let failed_polls = Arc::new(AtomicUsize::new(0));
    let inputs: Vec<Input> = vec![
        Box::pin(async move { receiver.await.expect("the sender is kept") }),
        Box::pin(async move { Ok(spinner.await) }),
        Box::pin({
            let polls = failed_polls.clone();
            async move {
                polls.fetch_add(1, Ordering::SeqCst);
                Err("input 2 failed".to_string())
            }
        }),
    ];
    WaitingYieldingFailing {
        inputs,
        _sender: sender,
        spinner_polls,
        failed_polls,
    }
}

#[test]
fn a_pass_that_fails_returns_its_error_without_waking_the_task() {
    let case = waiting_yielding_failing();
    let mut join = try_join_all(case.inputs);
    let (task, switches) = panicking_waker();
    // The wake after a pass would panic: a pass that completes the join passes none on.
    switches.panic_once(WakerOps::WAKE_BY_REF);
    let polled = catch_unwind(AssertUnwindSafe(|| poll_with(&mut join, &task)));
    let polled = polled
        .unwrap_or_else(|panic| panic!("the failing pass panicked: {}", panic_message(&*panic)));
    assert_eq!(polled, Poll::Ready(Err("input 2 failed".to_string())));
    assert!(switches.is_armed(), "the task was woken");
    assert_eq!(case.failed_polls.load(Ordering::SeqCst), 1);
    assert_eq!(case.spinner_polls.load(Ordering::SeqCst), 1);
    assert!(join.is_terminated());
    drop(join);
    assert_eq!(switches.live(), 1, "a clone of the task's waker was leaked");
}

#[test]
fn an_error_whose_cancellation_panics_in_the_task_wakers_drop_comes_out_at_the_next_poll() {
    let case = waiting_yielding_failing();
    let mut join = try_join_all(case.inputs);
    let (task, switches) = panicking_waker();
    // The first drop of a handle of the task's waker: the clone input 0's channel keeps,
    // dropped with input 0 when the error cancels it.
    switches.panic_once(WakerOps::DROP);
    let panic = catch_unwind(AssertUnwindSafe(|| poll_with(&mut join, &task)))
        .expect_err("the cancellation did not drop the task's waker");
    assert_eq!(panic_message(&*panic), DROP_PANIC);
    assert!(!join.is_terminated(), "the error was lost");

    let (good, _) = counting_waker();
    let again = catch_unwind(AssertUnwindSafe(|| poll_with(&mut join, &good)));
    let again = again.unwrap_or_else(|panic| {
        panic!(
            "the poll after the waker's panic panicked: {}",
            panic_message(&*panic)
        )
    });
    assert_eq!(again, Poll::Ready(Err("input 2 failed".to_string())));
    assert_eq!(case.failed_polls.load(Ordering::SeqCst), 1);
    assert_eq!(case.spinner_polls.load(Ordering::SeqCst), 1);
    assert!(join.is_terminated());
    drop(join);
    assert_eq!(switches.live(), 1, "a clone of the task's waker was leaked");
}
