//! The drain's answer ("did this round's queue get a slot"), read from the queue's tail before
//! and after the drain: the cases where a woken slot is in a queue already (so the
//! tail does not move although the old per-slot flag said `true`), deep ready sets, growable
//! arenas with many groups, join arenas with values waiting unbound, wakes from another thread
//! while the owner drains, and panics of a value's poll around the drain.

use std::cell::RefCell;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::task::{Context, Poll, Waker};

use pinfold_testkit::waker::counting_waker;

use crate::{Arena, GrowableArena, JoinArena, Key, Step, Storage};
use alloc::vec::Vec;

/// A value queued again for an item (`Repoll`: round mark 0, in the next round's queue) and
/// woken in the same round: the drain after the queue runs empty files it nowhere (it is
/// queued already), so the tail does not move; the call is `Pending`, the value is not polled
/// twice in the round, the task is woken for the next, which polls it once.
#[test]
fn a_repolled_value_woken_in_its_round_waits_for_the_next_and_wakes_the_task() {
    let mut arena = Arena::new(2);
    let a = arena.insert(0u32).unwrap();
    let b = arena.insert(1u32).unwrap();
    let wake_a = arena.waker(a).unwrap();
    let (task, wakes) = counting_waker();
    let mut cx = Context::from_waker(&task);
    let polled = RefCell::new(Vec::new());
    let mut f = |k: Key, _: core::pin::Pin<&mut u32>, _: &mut Context<'_>| {
        polled.borrow_mut().push(k);
        if k == a {
            Step::Repoll(k)
        } else {
            // `b` wakes `a`, which sits in the next round's queue.
            wake_a.wake_by_ref();
            Step::Pending
        }
    };
    let mut budget = arena.start_round();
    assert_eq!(
        arena.poll_with_budget(&mut cx, &mut budget, &mut f),
        Poll::Ready(Some((a, a)))
    );
    assert!(arena.has_deferred());
    assert_eq!(
        arena.poll_with_budget(&mut cx, &mut budget, &mut f),
        Poll::Pending
    );
    assert_eq!(*polled.borrow(), [a, b], "each polled once in the round");
    assert_eq!(wakes.count(), 1, "the value due next round wakes the task");
    // The next round polls `a` once (and `b`, not woken, not at all).
    let mut budget = arena.start_round();
    assert_eq!(
        arena.poll_with_budget(&mut cx, &mut budget, &mut f),
        Poll::Ready(Some((a, a)))
    );
    assert_eq!(
        arena.poll_with_budget(&mut cx, &mut budget, &mut f),
        Poll::Pending
    );
    assert_eq!(*polled.borrow(), [a, b, a]);
}

/// A value inserted into a slot still linked in the next round's queue (its last value left
/// there) keeps that place with round mark 0; woken in the same round, the drain files it
/// nowhere: it waits for the next round, which polls it once, and the task is woken.
#[test]
fn a_value_inserted_into_a_slot_linked_in_the_next_rounds_queue_and_woken_is_polled_next_round() {
    let mut arena = Arena::new(2);
    let a = arena.insert(0u32).unwrap();
    let b = arena.insert(1u32).unwrap();
    let (task, wakes) = counting_waker();
    let mut cx = Context::from_waker(&task);
    let polled = RefCell::new(Vec::new());
    let mut budget = arena.start_round();
    let out = arena.poll_with_budget(&mut cx, &mut budget, &mut |k, _, _| {
        polled.borrow_mut().push(k);
        Step::Repoll(k)
    });
    assert_eq!(out, Poll::Ready(Some((a, a))));
    assert!(arena.remove(a));
    let c = arena.insert(2u32).unwrap();
    assert_ne!(c, a);
    arena.waker(c).unwrap().wake();
    let out = arena.poll_with_budget(&mut cx, &mut budget, &mut |k, _, _| -> Step<Key> {
        polled.borrow_mut().push(k);
        Step::Pending
    });
    assert_eq!(out, Poll::Pending);
    assert_eq!(*polled.borrow(), [a, b], "c waits for the next round");
    assert_eq!(wakes.count(), 1, "and the task is woken for it");
    let out = arena.poll_next(&mut cx, |k, _, _| {
        polled.borrow_mut().push(k);
        Step::Keep(k)
    });
    assert_eq!(out, Poll::Ready(Some((c, c))));
    assert_eq!(*polled.borrow(), [a, b, c]);
}

/// A round that yields leaves values queued; woken again, they stay where they are, and the
/// next round's drain appends only the others, behind them. In that round, a value woken by
/// another's poll is polled in the same call; one polled already waits for the next round.
#[test]
fn leftovers_woken_again_keep_their_place_and_wakes_in_the_round_are_polled_in_it() {
    const N: usize = 40;
    let mut arena = Arena::new(N);
    let keys: Vec<Key> = (0..N).map(|v| arena.insert(v).unwrap()).collect();
    let wakers: Vec<Waker> = keys.iter().map(|&k| arena.waker(k).unwrap()).collect();
    let (task, wakes) = counting_waker();
    let mut cx = Context::from_waker(&task);
    // First call: every value polled once (a first poll is never vain).
    assert!(
        arena
            .poll_next(&mut cx, |_, _, _| -> Step<()> { Step::Pending })
            .is_pending()
    );
    // Wake them all; a round of vain polls yields after `MAX_VAIN_REPOLLS`, leaving the rest
    // queued.
    for w in &wakers {
        w.wake_by_ref();
    }
    let polled = RefCell::new(Vec::new());
    let before = wakes.count();
    assert!(
        arena
            .poll_next(&mut cx, |_, v: core::pin::Pin<&mut usize>, _| -> Step<()> {
                polled.borrow_mut().push(*v);
                Step::Pending
            })
            .is_pending()
    );
    let first: Vec<usize> = polled.borrow().clone();
    assert_eq!(first, (0..crate::MAX_VAIN_REPOLLS).collect::<Vec<_>>());
    assert_eq!(wakes.count(), before + 1, "a yield wakes the task");
    assert!(arena.has_ready());
    // The last leftover (the queue's tail) and an earlier one woken again, and value 0 (not
    // queued).
    wakers[N - 1].wake_by_ref();
    wakers[N - 3].wake_by_ref();
    wakers[0].wake_by_ref();
    polled.borrow_mut().clear();
    // In this round: value 33 wakes value 1 (not polled in it: polled in the same call) and
    // value 32 (polled in it already: next round).
    let out = arena.poll_next(&mut cx, |_, v: core::pin::Pin<&mut usize>, _| -> Step<()> {
        polled.borrow_mut().push(*v);
        if *v == 33 {
            wakers[1].wake_by_ref();
            wakers[32].wake_by_ref();
        }
        Step::Pending
    });
    assert!(out.is_pending());
    let mut expected: Vec<usize> = (crate::MAX_VAIN_REPOLLS..N).collect();
    expected.extend([0, 1]);
    assert_eq!(*polled.borrow(), expected);
    assert!(arena.has_deferred(), "value 32 waits for the next round");
}

/// An arena of `n` values in a deep ready set (more than 4,032 entries): a scattered wave of
/// wakes, and in the round, polls that wake values not polled yet (polled in the same call),
/// values polled already (next round), and values queued already.
fn deep_wave<S: Storage<usize>>(arena: &mut S, keys: &[Key], wakers: &[Waker]) {
    let n = keys.len();
    let (task, wakes) = counting_waker();
    let mut cx = Context::from_waker(&task);
    assert!(
        arena
            .poll_next(&mut cx, |_, _, _| -> Step<()> { Step::Pending })
            .is_pending()
    );
    let polls = RefCell::new(alloc::vec![0usize; n]);
    // Few enough to stay under the vain-poll cap: each value below wakes its successor chain.
    let wave: Vec<usize> = (0..8).map(|i| (i * 977 + 13) % n).collect();
    for &i in &wave {
        wakers[i].wake_by_ref();
    }
    let before = wakes.count();
    let chain = |i: usize| (i * 31 + 7) % n;
    let out = arena.poll_next(&mut cx, |_, v: core::pin::Pin<&mut usize>, _| -> Step<()> {
        let v = *v;
        polls.borrow_mut()[v] += 1;
        // Each value of the wave wakes one more value and itself (polled already: next
        // round), and one of the wave queued already.
        if wave.contains(&v) {
            wakers[chain(v)].wake_by_ref();
            wakers[v].wake_by_ref();
            wakers[wave[7]].wake_by_ref();
        }
        Step::Pending
    });
    assert!(out.is_pending());
    let polls = polls.into_inner();
    for &i in &wave {
        assert_eq!(polls[i], 1, "wave value {i} polled once");
        assert_eq!(polls[chain(i)], 1, "value {} woken in the round", chain(i));
    }
    assert!(polls.iter().all(|&p| p <= 1), "no value polled twice");
    let mut due: Vec<usize> = wave.iter().flat_map(|&i| [i, chain(i)]).collect();
    due.sort_unstable();
    due.dedup();
    let got: Vec<usize> = (0..n).filter(|&i| polls[i] == 1).collect();
    assert_eq!(got, due, "exactly the woken values polled");
    assert_eq!(wakes.count(), before + 1, "self-woken values wake the task");
    let again = RefCell::new(Vec::new());
    assert!(
        arena
            .poll_next(&mut cx, |_, v: core::pin::Pin<&mut usize>, _| -> Step<()> {
                again.borrow_mut().push(*v);
                Step::Pending
            })
            .is_pending()
    );
    let mut again = again.into_inner();
    again.sort_unstable();
    let mut expected = wave.clone();
    expected.sort_unstable();
    assert_eq!(again, expected, "the next round polls the self-woken ones");
    let _ = keys;
}

#[test]
#[cfg_attr(
    miri,
    ignore = "thousands of slots and wakes: wake_levels.rs covers the deep sets under Miri"
)]
fn a_deep_ready_set_files_every_wake_once() {
    const N: usize = 5000;
    let mut arena = Arena::new(N);
    let keys: Vec<Key> = (0..N).map(|v| arena.insert(v).unwrap()).collect();
    let wakers: Vec<Waker> = keys.iter().map(|&k| arena.waker(k).unwrap()).collect();
    deep_wave(&mut arena, &keys, &wakers);
}

#[test]
#[cfg_attr(
    miri,
    ignore = "thousands of slots and wakes: wake_levels.rs covers the deep sets under Miri"
)]
fn a_growable_arena_of_many_groups_files_every_wake_once() {
    const N: usize = 5000;
    let mut arena = GrowableArena::with_capacity(2);
    let keys: Vec<Key> = (0..N).map(|v| arena.insert(v)).collect();
    assert!(arena.groups() > 5);
    let wakers: Vec<Waker> = keys.iter().map(|&k| arena.waker(k).unwrap()).collect();
    deep_wave(&mut arena, &keys, &wakers);
}

/// Wakes from another thread while the owner polls, the owner polling only when its task is
/// woken (an executor's discipline): once the other thread is done, every wake it made was
/// answered by a poll that saw it. A lost wake leaves a value's last wake unseen.
fn no_lost_wake_across_threads<S: Storage<usize>>(
    arena: &mut S,
    wakers: Vec<Waker>,
    rounds: usize,
) {
    let n = wakers.len();
    let woken: Arc<Vec<AtomicUsize>> = Arc::new((0..n).map(|_| AtomicUsize::new(0)).collect());
    let mut seen = alloc::vec![0usize; n];
    let done = Arc::new(AtomicBool::new(false));
    let (task, wakes) = counting_waker();
    let mut cx = Context::from_waker(&task);
    let mut poll_all = |arena: &mut S, seen: &mut Vec<usize>| {
        let out = arena.poll_next(&mut cx, |_, v: core::pin::Pin<&mut usize>, _| -> Step<()> {
            seen[*v] = woken[*v].load(Ordering::SeqCst);
            Step::Pending
        });
        assert!(out.is_pending());
    };
    poll_all(arena, &mut seen);
    // Read before the thread starts: its first wake may notify the task at once.
    let mut consumed = wakes.count();
    let thread = {
        let woken = woken.clone();
        let done = done.clone();
        std::thread::spawn(move || {
            let mut x = 12345usize;
            for _ in 0..rounds {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let i = (x >> 33) % n;
                woken[i].fetch_add(1, Ordering::SeqCst);
                wakers[i].wake_by_ref();
                if x & 0xff == 0 {
                    std::thread::yield_now();
                }
            }
            done.store(true, Ordering::SeqCst);
        })
    };
    let start = std::time::Instant::now();
    loop {
        let now = wakes.count();
        if now > consumed {
            consumed = now;
            poll_all(arena, &mut seen);
            continue;
        }
        if done.load(Ordering::SeqCst) && wakes.count() == consumed {
            break;
        }
        assert!(start.elapsed().as_secs() < 60, "hang");
        std::hint::spin_loop();
    }
    thread.join().unwrap();
    let lost: Vec<usize> = (0..n)
        .filter(|&i| seen[i] != woken[i].load(Ordering::SeqCst))
        .collect();
    if !lost.is_empty() {
        let before = wakes.count();
        poll_all(arena, &mut seen);
        let still: Vec<usize> = (0..n)
            .filter(|&i| seen[i] != woken[i].load(Ordering::SeqCst))
            .collect();
        std::println!(
            "lost {:?} (first 10 of {}); one more poll (task wakes {} -> {}) leaves {:?}",
            &lost[..lost.len().min(10)],
            lost.len(),
            before,
            wakes.count(),
            &still[..still.len().min(10)]
        );
    }
    for i in 0..n {
        assert_eq!(
            seen[i],
            woken[i].load(Ordering::SeqCst),
            "value {i}'s last wake was lost"
        );
    }
}

#[test]
#[cfg_attr(
    miri,
    ignore = "thousands of slots and wakes: wake_levels.rs covers the deep sets under Miri"
)]
fn wakes_from_another_thread_are_not_lost_in_a_small_arena() {
    no_lost_wake_in_full_arenas(64, 20, 20_000);
}

#[test]
#[cfg_attr(
    miri,
    ignore = "thousands of slots and wakes: wake_levels.rs covers the deep sets under Miri"
)]
fn wakes_from_another_thread_are_not_lost_in_a_deep_arena() {
    no_lost_wake_in_full_arenas(5000, 5, 50_000);
}

/// [`no_lost_wake_across_threads`], `runs` times, each on a new arena of `capacity` slots,
/// all of them holding a value, with `wakes` wakes.
fn no_lost_wake_in_full_arenas(capacity: usize, runs: usize, wakes: usize) {
    for _ in 0..runs {
        let mut arena = Arena::new(capacity);
        let keys: Vec<Key> = (0..capacity).map(|v| arena.insert(v).unwrap()).collect();
        let wakers = keys.iter().map(|&k| arena.waker(k).unwrap()).collect();
        no_lost_wake_across_threads(&mut arena, wakers, wakes);
    }
}

#[test]
#[cfg_attr(
    miri,
    ignore = "thousands of slots and wakes: wake_levels.rs covers the deep sets under Miri"
)]
fn wakes_from_another_thread_are_not_lost_in_a_growable_arena() {
    for _ in 0..5 {
        let mut arena = GrowableArena::with_capacity(2);
        let keys: Vec<Key> = (0..3000).map(|v| arena.insert(v)).collect();
        let wakers = keys.iter().map(|&k| arena.waker(k).unwrap()).collect();
        no_lost_wake_across_threads(&mut arena, wakers, 50_000);
    }
}

/// A join arena: value 0 keeps no waker (waits unbound, polled every round), value 1 gives an
/// item and is queued again (`Repoll`), value 2 keeps its waker and is woken by value 3's poll
/// in the same round, value 3 wakes value 1 (queued already). Each round polls each at most
/// once, and the woken ones in the round they were woken in when not polled in it yet.
#[test]
fn a_join_arena_with_a_value_waiting_unbound_polls_each_woken_value_once_a_round() {
    let mut arena = JoinArena::new(0..4usize);
    let kept: RefCell<Vec<Option<Waker>>> = RefCell::new(alloc::vec![None; 4]);
    arena.arm(|_| true);
    let (task, wakes) = counting_waker();
    let mut cx = Context::from_waker(&task);
    let polls = RefCell::new(Vec::new());
    let mut f = |_: Key, v: core::pin::Pin<&mut usize>, cx: &mut Context<'_>| {
        let v = *v;
        polls.borrow_mut().push(v);
        match v {
            0 => Step::Pending,
            1 => {
                kept.borrow_mut()[1] = Some(cx.waker().clone());
                Step::Repoll(1)
            }
            2 => {
                kept.borrow_mut()[2] = Some(cx.waker().clone());
                Step::Pending
            }
            _ => {
                kept.borrow_mut()[3] = Some(cx.waker().clone());
                if let Some(w) = kept.borrow().get(1).and_then(Option::as_ref) {
                    w.wake_by_ref();
                }
                Step::Pending
            }
        }
    };
    let mut budget = arena.start_round();
    let mut outs = Vec::new();
    loop {
        match arena.poll_with_budget(&mut cx, &mut budget, &mut f) {
            Poll::Ready(Some((_, out))) => outs.push(out),
            Poll::Ready(None) => unreachable!(),
            Poll::Pending => break,
        }
    }
    assert_eq!(outs, [1]);
    assert_eq!(*polls.borrow(), [0, 1, 2, 3]);
    assert_eq!(wakes.count(), 1, "value 1 is due next round");
    for round in 2..6 {
        polls.borrow_mut().clear();
        // Woken from outside before the round: value 2.
        kept.borrow()[2].as_ref().unwrap().wake_by_ref();
        let before = wakes.count();
        let mut budget = arena.start_round();
        let mut outs = Vec::new();
        loop {
            match arena.poll_with_budget(&mut cx, &mut budget, &mut f) {
                Poll::Ready(Some((_, out))) => outs.push(out),
                Poll::Ready(None) => unreachable!(),
                Poll::Pending => break,
            }
        }
        let mut p = polls.borrow().clone();
        p.sort_unstable();
        assert_eq!(p, [0, 1, 2], "round {round}: each polled once");
        assert_eq!(outs, [1], "round {round}");
        assert_eq!(wakes.count(), before + 1, "round {round}: value 1 again");
    }
}

/// A value that wakes another and panics in its poll: the panic goes on, and the task is woken
/// for the value woken, whether it was queued nowhere (filed by the drain after the panic) or
/// in the next round's queue already (the tail of this round's does not move).
#[test]
fn a_panic_after_waking_another_value_wakes_the_task_for_it() {
    pinfold_testkit::panic_hook::no_forced_backtraces();
    for queued_already in [false, true] {
        let mut arena = Arena::new(3);
        let a = arena.insert(0u32).unwrap();
        let b = arena.insert(1u32).unwrap();
        let c = arena.insert(2u32).unwrap();
        let (task, wakes) = counting_waker();
        let mut cx = Context::from_waker(&task);
        // Round 1: every value polled; `a` settles, `b` keeps, `c` is queued again or not.
        assert!(
            arena
                .poll_next(&mut cx, |_, _, _| -> Step<()> { Step::Settled })
                .is_pending()
        );
        let wake_a = arena.waker(a).unwrap();
        let wake_b = arena.waker(b).unwrap();
        arena.waker(b).unwrap().wake();
        arena.waker(c).unwrap().wake();
        let mut budget = arena.start_round();
        if queued_already {
            // `b` gives an item and goes to the next round's queue: round mark 0.
            let out = arena.poll_with_budget(&mut cx, &mut budget, &mut |k, _, _| Step::Repoll(k));
            assert_eq!(out, Poll::Ready(Some((b, b))));
        }
        let before = wakes.count();
        let result = catch_unwind(AssertUnwindSafe(|| {
            arena.poll_with_budget(&mut cx, &mut budget, &mut |k, _, _| -> Step<Key> {
                if k == c {
                    // `b` is in the next round's queue already when `queued_already`.
                    if queued_already { &wake_b } else { &wake_a }.wake_by_ref();
                    panic!("c panics after waking a value");
                }
                Step::Pending
            })
        }));
        assert!(result.is_err());
        assert!(!arena.contains_key(c));
        assert!(
            wakes.count() > before,
            "queued_already {queued_already}: task woken"
        );
        // What is left is polled by the next call.
        let polled = RefCell::new(Vec::new());
        let mut budget = arena.start_round();
        let out = arena.poll_with_budget(&mut cx, &mut budget, &mut |k, _, _| -> Step<()> {
            polled.borrow_mut().push(k);
            Step::Settled
        });
        assert!(out.is_pending());
        let expected = if queued_already { b } else { a };
        assert_eq!(
            polled.into_inner(),
            [expected],
            "queued_already {queued_already}"
        );
    }
}

/// A merge's head polled in place (`poll_first`) that wakes another value and panics: the
/// task is woken for it (the drain after the panic puts it behind the dropped head).
#[test]
fn a_merge_head_panicking_in_place_after_a_wake_wakes_the_task() {
    pinfold_testkit::panic_hook::no_forced_backtraces();
    let mut arena = Arena::new(2);
    let a = arena.insert(0u32).unwrap();
    let b = arena.insert(1u32).unwrap();
    let wake_b = arena.waker(b).unwrap();
    head_panics_in_place_after_waking(&mut arena, a, b, &wake_b);
    let mut arena = GrowableArena::new();
    let a = arena.insert(0u32);
    let b = arena.insert(1u32);
    let wake_b = arena.waker(b).unwrap();
    head_panics_in_place_after_waking(&mut arena, a, b, &wake_b);
}

/// `a` gives items (queued again), `b` settles; then `a`, polled in place at the head of the
/// queue, wakes `b` (`wake_b`) and panics: the task is woken, and the next call gives `b`.
fn head_panics_in_place_after_waking<S: Storage<u32>>(
    arena: &mut S,
    a: Key,
    b: Key,
    wake_b: &Waker,
) {
    let (task, wakes) = counting_waker();
    let mut cx = Context::from_waker(&task);
    let step = |k: Key| {
        if k == a {
            Step::Repoll(Some(k))
        } else {
            Step::Settled
        }
    };
    // First call: `a` gives an item (queued again); `b` settles.
    let out = arena.poll_next_some(&mut cx, |k, _, _| step(k));
    assert_eq!(out, Poll::Ready(Some((a, a))));
    let out = arena.poll_next_some(&mut cx, |k, _, _| step(k));
    assert_eq!(out, Poll::Ready(Some((a, a))), "a again (b settled)");
    let before = wakes.count();
    let result = catch_unwind(AssertUnwindSafe(|| {
        arena.poll_next_some(&mut cx, |k, _, _| -> Step<Option<Key>> {
            assert_eq!(k, a, "the head is polled in place");
            wake_b.wake_by_ref();
            panic!("a panics in place");
        })
    }));
    assert!(result.is_err());
    assert!(wakes.count() > before, "task woken for b");
    let out = arena.poll_next_some(&mut cx, |k, _, _| Step::Keep(Some(k)));
    assert_eq!(out, Poll::Ready(Some((b, b))));
}
