//! `try_join_all` returns the first error in time at once, whatever its index, after dropping
//! every other future and every `Ok` value it kept.

mod probe;

use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use futures_core::future::FusedFuture;
use pinfold_join::try_join_all;
use probe::{DropFlag, DropLog, Probe, ProbeState, Tracked, flags, is_set, poll_once, probes};
use tokio::time::{Instant, sleep};

#[tokio::test(start_paused = true)]
#[cfg_attr(miri, ignore)]
async fn error_from_index_900_is_returned_before_the_others_finish() {
    let n = 1_000;
    let dropped = flags(n);
    let finished = flags(n);
    let start = Instant::now();
    let futures = (0..n).map(|i| {
        let guard = DropFlag(dropped[i].clone());
        let finished = finished[i].clone();
        async move {
            let _guard = guard;
            if i == 900 {
                sleep(Duration::from_millis(5)).await;
                return Err(format!("input {i} failed"));
            }
            // Everyone else takes at least a second, some of them much longer.
            sleep(Duration::from_millis(1_000 + i as u64 * 10)).await;
            finished.store(true, std::sync::atomic::Ordering::SeqCst);
            Ok(i)
        }
    });
    let mut join = try_join_all(futures);
    let result = (&mut join).await;

    assert_eq!(result, Err("input 900 failed".to_string()));
    assert_eq!(
        start.elapsed(),
        Duration::from_millis(5),
        "the error waited for others"
    );
    assert!(
        finished.iter().all(|f| !is_set(f)),
        "a future finished before the error"
    );
    for (i, flag) in dropped.iter().enumerate() {
        assert!(
            is_set(flag),
            "future {i} still alive when the error was returned"
        );
    }
    assert!(join.is_terminated());
}

/// A probe whose output is a tracked `Ok` or `Err`.
type Fallible = Probe<Result<Tracked, Tracked>>;

/// `n` probes whose outputs are `Ok(tracked i)`, except `Err(tracked i)` at `err`; the drop log
/// of those outputs.
fn fallible_probes(n: usize, err: usize) -> (Vec<Fallible>, Vec<Arc<ProbeState>>, Arc<DropLog>) {
    let log = DropLog::new(n);
    let (futures, states) = probes(n, |i| {
        if i == err {
            Err(log.tracked(i))
        } else {
            Ok(log.tracked(i))
        }
    });
    (futures, states, log)
}

#[test]
fn first_error_drops_every_other_future_and_kept_value_before_it_is_returned() {
    let n = if cfg!(miri) { 100 } else { 1_000 };
    let err = n * 9 / 10;
    let (futures, states, log) = fallible_probes(n, err);
    let mut join = try_join_all(futures);
    assert!(poll_once(&mut join).is_pending());

    // A few earlier and later futures finish first: their values are kept.
    let early = [0, 7, n / 2, n - 1];
    for &i in &early {
        states[i].finish();
    }
    assert!(poll_once(&mut join).is_pending());
    for &i in &early {
        assert_eq!(states[i].drops(), 1, "finished future {i} not dropped");
        assert_eq!(log.drops(i), 0, "kept value {i} dropped early");
    }

    states[err].finish();
    let Poll::Ready(Err(error)) = poll_once(&mut join) else {
        panic!("the error was not returned at once");
    };
    assert_eq!(error.id(), err);
    // Before the `TryJoinAll` is dropped: every future and every kept value is gone.
    probe::assert_probes_dropped_once(&states);
    for i in (0..n).filter(|&i| i != err) {
        assert_eq!(log.drops(i), 1, "value {i} dropped {} times", log.drops(i));
    }
    assert!(join.is_terminated());
    assert_eq!(
        format!("{join:?}"),
        format!("TryJoinAll {{ len: {n}, running: 0, terminated: true, .. }}")
    );
    drop(error);
    drop(join);
    probe::assert_probes_dropped_once(&states);
    log.assert_each_dropped_once("output");
}

#[test]
fn error_returned_on_the_first_poll_drops_the_others_unpolled_or_polled() {
    let dropped = flags(3);
    let futures = dropped.iter().enumerate().map(|(i, flag)| {
        let guard = DropFlag(flag.clone());
        async move {
            let _guard = guard;
            match i {
                1 => Err(i),
                _ => std::future::pending().await,
            }
        }
    });
    let mut join = try_join_all(futures);
    assert_eq!(poll_once(&mut join), Poll::Ready(Err::<Vec<()>, _>(1)));
    assert!(dropped.iter().all(|f| is_set(f)));
}

#[test]
fn all_ok_values_come_in_input_order() {
    let n = if cfg!(miri) { 50 } else { 500 };
    let (futures, states, log) = fallible_probes(n, usize::MAX);
    let mut join = try_join_all(futures);
    assert!(poll_once(&mut join).is_pending());
    for state in states.iter().rev() {
        state.finish();
    }
    let Poll::Ready(Ok(values)) = poll_once(&mut join) else {
        panic!("not ready with every future done");
    };
    assert_eq!(
        values.iter().map(Tracked::id).collect::<Vec<_>>(),
        (0..n).collect::<Vec<_>>()
    );
    assert!(
        (0..n).all(|i| log.drops(i) == 0),
        "a returned value was dropped"
    );
    drop(values);
    log.assert_each_dropped_once("value");
}

#[test]
#[should_panic(expected = "TryJoinAll polled after completion")]
fn polling_after_an_error_panics() {
    let mut join = try_join_all([std::future::ready(Err::<u8, u8>(3))]);
    assert_eq!(poll_once(&mut join), Poll::Ready(Err(3)));
    let _ = poll_once(&mut join);
}

#[test]
#[should_panic(expected = "TryJoinAll polled after completion")]
fn polling_after_ok_panics() {
    let mut join = try_join_all([std::future::ready(Ok::<u8, u8>(3))]);
    assert_eq!(poll_once(&mut join), Poll::Ready(Ok(vec![3])));
    let _ = poll_once(&mut join);
}

#[test]
fn dropping_a_pending_join_drops_an_unpolled_error_with_its_future() {
    let (futures, states, log) = fallible_probes(3, 2);
    let mut join = try_join_all(futures);
    // Past the first three polls, which poll every running future (see `polls.rs`).
    for _ in 0..3 {
        assert!(poll_once(&mut join).is_pending());
    }
    states[2].open(); // ready, but not woken: not polled
    states[0].finish();
    states[1].finish();
    assert!(poll_once(&mut join).is_pending());
    drop(join);
    probe::assert_probes_dropped_once(&states);
    log.assert_each_dropped_once("output");
}
