//! Keys: `insert` names a future, `poll_next_keyed` names the future of each output with that
//! key, `remove` drops a future at once, a key or a waker that outlived its future touches
//! nothing, also after its slot holds a new future, and a key of another set touches nothing.

use std::sync::Arc;
use std::task::Poll;
use std::thread;

use super::{SetUnderTest, drain_keyed, poll_keyed};
use crate::probe::{Probe, ProbeState, probes};
use crate::rng::XorShift;
use crate::stream::poll_once;

/// A set holding probes, and their keys and states, by id.
struct ProbeSet<S: SetUnderTest> {
    set: S::Set<Probe>,
    keys: Vec<S::Key>,
    states: Vec<Arc<ProbeState>>,
}

/// A set of `capacity` holding `n` probes.
fn probe_set<S: SetUnderTest>(capacity: usize, n: usize) -> ProbeSet<S> {
    let mut set = S::with_capacity(capacity);
    let (futures, states) = probes(n);
    let keys = futures
        .into_iter()
        .map(|probe| S::insert(&mut set, probe))
        .collect();
    ProbeSet { set, keys, states }
}

/// Asserts that `key` names nothing in `set`, in each of the four ways to ask.
fn assert_refused<S: SetUnderTest>(set: &mut S::Set<Probe>, key: S::Key) {
    assert!(!S::contains_key(set, key), "contains_key({key:?})");
    assert!(S::get(set, key).is_none(), "get({key:?}) gave a future");
    assert!(
        S::get_pin_mut(set, key).is_none(),
        "get_pin_mut({key:?}) gave a future"
    );
    let len = S::len(set);
    assert!(!S::remove(set, key), "remove({key:?}) removed a future");
    assert_eq!(S::len(set), len);
}

/// Asserts that `key` names the probe with id `id`, in each of the ways to ask but `remove`.
fn assert_names<S: SetUnderTest>(set: &mut S::Set<Probe>, key: S::Key, id: usize) {
    assert!(S::contains_key(set, key), "contains_key({key:?})");
    assert_eq!(S::get(set, key).map(Probe::id), Some(id), "get({key:?})");
    assert_eq!(
        S::get_pin_mut(set, key).map(|probe| probe.id()),
        Some(id),
        "get_pin_mut({key:?})"
    );
}

/// `remove` drops the future in place at once, even one that is ready and woken, and its
/// output never comes.
pub fn remove_drops_the_future_at_once_and_its_output_never_comes<S: SetUnderTest>() {
    let ProbeSet {
        mut set,
        keys,
        states,
    } = probe_set::<S>(3, 3);
    assert!(poll_once(&mut set).is_pending());
    // Probe 1 is ready and woken: its output would be the next one.
    states[1].finish();
    assert!(S::remove(&mut set, keys[1]));
    assert_eq!(states[1].drops(), 1, "remove did not drop the future");
    assert_eq!(S::len(&set), 2);

    assert!(poll_once(&mut set).is_pending());
    states[0].finish();
    states[2].finish();
    let mut outputs = drain_keyed::<S, _>(&mut set);
    outputs.sort_unstable_by_key(|&(_, id)| id);
    assert_eq!(outputs, [(keys[0], 0), (keys[2], 2)]);
    assert_eq!(states[1].polls(), 1, "the removed future was polled");
    for state in &states {
        assert_eq!(state.drops(), 1);
    }
}

/// A future removed before its first poll is dropped unpolled.
pub fn remove_before_the_first_poll_drops_the_future_unpolled<S: SetUnderTest>() {
    let ProbeSet {
        mut set,
        keys,
        states,
    } = probe_set::<S>(2, 2);
    assert!(S::remove(&mut set, keys[0]));
    assert_eq!(states[0].drops(), 1);
    assert!(poll_once(&mut set).is_pending());
    assert_eq!(states[0].polls(), 0);
    assert_eq!(states[1].polls(), 1);
    assert_eq!(S::len(&set), 1);
}

/// The key of a future that finished is refused, and still is once a new future took its slot
/// (a set of capacity 1 has only that slot to give).
pub fn key_of_a_finished_future_is_refused_also_after_its_slot_is_reused<S: SetUnderTest>() {
    let ProbeSet {
        mut set,
        keys,
        states,
    } = probe_set::<S>(1, 1);
    let old = keys[0];
    assert_names::<S>(&mut set, old, 0);
    states[0].open();
    assert_eq!(poll_keyed::<S, _>(&mut set), Poll::Ready(Some((old, 0))));
    assert_refused::<S>(&mut set, old);

    let (probe, state) = Probe::new(1);
    let new = S::insert(&mut set, probe);
    assert_ne!(new, old);
    assert_refused::<S>(&mut set, old);
    assert_names::<S>(&mut set, new, 1);
    assert_eq!(
        state.drops(),
        0,
        "a stale key's remove dropped the new future"
    );
    assert!(S::remove(&mut set, new));
    assert_eq!(state.drops(), 1);
}

/// The key of a future that was removed is refused, and still is once a new future took its
/// slot.
pub fn key_of_a_removed_future_is_refused_also_after_its_slot_is_reused<S: SetUnderTest>() {
    let ProbeSet {
        mut set,
        keys,
        states,
    } = probe_set::<S>(1, 1);
    let old = keys[0];
    assert!(poll_once(&mut set).is_pending());
    assert!(S::remove(&mut set, old));
    assert_refused::<S>(&mut set, old);

    let (probe, state) = Probe::new(1);
    let new = S::insert(&mut set, probe);
    assert_ne!(new, old);
    assert_refused::<S>(&mut set, old);
    assert_names::<S>(&mut set, new, 1);
    assert_eq!(
        state.drops(),
        0,
        "a stale key's remove dropped the new future"
    );
    assert_eq!(states[0].drops(), 1);
    state.open();
    assert_eq!(
        drain_keyed::<S, _>(&mut set),
        [(new, 1)],
        "wrong key or output"
    );
}

/// Every output of `poll_next_keyed` comes with the key `insert` gave its future, over rounds
/// that reuse the slots, whether the futures finish one by one or are ready at once.
pub fn poll_next_keyed_gives_the_key_insert_returned<S: SetUnderTest>() {
    let n = if cfg!(miri) { 4 } else { 16 };
    let mut set = S::with_capacity(n);
    let mut rng = XorShift::new(11);
    let mut issued: Vec<S::Key> = Vec::new();
    for round in 0..3 {
        let (futures, states) = probes(n);
        let keys: Vec<S::Key> = futures
            .into_iter()
            .map(|probe| S::insert(&mut set, probe))
            .collect();
        for key in &keys {
            assert!(
                !issued.contains(key),
                "round {round}: key {key:?} given twice"
            );
            issued.push(*key);
        }
        if round == 1 {
            // Ready at their first poll.
            for state in &states {
                state.open();
            }
            for (key, id) in drain_keyed::<S, _>(&mut set) {
                assert_eq!(key, keys[id], "round {round}, probe {id}");
            }
        } else {
            // One by one, in a random order.
            assert!(poll_once(&mut set).is_pending());
            for id in rng.permutation(n) {
                states[id].finish();
                assert_eq!(
                    poll_keyed::<S, _>(&mut set),
                    Poll::Ready(Some((keys[id], id))),
                    "round {round}"
                );
            }
        }
        assert_eq!(poll_keyed::<S, _>(&mut set), Poll::Ready(None));
        assert!(states.iter().all(|state| state.drops() == 1));
    }
}

/// A waker cloned inside a future's poll and kept after the future finished, woken (by
/// reference, by value, and from another thread) once a new future took its slot, polls
/// nothing: the new future is polled only when its own waker is woken. Capacity 1, so the new
/// future must take the slot.
pub fn stale_waker_does_not_poll_the_slots_next_occupant<S: SetUnderTest>() {
    stale_waker_after_reuse::<S>(1);
}

/// As [`stale_waker_does_not_poll_the_slots_next_occupant`], in a full set of 4: the new
/// future takes the one free slot, and no other future is polled either.
pub fn stale_waker_in_a_full_set_polls_nothing<S: SetUnderTest>() {
    stale_waker_after_reuse::<S>(4);
}

fn stale_waker_after_reuse<S: SetUnderTest>(capacity: usize) {
    let ProbeSet {
        mut set,
        keys,
        mut states,
    } = probe_set::<S>(capacity, capacity);
    assert!(poll_once(&mut set).is_pending());
    // The waker probe 0 cloned in its poll, kept past its end.
    let stale = states[0].waker();
    states[0].finish();
    assert_eq!(
        poll_keyed::<S, _>(&mut set),
        Poll::Ready(Some((keys[0], 0)))
    );

    let (probe, state) = Probe::new(capacity);
    let key = S::insert(&mut set, probe);
    assert!(poll_once(&mut set).is_pending());
    assert_eq!(state.polls(), 1);
    states[0] = state;
    let polls: Vec<usize> = states.iter().map(|state| state.polls()).collect();

    stale.wake_by_ref();
    let owned = stale.clone();
    owned.wake();
    thread::spawn(move || stale.wake()).join().unwrap();
    for _ in 0..3 {
        assert!(poll_once(&mut set).is_pending());
    }
    assert_eq!(
        states.iter().map(|state| state.polls()).collect::<Vec<_>>(),
        polls,
        "a stale waker polled a future (the first is the slot's new occupant)"
    );

    // The new future's own waker works.
    states[0].finish();
    assert_eq!(
        poll_keyed::<S, _>(&mut set),
        Poll::Ready(Some((key, capacity)))
    );
    assert_eq!(states[0].polls(), 2);
}

/// Two fresh sets of the same capacity, one future each (in the same slot, after the same
/// history): the key of one is refused by the other, whose future stays and still gives its
/// output under its own key.
pub fn a_key_of_another_set_is_refused_and_its_future_stays<S: SetUnderTest>() {
    let ProbeSet {
        set: mut a,
        keys: in_a,
        states: states_a,
    } = probe_set::<S>(1, 1);
    let ProbeSet {
        set: mut b,
        keys: in_b,
        states: states_b,
    } = probe_set::<S>(1, 1);
    assert!(poll_once(&mut a).is_pending());
    assert!(poll_once(&mut b).is_pending());
    assert_foreign_refused::<S>(&mut b, in_a[0], in_b[0], 0);
    assert_foreign_refused::<S>(&mut a, in_b[0], in_a[0], 0);
    for (mut set, own, state) in [(a, in_a[0], &states_a[0]), (b, in_b[0], &states_b[0])] {
        assert_eq!(state.drops(), 0, "a foreign key dropped a future");
        state.finish();
        assert_eq!(drain_keyed::<S, _>(&mut set), [(own, 0)]);
        assert_eq!(state.drops(), 1);
    }
}

/// The key of a set that was dropped is refused by a set made after it, which may take its
/// memory.
pub fn a_key_of_a_dropped_set_is_refused_by_a_new_one<S: SetUnderTest>() {
    let ProbeSet {
        set: dropped, keys, ..
    } = probe_set::<S>(1, 1);
    drop(dropped);
    let ProbeSet {
        mut set,
        keys: own,
        states,
    } = probe_set::<S>(1, 1);
    assert_foreign_refused::<S>(&mut set, keys[0], own[0], 0);
    states[0].open();
    assert_eq!(drain_keyed::<S, _>(&mut set), [(own[0], 0)]);
}

/// Asserts that `set`, whose future `id` is under `own`, refuses `foreign` (a key another set
/// gave) and still holds that future.
fn assert_foreign_refused<S: SetUnderTest>(
    set: &mut S::Set<Probe>,
    foreign: S::Key,
    own: S::Key,
    id: usize,
) {
    assert_refused::<S>(set, foreign);
    assert_names::<S>(set, own, id);
    assert_ne!(foreign, own, "two sets gave the same key");
}
