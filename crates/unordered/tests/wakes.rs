//! Wakes: one registration for the whole set, only woken futures polled, no wake lost across
//! threads, and wakers that outlive their future, their group or the set doing nothing.

use std::sync::Arc;
use std::task::Poll;

use futures_channel::oneshot;
use futures_util::StreamExt;
use pinfold_testkit::channels::{id_channels, send_from_threads};
use pinfold_testkit::future::block_on;
use pinfold_testkit::probe::{Probe, probes};
use pinfold_testkit::rng::XorShift;
use pinfold_testkit::stream::{drain_ready, poll_once, poll_with};
use pinfold_testkit::waker::counting_waker;
use pinfold_unordered::FuturesUnordered;

#[test]
fn a_burst_of_wakes_across_groups_wakes_the_task_once() {
    // 200 probes: groups of 32, 32, 64 and 128.
    let (futures, states) = probes(200);
    let mut set: FuturesUnordered<Probe> = futures.into_iter().collect();
    let (waker, counter) = counting_waker();
    assert!(poll_with(&mut set, &waker).is_pending());
    assert_eq!(counter.count(), 0);

    for id in [0, 40, 100, 199, 1, 41, 101, 198] {
        states[id].waker().wake();
    }
    assert_eq!(
        counter.count(),
        1,
        "one registration, one wake for the burst"
    );

    // The next poll polls exactly the woken probes, once each.
    let before: Vec<usize> = states.iter().map(|state| state.polls()).collect();
    assert!(poll_with(&mut set, &waker).is_pending());
    for (id, state) in states.iter().enumerate() {
        let woken = [0, 40, 100, 199, 1, 41, 101, 198].contains(&id);
        assert_eq!(state.polls() - before[id], usize::from(woken), "probe {id}");
    }
    // And the task is registered again for the next burst.
    states[150].waker().wake();
    assert_eq!(counter.count(), 2);
}

#[test]
fn wakes_coalesce_into_one_poll() {
    let (futures, states) = probes(100);
    let mut set: FuturesUnordered<Probe> = futures.into_iter().collect();
    assert!(poll_once(&mut set).is_pending());
    let waker = states[70].waker();
    for _ in 0..10 {
        waker.wake_by_ref();
    }
    assert!(poll_once(&mut set).is_pending());
    assert_eq!(states[70].polls(), 2);
    assert!(poll_once(&mut set).is_pending());
    assert_eq!(states[70].polls(), 2);
}

#[test]
fn no_wake_is_lost_across_threads() {
    let rounds = if cfg!(miri) { 2 } else { 50 };
    let n = if cfg!(miri) { 40 } else { 300 };
    let threads = 4;
    let mut rng = XorShift::new(3);
    for _ in 0..rounds {
        let (receivers, mut senders) = id_channels(n);
        let mut set: FuturesUnordered<_> = receivers.into_iter().collect();
        rng.shuffle(&mut senders);
        let handles = send_from_threads(senders, threads, false);
        // A lost wake hangs here: `block_on` parks until the set's task is woken.
        let mut outputs: Vec<usize> = block_on(set.by_ref().map(Result::unwrap).collect());
        for handle in handles {
            handle.join().unwrap();
        }
        outputs.sort_unstable();
        assert_eq!(outputs, (0..n).collect::<Vec<_>>());
        assert!(set.is_empty());
    }
}

#[cfg_attr(miri, ignore)] // tokio's multi-thread runtime is too slow under Miri
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn no_wake_is_lost_on_a_multi_thread_runtime() {
    for round in 0..20 {
        let n = 1_000;
        let mut set = FuturesUnordered::new();
        let mut tasks = Vec::new();
        for id in 0..n {
            let (tx, rx) = oneshot::channel::<usize>();
            set.push(rx);
            tasks.push(tokio::spawn(async move {
                for _ in 0..(id + round) % 4 {
                    tokio::task::yield_now().await;
                }
                tx.send(id).unwrap();
            }));
        }
        // The set runs in a task of its own, on any worker thread.
        let collector = tokio::spawn(async move {
            let mut outputs: Vec<usize> = set.map(Result::unwrap).collect().await;
            outputs.sort_unstable();
            outputs
        });
        for task in tasks {
            task.await.unwrap();
        }
        assert_eq!(collector.await.unwrap(), (0..n).collect::<Vec<_>>());
    }
}

#[test]
fn wake_after_drop_does_nothing_and_leaks_nothing() {
    let (futures, states) = probes(100);
    let mut set: FuturesUnordered<Probe> = futures.into_iter().collect();
    let (waker, counter) = counting_waker();
    assert!(poll_with(&mut set, &waker).is_pending());
    let stale: Vec<_> = states.iter().map(|state| state.waker()).collect();
    states[50].finish();
    assert_eq!(counter.count(), 1);
    assert_eq!(poll_with(&mut set, &waker), Poll::Ready(Some(50)));
    assert!(poll_with(&mut set, &waker).is_pending());
    drop(waker);

    drop(set);
    for state in &states {
        assert_eq!(state.drops(), 1);
    }
    // The set forgot its task: the stale wakers (alive, keeping the groups' wake tables and
    // the hub alive) no longer hold or wake it.
    assert_eq!(Arc::strong_count(&counter), 1, "the task's waker leaked");
    for waker in &stale {
        waker.wake_by_ref();
    }
    for waker in stale {
        // Cloning a stale waker works too, and its clone wakes nothing either.
        let copy = waker.clone();
        copy.wake();
        waker.wake();
    }
    assert_eq!(counter.count(), 1);
    // Under Miri, anything the wakers kept alive and did not free is reported as a leak.
}

#[test]
fn wakers_of_a_released_group_do_nothing() {
    let (futures, states) = probes(100);
    let mut set: FuturesUnordered<Probe> = futures.into_iter().collect();
    assert!(poll_once(&mut set).is_pending());
    let stale: Vec<_> = states.iter().map(|state| state.waker()).collect();
    for state in &states {
        state.finish();
    }
    assert_eq!(drain_ready(&mut set).len(), 100);
    assert_eq!(
        set.capacity(),
        32,
        "the second and third groups were released"
    );

    // New groups take the released groups' places (and hub bits).
    let (fresh, fresh_states) = probes(100);
    set.extend(fresh);
    assert!(poll_once(&mut set).is_pending());
    assert!(fresh_states.iter().all(|state| state.polls() == 1));
    for waker in &stale[32..] {
        waker.wake_by_ref();
    }
    // At most a spurious look at a group; no future is polled for another's wake.
    assert!(poll_once(&mut set).is_pending());
    assert!(poll_once(&mut set).is_pending());
    for (id, state) in fresh_states.iter().enumerate().skip(32) {
        assert_eq!(state.polls(), 1, "fresh probe {id} polled for a stale wake");
    }
    for state in &fresh_states {
        state.finish();
    }
    let mut outputs = drain_ready(&mut set);
    outputs.sort_unstable();
    assert_eq!(outputs, (0..100).collect::<Vec<_>>());
}
