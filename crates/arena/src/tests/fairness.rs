//! Fairness: a call polls each self-waking value once and yields, and yields at
//! `MAX_VAIN_REPOLLS` vain repolls, in a fixed arena and across a growable arena's groups.

use std::sync::atomic::Ordering;

use pinfold_testkit::probe::{Probe, Spinner, probes};
use pinfold_testkit::waker::counting_waker;

use super::next;
use crate::{Arena, GrowableArena, MAX_VAIN_REPOLLS, Storage};
use alloc::vec::Vec;

// Not under Miri, where `the_fairness_rules_hold_in_a_fixed_arena` makes the first three of
// these calls, on the same spinners in the same arena, and asserts one task wake for each.
#[test]
#[cfg_attr(miri, ignore)]
fn one_call_polls_each_self_waking_value_once_round_robin_and_yields() {
    // More spinners than `MAX_VAIN_REPOLLS`: self-wakes are not vain polls, and do not cut a
    // call short; each call polls every spinner once, and lets its task yield.
    const SPINNERS: usize = 3 * MAX_VAIN_REPOLLS + 4;
    let mut arena = Arena::new(SPINNERS);
    let counters: Vec<_> = (0..SPINNERS)
        .map(|id| {
            let (spinner, polls) = Spinner::forever(id);
            arena.insert(spinner).unwrap();
            polls
        })
        .collect();
    let (parent_waker, parent) = counting_waker();
    for call in 1..=10 {
        let wakes_before = parent.count();
        assert!(next(&mut arena, &parent_waker).is_pending());
        assert!(
            parent.count() > wakes_before,
            "yielded without waking its task"
        );
        assert!(counters.iter().all(|c| c.load(Ordering::SeqCst) == call));
    }
}

/// The fairness rules of a call, on `arena` (empty): values that wake themselves are polled
/// once a call and never cut it short; values woken from outside and `Pending` again are
/// strikes, and the call yields at `MAX_VAIN_REPOLLS` of them, the rest polled in the next.
fn fairness<S: Storage<Spinner>, P: Storage<Probe>>(mut spinning: S, mut waiting: P) {
    const SPINNERS: usize = 3 * MAX_VAIN_REPOLLS + 4;
    let counters: Vec<_> = (0..SPINNERS)
        .map(|id| {
            let (spinner, polls) = Spinner::forever(id);
            assert!(spinning.insert(spinner).is_ok());
            polls
        })
        .collect();
    let (parent_waker, parent) = counting_waker();
    for call in 1..=3 {
        let wakes_before = parent.count();
        assert!(next(&mut spinning, &parent_waker).is_pending());
        assert_eq!(
            parent.count(),
            wakes_before + 1,
            "the call yields waking its task once, and the self-wakes during it notify nobody"
        );
        assert!(
            counters.iter().all(|c| c.load(Ordering::SeqCst) == call),
            "call {call}: a self-waking value was not polled once"
        );
    }

    const WAITING: usize = MAX_VAIN_REPOLLS + 8;
    let (values, states) = probes(WAITING);
    for value in values {
        assert!(waiting.insert(value).is_ok());
    }
    assert!(next(&mut waiting, &parent_waker).is_pending());
    assert!(states.iter().all(|state| state.polls() == 1));
    for state in &states {
        state.waker().wake();
    }
    let wakes_before = parent.count();
    assert!(next(&mut waiting, &parent_waker).is_pending());
    let polled = states.iter().filter(|state| state.polls() == 2).count();
    assert_eq!(polled, MAX_VAIN_REPOLLS, "the call yields at its strikes");
    assert!(
        parent.count() > wakes_before,
        "yielded without waking its task"
    );
    assert!(next(&mut waiting, &parent_waker).is_pending());
    assert!(
        states.iter().all(|state| state.polls() == 2),
        "the next call polls the rest"
    );
}

#[test]
fn the_fairness_rules_hold_in_a_fixed_arena() {
    fairness(
        Arena::new(3 * MAX_VAIN_REPOLLS + 4),
        Arena::new(MAX_VAIN_REPOLLS + 8),
    );
}

#[test]
fn the_fairness_rules_hold_across_the_groups_of_a_growable_arena() {
    fairness(GrowableArena::new(), GrowableArena::new());
}
