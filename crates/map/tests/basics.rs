//! The maps as streams and containers: termination, collecting and extending, `keys`, `len`,
//! `get`, `get_pin_mut`, iteration, lookups by a borrowed key, `clear`, drop, size hints and
//! `Debug`.

mod support;

use std::future::{Future, Ready, pending, ready};
use std::task::{Context, Poll};

use futures_channel::oneshot;
use futures_core::{FusedStream, Stream};
use futures_util::StreamExt;
use pinfold_map::KeyedMap;
use support::{
    FutureMap, MapUnderTest, Probe, StreamMap, Tracked, both, counting_waker, drain, poll_once,
    probes, settle,
};

both!(
    is_terminated_after_ready_none_until_an_insert_or_clear,
    collect_and_extend_insert_every_pair_a_later_duplicate_replacing_the_earlier,
    an_empty_map_has_no_keys_and_ends_at_once,
    keys_and_len_follow_inserts_and_outputs,
    len_follows_each_output_and_insert,
    get_and_get_pin_mut_give_the_value_under_a_key,
    lookups_take_a_borrowed_form_of_the_key,
    iter_and_iter_pin_mut_give_every_value_with_its_key,
    clear_drops_every_value_and_the_map_goes_on,
    dropping_the_map_drops_every_value,
    a_map_grows_past_the_capacity_it_was_made_with,
    size_hint_counts_the_outputs_to_come,
    debug_names_the_type_and_shows_the_keys,
);

fn is_terminated_after_ready_none_until_an_insert_or_clear<M: MapUnderTest>() {
    let mut map = M::new();
    assert!(!map.is_terminated());
    assert_eq!(poll_once(&mut map), Poll::Ready(None));
    assert!(map.is_terminated());

    M::insert(&mut map, 1, Probe::new(1).0);
    assert!(!map.is_terminated(), "an insert left the map terminated");
    assert_eq!(poll_once(&mut map), Poll::Pending);
    assert!(!map.is_terminated(), "terminated while Pending");
    assert!(M::remove(&mut map, &1));
    assert!(!map.is_terminated(), "terminated before Ready(None)");
    assert_eq!(poll_once(&mut map), Poll::Ready(None));
    assert!(map.is_terminated());

    M::insert(&mut map, 2, Probe::new(2).0);
    assert_eq!(poll_once(&mut map), Poll::Pending);
    M::clear(&mut map);
    assert_eq!(poll_once(&mut map), Poll::Ready(None));
    assert!(map.is_terminated());
    M::clear(&mut map);
    assert!(!map.is_terminated(), "clear left the map terminated");
}

fn collect_and_extend_insert_every_pair_a_later_duplicate_replacing_the_earlier<M: MapUnderTest>() {
    let tracked = |id| Tracked::new(id, ready(id));
    let (a, a_counts) = tracked(0);
    let (b, b_counts) = tracked(1);
    let (a_again, a_again_counts) = tracked(2);
    let mut map: M::Map<&str, Tracked<Ready<usize>>> = [("a", a), ("b", b), ("a", a_again)]
        .into_iter()
        .map(|(key, future)| (key, M::value(future)))
        .collect();
    assert_eq!(M::keys(&map), (2, vec!["a", "b"]));
    assert_eq!(a_counts.drops(), 1, "the earlier duplicate was not dropped");

    let (c, _) = tracked(3);
    let (b_again, _) = tracked(4);
    map.extend([("c", M::value(c)), ("b", M::value(b_again))]);
    assert_eq!(M::keys(&map), (3, vec!["a", "b", "c"]));
    assert_eq!(b_counts.drops(), 1, "the earlier duplicate was not dropped");
    assert_eq!((a_counts.polls(), b_counts.polls()), (0, 0));

    let mut outputs = drain(&mut map);
    outputs.sort_unstable();
    assert_eq!(outputs, [("a", 2), ("b", 4), ("c", 3)]);
    assert_eq!(a_again_counts.drops(), 1);
}

/// Ported from tokio-stream (`tests/stream_stream_map.rs`, `empty`, `new_capacity_zero` and
/// `with_capacity`).
fn an_empty_map_has_no_keys_and_ends_at_once<M: MapUnderTest>() {
    for mut map in [
        M::new::<&str, Ready<()>>(),
        M::with_capacity(10),
        Default::default(),
    ] {
        assert_eq!(M::len(&map), 0);
        assert!(M::is_empty(&map));
        assert_eq!(M::keys(&map), (0, Vec::new()));
        assert_eq!(poll_once(&mut map), Poll::Ready(None));
        assert_eq!(poll_once(&mut map), Poll::Ready(None));
        assert!(!M::remove(&mut map, "foo"));
    }
}

/// Ported from tokio-util (`tests/task_join_map.rs`, `test_keys`), and from tokio-stream
/// (`tests/stream_stream_map.rs`, `iter_keys`).
fn keys_and_len_follow_inserts_and_outputs<M: MapUnderTest>() {
    let mut map = M::new();
    assert_eq!(M::len(&map), 0);
    M::insert(&mut map, 1, ready(()));
    assert_eq!(M::len(&map), 1);
    M::insert(&mut map, 2, ready(()));
    assert_eq!(M::len(&map), 2);
    assert!(!M::is_empty(&map));
    assert_eq!(M::keys(&map), (2, vec![1, 2]));
    let mut outputs = drain(&mut map);
    outputs.sort_unstable();
    assert_eq!(outputs, [(1, ()), (2, ())]);
    assert_eq!(M::len(&map), 0);
    assert!(M::is_empty(&map));
    assert_eq!(M::keys(&map), (0, Vec::new()));
}

/// Ported from tokio-util (`tests/task_join_map.rs`, `alternating`): an insert after each
/// output adds one to `len`; the value that gave the output has left at once (a future), or
/// is still there (a stream, which has yet to end: it leaves at a later poll).
fn len_follows_each_output_and_insert<M: MapUnderTest>() {
    futures_executor::block_on(async {
        let mut map = M::new();
        M::insert(&mut map, 100, ready(()));
        M::insert(&mut map, 200, ready(()));
        assert_eq!(M::len(&map), 2);
        let mut outputs = Vec::new();
        for key in 0..16 {
            let (done, ()) = map.next().await.unwrap();
            outputs.push(done);
            assert_eq!(M::contains_key(&map, &done), !M::KEY_LEAVES_WITH_OUTPUT);
            let len = M::len(&map);
            if M::KEY_LEAVES_WITH_OUTPUT {
                assert_eq!(len, 1);
            }
            M::insert(&mut map, key, ready(()));
            assert_eq!(M::len(&map), len + 1);
        }
        outputs.extend(map.map(|(key, ())| key).collect::<Vec<_>>().await);
        outputs.sort_unstable();
        let mut expected: Vec<usize> = (0..16).chain([100, 200]).collect();
        expected.sort_unstable();
        assert_eq!(outputs, expected);
    });
}

fn get_and_get_pin_mut_give_the_value_under_a_key<M: MapUnderTest>() {
    let mut map = M::new();
    let (probes, states) = probes(3);
    for (id, probe) in probes.into_iter().enumerate() {
        M::insert(&mut map, 10 + id, probe);
    }
    assert_eq!(M::get(&map, &11).map(Probe::id), Some(1));
    assert!(M::get(&map, &13).is_none());
    assert!(M::get_pin_mut(&mut map, &13).is_none());

    // A poll through `get_pin_mut` polls the value where the map keeps it (a probe panics if
    // a later poll finds it moved), and the map's own polls go on from there.
    let (waker, _) = counting_waker();
    let pinned = M::get_pin_mut(&mut map, &12).unwrap();
    assert_eq!(pinned.id(), 2);
    assert!(pinned.poll(&mut Context::from_waker(&waker)).is_pending());
    assert_eq!(states[2].polls(), 1);
    assert!(settle(&mut map).is_empty());
    assert_eq!(states[2].polls(), 2);
    states[2].finish();
    assert_eq!(settle(&mut map), [(12, 2)]);
    assert!(
        M::get(&map, &12).is_none(),
        "a finished value is still there"
    );
}

/// Ported from tokio-stream (`tests/stream_stream_map.rs`, `contains_key_borrow`), for each
/// lookup: `String` keys looked up by `&str`.
fn lookups_take_a_borrowed_form_of_the_key<M: MapUnderTest>() {
    let mut map = M::new();
    let (probes, states) = probes(2);
    for (key, probe) in ["foo", "bar"].into_iter().zip(probes) {
        M::insert(&mut map, key.to_string(), probe);
    }
    assert!(M::contains_key(&map, "foo"));
    assert!(!M::contains_key(&map, "baz"));
    assert_eq!(M::get(&map, "bar").map(Probe::id), Some(1));
    assert_eq!(
        M::get_pin_mut(&mut map, "foo").map(|probe| probe.id()),
        Some(0)
    );
    assert!(M::remove(&mut map, "foo"));
    assert_eq!(states[0].drops(), 1);
    assert!(!M::remove(&mut map, "foo"));
    assert_eq!(M::keys(&map), (1, vec!["bar".to_string()]));
}

/// Ported from tokio-stream (`tests/stream_stream_map.rs`, `iter_values` and
/// `iter_values_mut`): the iterators give each value with its key and announce their length;
/// a value that left is no longer among them.
fn iter_and_iter_pin_mut_give_every_value_with_its_key<M: MapUnderTest>() {
    let mut map = M::new();
    let (probes, states) = probes(4);
    for (id, probe) in probes.into_iter().enumerate() {
        M::insert(&mut map, id * 10, probe);
    }
    let ids = |given: &[(&usize, usize)]| -> Vec<(usize, usize)> {
        given.iter().map(|&(&key, id)| (key, id)).collect()
    };
    let (len, given) = M::iter(&map);
    let given: Vec<_> = given
        .into_iter()
        .map(|(key, probe)| (key, probe.id()))
        .collect();
    assert_eq!(
        (len, ids(&given)),
        (4, vec![(0, 0), (10, 1), (20, 2), (30, 3)])
    );

    assert!(settle(&mut map).is_empty());
    states[1].finish();
    assert_eq!(settle(&mut map), [(10, 1)]);
    assert!(M::remove(&mut map, &30));
    let (len, given) = M::iter_pin_mut(&mut map);
    let given: Vec<_> = given
        .into_iter()
        .map(|(key, probe)| (key, probe.id()))
        .collect();
    assert_eq!((len, ids(&given)), (2, vec![(0, 0), (20, 2)]));
    assert_eq!(M::iter(&map).0, 2);
}

/// Ported from tokio-stream (`tests/stream_stream_map.rs`, `clear`), with drop counts.
fn clear_drops_every_value_and_the_map_goes_on<M: MapUnderTest>() {
    let mut map = M::new();
    let (probes, states) = probes(3);
    for (id, probe) in probes.into_iter().enumerate() {
        M::insert(&mut map, id, probe);
    }
    assert!(settle(&mut map).is_empty());
    states[0].finish();
    assert_eq!(poll_once(&mut map), Poll::Ready(Some((0, 0))));
    M::clear(&mut map);
    assert!(states.iter().all(|state| state.drops() == 1));
    assert!(M::is_empty(&map));
    assert_eq!(M::keys(&map), (0, Vec::new()));
    assert_eq!(poll_once(&mut map), Poll::Ready(None));

    let (probe, state) = Probe::new(7);
    assert!(
        !M::insert(&mut map, 1, probe),
        "a cleared key is still taken"
    );
    assert!(settle(&mut map).is_empty());
    state.finish();
    assert_eq!(drain(&mut map), [(1, 7)]);
}

/// Ported from tokio-util (`tests/task_join_map.rs`, `test_abort_on_drop`): values that never
/// finish, each holding a channel's sender, are dropped with the map.
fn dropping_the_map_drops_every_value<M: MapUnderTest>() {
    let mut map = M::new();
    let mut receivers = Vec::new();
    for key in 0..16 {
        let (sender, receiver) = oneshot::channel::<()>();
        receivers.push(receiver);
        M::insert(&mut map, key, async move {
            pending::<()>().await;
            drop(sender);
        });
    }
    assert!(settle(&mut map).is_empty());
    drop(map);
    for mut receiver in receivers {
        assert!(receiver.try_recv().is_err(), "a sender outlived the map");
    }
}

/// The capacity a map is made with is room allocated ahead, not a bound.
fn a_map_grows_past_the_capacity_it_was_made_with<M: MapUnderTest>() {
    let n = if cfg!(miri) { 40 } else { 500 };
    let mut map = M::with_capacity(2);
    let (probes, states) = probes(n);
    for (id, probe) in probes.into_iter().enumerate() {
        M::insert(&mut map, id, probe);
    }
    assert_eq!(M::len(&map), n);
    assert!(settle(&mut map).is_empty());
    states.iter().for_each(|state| state.finish());
    let mut outputs = drain(&mut map);
    outputs.sort_unstable();
    assert_eq!(outputs, (0..n).map(|id| (id, id)).collect::<Vec<_>>());
}

fn size_hint_counts_the_outputs_to_come<M: MapUnderTest>() {
    let mut map = M::new();
    assert_eq!(map.size_hint(), (0, Some(0)));
    for key in 0..3 {
        M::insert(&mut map, key, ready(key));
    }
    assert_eq!(map.size_hint(), (3, Some(3)));
    let Poll::Ready(Some((done, _))) = poll_once(&mut map) else {
        panic!("no output from ready futures");
    };
    assert_eq!(map.size_hint(), (2, Some(2)));
    let waiting = (done + 1) % 3;
    assert!(M::remove(&mut map, &waiting));
    assert_eq!(map.size_hint(), (1, Some(1)));
}

fn debug_names_the_type_and_shows_the_keys<M: MapUnderTest>() {
    let mut map = M::new();
    M::insert(&mut map, "first", ready(1));
    M::insert(&mut map, "second", ready(2));
    let debug = M::debug(&map);
    assert!(debug.starts_with(&format!("{} {{", M::NAME)), "{debug}");
    assert!(debug.contains("len: 2"), "{debug}");
    assert!(debug.contains("\"first\""), "{debug}");
    assert!(debug.contains("\"second\""), "{debug}");
}

/// A value that never gives an output, carrying the id of the key it is inserted under: a
/// future for a `FutureMap`, a stream for a `StreamMap`.
#[derive(Debug)]
struct Id(u32);

impl Future for Id {
    type Output = ();

    fn poll(self: std::pin::Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
        Poll::Pending
    }
}

impl Stream for Id {
    type Item = ();

    fn poll_next(self: std::pin::Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<()>> {
        Poll::Pending
    }
}

/// Fills `map` with keys whose order in the map is none of their insertion's (values removed
/// and others inserted in their slots), then checks that `keys`, `values` and `iter` go in one
/// order: `keys().zip(values())` pairs each key with its own value.
fn check_keys_values_and_iter_go_in_one_order<P>(map: &mut KeyedMap<u32, Id, P>) {
    let n = if cfg!(miri) { 24 } else { 200 };
    for id in 0..n {
        map.insert(id, Id(id));
    }
    for id in (0..n).step_by(3) {
        map.remove(&id);
    }
    for id in (n..n + n / 2).rev() {
        map.insert(id, Id(id));
    }
    let paired: Vec<(u32, u32)> = map
        .keys()
        .zip(map.values())
        .map(|(k, v)| (*k, v.0))
        .collect();
    assert_eq!(paired.len(), map.len());
    let mismatched: Vec<&(u32, u32)> = paired.iter().filter(|(k, v)| k != v).collect();
    assert!(
        mismatched.is_empty(),
        "keys and values out of step: {mismatched:?}"
    );
    let from_iter: Vec<(u32, u32)> = map.iter().map(|(k, v)| (*k, v.0)).collect();
    assert_eq!(paired, from_iter);
    let from_iter_mut: Vec<(u32, u32)> = map.iter_mut().map(|(k, v)| (*k, v.0)).collect();
    assert_eq!(paired, from_iter_mut);
}

#[test]
fn keys_values_and_iter_of_a_future_map_go_in_one_order() {
    check_keys_values_and_iter_go_in_one_order(&mut FutureMap::new());
}

#[test]
fn keys_values_and_iter_of_a_stream_map_go_in_one_order() {
    check_keys_values_and_iter_go_in_one_order(&mut StreamMap::new());
}
