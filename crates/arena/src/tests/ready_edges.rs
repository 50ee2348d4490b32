//! The ready set at the edges of its sizes: one level (up to 63 entries), two (a top word over
//! up to 63 first-level words, the last of which is summarised by the bit just below `BUSY`)
//! and three; for an arena (two entries a slot, so 31, 32, 2,016 and 2,017 slots are the
//! edges) and a join arena (one entry a value: 63, 64, 4,032 and 4,033). Every woken value is
//! polled once, whether the wakes come before a call, during a round, or from other threads
//! while the owner drains.

use std::cell::RefCell;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll, Waker};

use pinfold_testkit::waker::{WakeCounter, counting_waker};

use crate::{Arena, JoinArena, Key, Step, Storage};
use alloc::format;
use alloc::vec;
use alloc::vec::Vec;

/// Arena capacities around the edges: 2, 62, 64, 66, 4,030, 4,032, 4,034 and 4,096 entries.
fn arena_capacities() -> &'static [usize] {
    if cfg!(miri) {
        &[1, 31, 32, 33, 64]
    } else {
        &[1, 31, 32, 33, 2015, 2016, 2017, 2048]
    }
}

/// Join arena sizes around the edges, one entry a value.
fn join_sizes() -> &'static [usize] {
    if cfg!(miri) {
        &[1, 62, 63, 64, 65, 128]
    } else {
        &[1, 62, 63, 64, 65, 4031, 4032, 4033, 4096]
    }
}

/// Calls until one polls nothing, with `task` as the task's waker; how many times each of the
/// `n` values (each its own index) was polled. `on_poll` runs at each poll, with the value.
fn arena_polls(
    arena: &mut Arena<usize>,
    n: usize,
    task: &Waker,
    mut on_poll: impl FnMut(usize),
) -> Vec<usize> {
    let mut cx = Context::from_waker(task);
    let mut polls = vec![0; n];
    loop {
        let mut polled = false;
        let out = arena.poll_next(&mut cx, |_, value, _| {
            polls[*value] += 1;
            polled = true;
            on_poll(*value);
            Step::<()>::Pending
        });
        assert!(out.is_pending());
        if !polled {
            return polls;
        }
    }
}

/// [`arena_polls`] for an armed join arena of `n` values (each its own index), round after
/// round; each poll keeps a clone of its waker in `wakers`.
fn join_polls(
    arena: &mut JoinArena<usize>,
    n: usize,
    task: &Waker,
    wakers: &RefCell<Vec<Option<Waker>>>,
    mut on_poll: impl FnMut(usize),
) -> Vec<usize> {
    let mut cx = Context::from_waker(task);
    let mut polls = vec![0; n];
    loop {
        let mut polled = false;
        let mut budget = arena.start_round();
        let out = arena.poll_with_budget(&mut cx, &mut budget, &mut |_, value, cx| {
            polls[*value] += 1;
            polled = true;
            wakers.borrow_mut()[*value] = Some(cx.waker().clone());
            on_poll(*value);
            Step::<()>::Pending
        });
        assert_eq!(out, Poll::Pending);
        if !polled {
            return polls;
        }
    }
}

/// An armed join arena of `0..n`, each value polled once (so each keeps its waker).
fn armed_join(n: usize, task: &Waker) -> (JoinArena<usize>, RefCell<Vec<Option<Waker>>>) {
    let mut arena = JoinArena::new(0..n);
    arena.arm(|_| true);
    let wakers = RefCell::new(vec![None; n]);
    let polls = join_polls(&mut arena, n, task, &wakers, |_| {});
    assert_eq!(
        polls,
        vec![1; n],
        "{n} values: the first round polls each once"
    );
    (arena, wakers)
}

fn taken(wakers: &RefCell<Vec<Option<Waker>>>) -> Vec<Waker> {
    wakers
        .borrow()
        .iter()
        .map(|waker| waker.clone().expect("every value was polled"))
        .collect()
}

/// Every entry of the table woken at once, both entries of every slot (the values' own and
/// those of the values that were in the slots before, whose wakers outlive them): the task is
/// woken once, each value is polled once, and the departed values' wakes poll nothing.
#[test]
fn every_entry_of_an_arena_woken_at_once_polls_each_value_once() {
    for &capacity in arena_capacities() {
        let mut arena = Arena::new(capacity);
        let (task, parent) = counting_waker();
        let first: Vec<Key> = (0..capacity).map(|v| arena.insert(v).unwrap()).collect();
        let polls = arena_polls(&mut arena, capacity, &task, |_| {});
        assert_eq!(polls, vec![1; capacity], "{capacity} slots: first polls");
        let departed: Vec<Waker> = first.iter().map(|&k| arena.waker(k).unwrap()).collect();
        // Last first: the freed slots are taken again lowest first.
        for &key in first.iter().rev() {
            assert!(arena.remove(key));
        }
        // The departed values' wakers are alive: each slot's new value is bound to the other
        // entry.
        let second: Vec<Key> = (0..capacity).map(|v| arena.insert(v).unwrap()).collect();
        for (a, b) in first.iter().zip(&second) {
            assert_eq!(a.index(), b.index());
            assert_ne!(a.generation() & 1, b.generation() & 1);
        }
        let polls = arena_polls(&mut arena, capacity, &task, |_| {});
        assert_eq!(
            polls,
            vec![1; capacity],
            "{capacity} slots: second values' first polls"
        );
        let wakers: Vec<Waker> = second.iter().map(|&k| arena.waker(k).unwrap()).collect();
        // Highest first: the first wake raises the top word's highest bit.
        let before = parent.count();
        for (old, new) in departed.iter().zip(&wakers).rev() {
            new.wake_by_ref();
            old.wake_by_ref();
        }
        assert_eq!(
            parent.count(),
            before + 1,
            "{capacity} slots: one notification"
        );
        let polls = arena_polls(&mut arena, capacity, &task, |_| {});
        assert_eq!(
            polls,
            vec![1; capacity],
            "{capacity} slots: each woken value once"
        );
        // The highest slot alone, then the lowest alone: each a burst of its own.
        for slot in [capacity - 1, 0] {
            let before = parent.count();
            wakers[slot].wake_by_ref();
            assert_eq!(parent.count(), before + 1, "{capacity} slots: slot {slot}");
            let polls = arena_polls(&mut arena, capacity, &task, |_| {});
            let mut expected = vec![0; capacity];
            expected[slot] = 1;
            assert_eq!(polls, expected, "{capacity} slots: slot {slot} alone");
        }
    }
}

/// Every value of a join arena woken at once, highest first: the task is woken once, and each
/// value is polled once; then the highest alone, and the lowest alone.
#[test]
fn every_value_of_a_join_arena_woken_at_once_is_polled_once() {
    for &n in join_sizes() {
        let (task, parent) = counting_waker();
        let (mut arena, kept) = armed_join(n, &task);
        let wakers = taken(&kept);
        let before = parent.count();
        for waker in wakers.iter().rev() {
            waker.wake_by_ref();
        }
        assert_eq!(parent.count(), before + 1, "{n} values: one notification");
        let polls = join_polls(&mut arena, n, &task, &kept, |_| {});
        assert_eq!(polls, vec![1; n], "{n} values: each woken value once");
        for value in [n - 1, 0] {
            let before = parent.count();
            wakers[value].wake_by_ref();
            assert_eq!(parent.count(), before + 1, "{n} values: value {value}");
            let polls = join_polls(&mut arena, n, &task, &kept, |_| {});
            let mut expected = vec![0; n];
            expected[value] = 1;
            assert_eq!(polls, expected, "{n} values: value {value} alone");
        }
    }
}

/// What a poll does in [`wakes_of_every_value_during_a_round_poll_each_once_more`]: at
/// value `last`'s first poll, wakes every value through `wakers`, last first, and checks that
/// the task (counted by `parent`) was not woken by them.
fn wake_all_at_first_poll_of<'a>(
    last: usize,
    wakers: &'a [Waker],
    parent: &'a WakeCounter,
) -> impl FnMut(usize) + 'a {
    let mut woke = false;
    move |value| {
        if value == last && !woke {
            woke = true;
            let before = parent.count();
            wakers.iter().rev().for_each(Waker::wake_by_ref);
            assert_eq!(
                parent.count(),
                before,
                "the wakes during a round woke the task"
            );
        }
    }
}

/// The highest value, woken, wakes every value (itself too) while the owner polls: the wakes
/// notify nobody (the owner is busy), and each woken value is polled once more (the waking
/// value in a later round: a value is polled at most once a round).
#[test]
fn wakes_of_every_value_during_a_round_poll_each_once_more() {
    for &capacity in arena_capacities() {
        let mut arena = Arena::new(capacity);
        let (task, parent) = counting_waker();
        let keys: Vec<Key> = (0..capacity).map(|v| arena.insert(v).unwrap()).collect();
        arena_polls(&mut arena, capacity, &task, |_| {});
        let wakers: Vec<Waker> = keys.iter().map(|&k| arena.waker(k).unwrap()).collect();
        let last = capacity - 1;
        wakers[last].wake_by_ref();
        let polls = arena_polls(
            &mut arena,
            capacity,
            &task,
            wake_all_at_first_poll_of(last, &wakers, &parent),
        );
        let mut expected = vec![1; capacity];
        expected[last] = 2;
        assert_eq!(polls, expected, "{capacity} slots");
    }
    for &n in join_sizes() {
        let (task, parent) = counting_waker();
        let (mut arena, kept) = armed_join(n, &task);
        let wakers = taken(&kept);
        let last = n - 1;
        wakers[last].wake_by_ref();
        let polls = join_polls(
            &mut arena,
            n,
            &task,
            &kept,
            wake_all_at_first_poll_of(last, &wakers, &parent),
        );
        let mut expected = vec![1; n];
        expected[last] = 2;
        assert_eq!(polls, expected, "{n} values");
    }
}

/// Threads that each note a value's work and then wake it, over and over, while the owner
/// polls: after they are done, the polls that follow have taken every note (no wake was lost
/// to a drain that raced it).
fn racing_wakes(
    n: usize,
    wakers: Vec<Waker>,
    mut call: impl FnMut(&dyn Fn(usize)) -> bool,
) -> Arc<Vec<AtomicUsize>> {
    let notes: Arc<Vec<AtomicUsize>> = Arc::new((0..n).map(|_| AtomicUsize::new(0)).collect());
    let wakers = Arc::new(wakers);
    let (threads, passes) = if cfg!(miri) { (2, 1) } else { (4, 3) };
    let done = Arc::new(AtomicUsize::new(0));
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let (notes, wakers, done) = (notes.clone(), wakers.clone(), done.clone());
            std::thread::spawn(move || {
                for _ in 0..passes {
                    // Each thread from its own end, so that the threads meet in every word.
                    for j in 0..n {
                        let value = if t % 2 == 0 { j } else { n - 1 - j };
                        notes[value].fetch_add(1, Ordering::Relaxed);
                        wakers[value].wake_by_ref();
                    }
                }
                done.fetch_add(1, Ordering::SeqCst);
            })
        })
        .collect();
    let take = |value: usize| {
        notes[value].swap(0, Ordering::Relaxed);
    };
    while done.load(Ordering::SeqCst) < threads {
        call(&take);
    }
    for handle in handles {
        handle.join().unwrap();
    }
    while call(&take) {}
    notes
}

fn assert_all_taken(notes: &[AtomicUsize], what: &str) {
    for (value, note) in notes.iter().enumerate() {
        assert_eq!(
            note.load(Ordering::Relaxed),
            0,
            "{what}: value {value}'s last wake polled nothing"
        );
    }
}

#[test]
fn wakes_from_other_threads_racing_the_drains_are_not_lost_at_the_edges() {
    let capacities: &[usize] = if cfg!(miri) {
        &[31, 32]
    } else {
        &[31, 32, 2016, 2017]
    };
    for &capacity in capacities {
        let mut arena = Arena::new(capacity);
        let (task, _) = counting_waker();
        let keys: Vec<Key> = (0..capacity).map(|v| arena.insert(v).unwrap()).collect();
        arena_polls(&mut arena, capacity, &task, |_| {});
        let wakers = keys.iter().map(|&k| arena.waker(k).unwrap()).collect();
        let notes = racing_wakes(capacity, wakers, |take| {
            let mut cx = Context::from_waker(&task);
            let mut polled = false;
            let out = arena.poll_next(&mut cx, |_, value, _| {
                take(*value);
                polled = true;
                Step::<()>::Pending
            });
            assert!(out.is_pending());
            polled
        });
        assert_all_taken(&notes, &format!("{capacity} slots"));
    }
    let sizes: &[usize] = if cfg!(miri) {
        &[63, 64]
    } else {
        &[63, 64, 4032, 4033]
    };
    for &n in sizes {
        let (task, _) = counting_waker();
        let (mut arena, kept) = armed_join(n, &task);
        let wakers = taken(&kept);
        let notes = racing_wakes(n, wakers, |take| {
            let mut cx = Context::from_waker(&task);
            let mut polled = false;
            let mut budget = arena.start_round();
            let out = arena.poll_with_budget(&mut cx, &mut budget, &mut |_, value, _| {
                take(*value);
                polled = true;
                Step::<()>::Pending
            });
            assert_eq!(out, Poll::Pending);
            polled
        });
        assert_all_taken(&notes, &format!("{n} values"));
    }
}
