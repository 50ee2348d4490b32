//! `StreamMap`'s streams: each stream's items come in its order under its key; a stream that
//! ends is dropped and its key gone by the time the next item (or the end) is returned; the
//! size hint is the sum of the streams'. (Cases that hold for `FutureMap` too run on both maps
//! in the other files.)

mod support;

use std::pin::Pin;
use std::task::{Context, Poll};

use futures_channel::mpsc;
use futures_core::Stream;
use futures_util::stream::{self, BoxStream};
use pinfold_map::StreamMap;
use support::{
    TRACKED_PANIC, Tracked, XorShift, assert_each_stream_whole_and_in_order, counting_waker, drain,
    panic_message, poll_once, poll_with, settle,
};

/// Channels fed from the test at random, a few sends between polls, and closed at random:
/// every item comes once, each stream's in its order, under its stream's key.
#[test]
fn items_of_each_stream_come_in_its_order_under_its_key() {
    let (streams, per_stream) = if cfg!(miri) { (6, 4) } else { (64, 30) };
    let mut rng = XorShift::new(11);
    let mut map = StreamMap::new();
    let mut senders: Vec<(usize, usize, mpsc::UnboundedSender<usize>)> = (0..streams)
        .map(|id| {
            let (sender, receiver) = mpsc::unbounded();
            assert!(!map.insert(id, receiver));
            (id, 0, sender)
        })
        .collect();
    let mut items = settle(&mut map);
    while !senders.is_empty() {
        for _ in 0..=rng.below(4) {
            if senders.is_empty() {
                break;
            }
            let pick = rng.below(senders.len());
            let (id, sent, sender) = &mut senders[pick];
            if *sent == per_stream {
                // Closes the channel: its stream ends.
                assert!(map.contains_key(id));
                senders.swap_remove(pick);
            } else {
                sender.unbounded_send(*sent).unwrap();
                *sent += 1;
            }
        }
        items.extend(settle(&mut map));
    }
    assert_each_stream_whole_and_in_order(&items, &vec![per_stream; streams]);
    assert!(map.is_empty());
}

/// Tracked streams of many lengths (some empty), checked as each call returns: a stream that
/// ended has been dropped, and its key is gone from `contains_key`, `keys`, `get` and
/// `remove`; the others are all there.
#[test]
fn an_ended_streams_key_is_gone_by_the_next_return() {
    let lengths = [3, 0, 1, 6, 2, 0, 4];
    let mut map = StreamMap::new();
    let counts: Vec<_> = lengths
        .iter()
        .enumerate()
        .map(|(id, &len)| {
            let (stream, counts) = Tracked::new(id, stream::iter(0..len));
            map.insert(id, stream);
            counts
        })
        .collect();
    let (task, wakes) = counting_waker();
    let mut items = Vec::new();
    loop {
        let before = wakes.count();
        let polled = poll_with(&mut map, &task);
        let mut keys: Vec<usize> = map.keys().copied().collect();
        keys.sort_unstable();
        let left: Vec<usize> = (0..lengths.len())
            .filter(|&id| !counts[id].ended())
            .collect();
        assert_eq!(keys, left, "keys after {} items", items.len());
        for (id, counts) in counts.iter().enumerate() {
            let ended = counts.ended();
            assert_eq!(counts.drops(), usize::from(ended), "stream {id}'s drops");
            assert_eq!(map.contains_key(&id), !ended, "stream {id}'s key");
            assert_eq!(map.get(&id).map(Tracked::id), (!ended).then_some(id));
            if ended {
                assert!(!map.remove(&id), "removed ended stream {id}");
            }
        }
        assert_eq!(map.len(), left.len());
        match polled {
            Poll::Ready(Some(item)) => items.push(item),
            Poll::Ready(None) => break,
            Poll::Pending => assert!(wakes.count() > before, "Pending with no wake"),
        }
    }
    assert_each_stream_whole_and_in_order(&items, &lengths);
}

/// Stream 1 panics in its third poll, after two items: the panic comes out of `poll_next`,
/// the stream is dropped and its key gone at once, and the other streams give all their
/// items.
#[test]
fn a_stream_panicking_after_its_items_leaves_with_its_key() {
    let mut map = StreamMap::new();
    let counts: Vec<_> = (0..3)
        .map(|id| {
            let (stream, counts) = Tracked::new(id, stream::iter(0..4));
            let stream = if id == 1 {
                stream.panicking_at(3)
            } else {
                stream
            };
            map.insert(id, stream);
            counts
        })
        .collect();
    let mut items = Vec::new();
    let mut panics = 0;
    loop {
        let before = map.len();
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| poll_once(&mut map))) {
            Ok(Poll::Ready(Some(item))) => items.push(item),
            Ok(Poll::Ready(None)) => break,
            Ok(Poll::Pending) => {}
            Err(panic) => {
                assert_eq!(panic_message(&*panic), TRACKED_PANIC);
                panics += 1;
                assert_eq!(counts[1].drops(), 1, "the panicking stream was not dropped");
                assert!(!map.contains_key(&1));
                assert_eq!(map.len(), before - 1);
            }
        }
    }
    assert_eq!(panics, 1);
    assert_each_stream_whole_and_in_order(&items, &[4, 2, 4]);
    assert!(counts.iter().all(|counts| counts.drops() == 1));
}

/// Ported from tokio-stream (`tests/stream_stream_map.rs`, `single_entry`): one channel's
/// items come under its key as they are sent, each send waking the task, and its close ends
/// the map.
#[test]
fn a_channels_items_come_under_its_key_as_they_are_sent() {
    let mut map = StreamMap::new();
    let (task, wakes) = counting_waker();
    assert_eq!(poll_with(&mut map, &task), Poll::Ready(None));
    let (sender, receiver) = mpsc::unbounded();
    assert!(!map.insert("foo", receiver));
    assert!(map.contains_key("foo"));
    assert!(!map.contains_key("bar"));
    assert_eq!(map.len(), 1);
    assert!(!map.is_empty());
    assert_eq!(poll_with(&mut map, &task), Poll::Pending);
    for item in [1, 2] {
        let before = wakes.count();
        sender.unbounded_send(item).unwrap();
        assert!(wakes.count() > before, "a send did not wake the task");
        assert_eq!(poll_with(&mut map, &task), Poll::Ready(Some(("foo", item))));
        assert_eq!(poll_with(&mut map, &task), Poll::Pending);
    }
    let before = wakes.count();
    drop(sender);
    assert!(wakes.count() > before, "the close did not wake the task");
    assert_eq!(poll_with(&mut map, &task), Poll::Ready(None));
}

/// Ported from tokio-stream (`tests/stream_stream_map.rs`, `multiple_entries`): two channels'
/// items come under their own keys, and the map ends only when both are closed.
#[test]
fn two_channels_items_come_under_their_keys_until_both_close() {
    let mut map = StreamMap::new();
    let (foo, foo_receiver) = mpsc::unbounded();
    let (bar, bar_receiver) = mpsc::unbounded();
    map.insert("foo", foo_receiver);
    map.insert("bar", bar_receiver);
    let (task, wakes) = counting_waker();
    assert_eq!(poll_with(&mut map, &task), Poll::Pending);
    foo.unbounded_send(1).unwrap();
    assert_eq!(poll_with(&mut map, &task), Poll::Ready(Some(("foo", 1))));
    assert_eq!(poll_with(&mut map, &task), Poll::Pending);
    bar.unbounded_send(2).unwrap();
    assert_eq!(poll_with(&mut map, &task), Poll::Ready(Some(("bar", 2))));
    assert_eq!(poll_with(&mut map, &task), Poll::Pending);

    foo.unbounded_send(3).unwrap();
    bar.unbounded_send(4).unwrap();
    let mut two = [(); 2].map(|()| match poll_with(&mut map, &task) {
        Poll::Ready(Some(item)) => item,
        other => panic!("{other:?} where an item was due"),
    });
    two.sort_unstable();
    assert_eq!(two, [("bar", 4), ("foo", 3)]);
    assert_eq!(poll_with(&mut map, &task), Poll::Pending);

    let before = wakes.count();
    drop(foo);
    assert!(wakes.count() > before);
    assert_eq!(poll_with(&mut map, &task), Poll::Pending);
    assert_eq!(map.keys().collect::<Vec<_>>(), [&"bar"]);
    drop(bar);
    assert_eq!(poll_with(&mut map, &task), Poll::Ready(None));
}

/// Ported from tokio-stream (`tests/stream_stream_map.rs`, `replace`): once a channel's stream
/// is replaced under its key, it is gone (its sender sees the channel closed), and the
/// replacing stream's items come under the key.
#[test]
fn a_replaced_channel_is_closed_and_the_new_ones_items_come() {
    let mut map = StreamMap::new();
    let (old, old_receiver) = mpsc::unbounded();
    let (new, new_receiver) = mpsc::unbounded();
    assert!(!map.insert("foo", old_receiver));
    assert_eq!(poll_once(&mut map), Poll::Pending);
    assert!(map.insert("foo", new_receiver));
    assert!(old.is_closed(), "the replaced stream was not dropped");
    assert!(old.unbounded_send(1).is_err());
    assert_eq!(poll_once(&mut map), Poll::Pending);
    new.unbounded_send(2).unwrap();
    assert_eq!(poll_once(&mut map), Poll::Ready(Some(("foo", 2))));
}

/// Ported from tokio-stream (`tests/stream_stream_map.rs`, `insert_remove`): a removed
/// channel's items never come, and the map is empty once it is removed.
#[test]
fn a_removed_channels_items_never_come() {
    let mut map = StreamMap::new();
    let (task, wakes) = counting_waker();
    assert_eq!(poll_with(&mut map, &task), Poll::Ready(None));
    let (sender, receiver) = mpsc::unbounded();
    assert!(!map.insert("foo", receiver));
    assert!(map.remove("foo"));
    assert!(
        sender.unbounded_send(1).is_err(),
        "the removed stream is alive"
    );
    assert_eq!(wakes.count(), 0);
    assert_eq!(poll_with(&mut map, &task), Poll::Ready(None));
    assert!(map.is_empty());
}

/// Ported from tokio-stream (`tests/stream_stream_map.rs`, `one_ready_many_none`): streams
/// that end at once do not keep the one ready item from the first call.
#[test]
fn streams_that_end_at_once_do_not_hide_a_ready_item() {
    for _ in 0..if cfg!(miri) { 3 } else { 100 } {
        let mut map: StreamMap<u32, BoxStream<'static, &str>> = StreamMap::new();
        map.insert(0, Box::pin(stream::empty()));
        map.insert(1, Box::pin(stream::empty()));
        map.insert(2, Box::pin(stream::once(async { "hello" })));
        map.insert(3, Box::pin(stream::pending()));
        assert_eq!(poll_once(&mut map), Poll::Ready(Some((2, "hello"))));
    }
}

/// Ported from tokio-stream (`tests/stream_stream_map.rs`, `size_hint_with_upper` and
/// `size_hint_without_upper`): the hint is the sum of the streams' hints, unbounded if one is.
#[test]
fn size_hint_is_the_sum_of_the_streams_hints() {
    let mut map: StreamMap<&str, BoxStream<'static, i32>> = StreamMap::new();
    assert_eq!(map.size_hint(), (0, Some(0)));
    map.insert("a", Box::pin(stream::iter(vec![1])));
    map.insert("b", Box::pin(stream::iter(vec![1, 2])));
    map.insert("c", Box::pin(stream::iter(vec![1, 2, 3])));
    assert_eq!(map.size_hint(), (6, Some(6)));
    assert!(matches!(poll_once(&mut map), Poll::Ready(Some(_))));
    assert_eq!(map.size_hint(), (5, Some(5)));
    // A stream that does not know its length: the default hint, `(0, None)`.
    map.insert("c", Box::pin(stream::poll_fn(|_| Poll::Pending)));
    assert_eq!(map.size_hint(), (2, None));
}

/// A stream whose hint is as large as can be, and that must never be polled.
struct Monster;

impl Stream for Monster {
    type Item = ();

    fn poll_next(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<()>> {
        panic!("the monster was polled");
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (usize::MAX, Some(usize::MAX))
    }
}

/// Ported from tokio-stream (`tests/stream_stream_map.rs`, `size_hint_overflow`): the sum
/// saturates its lower bound and gives up its upper bound rather than overflow.
#[test]
fn size_hint_saturates_rather_than_overflow() {
    let mut map = StreamMap::new();
    map.insert("a", Monster);
    map.insert("b", Monster);
    assert_eq!(map.size_hint(), (usize::MAX, None));
}

/// Draining a map whose streams end at different times gives every item; ported from
/// tokio-stream (`tests/stream_stream_map.rs`, `iter_values`, with the items in place of the
/// hints).
#[test]
fn streams_of_many_lengths_give_all_their_items() {
    let mut map = StreamMap::new();
    map.insert("a", stream::iter(vec![1]));
    map.insert("b", stream::iter(vec![1, 2]));
    map.insert("c", stream::iter(vec![1, 2, 3]));
    let mut hints: Vec<usize> = map.iter().map(|(_, stream)| stream.size_hint().0).collect();
    hints.sort_unstable();
    assert_eq!(hints, [1, 2, 3]);
    let mut items = drain(&mut map);
    items.sort_unstable();
    assert_eq!(
        items,
        [("a", 1), ("b", 1), ("b", 2), ("c", 1), ("c", 2), ("c", 3)]
    );
}
