//! Futures and streams under the user's own keys: pinfold's `FutureMap` and `StreamMap` against
//! tokio-util's `JoinMap` (futures spawned on a current-thread tokio runtime), tokio-stream's
//! `StreamMap`, and futures-concurrency's `FutureGroup` / `StreamGroup` with a `HashMap` from
//! user key to group key beside them (what their users write).

use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};
use std::collections::HashMap;
use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use futures_core::Stream;
use futures_util::FutureExt;
use pinfold_benches::{
    ChurnFuture, ChurnTally, FUTURES_CONCURRENCY, FireOrder, Group, PINFOLD, SignalStream,
    TOKIO_STREAM, TOKIO_UTIL, Tuning, WakerThreads, criterion, keyed_churn, keyed_churn_block_on,
};

#[global_allocator]
static ALLOC: pinfold_benches::CountingAlloc = pinfold_benches::CountingAlloc::new();

type FutureMap<F> = pinfold_map::FutureMap<u64, F>;
type PinfoldStreamMap<S> = pinfold_map::StreamMap<usize, S>;
type TokioStreamMap<S> = tokio_stream::StreamMap<usize, S>;
type FutureGroup<F> = futures_concurrency::future::FutureGroup<F>;
type StreamGroup<S> = futures_concurrency::stream::StreamGroup<S>;
type GroupKey = futures_concurrency::future::future_group::Key;
type StreamGroupKey = futures_concurrency::stream::stream_group::Key;

/// Futures inserted in all in `map_churn_100k`, half of them removed; keys in the map at once.
const TOTAL: usize = 100_000;
const CAPACITY: usize = 1_024;

/// Keys (streams) in `map_streams_10k`, items per stream, and every how many keys one is
/// replaced half-way.
const KEYS: usize = 10_000;
const ITEMS: usize = 10;
const REPLACE_EVERY: usize = 10;

/// `JoinMap` as a `Stream` of what `join_next` gives, for the churn driver (`join_next` is
/// cancel safe: a fresh one per poll loses nothing).
struct JoinMapStream(tokio_util::task::JoinMap<u64, u64>);

impl Stream for JoinMapStream {
    type Item = (u64, Result<u64, tokio::task::JoinError>);

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let next = core::pin::pin!(self.0.join_next());
        next.poll(cx)
    }
}

/// futures-concurrency's `FutureGroup` (keyed outputs) and a `HashMap` from user key to group
/// key; each future's output carries its user key, so the map entry goes when it finishes.
struct KeyedGroup<F: Future> {
    group: futures_concurrency::future::future_group::Keyed<F>,
    keys: HashMap<u64, GroupKey>,
}

impl<F: Future<Output = (u64, u64)> + Unpin> Stream for KeyedGroup<F> {
    type Item = u64;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<u64>> {
        let this = &mut *self;
        Pin::new(&mut this.group).poll_next(cx).map(|out| {
            out.map(|(_, (key, value))| {
                this.keys.remove(&key);
                value
            })
        })
    }
}

/// A set of 1,024 futures under user keys kept full through 100,000 inserts, every other one
/// removed by its key before it finishes: the `keyed_churn_100k` workload (see
/// `pinfold_benches::keyed_churn`) with user keys `0, 1, 2, ...`.
fn map_churn_100k(c: &mut Criterion) {
    let expected = ChurnTally::expected(TOTAL, false);
    let mut group = Group::new(c, "map_churn_100k", Tuning::MEDIUM);
    group.bench(PINFOLD, || {
        let mut map = FutureMap::new();
        let mut next = 0u64;
        let tally = keyed_churn_block_on(
            &mut map,
            TOTAL,
            CAPACITY,
            |m, f| {
                next += 1;
                m.insert(next, f);
                next
            },
            |m, key| m.remove(&key),
            |(_, value)| Some(value),
        );
        assert_eq!(tally, expected);
    });
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a current-thread runtime");
    let aborted = ChurnTally::expected(TOTAL, true);
    group.bench(TOKIO_UTIL, move || {
        let mut map = JoinMapStream(tokio_util::task::JoinMap::new());
        let mut next = 0u64;
        let tally = runtime.block_on(keyed_churn(
            &mut map,
            TOTAL,
            CAPACITY,
            |m, f| {
                next += 1;
                m.0.spawn(next, f);
                next
            },
            |m, key| m.0.abort(&key),
            |(_, result)| result.ok(),
        ));
        assert_eq!(tally, aborted);
    });
    group.bench(FUTURES_CONCURRENCY, || {
        let mut map = KeyedGroup {
            group: FutureGroup::new().keyed(),
            keys: HashMap::new(),
        };
        let mut next = 0u64;
        let tally = keyed_churn_block_on(
            &mut map,
            TOTAL,
            CAPACITY,
            |m, f: ChurnFuture| {
                next += 1;
                let key = next;
                let group_key = m.group.insert(f.map(move |value| (key, value)));
                m.keys.insert(key, group_key);
                key
            },
            |m, key| m.keys.remove(&key).is_some_and(|k| m.group.remove(k)),
            Some,
        );
        assert_eq!(tally, expected);
    });
    group.bench(TOKIO_STREAM, || {
        let mut map = tokio_stream::StreamMap::new();
        let mut next = 0u64;
        let tally = keyed_churn_block_on(
            &mut map,
            TOTAL,
            CAPACITY,
            |m, f| {
                next += 1;
                m.insert(next, futures_util::stream::once(f));
                next
            },
            |m, key| m.remove(&key).is_some(),
            |(_, value)| Some(value),
        );
        assert_eq!(tally, expected);
    });
    group.finish();
}

/// A stream whose items carry its user key.
struct Tagged<'w> {
    key: usize,
    stream: SignalStream<'w>,
}

impl Stream for Tagged<'_> {
    type Item = (usize, u64);

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<(usize, u64)>> {
        let key = self.key;
        Pin::new(&mut self.stream)
            .poll_next(cx)
            .map(|item| item.map(|item| (key, item)))
    }
}

/// futures-concurrency's `StreamGroup` and a `HashMap` from user key to group key.
struct KeyedStreamGroup<'w> {
    group: StreamGroup<Tagged<'w>>,
    keys: HashMap<usize, StreamGroupKey>,
}

impl Stream for KeyedStreamGroup<'_> {
    type Item = (usize, u64);

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<(usize, u64)>> {
        Pin::new(&mut self.group).poll_next(cx)
    }
}

impl<'w> KeyedStreamGroup<'w> {
    fn put(&mut self, key: usize, stream: SignalStream<'w>) {
        if let Some(old) = self.keys.remove(&key) {
            self.group.remove(old);
        }
        let group_key = self.group.insert(Tagged { key, stream });
        self.keys.insert(key, group_key);
    }
}

/// 10,000 streams under user keys, 10 items each, item `k` of a stream coming when one of 4
/// threads fires its cell (cells dealt to the threads in random order); half-way, every tenth
/// key gets a new stream. Wall time from the threads' release to the last item.
fn map_streams_10k(c: &mut Criterion) {
    let workers = WakerThreads::new(4, KEYS * ITEMS / 4, FireOrder::Shuffled(0x3A9_5EED));
    let mut group = Group::new(c, "map_streams_10k", Tuning::MEDIUM);
    group.bench_rounds(PINFOLD, || {
        let map = PinfoldStreamMap::new();
        let round = workers.keyed_round(ITEMS, REPLACE_EVERY, map, |m, key, s| {
            m.insert(key, s);
        });
        round.wall
    });
    group.bench_rounds(TOKIO_STREAM, || {
        let map = TokioStreamMap::new();
        let round = workers.keyed_round(ITEMS, REPLACE_EVERY, map, |m, key, s| {
            m.insert(key, s);
        });
        round.wall
    });
    group.bench_rounds(FUTURES_CONCURRENCY, || {
        let map = KeyedStreamGroup {
            group: StreamGroup::new(),
            keys: HashMap::new(),
        };
        let round = workers.keyed_round(ITEMS, REPLACE_EVERY, map, KeyedStreamGroup::put);
        round.wall
    });
    group.finish();
    black_box(workers);
}

criterion_group! {
    name = benches;
    config = criterion(criterion::measurement::WallTime);
    targets = map_churn_100k, map_streams_10k
}
criterion_main!(benches);
