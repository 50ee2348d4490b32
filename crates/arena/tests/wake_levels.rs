//! Wakes reach the owner for ready sets of one, two and three levels (the first level's word is
//! found without the layout, the levels above with it), from the owner's thread and from
//! others, while armed and while the owner drains.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll, Waker};

use pinfold_arena::{Arena, GrowableArena, Key, Step, Storage};
use pinfold_testkit::waker::counting_waker;

/// One call; the values polled (each `Pending`).
fn call<S: Storage<usize>>(arena: &mut S, waker: &Waker) -> Vec<usize> {
    let mut cx = Context::from_waker(waker);
    let mut seen = Vec::new();
    let polled = arena.poll_next(&mut cx, |_, v, _| {
        seen.push(*v);
        Step::<()>::Pending
    });
    assert!(polled.is_pending());
    seen
}

fn check<S: Storage<usize>>(mut arena: S, n: usize, waker_of: impl Fn(&S, Key) -> Waker) {
    let keys: Vec<Key> = (0..n).map(|v| arena.insert(v).ok().unwrap()).collect();
    let (task, parent) = counting_waker();
    // The first call polls every value once (the budget is the count): maybe in several calls.
    let mut polled = 0;
    while polled < n {
        polled += call(&mut arena, &task).len();
    }
    assert!(call(&mut arena, &task).is_empty());
    // Every index pattern across the words' and levels' edges.
    let picks: Vec<usize> = (0..n)
        .filter(|i| i % 64 == 0 || i % 64 == 63 || i % 4096 == 4095 || i % 4032 == 0 || i % 97 == 5)
        .collect();
    for chunk in picks.chunks(7) {
        let before = parent.count();
        for &i in chunk {
            waker_of(&arena, keys[i]).wake();
        }
        assert_eq!(
            parent.count(),
            before + 1,
            "{n} values: the first wake notifies once"
        );
        let mut seen = call(&mut arena, &task);
        seen.sort_unstable();
        assert_eq!(seen, chunk, "{n} values");
    }
    // From other threads, all at once, each index woken by two threads.
    let wakers: Arc<Vec<Waker>> =
        Arc::new(picks.iter().map(|&i| waker_of(&arena, keys[i])).collect());
    let done = Arc::new(AtomicUsize::new(0));
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let (wakers, done) = (wakers.clone(), done.clone());
            std::thread::spawn(move || {
                for (j, w) in wakers.iter().enumerate() {
                    if j % 2 == t % 2 {
                        w.wake_by_ref();
                    }
                }
                done.fetch_add(1, Ordering::SeqCst);
            })
        })
        .collect();
    let mut seen = Vec::new();
    // The owner drains while the threads wake.
    while done.load(Ordering::SeqCst) < 4 {
        seen.extend(call(&mut arena, &task));
    }
    for t in threads {
        t.join().unwrap();
    }
    loop {
        let more = call(&mut arena, &task);
        if more.is_empty() {
            break;
        }
        seen.extend(more);
    }
    seen.sort_unstable();
    seen.dedup();
    assert_eq!(seen, picks, "{n} values: every woken value polled");
    assert!(call(&mut arena, &task).is_empty());
}

#[test]
fn wakes_reach_the_owner_at_every_ready_set_size() {
    // Under Miri, the one- and two-level sets only (the three-level ones take minutes there).
    let sizes: &[usize] = if cfg!(miri) {
        &[1, 2, 63, 64, 65, 128]
    } else {
        &[
            1, 2, 63, 64, 65, 127, 128, 4031, 4032, 4033, 4095, 4096, 4097, 8200, 262_145,
        ]
    };
    for &n in sizes {
        check(Arena::new(n), n, |a, k| a.waker(k).unwrap());
    }
}

#[test]
fn wakes_reach_the_owner_across_growable_groups() {
    let n = if cfg!(miri) { 100 } else { 20_000 };
    check(GrowableArena::new(), n, |a, k| a.waker(k).unwrap());
}

#[test]
fn a_bounded_arena_at_capacity_keeps_polling_after_a_panic() {
    // Poll order with panics around the budget: one value panics, the others are polled.
    let mut arena = Arena::new(40);
    for v in 0..40usize {
        arena.insert(v).unwrap();
    }
    let (task, _) = counting_waker();
    let mut cx = Context::from_waker(&task);
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _ = arena.poll_next(&mut cx, |_, v, _| {
            if *v == 3 {
                panic!("value 3");
            }
            Step::<()>::Pending
        });
    }));
    assert!(r.is_err());
    assert_eq!(arena.len(), 39);
    let mut seen = Vec::new();
    let polled = arena.poll_next(&mut cx, |_, v, _| {
        seen.push(*v);
        Step::<()>::Pending
    });
    assert!(matches!(polled, Poll::Pending));
    assert_eq!(seen, (4..40).collect::<Vec<_>>());
}
