//! Growing and shrinking: futures never move while groups are added, free slots in older groups
//! are reused first, memory goes back after a burst, and a cycling set keeps its groups.

use std::future::ready;
use std::sync::Arc;
use std::task::Poll;

use pinfold_testkit::probe::{Probe, ProbeState};
use pinfold_testkit::rng::XorShift;
use pinfold_testkit::stream::{drain_ready, finish_in_batches, poll_once, take_ready};
use pinfold_unordered::FuturesUnordered;

/// Pushes `n` probes with ids `from..from + n`; their states.
fn push_probes(set: &mut FuturesUnordered<Probe>, from: usize, n: usize) -> Vec<Arc<ProbeState>> {
    (from..from + n)
        .map(|id| {
            let (probe, state) = Probe::new(id);
            set.push(probe);
            state
        })
        .collect()
}

/// Polls the set twice, expecting nothing to finish: the queued futures are polled, then the
/// slots woken meanwhile.
fn poll_pending(set: &mut FuturesUnordered<Probe>) {
    for _ in 0..2 {
        assert!(poll_once(set).is_pending());
    }
}

/// The bound the crate documentation derives for a set that never grew back: right after an
/// output, with its largest group empty, the capacity is at most `4 * len + 32`.
fn released_bound(len: usize) -> usize {
    4 * len + 32
}

#[test]
fn futures_never_move_while_groups_are_added() {
    let n = if cfg!(miri) { 600 } else { 100_000 };
    let chunk = if cfg!(miri) { 50 } else { 1_000 };
    let mut rng = XorShift::new(0x5eed);
    let mut set = FuturesUnordered::new();
    let mut states = Vec::new();
    let mut capacities = vec![0];
    while states.len() < n {
        let polled = states.len();
        states.extend(push_probes(&mut set, polled, chunk));
        // Wake some earlier probes (without finishing them): each is polled again, in place,
        // after the groups added since its first poll. Probes panic if polled elsewhere.
        for _ in 0..if polled > 0 { 10 } else { 0 } {
            states[rng.below(polled)].waker().wake();
        }
        poll_pending(&mut set);
        if capacities.last() != Some(&set.capacity()) {
            capacities.push(set.capacity());
        }
    }
    assert_eq!(set.len(), n);
    // 0, the capacity after the first chunk, then at least four more groups added while
    // polled futures were in the set.
    assert!(
        capacities.len() >= 6,
        "groups were added while futures were in the set: {capacities:?}"
    );

    let mut order: Vec<usize> = (0..n).collect();
    rng.shuffle(&mut order);
    let mut outputs = finish_in_batches(&mut set, &states, &order, chunk);
    outputs.extend(drain_ready(&mut set));
    outputs.sort_unstable();
    assert_eq!(outputs, (0..n).collect::<Vec<_>>(), "every output once");
    for (id, state) in states.iter().enumerate() {
        assert!(
            state.polls() >= 2,
            "probe {id} polled {} times",
            state.polls()
        );
        assert_eq!(state.drops(), 1, "probe {id}");
    }
}

#[test]
fn free_slots_in_older_groups_are_reused_before_a_group_is_added() {
    let mut set = FuturesUnordered::new();
    let states = push_probes(&mut set, 0, 100);
    assert_eq!(set.capacity(), 128, "groups of 32, 32 and 64");
    poll_pending(&mut set);
    // Free ten slots in the first group and ten in the second.
    let done: Vec<usize> = (0..10).chain(40..50).collect();
    let mut outputs = finish_in_batches(&mut set, &states, &done, 20);
    outputs.sort_unstable();
    assert_eq!(outputs, done);

    // 48 free slots: 10 + 10 in the older groups, 28 in the newest.
    let more = push_probes(&mut set, 100, 48);
    assert_eq!(set.len(), 128);
    assert_eq!(set.capacity(), 128, "no group added while slots were free");
    set.push(Probe::new(148).0);
    assert_eq!(set.capacity(), 256);
    drop(more);
}

#[test]
fn groups_holding_a_future_are_never_released() {
    let mut set = FuturesUnordered::new();
    let states = push_probes(&mut set, 0, 100);
    poll_pending(&mut set);
    // Probe 99 sits in the largest group (64 slots); everything else finishes.
    let others: Vec<usize> = (0..99).collect();
    assert_eq!(finish_in_batches(&mut set, &states, &others, 10).len(), 99);
    assert_eq!(set.len(), 1);
    assert_eq!(set.capacity(), 128);
    assert!(states[99].polls() >= 1 && states[99].drops() == 0);

    states[99].finish();
    assert_eq!(poll_once(&mut set), Poll::Ready(Some(99)));
    assert_eq!(set.capacity(), 32, "only the first group is left");
}

#[test]
fn memory_goes_back_after_a_burst() {
    let n = if cfg!(miri) { 400 } else { 100_000 };
    let keep = if cfg!(miri) { 20 } else { 100 };
    let mut rng = XorShift::new(7);
    let mut set = FuturesUnordered::new();
    let states = push_probes(&mut set, 0, n);
    let peak = set.capacity();
    assert!(peak >= n);
    poll_pending(&mut set);

    // The oldest `keep` stay; the rest finish in a random order.
    let mut order: Vec<usize> = (keep..n).collect();
    rng.shuffle(&mut order);
    let outputs = finish_in_batches(&mut set, &states, &order, 1_000);
    assert_eq!(outputs.len(), n - keep);
    assert_eq!(set.len(), keep);
    assert!(
        set.capacity() <= released_bound(keep),
        "{} slots for {keep} futures after a burst to {n} ({peak} slots)",
        set.capacity()
    );
    // The figure the crate documentation quotes.
    if !cfg!(miri) {
        assert_eq!(set.capacity(), 256);
    }

    // What stays works as before.
    for state in &states[..keep] {
        state.finish();
    }
    let mut rest = drain_ready(&mut set);
    rest.sort_unstable();
    assert_eq!(rest, (0..keep).collect::<Vec<_>>());
}

#[test]
fn memory_goes_back_after_a_burst_once_scattered_survivors_are_replaced() {
    let n = if cfg!(miri) { 400 } else { 100_000 };
    let keep = if cfg!(miri) { 20 } else { 100 };
    let mut rng = XorShift::new(11);
    let mut set = FuturesUnordered::new();
    let mut states = push_probes(&mut set, 0, n);
    poll_pending(&mut set);

    // Random survivors, scattered over the groups: those holding one cannot be released yet.
    let mut order: Vec<usize> = (0..n).collect();
    rng.shuffle(&mut order);
    let (finished, survivors) = order.split_at(n - keep);
    finish_in_batches(&mut set, &states, finished, 1_000);
    assert_eq!(set.len(), keep);
    let scattered = set.capacity();

    // Steady load: each survivor that finishes is replaced by a new future, which goes into
    // the smallest group with a free slot.
    for &id in survivors {
        states[id].finish();
        assert_eq!(take_ready(&mut set), [id]);
        let next = states.len();
        states.extend(push_probes(&mut set, next, 1));
        poll_pending(&mut set);
        assert_eq!(set.len(), keep);
    }
    assert!(
        set.capacity() <= released_bound(keep),
        "{} slots for {keep} futures once the survivors were replaced ({scattered} before)",
        set.capacity()
    );
}

#[test]
fn a_cycling_set_keeps_its_groups() {
    let rounds = if cfg!(miri) { 4 } else { 50 };
    let mut set = FuturesUnordered::new();
    let mut capacities = Vec::new();
    for round in 0..rounds {
        set.extend((0..256).map(|n| ready(round * 256 + n)));
        let top = set.capacity();
        let mut outputs = drain_ready(&mut set);
        outputs.sort_unstable();
        assert_eq!(
            outputs,
            (round * 256..round * 256 + 256).collect::<Vec<_>>()
        );
        capacities.push((top, set.capacity()));
    }
    // The first drain releases the groups (a burst, as far as the set can tell); growing back
    // retains them, so no later round allocates or releases.
    assert_eq!(capacities[0], (256, 32));
    for &(top, after) in &capacities[1..] {
        assert_eq!((top, after), (256, 256), "{capacities:?}");
    }
}

#[test]
fn a_set_that_settles_down_gives_retained_memory_back() {
    let mut set = FuturesUnordered::new();
    for _ in 0..2 {
        set.extend((0..256).map(ready));
        drain_ready(&mut set);
    }
    assert_eq!(set.capacity(), 256, "retained after growing back");

    // A quiet stretch: one future at a time. After as many outputs as the capacity it
    // remembers (256) while holding at most a quarter of it (the end of the last drain
    // counts), the set forgets and releases.
    for n in 0..128 {
        set.push(ready(n));
        assert_eq!(drain_ready(&mut set), [n]);
    }
    assert_eq!(set.capacity(), 256, "still retained");
    for n in 128..256 {
        set.push(ready(n));
        assert_eq!(drain_ready(&mut set), [n]);
    }
    assert_eq!(set.capacity(), 32);
}

#[test]
fn a_set_that_stays_small_with_futures_held_forgets_its_burst() {
    // A burst to 256, released down to the first group: the set remembers the 256 for as many
    // outputs. Then a quiet stretch that holds ten futures through every output, a quarter of
    // the 256 at most: the set forgets, so a later burst is not kept once drained.
    let mut set = FuturesUnordered::new();
    let mut states = push_probes(&mut set, 0, 256);
    poll_pending(&mut set);
    for state in &states {
        state.finish();
    }
    assert_eq!(drain_ready(&mut set).len(), 256);
    assert_eq!(set.capacity(), 32, "the burst's groups released");
    states = push_probes(&mut set, 0, 10);
    poll_pending(&mut set);
    for id in 0..300 {
        states[id].finish();
        assert_eq!(take_ready(&mut set), [id]);
        states.extend(push_probes(&mut set, id + 10, 1));
        poll_pending(&mut set);
    }
    assert_eq!(set.len(), 10);
    // The next burst grows the set as a new one grows, and goes back once drained.
    let next = states.len();
    states.extend(push_probes(&mut set, next, 100));
    poll_pending(&mut set);
    assert_eq!(set.capacity(), 128);
    for state in &states[300..] {
        state.finish();
    }
    assert_eq!(drain_ready(&mut set).len(), 110);
    assert_eq!(
        set.capacity(),
        32,
        "nothing retained: the set forgot its burst"
    );
}

#[test]
fn reserve_on_a_new_set_makes_one_first_group_of_that_size() {
    let mut set: FuturesUnordered<Probe> = FuturesUnordered::new();
    set.reserve(100);
    assert_eq!(set.capacity(), 100);
    let mut small: FuturesUnordered<Probe> = FuturesUnordered::new();
    small.reserve(3);
    assert_eq!(
        small.capacity(),
        32,
        "the first group is at least as large as a new set's"
    );
    small.reserve(0);
    assert_eq!(small.capacity(), 32);
}

#[test]
fn reserve_adds_nothing_while_enough_slots_are_free() {
    let mut set = FuturesUnordered::new();
    let _states = push_probes(&mut set, 0, 10);
    set.reserve(22);
    assert_eq!(set.capacity(), 32, "22 slots of the first group are free");
    set.reserve(23);
    assert!(set.capacity() >= 33);
    assert!(set.capacity() - set.len() >= 23);
}

#[test]
fn reserved_groups_are_kept_through_outputs() {
    let mut set = FuturesUnordered::new();
    let states = push_probes(&mut set, 0, 32);
    set.reserve(1_000);
    let reserved = set.capacity();
    assert!(reserved - set.len() >= 1_000);
    poll_pending(&mut set);
    // Every future finishes: outputs that would release empty groups of a set that grew.
    for state in &states {
        state.finish();
    }
    assert_eq!(drain_ready(&mut set).len(), 32);
    assert!(set.is_empty());
    assert_eq!(
        set.capacity(),
        reserved,
        "outputs gave reserved groups back"
    );
    let _more = push_probes(&mut set, 32, 1_000);
    assert_eq!(set.capacity(), reserved);
}

#[test]
fn reserved_groups_are_given_back_once_the_set_has_stayed_small_for_as_many_outputs() {
    let mut set = FuturesUnordered::new();
    set.push(ready(0));
    assert_eq!(take_ready(&mut set), [0]);
    assert_eq!(
        set.capacity(),
        32,
        "the first group, kept as long as the set"
    );
    set.reserve(1_000);
    let reserved = set.capacity();
    assert!(reserved >= 1_000);
    // One future at a time: the set holds at most a quarter of what it reserved.
    let mut outputs = 0;
    while set.capacity() == reserved {
        assert!(
            outputs <= reserved,
            "reserved groups kept past {outputs} outputs"
        );
        set.push(ready(outputs));
        assert_eq!(take_ready(&mut set), [outputs]);
        outputs += 1;
    }
    assert!(
        outputs >= reserved,
        "reserved groups given back after {outputs} outputs"
    );
    assert_eq!(set.capacity(), 32);
}
