//! `poll_next_many` and `next_many`: every output ready now, up to the limit, appended with
//! its key; `Pending` while the map holds values and none is ready; 0 for a limit of 0 or an
//! empty map; and a `next_many` dropped before it is ready loses no output.

mod support;

use std::future::ready;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures_core::FusedStream;
use pinfold_testkit::future::poll_once as poll_future;
use support::{MapUnderTest, Probe, ProbeState, both, counting_waker, drain};

both!(
    poll_next_many_takes_the_outputs_ready_now_up_to_the_limit,
    poll_next_many_is_pending_until_an_output_is_ready_and_its_wake_comes,
    a_limit_of_zero_polls_nothing_and_gives_zero,
    an_empty_map_gives_zero_and_is_terminated,
    next_many_dropped_before_it_is_ready_loses_no_output,
);

/// `poll_next_many` with `waker`.
fn poll_many<M: MapUnderTest, F: std::future::Future>(
    map: &mut M::Map<u32, F>,
    waker: &std::task::Waker,
    buffer: &mut Vec<(u32, F::Output)>,
    limit: usize,
) -> Poll<usize> {
    M::poll_next_many(map, &mut Context::from_waker(waker), buffer, limit)
}

fn poll_next_many_takes_the_outputs_ready_now_up_to_the_limit<M: MapUnderTest>() {
    let mut map = M::new();
    for key in 0..5u32 {
        M::insert(&mut map, key, ready(key * 10));
    }
    let (waker, _) = counting_waker();
    let mut buffer = vec![(99, 990)];
    assert_eq!(
        poll_many::<M, _>(&mut map, &waker, &mut buffer, 3),
        Poll::Ready(3)
    );
    assert_eq!(
        poll_many::<M, _>(&mut map, &waker, &mut buffer, 10),
        Poll::Ready(2)
    );
    // Appended after what the buffer held, in the order `poll_next` gives them.
    assert_eq!(
        buffer,
        [(99, 990), (0, 0), (1, 10), (2, 20), (3, 30), (4, 40)]
    );
    assert_eq!(
        poll_many::<M, _>(&mut map, &waker, &mut buffer, 10),
        Poll::Ready(0)
    );
    assert!(map.is_terminated());
}

fn poll_next_many_is_pending_until_an_output_is_ready_and_its_wake_comes<M: MapUnderTest>() {
    let (probes, states): (Vec<Probe>, Vec<Arc<ProbeState>>) = support::probes(3);
    let mut map = M::new();
    for (key, probe) in (0u32..).zip(probes) {
        M::insert(&mut map, key, probe);
    }
    let (waker, wakes) = counting_waker();
    let mut buffer = Vec::new();
    assert_eq!(
        poll_many::<M, _>(&mut map, &waker, &mut buffer, 8),
        Poll::Pending
    );
    assert!(buffer.is_empty());
    assert!(!map.is_terminated());

    states[2].finish();
    states[0].finish();
    assert!(wakes.count() > 0, "a ready value did not wake the map");
    let mut taken = 0;
    while taken < 2 {
        match poll_many::<M, _>(&mut map, &waker, &mut buffer, 8) {
            Poll::Ready(n) => {
                assert!(n > 0);
                taken += n;
            }
            Poll::Pending => {}
        }
    }
    assert_eq!(taken, 2);
    // Values woken together come in an order the map chooses among them.
    buffer.sort_unstable();
    assert_eq!(buffer, [(0, 0), (2, 2)]);
}

fn a_limit_of_zero_polls_nothing_and_gives_zero<M: MapUnderTest>() {
    let (probe, state) = Probe::new(0);
    let mut map = M::new();
    M::insert(&mut map, 0, probe);
    let (waker, _) = counting_waker();
    let mut buffer = Vec::new();
    assert_eq!(
        poll_many::<M, _>(&mut map, &waker, &mut buffer, 0),
        Poll::Ready(0)
    );
    assert!(!state.was_polled());
    assert!(!map.is_terminated(), "a limit of 0 ended the map");
    assert_eq!(M::len(&map), 1);
}

fn an_empty_map_gives_zero_and_is_terminated<M: MapUnderTest>() {
    let mut map = M::new::<u32, std::future::Ready<u32>>();
    let (waker, _) = counting_waker();
    let mut buffer = Vec::new();
    assert_eq!(
        poll_many::<M, _>(&mut map, &waker, &mut buffer, 4),
        Poll::Ready(0)
    );
    assert!(map.is_terminated());
    assert!(buffer.is_empty());
}

fn next_many_dropped_before_it_is_ready_loses_no_output<M: MapUnderTest>() {
    let (probes, states) = support::probes(2);
    let mut map = M::new();
    for (key, probe) in (0u32..).zip(probes) {
        M::insert(&mut map, key, probe);
    }
    let mut buffer = Vec::new();
    {
        let mut waiting = M::next_many(&mut map, &mut buffer, 8);
        assert_eq!(poll_future(&mut waiting), Poll::Pending);
    }
    assert!(buffer.is_empty());
    states[1].finish();
    // The output is still in the map, for the next call.
    let mut next = M::next_many(&mut map, &mut buffer, 8);
    assert_eq!(poll_future(&mut next), Poll::Ready(1));
    drop(next);
    assert_eq!(buffer, [(1, 1)]);
    states[0].finish();
    assert_eq!(drain(&mut map), [(0, 0)]);
}
