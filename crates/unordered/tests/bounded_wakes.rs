//! Wakes: a future is polled when, and only when, it was woken; wakes coalesce; wakes from
//! other threads are never lost; stale wakers, also after the set is gone, do nothing.

use std::future::Future;
use std::sync::Arc;
use std::task::{Poll, Waker};
use std::thread;

use futures_util::StreamExt;
use pinfold_arena::MAX_VAIN_REPOLLS;
use pinfold_testkit::channels::{id_channels, send_from_threads};
use pinfold_testkit::future::{block_on, lost_wake};
use pinfold_testkit::probe::{Probe, probes};
use pinfold_testkit::stream::{poll_once, poll_with, settle};
use pinfold_testkit::waker::counting_waker;
use pinfold_unordered::FuturesUnorderedBounded;

/// Awaits `fut`, panicking if it does not finish within `lost_wake()` (a deadlock guard).
/// Checks the deadline before polling `fut`, so a lost wake cannot be covered up by the
/// deadline's own wake polling `fut` once more.
async fn guarded<F: Future>(fut: F) -> F::Output {
    tokio::select! {
        biased;
        () = tokio::time::sleep(lost_wake()) => panic!("no output for {:?}: a wake was lost", lost_wake()),
        out = fut => out,
    }
}

#[test]
fn pending_future_is_not_polled_again_until_woken() {
    let (futures, states) = probes(3);
    let mut set: FuturesUnorderedBounded<Probe> = futures.into_iter().collect();
    assert!(poll_once(&mut set).is_pending());
    for state in &states {
        assert_eq!(state.polls(), 1);
    }
    for _ in 0..5 {
        assert!(poll_once(&mut set).is_pending());
    }
    for state in &states {
        assert_eq!(state.polls(), 1);
    }

    states[1].waker().wake();
    assert!(poll_once(&mut set).is_pending());
    let polls: Vec<usize> = states.iter().map(|state| state.polls()).collect();
    assert_eq!(polls, [1, 2, 1]);
}

#[test]
fn many_wakes_before_a_poll_cause_one_poll() {
    let (probe, state) = Probe::new(0);
    let mut set = FuturesUnorderedBounded::new(2);
    set.push(probe);
    assert!(poll_once(&mut set).is_pending());
    assert_eq!(state.polls(), 1);

    let waker = state.waker();
    for _ in 0..10 {
        waker.wake_by_ref();
    }
    for _ in 0..5 {
        // Owned clones woken by value: the `wake` path, not `wake_by_ref`.
        let owned = waker.clone();
        owned.wake();
    }
    let other_thread = waker.clone();
    thread::spawn(move || {
        for _ in 0..10 {
            other_thread.wake_by_ref();
        }
    })
    .join()
    .unwrap();

    for _ in 0..3 {
        assert!(poll_once(&mut set).is_pending());
    }
    assert_eq!(state.polls(), 2);

    state.finish();
    assert_eq!(poll_once(&mut set), Poll::Ready(Some(0)));
    assert_eq!(state.polls(), 3);
}

#[test]
fn waking_a_future_wakes_the_task() {
    let (futures, states) = probes(2);
    let mut set: FuturesUnorderedBounded<Probe> = futures.into_iter().collect();
    let (task, wakes) = counting_waker();
    assert!(poll_with(&mut set, &task).is_pending());
    assert_eq!(wakes.count(), 0, "woken with nothing to do");

    states[1].waker().wake();
    assert!(
        wakes.count() >= 1,
        "a future was woken but the task was not"
    );

    // From another thread too.
    assert!(poll_with(&mut set, &task).is_pending());
    let before = wakes.count();
    let waker = states[0].waker();
    thread::spawn(move || waker.wake()).join().unwrap();
    assert!(
        wakes.count() > before,
        "a wake from another thread did not reach the task"
    );

    states[0].open();
    assert_eq!(poll_with(&mut set, &task), Poll::Ready(Some(0)));
}

#[test]
fn a_burst_of_wakes_wakes_the_task_once() {
    let (futures, states) = probes(100);
    let mut set: FuturesUnorderedBounded<Probe> = futures.into_iter().collect();
    let (task, wakes) = counting_waker();
    assert!(poll_with(&mut set, &task).is_pending());
    assert_eq!(wakes.count(), 0);

    for state in &states {
        state.waker().wake();
        state.waker().wake();
    }
    assert_eq!(wakes.count(), 1);

    // The next polls poll each once, at most `MAX_VAIN_REPOLLS` a call (they are all
    // `Pending` again), each call but the last yielding; a new burst after them wakes the task
    // again, once.
    let calls = states.len().div_ceil(MAX_VAIN_REPOLLS);
    for call in 1..=calls {
        let yields = wakes.count();
        assert!(poll_with(&mut set, &task).is_pending());
        let repolled = states.iter().filter(|state| state.polls() == 2).count();
        assert_eq!(repolled, (call * MAX_VAIN_REPOLLS).min(states.len()));
        let yielded = wakes.count() - yields;
        assert_eq!(yielded, usize::from(call < calls), "call {call} of {calls}");
    }
    assert!(states.iter().all(|state| state.polls() == 2));
    let before = wakes.count();
    for state in states.iter().rev() {
        state.waker().wake();
    }
    assert_eq!(wakes.count(), before + 1);
}

/// Channels completed from `threads` std threads while the set is driven by `run`.
fn channels_completed_from_std_threads(
    threads: usize,
    per_thread: usize,
    run: impl FnOnce(FuturesUnorderedBounded<futures_channel::oneshot::Receiver<usize>>) -> Vec<usize>,
) {
    let n = threads * per_thread;
    let (receivers, senders) = id_channels(n);
    let set: FuturesUnorderedBounded<_> = receivers.into_iter().collect();
    let senders = send_from_threads(senders, threads, true);
    let mut outputs = run(set);
    for sender in senders {
        sender.join().unwrap();
    }
    outputs.sort_unstable();
    assert_eq!(outputs, (0..n).collect::<Vec<_>>());
}

#[test]
fn wakes_from_std_threads_are_never_lost() {
    let (rounds, threads, per_thread) = if cfg!(miri) { (1, 3, 4) } else { (20, 8, 125) };
    for _ in 0..rounds {
        channels_completed_from_std_threads(threads, per_thread, |set| {
            block_on(set.map(Result::unwrap).collect())
        });
    }
}

#[cfg_attr(miri, ignore)] // tokio does not run under Miri
#[test]
fn wakes_from_std_threads_reach_a_current_thread_runtime() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    for _ in 0..20 {
        channels_completed_from_std_threads(8, 125, |set| {
            runtime.block_on(guarded(set.map(Result::unwrap).collect()))
        });
    }
}

#[cfg_attr(miri, ignore)] // tokio does not run under Miri
#[test]
fn wakes_from_tokio_worker_threads_are_never_lost() {
    const N: usize = 1_000;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(4)
        .enable_time()
        .build()
        .unwrap();
    runtime.block_on(async {
        for _ in 0..20 {
            let mut set = FuturesUnorderedBounded::new(N);
            let mut senders = Vec::with_capacity(N);
            for id in 0..N {
                let (tx, rx) = tokio::sync::oneshot::channel();
                set.push(rx);
                senders.push((id, tx));
            }
            // The set is polled in a task of its own, so wakes come from other workers.
            let driver = tokio::spawn(set.map(Result::unwrap).collect::<Vec<usize>>());
            for (id, tx) in senders {
                tokio::spawn(async move {
                    for _ in 0..id % 4 {
                        tokio::task::yield_now().await;
                    }
                    tx.send(id).unwrap();
                });
            }
            let mut outputs = guarded(driver).await.unwrap();
            outputs.sort_unstable();
            assert_eq!(outputs, (0..N).collect::<Vec<_>>());
        }
    });
}

#[cfg_attr(miri, ignore)] // tokio does not run under Miri
#[test]
fn a_refilled_set_loses_no_wake_from_other_threads() {
    // Slots are reused while wakes for their earlier occupants may still be in flight.
    const N: usize = 2_000;
    const CAPACITY: usize = 64;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(4)
        .enable_time()
        .build()
        .unwrap();
    runtime.block_on(async {
        let mut receivers = Vec::with_capacity(N);
        let mut senders = Vec::with_capacity(N);
        for id in 0..N {
            let (tx, rx) = tokio::sync::oneshot::channel();
            receivers.push(rx);
            senders.push((id, tx));
        }
        let driver = tokio::spawn(async move {
            let mut set = FuturesUnorderedBounded::new(CAPACITY);
            let mut receivers = receivers.into_iter();
            let mut outputs = Vec::with_capacity(N);
            loop {
                while !set.is_full() {
                    match receivers.next() {
                        Some(rx) => set.push(rx),
                        None => break,
                    }
                }
                match set.next().await {
                    Some(out) => outputs.push(out.unwrap()),
                    None => return outputs,
                }
            }
        });
        for (id, tx) in senders {
            tokio::spawn(async move {
                for _ in 0..id % 3 {
                    tokio::task::yield_now().await;
                }
                tx.send(id).unwrap();
            });
        }
        let mut outputs = guarded(driver).await.unwrap();
        outputs.sort_unstable();
        assert_eq!(outputs, (0..N).collect::<Vec<_>>());
    });
}

#[test]
fn stale_waker_of_a_finished_future_polls_nothing() {
    let (futures, states) = probes(3);
    let mut set: FuturesUnorderedBounded<Probe> = futures.into_iter().collect();
    assert!(poll_once(&mut set).is_pending());
    let stale = states[0].waker();
    states[0].finish();
    assert_eq!(poll_once(&mut set), Poll::Ready(Some(0)));
    assert_eq!(states[0].drops(), 1);

    let polls: Vec<usize> = states.iter().map(|state| state.polls()).collect();
    stale.wake_by_ref();
    let owned = stale.clone();
    owned.wake();
    for _ in 0..3 {
        assert!(poll_once(&mut set).is_pending());
    }
    assert_eq!(
        states.iter().map(|state| state.polls()).collect::<Vec<_>>(),
        polls,
        "a stale wake polled a future"
    );
    assert_eq!(set.len(), 2);
    drop(stale);

    states[1].finish();
    states[2].finish();
    let mut outputs = vec![];
    while let Poll::Ready(Some(out)) = poll_once(&mut set) {
        outputs.push(out);
    }
    outputs.sort_unstable();
    assert_eq!(outputs, [1, 2]);
    assert_eq!(poll_once(&mut set), Poll::Ready(None));
    for state in &states {
        assert_eq!(state.drops(), 1);
    }
}

#[test]
fn stale_wakers_of_a_finished_set_do_nothing() {
    let n = 16;
    let (futures, states) = probes(n);
    let mut set: FuturesUnorderedBounded<Probe> = futures.into_iter().collect();
    let (task, wakes) = counting_waker();
    assert!(poll_with(&mut set, &task).is_pending());
    let stale: Vec<Waker> = states.iter().map(|state| state.waker()).collect();
    for state in &states {
        state.finish();
    }
    let mut outputs = vec![];
    while let Poll::Ready(Some(out)) = poll_with(&mut set, &task) {
        outputs.push(out);
    }
    assert_eq!(outputs.len(), n);
    assert_eq!(poll_with(&mut set, &task), Poll::Ready(None));

    for waker in &stale {
        waker.wake_by_ref();
    }
    assert_eq!(poll_with(&mut set, &task), Poll::Ready(None));
    // A stale wake may wake the task (a spurious wake-up is harmless), but the set stays empty
    // and usable; a future pushed now is polled and finishes.
    let (probe, state) = Probe::new(99);
    set.push(probe);
    assert!(settle(&mut set).is_empty());
    state.finish();
    assert_eq!(poll_with(&mut set, &task), Poll::Ready(Some(99)));
    drop(stale);
    drop(set);
    for state in states.iter().chain([&state]) {
        assert_eq!(state.drops(), 1);
    }
    drop(states);
    drop(state);
    drop(task);
    assert_eq!(Arc::strong_count(&wakes), 1, "the task's waker was leaked");
}

#[test]
fn waking_after_the_set_is_dropped_does_nothing() {
    let n = 8;
    let (futures, states) = probes(n);
    let mut set: FuturesUnorderedBounded<Probe> = futures.into_iter().collect();
    let (task, wakes) = counting_waker();
    assert!(poll_with(&mut set, &task).is_pending());
    let stale: Vec<Waker> = states.iter().map(|state| state.waker()).collect();
    let woken = wakes.count();

    drop(set);
    for state in &states {
        assert_eq!(state.drops(), 1);
    }
    for waker in &stale {
        waker.wake_by_ref();
        let owned = waker.clone();
        owned.wake();
    }
    // Half from another thread, which also drops them there.
    let (here, there) = stale.split_at(n / 2);
    let there = there.to_vec();
    thread::spawn(move || {
        for waker in there {
            waker.wake();
        }
    })
    .join()
    .unwrap();
    for waker in here {
        waker.wake_by_ref();
    }
    drop(stale);
    assert_eq!(
        wakes.count(),
        woken,
        "a wake after the drop reached the task"
    );
    for state in &states {
        assert_eq!(state.drops(), 1);
        assert_eq!(state.polls(), 1);
    }
    // The probes' states still hold the last wakers of the set; dropping them frees it, and
    // nothing may keep the task's waker alive.
    drop(states);
    drop(task);
    assert_eq!(Arc::strong_count(&wakes), 1, "the task's waker was leaked");
}

#[test]
fn wakers_dropped_on_other_threads_after_the_set_do_nothing() {
    let n = if cfg!(miri) { 6 } else { 64 };
    let (futures, states) = probes(n);
    let mut set: FuturesUnorderedBounded<Probe> = futures.into_iter().collect();
    assert!(poll_once(&mut set).is_pending());
    let stale: Vec<Waker> = states.iter().map(|state| state.waker()).collect();
    let wakers = thread::spawn(move || {
        // Wakes racing the drop of the set on the main thread.
        for waker in &stale {
            waker.wake_by_ref();
        }
        stale
    });
    drop(set);
    for state in &states {
        assert_eq!(state.drops(), 1);
    }
    let stale = wakers.join().unwrap();
    thread::spawn(move || {
        for waker in stale {
            waker.wake();
        }
    })
    .join()
    .unwrap();
    for state in &states {
        assert_eq!(state.drops(), 1);
        assert_eq!(state.polls(), 1);
    }
}
