//! Panics: a value whose poll panics is dropped and its key removed, the panic reaching the
//! caller of `poll_next`; the map goes on with the other values. (A stream that panics after
//! giving items: `streams.rs`.)

mod support;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::task::Poll;

use futures_channel::oneshot;
use futures_core::FusedStream;
use support::{
    MapUnderTest, TRACKED_PANIC, Tracked, XorShift, both, counting_waker, panic_message, poll_with,
    settle,
};

both!(a_panicking_value_leaves_with_its_key_and_the_others_finish);

/// Values waiting on channels, each sent to in a shuffled order and the map settled after
/// each send; the middle one panics in its second poll, the one its send wakes.
fn a_panicking_value_leaves_with_its_key_and_the_others_finish<M: MapUnderTest>() {
    let n = if cfg!(miri) { 5 } else { 32 };
    let panicking = n / 2;
    let mut map = M::new();
    let mut senders = Vec::new();
    let mut counts = Vec::new();
    for id in 0..n {
        let (sender, receiver) = oneshot::channel();
        let (value, count) = Tracked::new(id, receiver);
        let value = if id == panicking {
            value.panicking_at(2)
        } else {
            value
        };
        M::insert(&mut map, id, value);
        senders.push(Some(sender));
        counts.push(count);
    }
    assert!(settle(&mut map).is_empty());

    let (task, wakes) = counting_waker();
    let mut outputs = Vec::new();
    let mut panics = 0;
    for id in XorShift::new(3).permutation(n) {
        senders[id].take().unwrap().send(id).unwrap();
        // Every other value is settled: only the woken one can change the map.
        let len = M::len(&map);
        loop {
            let before = wakes.count();
            match catch_unwind(AssertUnwindSafe(|| poll_with(&mut map, &task))) {
                Ok(Poll::Ready(Some((key, out)))) => outputs.push((key, out.unwrap())),
                Ok(Poll::Ready(None)) => break,
                Ok(Poll::Pending) if wakes.count() == before => break,
                Ok(Poll::Pending) => {}
                Err(panic) => {
                    assert_eq!(panic_message(&*panic), TRACKED_PANIC);
                    panics += 1;
                    assert_eq!(counts[id].drops(), 1, "the panicking value was not dropped");
                    assert!(!M::contains_key(&map, &id), "the panicking value's key");
                    assert!(M::get(&map, &id).is_none());
                    assert_eq!(M::len(&map), len - 1, "len after the panic");
                    assert!(!M::keys(&map).1.contains(&id));
                }
            }
        }
    }
    assert_eq!(panics, 1);
    outputs.sort_unstable();
    let expected: Vec<_> = (0..n)
        .filter(|&id| id != panicking)
        .map(|id| (id, id))
        .collect();
    assert_eq!(outputs, expected);
    assert!(map.is_terminated());
    assert!(counts.iter().all(|count| count.drops() == 1));
}
