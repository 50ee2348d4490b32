//! What a join is after it completes: terminated, holding nothing, and panicking with a clear
//! message if polled again.

mod probe;

use std::future::ready;
use std::task::Poll;

use futures_core::future::FusedFuture;
use futures_util::FutureExt;
use pinfold_join::{join_all, try_join_all};
use probe::{assert_probes_dropped_once, poll_once, probes};

#[test]
#[should_panic(expected = "JoinAll polled after completion")]
fn join_all_polled_after_completion_panics() {
    let mut join = join_all([ready(1), ready(2)]);
    assert_eq!(poll_once(&mut join), Poll::Ready(vec![1, 2]));
    let _ = poll_once(&mut join);
}

#[test]
#[should_panic(expected = "JoinAll polled after completion")]
fn empty_join_all_polled_after_completion_panics() {
    let mut join = join_all(Vec::<std::future::Ready<()>>::new());
    assert_eq!(poll_once(&mut join), Poll::Ready(vec![]));
    let _ = poll_once(&mut join);
}

#[test]
fn join_is_terminated_exactly_when_it_has_completed() {
    let (futures, states) = probes(3, |i| i);
    let mut join = join_all(futures);
    assert!(!join.is_terminated());
    assert!(poll_once(&mut join).is_pending());
    assert!(!join.is_terminated());
    for state in &states {
        state.finish();
    }
    assert_eq!(poll_once(&mut join), Poll::Ready(vec![0, 1, 2]));
    assert!(join.is_terminated());
    // It holds no future and no output any more.
    assert_probes_dropped_once(&states);
    assert_eq!(
        format!("{join:?}"),
        "JoinAll { len: 3, running: 0, terminated: true, .. }"
    );

    let mut join = try_join_all([ready(Err::<u8, _>("no"))]);
    assert!(!join.is_terminated());
    assert_eq!(poll_once(&mut join), Poll::Ready(Err("no")));
    assert!(join.is_terminated());
}

#[test]
fn terminated_join_is_skipped_by_select() {
    // `select!` polls only futures that are not terminated: without `FusedFuture` it would poll
    // the finished join again (and panic).
    let mut join = join_all([ready(7), ready(8)]);
    let mut never = std::future::pending::<()>().fuse();
    let run = async {
        let mut rounds = Vec::new();
        loop {
            futures_util::select! {
                outputs = join => rounds.push(outputs),
                () = never => unreachable!(),
                default => break,
            }
        }
        rounds
    };
    assert_eq!(poll_once(&mut Box::pin(run)), Poll::Ready(vec![vec![7, 8]]));
    assert!(join.is_terminated());
}

/// Futures that keep a `&mut` into themselves while they wait (`read(&mut buf).await`) are left
/// alone by the join's bookkeeping (its first polls, arming, its rounds) between their polls
/// (Miri checks the borrows survive).
#[test]
fn futures_borrowing_themselves_while_they_wait_finish() {
    use pinfold_testkit::future::{Gate, borrows_itself};
    let gates: Vec<Gate> = (0..4).map(|_| Gate::new()).collect();
    let join = join_all(
        gates
            .iter()
            .enumerate()
            .map(|(n, gate)| borrows_itself(gate.clone(), n as u8)),
    );
    let mut join = std::pin::pin!(join);
    for gate in gates.iter().rev() {
        // Three polls before the first gate opens: past the task-waker polls, armed.
        for _ in 0..3 {
            assert!(pinfold_testkit::future::poll_once(&mut join).is_pending());
        }
        gate.open();
    }
    assert_eq!(
        pinfold_testkit::future::poll_once(&mut join),
        Poll::Ready(vec![0, 1, 2, 3])
    );
}
