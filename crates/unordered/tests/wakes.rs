//! Wakes: a future is polled when, and only when, it was woken; wakes coalesce, and a burst of
//! them wakes the task once; wakes from other threads are never lost; stale wakers, also after
//! the set is gone, do nothing. The cases in `cases` run over each set, with its sizes; those
//! of a growable set's groups (a burst across them, wakers of a released group) are its own.

use pinfold_testkit::probe::{Probe, probes};
use pinfold_testkit::stream::{drain_ready, poll_once, poll_with};
use pinfold_testkit::waker::counting_waker;
use pinfold_unordered::{FuturesUnordered, Key};

pinfold_testkit::set_under_test!(Unordered: FuturesUnordered::with_capacity, Key);

#[test]
fn pending_future_is_not_polled_again_until_woken() {
    cases::pending_future_is_not_polled_again_until_woken::<Unordered>();
}

#[test]
fn many_wakes_before_a_poll_cause_one_poll() {
    // 100 probes: groups of 32, 32 and 64; the woken one is in the third.
    cases::many_wakes_before_a_poll_cause_one_poll::<Unordered>(0, 100, 70);
}

#[test]
fn waking_a_future_wakes_the_task() {
    cases::waking_a_future_wakes_the_task::<Unordered>();
}

#[test]
fn a_burst_of_wakes_wakes_the_task_once() {
    cases::a_burst_of_wakes_wakes_the_task_once::<Unordered>();
}

#[test]
fn wakes_from_std_threads_are_never_lost() {
    let (rounds, per_thread) = if cfg!(miri) { (2, 10) } else { (50, 75) };
    // Four threads, each sending its ids without yielding, the senders shuffled each round.
    cases::wakes_from_std_threads_are_never_lost::<Unordered>(
        rounds,
        4,
        per_thread,
        Some(3),
        false,
    );
}

#[cfg_attr(miri, ignore)] // tokio does not run under Miri
#[test]
fn wakes_from_std_threads_reach_a_current_thread_runtime() {
    cases::wakes_from_std_threads_reach_a_current_thread_runtime::<Unordered>();
}

#[cfg_attr(miri, ignore)] // tokio's multi-thread runtime is too slow under Miri
#[test]
fn wakes_from_tokio_worker_threads_are_never_lost() {
    // Made with `new()`: the set grows group by group.
    cases::wakes_from_tokio_worker_threads_are_never_lost::<Unordered>(0);
}

#[cfg_attr(miri, ignore)] // tokio does not run under Miri
#[test]
fn a_refilled_set_loses_no_wake_from_other_threads() {
    cases::a_refilled_set_loses_no_wake_from_other_threads::<Unordered>();
}

#[test]
fn stale_waker_of_a_finished_future_polls_nothing() {
    cases::stale_waker_of_a_finished_future_polls_nothing::<Unordered>();
}

#[test]
fn stale_wakers_of_a_finished_set_do_nothing() {
    cases::stale_wakers_of_a_finished_set_do_nothing::<Unordered>();
}

#[test]
fn waking_after_the_set_is_dropped_does_nothing() {
    // 100 probes: the stale wakers keep the wake tables of three groups alive.
    cases::waking_after_the_set_is_dropped_does_nothing::<Unordered>(100);
}

#[test]
fn wakers_dropped_on_other_threads_after_the_set_do_nothing() {
    cases::wakers_dropped_on_other_threads_after_the_set_do_nothing::<Unordered>();
}

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

/// The cases both sets share, over the set type `S`.
mod cases {
    use std::future::Future;
    use std::sync::Arc;
    use std::task::{Poll, Waker};
    use std::thread;

    use futures_channel::oneshot::Receiver;
    use futures_util::StreamExt;
    use pinfold_arena::MAX_VAIN_REPOLLS;
    use pinfold_testkit::channels::{id_channels, send_from_threads};
    use pinfold_testkit::contract::SetUnderTest;
    use pinfold_testkit::future::{block_on, lost_wake};
    use pinfold_testkit::probe::{Probe, probes};
    use pinfold_testkit::rng::XorShift;
    use pinfold_testkit::stream::{poll_once, poll_with, settle};
    use pinfold_testkit::waker::counting_waker;

    /// Awaits `fut`, panicking if it does not finish within `lost_wake()` (a deadlock guard).
    /// Checks the deadline before polling `fut`, so a lost wake cannot be covered up by the
    /// deadline's own wake polling `fut` once more.
    async fn guarded<F: Future>(fut: F) -> F::Output {
        tokio::select! {
            biased;
            () = tokio::time::sleep(lost_wake()) => {
                panic!("no output for {:?}: a wake was lost", lost_wake())
            }
            out = fut => out,
        }
    }

    pub(super) fn pending_future_is_not_polled_again_until_woken<S: SetUnderTest>() {
        let (futures, states) = probes(3);
        let mut set: S::Set<Probe> = futures.into_iter().collect();
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

    /// `n` probes in a set made with `capacity`; the probe `id` is woken many times, by
    /// reference, by value and from another thread, before the next poll, which polls it once.
    pub(super) fn many_wakes_before_a_poll_cause_one_poll<S: SetUnderTest>(
        capacity: usize,
        n: usize,
        id: usize,
    ) {
        let (futures, states) = probes(n);
        let mut set = S::with_capacity(capacity);
        for probe in futures {
            S::insert(&mut set, probe);
        }
        assert!(poll_once(&mut set).is_pending());
        let state = &states[id];
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

        assert!(poll_once(&mut set).is_pending());
        assert_eq!(state.polls(), 2, "the wakes coalesce into the next poll");
        for _ in 0..2 {
            assert!(poll_once(&mut set).is_pending());
        }
        assert_eq!(state.polls(), 2);

        state.finish();
        assert_eq!(poll_once(&mut set), Poll::Ready(Some(id)));
        assert_eq!(state.polls(), 3);
    }

    pub(super) fn waking_a_future_wakes_the_task<S: SetUnderTest>() {
        let (futures, states) = probes(2);
        let mut set: S::Set<Probe> = futures.into_iter().collect();
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

    pub(super) fn a_burst_of_wakes_wakes_the_task_once<S: SetUnderTest>() {
        let (futures, states) = probes(100);
        let mut set: S::Set<Probe> = futures.into_iter().collect();
        let (task, wakes) = counting_waker();
        assert!(poll_with(&mut set, &task).is_pending());
        assert_eq!(wakes.count(), 0);

        for state in &states {
            state.waker().wake();
            state.waker().wake();
        }
        assert_eq!(wakes.count(), 1);

        // The next polls poll each once, at most `MAX_VAIN_REPOLLS` a call (they are all
        // `Pending` again), each call but the last yielding; a new burst after them wakes the
        // task again, once.
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

    /// Channels completed from `threads` std threads (`per_thread` each, yielding between
    /// sends if `yield_between`, the senders shuffled by `rng` if given) while the set is
    /// driven by `run`, which must leave it empty.
    fn channels_completed_from_std_threads<S: SetUnderTest>(
        threads: usize,
        per_thread: usize,
        rng: Option<&mut XorShift>,
        yield_between: bool,
        run: impl FnOnce(&mut S::Set<Receiver<usize>>) -> Vec<usize>,
    ) {
        let n = threads * per_thread;
        let (receivers, mut senders) = id_channels(n);
        let mut set: S::Set<_> = receivers.into_iter().collect();
        if let Some(rng) = rng {
            rng.shuffle(&mut senders);
        }
        let senders = send_from_threads(senders, threads, yield_between);
        let mut outputs = run(&mut set);
        for sender in senders {
            sender.join().unwrap();
        }
        outputs.sort_unstable();
        assert_eq!(outputs, (0..n).collect::<Vec<_>>());
        assert_eq!(S::len(&set), 0);
    }

    /// `rounds` rounds of [`channels_completed_from_std_threads`], the senders shuffled by a
    /// generator seeded with `shuffle` if given, driven by `block_on`, which parks until the
    /// set's task is woken: a lost wake hangs.
    pub(super) fn wakes_from_std_threads_are_never_lost<S: SetUnderTest>(
        rounds: usize,
        threads: usize,
        per_thread: usize,
        shuffle: Option<u64>,
        yield_between: bool,
    ) {
        let mut rng = shuffle.map(XorShift::new);
        for _ in 0..rounds {
            channels_completed_from_std_threads::<S>(
                threads,
                per_thread,
                rng.as_mut(),
                yield_between,
                |set| block_on(set.by_ref().map(Result::unwrap).collect()),
            );
        }
    }

    pub(super) fn wakes_from_std_threads_reach_a_current_thread_runtime<S: SetUnderTest>() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        for _ in 0..20 {
            channels_completed_from_std_threads::<S>(8, 125, None, true, |set| {
                runtime.block_on(guarded(set.by_ref().map(Result::unwrap).collect()))
            });
        }
    }

    /// Twenty rounds of a thousand channels, each completed by a tokio task after a few
    /// yields, while the set (made with `capacity`) is polled in a task of its own: wakes
    /// come from other workers.
    pub(super) fn wakes_from_tokio_worker_threads_are_never_lost<S: SetUnderTest>(capacity: usize)
    where
        S::Set<tokio::sync::oneshot::Receiver<usize>>: Send + 'static,
    {
        const N: usize = 1_000;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(4)
            .enable_time()
            .build()
            .unwrap();
        runtime.block_on(async {
            for round in 0..20 {
                let mut set = S::with_capacity(capacity);
                let mut senders = Vec::with_capacity(N);
                for id in 0..N {
                    let (tx, rx) = tokio::sync::oneshot::channel();
                    S::insert(&mut set, rx);
                    senders.push((id, tx));
                }
                // The set is polled in a task of its own, so wakes come from other workers.
                let driver = tokio::spawn(set.map(Result::unwrap).collect::<Vec<usize>>());
                let tasks: Vec<_> = senders
                    .into_iter()
                    .map(|(id, tx)| {
                        tokio::spawn(async move {
                            for _ in 0..(id + round) % 4 {
                                tokio::task::yield_now().await;
                            }
                            tx.send(id).unwrap();
                        })
                    })
                    .collect();
                for task in tasks {
                    task.await.unwrap();
                }
                let mut outputs = guarded(driver).await.unwrap();
                outputs.sort_unstable();
                assert_eq!(outputs, (0..N).collect::<Vec<_>>());
            }
        });
    }

    pub(super) fn a_refilled_set_loses_no_wake_from_other_threads<S: SetUnderTest>()
    where
        S::Set<tokio::sync::oneshot::Receiver<usize>>: Send + 'static,
    {
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
                let mut set = S::with_capacity(CAPACITY);
                let mut receivers = receivers.into_iter();
                let mut outputs = Vec::with_capacity(N);
                loop {
                    // Full at `CAPACITY`: a bounded set's capacity, a growable set's first group.
                    while S::len(&set) < CAPACITY {
                        match receivers.next() {
                            Some(rx) => {
                                S::insert(&mut set, rx);
                            }
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

    pub(super) fn stale_waker_of_a_finished_future_polls_nothing<S: SetUnderTest>() {
        let (futures, states) = probes(3);
        let mut set: S::Set<Probe> = futures.into_iter().collect();
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
        assert_eq!(S::len(&set), 2);
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

    pub(super) fn stale_wakers_of_a_finished_set_do_nothing<S: SetUnderTest>() {
        let n = 16;
        let (futures, states) = probes(n);
        let mut set: S::Set<Probe> = futures.into_iter().collect();
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
        // A stale wake may wake the task (a spurious wake-up is harmless), but the set stays
        // empty and usable; a future pushed now is polled and finishes.
        let (probe, state) = Probe::new(99);
        S::insert(&mut set, probe);
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

    /// A set of `n` probes (at least 2), one of which finished, is dropped while the others'
    /// wakers live on: waking them (by reference, by value, cloned, from another thread) does
    /// nothing, and nothing keeps the task's waker alive.
    pub(super) fn waking_after_the_set_is_dropped_does_nothing<S: SetUnderTest>(n: usize) {
        let (futures, states) = probes(n);
        let mut set: S::Set<Probe> = futures.into_iter().collect();
        let (task, wakes) = counting_waker();
        assert!(poll_with(&mut set, &task).is_pending());
        let stale: Vec<Waker> = states.iter().map(|state| state.waker()).collect();
        let finished = n / 2;
        states[finished].finish();
        assert_eq!(wakes.count(), 1);
        assert_eq!(poll_with(&mut set, &task), Poll::Ready(Some(finished)));
        assert!(poll_with(&mut set, &task).is_pending());
        let woken = wakes.count();
        assert_eq!(woken, 1);
        drop(task);

        drop(set);
        for state in &states {
            assert_eq!(state.drops(), 1);
        }
        // The set forgot its task: the stale wakers (alive, keeping the wake tables alive) no
        // longer hold or wake it.
        assert_eq!(Arc::strong_count(&wakes), 1, "the task's waker leaked");
        for waker in &stale {
            waker.wake_by_ref();
            // Cloning a stale waker works too, and its clone wakes nothing either.
            let owned = waker.clone();
            owned.wake();
        }
        // Half by value from another thread, which also drops them there; half by value here.
        let mut here = stale;
        let there = here.split_off(n / 2);
        thread::spawn(move || {
            for waker in there {
                waker.wake();
            }
        })
        .join()
        .unwrap();
        for waker in here {
            waker.wake_by_ref();
            waker.wake();
        }
        assert_eq!(
            wakes.count(),
            woken,
            "a wake after the drop reached the task"
        );
        for (id, state) in states.iter().enumerate() {
            assert_eq!(state.drops(), 1);
            assert_eq!(state.polls(), if id == finished { 2 } else { 1 });
        }
        // The probes' states still hold the last wakers of the set; dropping them frees it,
        // and nothing may keep the task's waker alive. Under Miri, anything the wakers kept
        // alive and did not free is reported as a leak.
        drop(states);
        assert_eq!(Arc::strong_count(&wakes), 1, "the task's waker was leaked");
    }

    pub(super) fn wakers_dropped_on_other_threads_after_the_set_do_nothing<S: SetUnderTest>() {
        let n = if cfg!(miri) { 6 } else { 64 };
        let (futures, states) = probes(n);
        let mut set: S::Set<Probe> = futures.into_iter().collect();
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
}

/// The same cases on the bounded set, with its sizes.
mod bounded {
    use pinfold_unordered::{FuturesUnorderedBounded, Key};

    use super::cases;

    pinfold_testkit::set_under_test!(Bounded: FuturesUnorderedBounded::new, Key);

    #[test]
    fn pending_future_is_not_polled_again_until_woken() {
        cases::pending_future_is_not_polled_again_until_woken::<Bounded>();
    }

    #[test]
    fn many_wakes_before_a_poll_cause_one_poll() {
        // One probe in two slots.
        cases::many_wakes_before_a_poll_cause_one_poll::<Bounded>(2, 1, 0);
    }

    #[test]
    fn waking_a_future_wakes_the_task() {
        cases::waking_a_future_wakes_the_task::<Bounded>();
    }

    #[test]
    fn a_burst_of_wakes_wakes_the_task_once() {
        cases::a_burst_of_wakes_wakes_the_task_once::<Bounded>();
    }

    #[test]
    fn wakes_from_std_threads_are_never_lost() {
        let (rounds, threads, per_thread) = if cfg!(miri) { (1, 3, 4) } else { (20, 8, 125) };
        // The senders in order, each thread yielding between its sends.
        cases::wakes_from_std_threads_are_never_lost::<Bounded>(
            rounds, threads, per_thread, None, true,
        );
    }

    #[cfg_attr(miri, ignore)] // tokio does not run under Miri
    #[test]
    fn wakes_from_std_threads_reach_a_current_thread_runtime() {
        cases::wakes_from_std_threads_reach_a_current_thread_runtime::<Bounded>();
    }

    #[cfg_attr(miri, ignore)] // tokio does not run under Miri
    #[test]
    fn wakes_from_tokio_worker_threads_are_never_lost() {
        cases::wakes_from_tokio_worker_threads_are_never_lost::<Bounded>(1_000);
    }

    #[cfg_attr(miri, ignore)] // tokio does not run under Miri
    #[test]
    fn a_refilled_set_loses_no_wake_from_other_threads() {
        cases::a_refilled_set_loses_no_wake_from_other_threads::<Bounded>();
    }

    #[test]
    fn stale_waker_of_a_finished_future_polls_nothing() {
        cases::stale_waker_of_a_finished_future_polls_nothing::<Bounded>();
    }

    #[test]
    fn stale_wakers_of_a_finished_set_do_nothing() {
        cases::stale_wakers_of_a_finished_set_do_nothing::<Bounded>();
    }

    #[test]
    fn waking_after_the_set_is_dropped_does_nothing() {
        cases::waking_after_the_set_is_dropped_does_nothing::<Bounded>(8);
    }

    #[test]
    fn wakers_dropped_on_other_threads_after_the_set_do_nothing() {
        cases::wakers_dropped_on_other_threads_after_the_set_do_nothing::<Bounded>();
    }
}
