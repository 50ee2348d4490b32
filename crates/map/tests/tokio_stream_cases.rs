//! Behaviour a user of tokio-stream's `StreamMap` relies on, checked on pinfold's `StreamMap`.
//! Each case is ported from tokio-stream's `tests/stream_stream_map.rs` (the case of the same
//! name there); where tokio-stream's method returns the stream (`insert`, `remove`), the case
//! calls `replace` and `remove_entry`, their counterparts here for `Unpin` streams.

use std::future::poll_fn;
use std::task::{Context, Poll};

use futures_channel::mpsc;
use futures_core::Stream;
use futures_executor::block_on;
use futures_util::stream::{self, BoxStream, StreamExt};
use pinfold_map::StreamMap;
use pinfold_testkit::stream::poll_with;
use pinfold_testkit::waker::counting_waker;

type UsizeStream = BoxStream<'static, usize>;

/// A stream of `items`, boxed.
fn items(items: &[usize]) -> UsizeStream {
    stream::iter(items.to_vec()).boxed()
}

/// Ported from tokio-stream: `insert_remove`.
#[test]
fn insert_remove() {
    let (waker, wakes) = counting_waker();
    let mut map = StreamMap::new();
    let (tx, rx) = mpsc::unbounded::<i32>();
    assert_eq!(poll_with(&mut map, &waker), Poll::Ready(None));

    assert!(map.replace("foo", rx).is_none());
    let (_, rx) = map.remove_entry("foo").unwrap();
    tx.unbounded_send(1).unwrap();
    assert_eq!(wakes.count(), 0, "a stream taken out woke the map");
    assert_eq!(poll_with(&mut map, &waker), Poll::Ready(None));

    assert!(map.replace("bar", rx).is_none());
    assert_eq!(poll_with(&mut map, &waker), Poll::Ready(Some(("bar", 1))));
    assert!(map.remove_entry("bar").is_some());
    assert_eq!(poll_with(&mut map, &waker), Poll::Ready(None));
    assert!(map.is_empty());
    assert_eq!(map.len(), 0);
}

/// Ported from tokio-stream: `replace`.
#[test]
fn replace() {
    let (waker, wakes) = counting_waker();
    let mut map = StreamMap::new();
    let (tx1, rx1) = mpsc::unbounded::<i32>();
    let (tx2, rx2) = mpsc::unbounded::<i32>();
    assert!(map.replace("foo", rx1).is_none());
    assert_eq!(poll_with(&mut map, &waker), Poll::Pending);

    let _rx1 = map.replace("foo", rx2).unwrap();
    assert_eq!(poll_with(&mut map, &waker), Poll::Pending);
    tx1.unbounded_send(1).unwrap();
    assert_eq!(poll_with(&mut map, &waker), Poll::Pending);

    let before = wakes.count();
    tx2.unbounded_send(2).unwrap();
    assert!(
        wakes.count() > before,
        "the new stream's item did not wake the map"
    );
    assert_eq!(poll_with(&mut map, &waker), Poll::Ready(Some(("foo", 2))));
}

/// Ported from tokio-stream: `new_capacity_zero`.
#[test]
fn new_capacity_zero() {
    let map = StreamMap::<&str, stream::Pending<()>>::new();
    assert_eq!(map.capacity(), 0);
    assert!(map.keys().next().is_none());
}

/// Ported from tokio-stream: `with_capacity`.
#[test]
fn with_capacity() {
    let map = StreamMap::<&str, stream::Pending<()>>::with_capacity(10);
    assert!(map.capacity() >= 10);
    assert!(map.keys().next().is_none());
}

/// Ported from tokio-stream: `iter_keys`.
#[test]
fn iter_keys() {
    let mut map = StreamMap::new();
    map.insert("a", stream::pending::<i32>());
    map.insert("b", stream::pending());
    map.insert("c", stream::pending());
    let mut keys: Vec<&&str> = map.keys().collect();
    keys.sort_unstable();
    assert_eq!(keys, [&"a", &"b", &"c"]);
}

/// Ported from tokio-stream: `iter_values`.
#[test]
fn iter_values() {
    let mut map = StreamMap::new();
    map.insert("a", stream::iter(vec![1]));
    map.insert("b", stream::iter(vec![1, 2]));
    map.insert("c", stream::iter(vec![1, 2, 3]));
    let mut hints: Vec<usize> = map.values().map(|s| s.size_hint().0).collect();
    hints.sort_unstable();
    assert_eq!(hints, [1, 2, 3]);
}

/// Ported from tokio-stream: `iter_values_mut`.
#[test]
fn iter_values_mut() {
    let mut map = StreamMap::new();
    map.insert("a", stream::iter(vec![1]));
    map.insert("b", stream::iter(vec![1, 2]));
    map.insert("c", stream::iter(vec![1, 2, 3]));
    let mut hints: Vec<usize> = map.values_mut().map(|s: &mut _| s.size_hint().0).collect();
    hints.sort_unstable();
    assert_eq!(hints, [1, 2, 3]);
}

/// `poll_next_many` on `map`, with the current task's context.
async fn poll_many(
    map: &mut StreamMap<usize, UsizeStream>,
    buffer: &mut Vec<(usize, usize)>,
    limit: usize,
) -> usize {
    poll_fn(|cx: &mut Context<'_>| map.poll_next_many(cx, buffer, limit)).await
}

/// Ported from tokio-stream: `poll_next_many_zero` and `next_many_zero`.
#[test]
fn next_many_zero() {
    let mut map: StreamMap<usize, UsizeStream> = StreamMap::new();
    map.insert(0, stream::pending().boxed());
    assert_eq!(block_on(poll_many(&mut map, &mut vec![], 0)), 0);
    assert_eq!(block_on(map.next_many(&mut vec![], 0)), 0);
}

/// Ported from tokio-stream: `poll_next_many_empty` and `next_many_empty`.
#[test]
fn next_many_empty() {
    let mut map: StreamMap<usize, UsizeStream> = StreamMap::new();
    assert_eq!(block_on(poll_many(&mut map, &mut vec![], 1)), 0);
    assert_eq!(block_on(map.next_many(&mut vec![], 1)), 0);
}

/// Ported from tokio-stream: `poll_next_many_pending` and `next_many_pending`.
#[test]
fn next_many_pending() {
    let mut map: StreamMap<usize, UsizeStream> = StreamMap::new();
    map.insert(0, stream::pending().boxed());
    let (waker, _) = counting_waker();
    let mut cx = Context::from_waker(&waker);
    assert!(map.poll_next_many(&mut cx, &mut vec![], 1).is_pending());
    let mut buffer = vec![];
    let mut next = Box::pin(map.next_many(&mut buffer, 1));
    assert!(next.as_mut().poll(&mut cx).is_pending());
}

/// Ported from tokio-stream: `poll_next_many_not_enough` and `next_many_not_enough`.
#[test]
fn next_many_not_enough() {
    for by_future in [false, true] {
        let mut map: StreamMap<usize, UsizeStream> = StreamMap::new();
        map.insert(0, items(&[0]));
        map.insert(1, items(&[1]));
        let mut buffer = vec![];
        let n = block_on(async {
            if by_future {
                map.next_many(&mut buffer, 3).await
            } else {
                poll_many(&mut map, &mut buffer, 3).await
            }
        });
        assert_eq!(n, 2);
        assert_eq!(buffer.len(), 2);
        assert!(buffer.contains(&(0, 0)));
        assert!(buffer.contains(&(1, 1)));
    }
}

/// Ported from tokio-stream: `poll_next_many_enough` and `next_many_enough`.
#[test]
fn next_many_enough() {
    for by_future in [false, true] {
        let mut map: StreamMap<usize, UsizeStream> = StreamMap::new();
        map.insert(0, items(&[0]));
        map.insert(1, items(&[1]));
        let mut buffer = vec![];
        let n = block_on(async {
            if by_future {
                map.next_many(&mut buffer, 2).await
            } else {
                poll_many(&mut map, &mut buffer, 2).await
            }
        });
        assert_eq!(n, 2);
        assert!(buffer.contains(&(0, 0)));
        assert!(buffer.contains(&(1, 1)));
    }
}

/// Ported from tokio-stream: `poll_next_many_does_not_exceed_limit` and
/// `next_many_does_not_exceed_limit`.
#[test]
fn next_many_does_not_exceed_limit() {
    for by_future in [false, true] {
        let mut map: StreamMap<usize, UsizeStream> = StreamMap::new();
        map.insert(0, items(&[0]));
        map.insert(1, items(&[1]));
        let mut buffer = vec![];
        for expected_len in [1, 2] {
            let n = block_on(async {
                if by_future {
                    map.next_many(&mut buffer, 1).await
                } else {
                    poll_many(&mut map, &mut buffer, 1).await
                }
            });
            assert_eq!(n, 1);
            assert_eq!(buffer.len(), expected_len);
        }
        assert!(buffer.contains(&(0, 0)));
        assert!(buffer.contains(&(1, 1)));
    }
}

/// Ported from tokio-stream: `poll_next_many_correctly_loops_around` and
/// `next_many_correctly_loops_around`: each stream gives one item before any gives a second.
#[test]
fn next_many_correctly_loops_around() {
    for by_future in [false, true] {
        let mut map: StreamMap<usize, UsizeStream> = StreamMap::new();
        map.insert(0, items(&[0]));
        map.insert(1, items(&[0, 1]));
        map.insert(2, items(&[0, 1, 2]));
        let mut buffer = vec![];
        for (limit, expected) in [(3, vec![0, 0, 0]), (2, vec![1, 1]), (1, vec![2])] {
            let n = block_on(async {
                if by_future {
                    map.next_many(&mut buffer, limit).await
                } else {
                    poll_many(&mut map, &mut buffer, limit).await
                }
            });
            assert_eq!(n, limit);
            let got: Vec<usize> = buffer.drain(..).map(|(_, item)| item).collect();
            assert_eq!(got, expected);
        }
    }
}
