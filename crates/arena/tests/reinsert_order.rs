//! A value inserted into a slot still linked in a queue (its last value was removed while
//! queued) is polled once: at its slot's old place in the queue, or at the end of this round's
//! queue when that place is its head; in a bounded and a growable arena alike.

use std::task::{Context, Poll};

use pinfold_arena::{Arena, GrowableArena, Key, Step, Storage};
use pinfold_testkit::waker::counting_waker;

/// Polls a whole round of `arena` (each value `Pending`, or `Repoll` for the ids in `repoll`),
/// the values' ids in the order polled.
fn round<S: Storage<u32>>(arena: &mut S, repoll: &[u32]) -> Vec<u32> {
    let (waker, _) = counting_waker();
    let mut cx = Context::from_waker(&waker);
    let mut budget = arena.start_round();
    let mut seen = Vec::new();
    loop {
        let polled = arena.poll_with_budget(&mut cx, &mut budget, &mut |_, v, _| {
            let v = *v;
            seen.push(v);
            if repoll.contains(&v) {
                Step::Repoll(v)
            } else {
                Step::Pending
            }
        });
        match polled {
            Poll::Ready(Some(_)) => {}
            Poll::Ready(None) | Poll::Pending => return seen,
        }
    }
}

fn scenarios<S: Storage<u32>>(mut new: impl FnMut() -> S) {
    // Removed at the head of the ready queue: the new value goes to the end.
    let mut arena = new();
    let keys: Vec<Key> = (0..3).map(|v| arena.insert(v).ok().unwrap()).collect();
    assert!(arena.remove(keys[0]));
    arena.insert(3).ok().unwrap();
    assert_eq!(round(&mut arena, &[]), [1, 2, 3], "head");
    assert!(round(&mut arena, &[]).is_empty());

    // Removed in the middle: the new value takes its place.
    let mut arena = new();
    let keys: Vec<Key> = (0..3).map(|v| arena.insert(v).ok().unwrap()).collect();
    assert!(arena.remove(keys[1]));
    arena.insert(3).ok().unwrap();
    assert_eq!(round(&mut arena, &[]), [0, 3, 2], "middle");

    // Removed at the tail.
    let mut arena = new();
    let keys: Vec<Key> = (0..3).map(|v| arena.insert(v).ok().unwrap()).collect();
    assert!(arena.remove(keys[2]));
    arena.insert(3).ok().unwrap();
    arena.insert(4).ok().unwrap();
    assert_eq!(round(&mut arena, &[]), [0, 1, 3, 4], "tail");

    // Removed from the deferred queue (a stream queued again after an item): the new value
    // is polled by the next round, once.
    let mut arena = new();
    let keys: Vec<Key> = (0..3).map(|v| arena.insert(v).ok().unwrap()).collect();
    assert_eq!(round(&mut arena, &[1]), [0, 1, 2]);
    assert!(arena.remove(keys[1]));
    arena.insert(3).ok().unwrap();
    assert_eq!(round(&mut arena, &[]), [3], "deferred");
    assert!(round(&mut arena, &[]).is_empty());

    // Within a round, after an output: the head (the next to poll) removed and refilled.
    let mut arena = new();
    let keys: Vec<Key> = (0..3).map(|v| arena.insert(v).ok().unwrap()).collect();
    let (waker, _) = counting_waker();
    let mut cx = Context::from_waker(&waker);
    let mut budget = arena.start_round();
    let mut seen = Vec::new();
    let mut f = |_: Key, v: std::pin::Pin<&mut u32>, _: &mut Context<'_>| {
        seen.push(*v);
        if *v == 0 {
            Step::Keep(())
        } else {
            Step::Pending
        }
    };
    assert!(matches!(
        arena.poll_with_budget(&mut cx, &mut budget, &mut f),
        Poll::Ready(Some(_))
    ));
    assert!(arena.remove(keys[1]));
    arena.insert(3).ok().unwrap();
    assert!(
        arena
            .poll_with_budget(&mut cx, &mut budget, &mut f)
            .is_pending()
    );
    assert_eq!(seen, [0, 2, 3], "head within a round");
}

#[test]
fn reinsertion_into_a_linked_slot_bounded() {
    scenarios(|| Arena::new(4));
}

#[test]
fn reinsertion_into_a_linked_slot_growable() {
    scenarios(GrowableArena::new);
}
