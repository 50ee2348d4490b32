//! Values moved out and reached mutably, for `Unpin` values: `remove_entry` and `replace` give the
//! value back undropped (and the map gives no output of it any more), `iter_mut`,
//! `values_mut` and `values` reach every value once, and `capacity` says how many values fit
//! before an insert allocates.

mod support;

use std::future::{self, Pending, pending};
use std::task::Poll;

use futures_channel::oneshot;
use futures_core::FusedStream;
use pinfold_testkit::future::poll_once as poll_future;
use support::{MapUnderTest, Tracked, both, counting_waker, drain, poll_once, poll_with};

both!(
    remove_entry_gives_the_key_and_value_back_undropped_and_no_output_of_it_comes,
    remove_entry_of_a_missing_key_gives_none_and_changes_nothing,
    replace_gives_the_old_value_back_undropped_and_the_new_one_is_polled,
    replace_under_a_free_key_adds_the_value_and_gives_none,
    iter_mut_and_values_mut_reach_every_value_once,
    values_gives_every_value_once,
    capacity_is_zero_when_new_and_at_least_what_was_asked_or_held,
);

fn remove_entry_gives_the_key_and_value_back_undropped_and_no_output_of_it_comes<
    M: MapUnderTest,
>() {
    let (sender, receiver) = oneshot::channel::<u32>();
    let (receiver, counts) = Tracked::new(1, receiver);
    let (_other_sender, other) = oneshot::channel::<u32>();
    let (other, other_counts) = Tracked::new(2, other);
    let mut map = M::new();
    M::insert(&mut map, 1, receiver);
    M::insert(&mut map, 2, other);
    let (waker, _) = counting_waker();
    assert_eq!(poll_with(&mut map, &waker), Poll::Pending);

    let (key, mut receiver) = M::remove_entry(&mut map, &1).expect("the value under 1");
    assert_eq!(key, 1);
    assert_eq!(counts.drops(), 0, "remove_entry dropped the value");
    assert!(!M::contains_key(&map, &1));
    assert_eq!(M::keys(&map), (1, vec![2]));
    assert!(M::remove_entry(&mut map, &1).is_none(), "taken twice");

    // The value still holds the waker the map polled it with: its wake polls nothing there.
    sender.send(7).unwrap();
    assert_eq!(poll_with(&mut map, &waker), Poll::Pending);
    assert_eq!((counts.polls(), other_counts.polls()), (1, 1));
    assert_eq!(poll_future(&mut receiver), Poll::Ready(Ok(7)));
    drop(receiver);
    assert_eq!(counts.drops(), 1);
    assert!(M::remove(&mut map, &2));
    assert_eq!(poll_with(&mut map, &waker), Poll::Ready(None));
    assert!(map.is_terminated());
}

fn remove_entry_of_a_missing_key_gives_none_and_changes_nothing<M: MapUnderTest>() {
    let mut map = M::new();
    M::insert(&mut map, 1, future::ready(1));
    assert!(M::remove_entry(&mut map, &2).is_none());
    assert_eq!(M::keys(&map), (1, vec![1]));
    assert_eq!(drain(&mut map), [(1, 1)]);
}

fn replace_gives_the_old_value_back_undropped_and_the_new_one_is_polled<M: MapUnderTest>() {
    let (old_sender, old) = oneshot::channel::<u32>();
    let (new_sender, new) = oneshot::channel::<u32>();
    let (old, old_counts) = Tracked::new(1, old);
    let (new, _) = Tracked::new(2, new);
    let mut map = M::new();
    assert!(M::replace(&mut map, "job", old).is_none());
    assert_eq!(poll_once(&mut map), Poll::Pending);

    let mut old = M::replace(&mut map, "job", new).expect("the replaced value");
    assert_eq!(old.id(), 1);
    assert_eq!(old_counts.drops(), 0, "replace dropped the old value");
    assert_eq!(M::len(&map), 1);

    old_sender.send(1).unwrap();
    assert_eq!(
        poll_once(&mut map),
        Poll::Pending,
        "the old value's output came"
    );
    new_sender.send(2).unwrap();
    assert_eq!(drain(&mut map), [("job", Ok(2))]);
    assert_eq!(poll_future(&mut old), Poll::Ready(Ok(1)));
}

fn replace_under_a_free_key_adds_the_value_and_gives_none<M: MapUnderTest>() {
    let mut map = M::new();
    assert_eq!(poll_once(&mut map), Poll::Ready(None));
    assert!(map.is_terminated());
    assert!(M::replace(&mut map, 1, future::ready(10)).is_none());
    assert!(!map.is_terminated(), "replace left the map terminated");
    assert!(M::replace(&mut map, 2, future::ready(20)).is_none());
    let mut outputs = drain(&mut map);
    outputs.sort_unstable();
    assert_eq!(outputs, [(1, 10), (2, 20)]);
}

fn iter_mut_and_values_mut_reach_every_value_once<M: MapUnderTest>() {
    let mut map = M::new();
    let mut senders = Vec::new();
    for key in 0..5u32 {
        let (sender, receiver) = oneshot::channel::<u32>();
        M::insert(&mut map, key, receiver);
        senders.push(sender);
    }
    let (len, given, values_len) = M::iter_mut(&mut map);
    assert_eq!((len, values_len), (5, 5));
    assert_eq!(
        given.iter().map(|(key, _)| **key).collect::<Vec<_>>(),
        [0, 1, 2, 3, 4]
    );
    // Closing the odd keys' receivers through the mutable references: their senders see it.
    for (key, receiver) in given {
        if key % 2 == 1 {
            receiver.close();
        }
    }
    let closed: Vec<bool> = senders.iter().map(oneshot::Sender::is_canceled).collect();
    assert_eq!(closed, [false, true, false, true, false]);
}

fn values_gives_every_value_once<M: MapUnderTest>() {
    let mut map = M::new();
    for key in 0..4u32 {
        M::insert(&mut map, key, future::ready(key * 10));
    }
    let (len, values) = M::values(&map);
    assert_eq!(len, 4);
    let mut outputs: Vec<u32> = values
        .into_iter()
        .map(|ready| ready.clone().into_inner())
        .collect();
    outputs.sort_unstable();
    assert_eq!(outputs, [0, 10, 20, 30]);
}

fn capacity_is_zero_when_new_and_at_least_what_was_asked_or_held<M: MapUnderTest>() {
    let map = M::new::<u32, Pending<()>>();
    assert_eq!(M::capacity(&map), 0);
    let map = M::with_capacity::<u32, Pending<()>>(100);
    assert!(M::capacity(&map) >= 100);

    let mut map = M::new();
    for key in 0..300u32 {
        M::insert(&mut map, key, pending::<()>());
        assert!(M::capacity(&map) >= M::len(&map));
    }
    for key in 0..300u32 {
        assert!(M::remove(&mut map, &key));
        assert!(M::capacity(&map) >= M::len(&map));
    }
}
