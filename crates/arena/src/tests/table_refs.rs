//! The wake table's lifetime against the wakers that outlive their arena: wakers first made by
//! key on another thread, an arena polled with a waker of its own, entries shared with a new
//! value and retired again by the arena's drop, clones past the counted limit made from the lent
//! waker, a panicking value's drop during the arena's drop, wakers dropped on another thread
//! while the arena goes, and a growable arena's released group. Each frees every byte once, and
//! a waker used after its table is freed is a use after free that Miri reports.

use std::boxed::Box;
use std::future::{Future, pending};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::task::{Context, Poll, Waker};
use std::vec;
use std::vec::Vec;

use pinfold_testkit::alloc::measure_bytes;
use pinfold_testkit::probe::probes;
use pinfold_testkit::waker::counting_waker;

use super::next;
use crate::{Arena, GrowableArena, Key, Step, Storage};

/// Polls `arena` once with a no-op task waker, keeping a clone of the waker lent to the first
/// value polled; its key too.
fn poll_keeping<T: Future, S: Storage<T>>(arena: &mut S) -> (Key, Waker) {
    let mut kept = None;
    let mut cx = Context::from_waker(Waker::noop());
    let _ = arena.poll_next(&mut cx, |key, fut, cx| {
        if kept.is_none() {
            kept = Some((key, cx.waker().clone()));
        }
        Step::of_future(fut.poll(cx))
    });
    kept.expect("a value was polled")
}

/// Any future of `()`, boxed.
type Dyn = Pin<Box<dyn Future<Output = ()> + Send>>;

/// A future that is ready at once: its value leaves at its first poll.
fn done() -> Dyn {
    Box::pin(std::future::ready(()))
}

/// A future that never is.
fn never() -> Dyn {
    Box::pin(pending::<()>())
}

#[test]
fn a_waker_first_made_by_key_on_a_scoped_thread_outlives_the_arena() {
    let mut arena = Arena::new(2);
    let key = arena.insert(pending::<()>()).unwrap();
    let shared = &arena;
    let kept = std::thread::scope(|s| {
        s.spawn(move || shared.waker(key).expect("live key"))
            .join()
            .unwrap()
    });
    drop(arena);
    kept.wake_by_ref();
    kept.wake();
}

#[test]
fn wakers_made_by_key_on_two_threads_and_dropped_there_after_the_arena() {
    // Not measured: spawned threads' own bytes are not given back within the measure.
    {
        let mut arena = Arena::new(2);
        let key = arena.insert(pending::<()>()).unwrap();
        let (tx, rx) = std::sync::mpsc::channel::<Waker>();
        let shared = &arena;
        std::thread::scope(|s| {
            for _ in 0..2 {
                let tx = tx.clone();
                s.spawn(move || tx.send(shared.waker(key).unwrap()).unwrap());
            }
        });
        drop(tx);
        let wakers: Vec<Waker> = rx.iter().collect();
        drop(arena);
        std::thread::scope(|s| {
            for waker in wakers {
                s.spawn(move || waker.wake());
            }
        });
    }
}

#[test]
fn an_arena_polled_with_a_waker_of_its_own_frees_its_table_once() {
    // The arena registers a clone of its own value's waker as its task's waker: the table's
    // drop retires that entry, then drops the registered clone.
    for keep_past_the_arena in [false, true] {
        let ((), bytes) = measure_bytes(|| {
            let mut arena = Arena::new(2);
            let key = arena.insert(pending::<()>()).unwrap();
            let own = arena.waker(key).unwrap();
            assert!(next(&mut arena, &own).is_pending());
            if keep_past_the_arena {
                drop(arena);
                own.wake();
            } else {
                drop(own);
                drop(arena);
            }
        });
        assert_eq!(bytes.change, 0, "bytes left behind ({keep_past_the_arena})");
    }
}

/// An arena of one slot whose two values left with a waker each kept: both of the slot's
/// entries retired, the next value's turn on the older's. The arena and the two wakers, older
/// first.
fn both_entries_retired() -> (Arena<Dyn>, Waker, Waker) {
    let mut arena: Arena<Dyn> = Arena::new(1);
    arena.insert(done()).ok().unwrap();
    let (_, older) = poll_keeping(&mut arena);
    arena.insert(done()).ok().unwrap();
    let (_, newer) = poll_keeping(&mut arena);
    assert!(arena.is_empty());
    (arena, older, newer)
}

#[test]
fn a_shared_entry_is_retired_again_when_the_arena_goes() {
    let ((), bytes) = measure_bytes(|| {
        let (mut arena, older, newer) = both_entries_retired();
        // The third shares the older's entry with its waker, then keeps one of its own.
        arena.insert(never()).ok().unwrap();
        let (_, third) = poll_keeping(&mut arena);
        drop(arena);
        older.wake_by_ref();
        third.wake_by_ref();
        drop(older);
        newer.wake();
        third.wake();
    });
    assert_eq!(bytes.change, 0, "bytes left behind");
}

/// A value that shares a retired entry with a departed value's waker leaves with a waker of its
/// own alive: the entry is retired again, and still holds one reference for all its wakers,
/// given up by the last of them.
#[test]
fn a_shared_entry_retired_again_when_its_value_leaves_frees_every_byte() {
    let ((), bytes) = measure_bytes(|| {
        let (mut arena, older, newer) = both_entries_retired();
        // The third shares the older's entry, keeps a waker of its own and leaves.
        let key = arena.insert(never()).ok().unwrap();
        let (_, third) = poll_keeping(&mut arena);
        assert!(arena.remove(key));
        drop(arena);
        drop(older);
        newer.wake();
        third.wake();
    });
    assert_eq!(bytes.change, 0, "bytes left behind");
}

#[test]
fn a_shared_entry_whose_old_waker_goes_first_then_the_arena() {
    let ((), bytes) = measure_bytes(|| {
        let (mut arena, older, newer) = both_entries_retired();
        arena.insert(never()).ok().unwrap();
        // The older entry's state is now its waker's count alone: its drop gives up nothing.
        drop(older);
        drop(arena);
        newer.wake();
    });
    assert_eq!(bytes.change, 0, "bytes left behind");
}

/// A future that keeps clones of the waker it is lent past the counted limit, then stays
/// pending.
#[derive(Debug)]
struct Hoarder(Vec<Waker>, usize);

impl Future for Hoarder {
    type Output = ();
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.get_mut();
        for _ in 0..this.1 {
            this.0.push(cx.waker().clone());
        }
        Poll::Pending
    }
}

#[test]
fn clones_of_the_lent_waker_past_the_counted_limit_then_the_arena_goes() {
    let limit = crate::wake::wake_table::MAX_COUNTED as usize;
    let ((), bytes) = measure_bytes(|| {
        let mut arena = Arena::new(2);
        arena.insert(Hoarder(Vec::new(), limit + 3)).unwrap();
        let (key, outside) = poll_keeping(&mut arena);
        // The clone kept outside is the entry's first; the value's own fill the count to its
        // limit, and its last four are uncounted. All of them outlive the value and the arena.
        let hoard = core::mem::take(&mut hoarder_of(&mut arena, key).0);
        assert!(arena.remove(key));
        drop(arena);
        let (counted, uncounted) = hoard.split_at(limit - 1);
        uncounted[0].wake_by_ref();
        drop(counted.to_vec());
        outside.wake_by_ref();
        drop(hoard);
        outside.wake();
    });
    assert_eq!(bytes.change, 0, "bytes left behind");
}

/// The `Hoarder` of `key`, unpinned (it is `Unpin`).
fn hoarder_of(arena: &mut Arena<Hoarder>, key: Key) -> &mut Hoarder {
    arena.get_pin_mut(key).unwrap().get_mut()
}

/// Panics when dropped.
struct PanicsOnDrop;

impl Future for PanicsOnDrop {
    type Output = ();
    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
        Poll::Pending
    }
}

impl Drop for PanicsOnDrop {
    fn drop(&mut self) {
        panic!("drop");
    }
}

#[test]
fn a_value_panicking_in_the_arena_drop_leaves_the_table_to_live_wakers() {
    // Not measured: the panics' messages allocate.
    {
        let mut arena: Arena<Dyn> = Arena::new(3);
        arena.insert(Box::pin(PanicsOnDrop)).ok().unwrap();
        arena.insert(never()).ok().unwrap();
        arena.insert(Box::pin(PanicsOnDrop)).ok().unwrap();
        let mut kept = Vec::new();
        let mut cx = Context::from_waker(Waker::noop());
        let _ = arena.poll_next(&mut cx, |_, fut, cx| {
            kept.push(cx.waker().clone());
            Step::of_future(fut.poll(cx))
        });
        assert_eq!(kept.len(), 3);
        let panicked = catch_unwind(AssertUnwindSafe(|| drop(arena)));
        assert!(panicked.is_err(), "a value's drop panicked");
        for waker in kept {
            waker.wake_by_ref();
            waker.wake();
        }
    }
}

/// Sends the waker it was lent, when dropped, to a thread that drops it.
#[derive(Debug)]
struct SendsItsWakerAway(Option<Waker>, std::sync::mpsc::Sender<Waker>);

impl Future for SendsItsWakerAway {
    type Output = ();
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.get_mut();
        this.0 = Some(cx.waker().clone());
        Poll::Pending
    }
}

impl Drop for SendsItsWakerAway {
    fn drop(&mut self) {
        if let Some(waker) = self.0.take() {
            let _ = self.1.send(waker);
        }
    }
}

#[test]
fn wakers_dropped_on_another_thread_while_the_arena_goes() {
    let (tx, rx) = std::sync::mpsc::channel::<Waker>();
    let worker = std::thread::spawn(move || {
        for waker in rx {
            waker.wake_by_ref();
            drop(waker);
        }
    });
    let mut arena = Arena::new(4);
    for _ in 0..4 {
        arena.insert(SendsItsWakerAway(None, tx.clone())).unwrap();
    }
    drop(tx);
    assert!(next(&mut arena, Waker::noop()).is_pending());
    // The values' drops hand their wakers over; the table's drop races their drops.
    drop(arena);
    worker.join().unwrap();
}

#[test]
fn a_released_group_with_live_wakers_then_the_growable_arena_goes() {
    let ((), bytes) = measure_bytes(|| {
        let (task, _) = counting_waker();
        let mut arena = GrowableArena::new();
        let (values, states) = probes(40);
        let keys: Vec<Key> = values.into_iter().map(|v| arena.insert(v)).collect();
        let groups = arena.groups();
        assert!(groups >= 2);
        assert!(next(&mut arena, &task).is_pending());
        let kept: Vec<Waker> = states.iter().map(|state| state.waker()).collect();
        let first_group_key = keys[0];
        for key in keys.iter().rev() {
            if *key != first_group_key {
                assert!(arena.remove(*key));
            }
        }
        // Upper groups are released, their values gone with wakers alive.
        assert!(arena.groups() < groups, "no group was released");
        drop(arena);
        for waker in &kept {
            waker.wake_by_ref();
        }
        drop(kept);
        drop((task, states));
    });
    assert_eq!(bytes.change, 0, "bytes left behind");
}

/// An arena of 9 slots (its drop looks at its entries' pairs four at a time, then the one
/// left) goes while clones of the wakers it lent are alive, in every slot, and in two slots of
/// one turn of four at once: the table stays, holding those wakers' entries, until the last
/// waker goes.
#[test]
fn wakers_kept_in_any_slot_keep_the_table_past_the_arena() {
    let sets: Vec<Vec<usize>> = (0..9).map(|slot| vec![slot]).chain([vec![1, 2]]).collect();
    for slots in sets {
        // Made outside the count: only the arena's bytes are measured.
        let mut kept = Vec::with_capacity(slots.len());
        let ((), bytes) = measure_bytes(|| {
            let mut arena = Arena::new(9);
            let keys: Vec<Key> = (0..9)
                .map(|_| arena.insert(pending::<()>()).unwrap())
                .collect();
            let mut cx = Context::from_waker(Waker::noop());
            let polled = arena.poll_next(&mut cx, |key, fut, cx| {
                let slot = keys
                    .iter()
                    .position(|&k| k == key)
                    .expect("a key of the arena");
                if slots.contains(&slot) {
                    kept.push(cx.waker().clone());
                }
                Step::of_future(fut.poll(cx))
            });
            assert!(polled.is_pending());
            assert_eq!(kept.len(), slots.len(), "every value was polled");
            drop(arena);
        });
        if bytes.change <= 0 {
            // The table is freed already: the kept wakers must not be touched.
            core::mem::forget(kept);
            panic!("the arena freed its table with wakers of slots {slots:?} alive");
        }
        let ((), after) = measure_bytes(|| {
            for waker in kept.drain(..) {
                waker.wake();
            }
        });
        assert_eq!(
            after.change, -bytes.change,
            "the last waker of slots {slots:?} freed what the arena left"
        );
    }
}
