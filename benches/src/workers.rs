//! Threads that wake futures from outside the task that polls them.

use std::future::poll_fn;
use std::ops::Range;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Barrier};
use std::task::{Context, Waker};
use std::thread::{self, JoinHandle};
use std::time::Duration;

use futures_core::Stream;

use crate::cpu_time::thread_cpu_time;
use crate::drive::{block_on_parking, poll_next};
use crate::futures::{Signal, SignalCell, SignalStream};
use crate::xorshift::Xorshift;

/// Which cells each waker thread fires, in which order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FireOrder {
    /// The cells are shuffled (deterministically, from the seed) and dealt out: each thread
    /// fires a random quarter (for four threads) in random order, as wakes from unrelated
    /// sources arrive.
    Shuffled(u64),
    /// Thread `t` fires cells `t`, `t + threads`, `t + 2 × threads`, ...: the threads wake
    /// neighbouring slots at the same moment, the worst case for anything that keeps woken
    /// slots in shared words.
    Interleaved,
}

/// `threads` threads, spawned once, that fire `threads × per_thread` [`SignalCell`]s each
/// round, each thread its share in the given [`FireOrder`].
#[derive(Debug)]
pub struct WakerThreads {
    cells: Arc<[SignalCell]>,
    start: Arc<Barrier>,
    end: Arc<Barrier>,
    stop: Arc<AtomicBool>,
    /// CPU nanoseconds the threads spent in their fire loops this round.
    fire_cpu_ns: Arc<AtomicU64>,
    handles: Vec<JoinHandle<()>>,
}

impl WakerThreads {
    /// Spawns the threads; they wait for [`round`](Self::round).
    pub fn new(threads: usize, per_thread: usize, order: FireOrder) -> Self {
        assert!(threads > 0, "WakerThreads needs at least one thread");
        let total = threads * per_thread;
        let cells: Arc<[SignalCell]> = (0..total).map(|_| SignalCell::new()).collect();
        let shares: Vec<Vec<usize>> = match order {
            FireOrder::Interleaved => (0..threads)
                .map(|t| (t..total).step_by(threads).collect())
                .collect(),
            FireOrder::Shuffled(seed) => {
                let mut order: Vec<usize> = (0..total).collect();
                let mut rng = Xorshift::new(seed);
                for i in (1..total).rev() {
                    order.swap(i, rng.up_to(i as u64) as usize);
                }
                order
                    .chunks(per_thread.max(1))
                    .map(<[usize]>::to_vec)
                    .collect()
            }
        };
        let start = Arc::new(Barrier::new(threads + 1));
        let end = Arc::new(Barrier::new(threads + 1));
        let stop = Arc::new(AtomicBool::new(false));
        let fire_cpu_ns = Arc::new(AtomicU64::new(0));
        let handles = shares
            .into_iter()
            .enumerate()
            .map(|(t, share)| {
                let (cells, start, end, stop, fire_cpu_ns) = (
                    cells.clone(),
                    start.clone(),
                    end.clone(),
                    stop.clone(),
                    fire_cpu_ns.clone(),
                );
                thread::Builder::new()
                    .name(format!("waker-{t}"))
                    .spawn(move || {
                        loop {
                            start.wait();
                            if stop.load(Ordering::Relaxed) {
                                return;
                            }
                            let cpu = thread_cpu_time();
                            crate::timed(|| {
                                for &i in &share {
                                    cells[i].fire();
                                }
                            });
                            let spent = thread_cpu_time().saturating_sub(cpu);
                            fire_cpu_ns.fetch_add(spent.as_nanos() as u64, Ordering::Relaxed);
                            end.wait();
                        }
                    })
                    .expect("could not spawn a waker thread")
            })
            .collect();
        Self {
            cells,
            start,
            end,
            stop,
            fire_cpu_ns,
            handles,
        }
    }

    /// How many futures a round completes.
    pub fn len(&self) -> usize {
        self.cells.len()
    }

    /// Whether a round completes no future at all.
    pub fn is_empty(&self) -> bool {
        self.cells.is_empty()
    }

    /// The futures of a round: one [`Signal`] per cell, the `i`th finishing with `i`.
    pub fn signals(&self) -> impl Iterator<Item = Signal<'_>> + '_ {
        self.cells
            .iter()
            .enumerate()
            .map(|(i, cell)| cell.signal(i as u64))
    }

    /// The round's streams: `len() / per_stream` [`SignalStream`]s, stream `j` over cells
    /// `j * per_stream ..` and giving the items of the same numbers, so that the items of a
    /// round are `0 .. len()`, each once.
    ///
    /// # Panics
    /// If `per_stream` is 0 or does not divide [`len`](Self::len).
    pub fn signal_streams(&self, per_stream: usize) -> impl Iterator<Item = SignalStream<'_>> + '_ {
        assert!(
            per_stream > 0 && self.cells.len() % per_stream == 0,
            "signal_streams: {per_stream} does not divide {} cells",
            self.cells.len()
        );
        (0..self.cells.len())
            .step_by(per_stream)
            .map(move |first| self.signal_stream(first..first + per_stream))
    }

    /// A stream over cells `cells`, whose items are the cells' numbers.
    pub fn signal_stream(&self, cells: Range<usize>) -> SignalStream<'_> {
        let first = cells.start as u64;
        SignalStream::new(&self.cells[cells], first)
    }

    /// Whether every stream of [`signal_streams`](Self::signal_streams) has registered a waker
    /// for its first item. Checks the last streams first.
    pub fn streams_registered(&self, per_stream: usize) -> bool {
        self.cells
            .iter()
            .step_by(per_stream)
            .rev()
            .all(SignalCell::is_registered)
    }

    /// Whether every future of the round has registered a waker (polled once and found its
    /// cell not fired). Checks the last cells first: sets poll in insertion order.
    pub fn all_registered(&self) -> bool {
        self.cells.iter().rev().all(SignalCell::is_registered)
    }

    /// One round: resets the cells, runs `prepare` (make the futures, poll them until they
    /// have registered their wakers), then releases the threads and runs `drive` (collect
    /// every output), and waits for the threads to finish. Returns how long the round took
    /// and its result.
    pub fn round<S, R>(
        &self,
        prepare: impl FnOnce() -> S,
        drive: impl FnOnce(S) -> R,
    ) -> (RoundTimes, R) {
        for cell in self.cells.iter() {
            cell.reset();
        }
        let state = prepare();
        self.fire_cpu_ns.store(0, Ordering::Relaxed);
        self.start.wait();
        let (wall, (out, owner_cpu)) = crate::timed(|| {
            let owner_cpu = thread_cpu_time();
            let out = drive(state);
            (out, thread_cpu_time().saturating_sub(owner_cpu))
        });
        // The end barrier orders the threads' `fetch_add`s before this load.
        self.end.wait();
        let fire_cpu = Duration::from_nanos(self.fire_cpu_ns.load(Ordering::Relaxed));
        let cpu = owner_cpu + fire_cpu;
        (RoundTimes { wall, cpu }, out)
    }

    /// One round of a merge of the streams of [`signal_streams`](Self::signal_streams)
    /// (`per_stream` items each), as `merge_wakes_10k` times it: `merged` merges them and
    /// the merge is polled until each stream has registered its waker for its first item
    /// (untimed); then the round is timed from the release of the threads until the owner,
    /// parked whenever the merge is pending, has every item.
    ///
    /// # Panics
    /// If the merge gives an item before the threads are released, or does not give the items
    /// `0 .. len()` each once.
    pub fn merge_round<'w, S>(
        &'w self,
        per_stream: usize,
        merged: impl FnOnce(&'w WakerThreads) -> S,
    ) -> RoundTimes
    where
        S: Stream<Item = u64> + Unpin,
    {
        let n = self.len() as u64;
        let (took, tally) = self.round(
            || {
                let mut merged = merged(self);
                self.poll_until_registered(&mut merged, per_stream);
                merged
            },
            |mut merged| {
                block_on_parking(async {
                    let (mut count, mut sum) = (0u64, 0u64);
                    while let Some(item) = poll_fn(|cx| Pin::new(&mut merged).poll_next(cx)).await {
                        count += 1;
                        sum += item;
                    }
                    (count, sum)
                })
            },
        );
        assert_eq!(tally, (n, n * n.saturating_sub(1) / 2), "every item once");
        took
    }

    /// Polls `streams` with a no-op waker until each stream of
    /// [`signal_streams`](Self::signal_streams) has registered its waker for its first item:
    /// the untimed part of a round.
    ///
    /// # Panics
    /// If `streams` gives an item (nothing has fired yet).
    fn poll_until_registered<S: Stream + Unpin>(&self, streams: &mut S, per_stream: usize) {
        let mut cx = Context::from_waker(Waker::noop());
        while !self.streams_registered(per_stream) {
            assert!(
                poll_next(streams, &mut cx).is_pending(),
                "nothing has fired yet"
            );
        }
    }

    /// One round of `map_streams_10k` for a map of streams under user keys: `put(map, j,
    /// stream)` puts stream `j` of [`signal_streams`](Self::signal_streams) (`per_stream` items
    /// each) under key `j`, and the map is polled until each stream has registered its waker
    /// (untimed); then, timed from the threads' release, the owner takes every item, parked
    /// whenever the map is pending. Once half the items are in, every `replace_every`th key
    /// gets, through `put`, a new stream over the cells its stream has not given yet (so the
    /// items are still `0 .. len()`, each once); a `replace_every` of 0 replaces nothing.
    ///
    /// # Panics
    /// If the map gives an item before the threads are released, an item under another key
    /// than its stream's, or not the items `0 .. len()` each once.
    pub fn keyed_round<'w, M>(
        &'w self,
        per_stream: usize,
        replace_every: usize,
        map: M,
        mut put: impl FnMut(&mut M, usize, SignalStream<'w>),
    ) -> RoundTimes
    where
        M: Stream<Item = (usize, u64)> + Unpin,
    {
        let keys = self.len() / per_stream;
        let (took, tally) = self.round(
            move || {
                let mut map = map;
                for (key, stream) in self.signal_streams(per_stream).enumerate() {
                    put(&mut map, key, stream);
                }
                self.poll_until_registered(&mut map, per_stream);
                (map, put)
            },
            |(mut map, mut put)| {
                block_on_parking(async {
                    let mut given = vec![0usize; keys];
                    let (mut count, mut sum) = (0usize, 0u64);
                    while let Some((key, item)) =
                        poll_fn(|cx| Pin::new(&mut map).poll_next(cx)).await
                    {
                        assert_eq!(
                            item as usize / per_stream,
                            key,
                            "an item under its stream's key"
                        );
                        given[key] += 1;
                        count += 1;
                        sum += item;
                        if replace_every > 0 && count == self.len() / 2 {
                            for key in (0..keys).step_by(replace_every) {
                                let (from, end) =
                                    (key * per_stream + given[key], (key + 1) * per_stream);
                                if from < end {
                                    put(&mut map, key, self.signal_stream(from..end));
                                }
                            }
                        }
                    }
                    (count as u64, sum)
                })
            },
        );
        let n = self.len() as u64;
        assert_eq!(tally, (n, n * n.saturating_sub(1) / 2), "every item once");
        took
    }
}

/// How long a [`WakerThreads::round`] took.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RoundTimes {
    /// Wall time from the threads' release to `drive`'s return (the last output).
    pub wall: Duration,
    /// CPU time the threads spent in their fire loops (setting flags, waking) plus the CPU
    /// time the owner spent in `drive` (polling, draining, parking): what the wakes and the
    /// draining cost, whatever the scheduler did, without the barriers around the round.
    pub cpu: Duration,
}

impl Drop for WakerThreads {
    fn drop(&mut self) {
        if thread::panicking() {
            // A round may have stopped half-way (a lost wake): the threads may be waiting at
            // the end barrier. Leave them; the process is going down.
            return;
        }
        self.stop.store(true, Ordering::Relaxed);
        self.start.wait();
        for handle in self.handles.drain(..) {
            handle.join().expect("a waker thread panicked");
        }
    }
}
