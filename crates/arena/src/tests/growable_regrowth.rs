//! A merge of busy streams in a growable arena's first group, whose head is polled in place
//! and rotated on every call, while the arena's groups grow (the groups' vector moves to a
//! larger buffer), are released back to the first, grow again past where they were, and while
//! the arena itself moves (to the heap, to another thread): every call gives the next
//! stream's item, in turn.

use std::task::{Context, Poll, Waker};

use pinfold_testkit::waker::counting_waker;

use crate::{GrowableArena, Key, Step, Storage};
use alloc::boxed::Box;
use alloc::vec::Vec;

/// Values below this id are busy streams: an item (their id) on every poll. The others stay
/// `Pending` and are never woken.
const BUSY: u32 = 2;

/// `calls` merge calls (`poll_next_some`): each gives a busy stream's item.
fn merge_calls(arena: &mut GrowableArena<u32>, task: &Waker, calls: usize) -> Vec<(Key, u32)> {
    let mut cx = Context::from_waker(task);
    (0..calls)
        .map(|_| {
            let out = arena.poll_next_some(&mut cx, |_, value, _| {
                if *value < BUSY {
                    Step::Repoll(Some(*value))
                } else {
                    Step::Pending
                }
            });
            match out {
                Poll::Ready(Some((key, id))) => {
                    assert!(id < BUSY, "only the busy streams give items");
                    (key, id)
                }
                other => panic!("a busy stream gives an item on every call, got {other:?}"),
            }
        })
        .collect()
}

/// Six merge calls: once the streams that stay `Pending` have been polled (by the first
/// two), the two busy streams `a` and `b` give their items in turn.
fn busy_in_turn(arena: &mut GrowableArena<u32>, task: &Waker, [a, b]: [Key; 2]) {
    let outs = merge_calls(arena, task, 6);
    let last = &outs[2..];
    for pair in last.windows(2) {
        assert_ne!(
            pair[0].0, pair[1].0,
            "the busy streams take turns: {outs:?}"
        );
    }
    for &(key, id) in last {
        assert_eq!(key, [a, b][id as usize], "each item is its own stream's");
    }
}

/// Inserts idle values until the arena has `groups` groups; their keys.
fn grow_to(arena: &mut GrowableArena<u32>, groups: usize, next_id: &mut u32) -> Vec<Key> {
    let mut keys = Vec::new();
    while arena.groups() < groups {
        keys.push(arena.insert(*next_id));
        *next_id += 1;
    }
    keys
}

#[test]
fn a_busy_merge_in_the_first_group_takes_turns_while_the_groups_grow_are_released_and_grow_again() {
    let (task, _wakes) = counting_waker();
    let mut arena = GrowableArena::with_capacity(4);
    let busy = [arena.insert(0), arena.insert(1)];
    assert_eq!(busy.map(|key| arena.group_of(key)), [Some(0), Some(0)]);
    let mut next_id = BUSY;
    busy_in_turn(&mut arena, &task, busy);

    // A second group: the groups' vector outgrows its room for the first.
    let idle = grow_to(&mut arena, 2, &mut next_id);
    busy_in_turn(&mut arena, &task, busy);

    // The idle values leave: the second group is released, the first stays.
    for key in idle {
        assert!(arena.remove(key));
    }
    assert_eq!((arena.len(), arena.groups(), arena.capacity()), (2, 1, 4));
    busy_in_turn(&mut arena, &task, busy);

    // Moved to the heap, the arena grows again, past four groups: the groups' vector moves
    // to a larger buffer once more.
    let mut boxed = Box::new(arena);
    let idle = grow_to(&mut boxed, 5, &mut next_id);
    busy_in_turn(&mut boxed, &task, busy);

    // Moved to another thread, and polled there.
    let mut arena = *boxed;
    let mut arena = std::thread::scope(|scope| {
        scope
            .spawn(|| {
                busy_in_turn(&mut arena, &task, busy);
                arena
            })
            .join()
            .unwrap()
    });

    // The idle values leave again; the busy streams still take turns.
    for key in idle {
        assert!(arena.remove(key));
    }
    assert_eq!(arena.len(), 2);
    busy_in_turn(&mut arena, &task, busy);
    assert_eq!(busy.map(|key| arena.group_of(key)), [Some(0), Some(0)]);
}

#[test]
fn a_busy_merge_in_the_first_group_takes_turns_after_reserve_adds_many_groups() {
    let (task, _wakes) = counting_waker();
    let mut arena = GrowableArena::with_capacity(4);
    let busy = [arena.insert(0), arena.insert(1)];
    busy_in_turn(&mut arena, &task, busy);
    // Many groups at once, with no value in them.
    arena.reserve(1000);
    assert!(arena.groups() > 8, "{} groups", arena.groups());
    busy_in_turn(&mut arena, &task, busy);
}
