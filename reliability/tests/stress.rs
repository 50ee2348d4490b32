//! Stress: eight threads wake the futures of one primitive, polled on a multi-thread tokio
//! runtime, a million times in all (which takes at most a few seconds a test even in a debug
//! build; the `--ignored` tests: ten million), at two paces: a flood over 1,000 futures
//! (`PINFOLD_STRESS_WAKES` wakes), and ping-pong over 64, where each wake waits for the poll
//! that answers the previous one, so that the set keeps going idle and being woken
//! (`PINFOLD_PING_PONG_WAKES` wakes; see [`Pace`]). Every output must arrive exactly once,
//! every future must be dropped exactly once, and nothing may hang: each test has a time limit
//! that fails it (`tokio::time::timeout` on the real clock for a wake that is lost, a watchdog
//! that aborts the process for a poll or a thread that never returns).
//!
//! And churn: many small sets of every kind are made, polled and dropped while four threads keep
//! waking, cloning and dropping their wakers; afterwards no parent waker may be left alive (a set
//! forgets its task when it is dropped) and every future and output was dropped exactly once.
//!
//! ```text
//! cargo test -p pinfold-reliability --test stress                          # 1,000,000 wakes
//! cargo test -p pinfold-reliability --release --test stress -- --ignored   # 10,000,000 wakes
//! PINFOLD_STRESS_WAKES=100000000 PINFOLD_PING_PONG_WAKES=100000000 \
//!     cargo test -p pinfold-reliability --release --test stress
//! ```
//!
//! The beacons, the waker threads, the runner and the churn are the crate's
//! ([`beacon`](pinfold_reliability::beacon), [`stress`](pinfold_reliability::stress::stress),
//! [`churn`](pinfold_reliability::churn)); this file holds how each primitive consumes the
//! beacons, and the cases.

use futures_util::StreamExt;
use futures_util::stream;
use pinfold_buffer::BufferExt;
use pinfold_reliability::beacon::Pace;
use pinfold_reliability::churn::churn;
use pinfold_reliability::sizes::{churn_sets, ping_pong_wakes, stress_wakes};
use pinfold_reliability::stress::stress;

/// Wakes of the tests that run by default.
const DEFAULT_WAKES: u64 = 1_000_000;
/// Wakes of the `--ignored` tests.
const DEEP_WAKES: u64 = 10_000_000;

/// A bounded set of 256, refilled as outputs come out.
fn bounded(wakes: u64, pace: Pace) {
    stress("bounded", wakes, pace, false, |futures, seen| async move {
        let mut set = pinfold_unordered::FuturesUnorderedBounded::new(256);
        let mut futures = futures.into_iter();
        for fut in futures.by_ref().take(256) {
            set.push(fut);
        }
        while let Some(id) = set.next().await {
            seen.record(id);
            if let Some(fut) = futures.next() {
                set.push(fut);
            }
        }
    });
}

/// A growable set: 600 futures to start (five groups), one more for each output.
fn growable(wakes: u64, pace: Pace) {
    stress("growable", wakes, pace, false, |futures, seen| async move {
        let mut set = pinfold_unordered::FuturesUnordered::new();
        let mut futures = futures.into_iter();
        set.extend(futures.by_ref().take(600));
        while let Some(id) = set.next().await {
            seen.record(id);
            if let Some(fut) = futures.next() {
                set.push(fut);
            }
        }
    });
}

fn join_all(wakes: u64, pace: Pace) {
    stress("join_all", wakes, pace, true, |futures, seen| async move {
        for id in pinfold_join::join_all(futures).await {
            seen.record(id);
        }
    });
}

fn ordered_buffer(wakes: u64, pace: Pace) {
    stress(
        "ordered_buffer",
        wakes,
        pace,
        true,
        |futures, seen| async move {
            let mut outputs = stream::iter(futures).ordered_buffer(64);
            while let Some(id) = outputs.next().await {
                seen.record(id);
            }
        },
    );
}

fn ordered_buffer_window(wakes: u64, pace: Pace) {
    stress(
        "ordered_buffer window",
        wakes,
        pace,
        true,
        |futures, seen| async move {
            let mut outputs = stream::iter(futures).ordered_buffer(64).window(96);
            while let Some(id) = outputs.next().await {
                seen.record(id);
            }
        },
    );
}

fn unordered_buffer(wakes: u64, pace: Pace) {
    stress(
        "unordered_buffer",
        wakes,
        pace,
        false,
        |futures, seen| async move {
            let mut outputs = stream::iter(futures).unordered_buffer(64);
            while let Some(id) = outputs.next().await {
                seen.record(id);
            }
        },
    );
}

/// A bounded merge of 256 one-item streams (each a beacon), refilled whenever it has room (a
/// stream leaves when it is polled after its item, so the merge may run empty while beacons
/// are left).
fn merge(wakes: u64, pace: Pace) {
    stress("merge", wakes, pace, false, |futures, seen| async move {
        let mut merged = pinfold_merge::MergeBounded::new(256);
        let mut futures = futures.into_iter().peekable();
        loop {
            while !merged.is_full() {
                let Some(fut) = futures.next() else { break };
                merged.push(stream::once(fut));
            }
            match merged.next().await {
                Some(id) => seen.record(id),
                None if futures.peek().is_some() => {}
                None => break,
            }
        }
    });
}

/// A `FutureMap` keyed by the beacons' ids: 600 to start, one more for each output; each
/// output must come under its own id.
fn future_map(wakes: u64, pace: Pace) {
    stress(
        "future_map",
        wakes,
        pace,
        false,
        |futures, seen| async move {
            let mut map = pinfold_map::FutureMap::new();
            let mut futures = futures.into_iter().enumerate();
            map.extend(futures.by_ref().take(600));
            while let Some((key, id)) = map.next().await {
                assert_eq!(key, id, "an output under its own key");
                seen.record(id);
                if let Some((key, fut)) = futures.next() {
                    map.insert(key, fut);
                }
            }
        },
    );
}

#[test]
fn merge_gets_every_item_under_cross_thread_wakes() {
    merge(stress_wakes(DEFAULT_WAKES), Pace::Flood);
}

#[test]
fn merge_gets_every_item_under_ping_pong_wakes() {
    merge(ping_pong_wakes(DEFAULT_WAKES), Pace::PingPong);
}

#[test]
fn future_map_gets_every_output_under_cross_thread_wakes() {
    future_map(stress_wakes(DEFAULT_WAKES), Pace::Flood);
}

#[test]
fn future_map_gets_every_output_under_ping_pong_wakes() {
    future_map(ping_pong_wakes(DEFAULT_WAKES), Pace::PingPong);
}

#[test]
fn bounded_set_gets_every_output_under_cross_thread_wakes() {
    bounded(stress_wakes(DEFAULT_WAKES), Pace::Flood);
}

#[test]
fn growable_set_gets_every_output_under_cross_thread_wakes() {
    growable(stress_wakes(DEFAULT_WAKES), Pace::Flood);
}

#[test]
fn join_all_gets_every_output_under_cross_thread_wakes() {
    join_all(stress_wakes(DEFAULT_WAKES), Pace::Flood);
}

#[test]
fn ordered_buffer_gets_every_output_under_cross_thread_wakes() {
    ordered_buffer(stress_wakes(DEFAULT_WAKES), Pace::Flood);
}

#[test]
fn ordered_buffer_with_window_gets_every_output_under_cross_thread_wakes() {
    ordered_buffer_window(stress_wakes(DEFAULT_WAKES), Pace::Flood);
}

#[test]
fn unordered_buffer_gets_every_output_under_cross_thread_wakes() {
    unordered_buffer(stress_wakes(DEFAULT_WAKES), Pace::Flood);
}

#[test]
fn bounded_set_gets_every_output_under_ping_pong_wakes() {
    bounded(ping_pong_wakes(DEFAULT_WAKES), Pace::PingPong);
}

#[test]
fn growable_set_gets_every_output_under_ping_pong_wakes() {
    growable(ping_pong_wakes(DEFAULT_WAKES), Pace::PingPong);
}

#[test]
fn join_all_gets_every_output_under_ping_pong_wakes() {
    join_all(ping_pong_wakes(DEFAULT_WAKES), Pace::PingPong);
}

#[test]
fn ordered_buffer_gets_every_output_under_ping_pong_wakes() {
    ordered_buffer(ping_pong_wakes(DEFAULT_WAKES), Pace::PingPong);
}

#[test]
fn ordered_buffer_with_window_gets_every_output_under_ping_pong_wakes() {
    ordered_buffer_window(ping_pong_wakes(DEFAULT_WAKES), Pace::PingPong);
}

#[test]
fn unordered_buffer_gets_every_output_under_ping_pong_wakes() {
    unordered_buffer(ping_pong_wakes(DEFAULT_WAKES), Pace::PingPong);
}

#[test]
#[ignore = "deep run: ten million wakes (use --release)"]
fn bounded_set_gets_every_output_of_ten_million_wakes() {
    bounded(stress_wakes(DEEP_WAKES), Pace::Flood);
}

#[test]
#[ignore = "deep run: ten million wakes (use --release)"]
fn growable_set_gets_every_output_of_ten_million_wakes() {
    growable(stress_wakes(DEEP_WAKES), Pace::Flood);
}

#[test]
#[ignore = "deep run: ten million wakes (use --release)"]
fn join_all_gets_every_output_of_ten_million_wakes() {
    join_all(stress_wakes(DEEP_WAKES), Pace::Flood);
}

#[test]
#[ignore = "deep run: ten million wakes (use --release)"]
fn ordered_buffer_gets_every_output_of_ten_million_wakes() {
    ordered_buffer(stress_wakes(DEEP_WAKES), Pace::Flood);
}

#[test]
#[ignore = "deep run: ten million wakes (use --release)"]
fn ordered_buffer_with_window_gets_every_output_of_ten_million_wakes() {
    ordered_buffer_window(stress_wakes(DEEP_WAKES), Pace::Flood);
}

#[test]
#[ignore = "deep run: ten million wakes (use --release)"]
fn unordered_buffer_gets_every_output_of_ten_million_wakes() {
    unordered_buffer(stress_wakes(DEEP_WAKES), Pace::Flood);
}

#[test]
#[ignore = "deep run: ten million wakes (use --release)"]
fn bounded_set_gets_every_output_of_ten_million_ping_pong_wakes() {
    bounded(ping_pong_wakes(DEEP_WAKES), Pace::PingPong);
}

#[test]
#[ignore = "deep run: ten million wakes (use --release)"]
fn growable_set_gets_every_output_of_ten_million_ping_pong_wakes() {
    growable(ping_pong_wakes(DEEP_WAKES), Pace::PingPong);
}

#[test]
#[ignore = "deep run: ten million wakes (use --release)"]
fn join_all_gets_every_output_of_ten_million_ping_pong_wakes() {
    join_all(ping_pong_wakes(DEEP_WAKES), Pace::PingPong);
}

#[test]
#[ignore = "deep run: ten million wakes (use --release)"]
fn ordered_buffer_gets_every_output_of_ten_million_ping_pong_wakes() {
    ordered_buffer(ping_pong_wakes(DEEP_WAKES), Pace::PingPong);
}

#[test]
#[ignore = "deep run: ten million wakes (use --release)"]
fn ordered_buffer_with_window_gets_every_output_of_ten_million_ping_pong_wakes() {
    ordered_buffer_window(ping_pong_wakes(DEEP_WAKES), Pace::PingPong);
}

#[test]
#[ignore = "deep run: ten million wakes (use --release)"]
fn unordered_buffer_gets_every_output_of_ten_million_ping_pong_wakes() {
    unordered_buffer(ping_pong_wakes(DEEP_WAKES), Pace::PingPong);
}

// ---------------------------------------------------------------------------------------------
// Churn: sets made and dropped while their wakers are woken from other threads
// ---------------------------------------------------------------------------------------------

#[test]
fn sets_dropped_while_their_wakers_are_woken_elsewhere_leak_nothing() {
    churn(churn_sets(20_000));
}

#[test]
#[ignore = "deep run: a million sets (use --release)"]
fn a_million_sets_dropped_while_their_wakers_are_woken_elsewhere_leak_nothing() {
    churn(churn_sets(1_000_000));
}
