//! The sparse-wake workloads (`merge_sparse_10k`, `unordered_sparse_10k`): many pending
//! streams or futures, a few of them woken at a time, on the thread that drains them.

use core::future::poll_fn;
use core::task::Poll;
use std::time::Duration;

use futures_core::Stream;

use crate::drive::poll_next;
use crate::group::Group;
use crate::local_signal::{LocalSignal, LocalSignalCell, LocalSignalStream};
use crate::xorshift::Xorshift;

/// Streams or futures in the sparse-wake workloads.
pub const SPARSE_LEN: usize = 10_000;
/// Cells fired in each batch.
pub const SPARSE_BATCH: usize = 10;
/// Batches in a round.
pub const SPARSE_BATCHES: usize = 1_000;

/// `len` cells and the batches in which they fire: one [`LocalSignalStream`] or
/// [`LocalSignal`] per cell, cell `i`'s giving `i`. A [`round`](SparseWakes::round) fires
/// the batches one after another, on its own thread, and after each takes that batch's items
/// from the stream under test.
#[derive(Debug)]
pub struct SparseWakes {
    cells: Box<[LocalSignalCell]>,
    /// The batches, one after another, each `batch` cells long.
    fires: Vec<usize>,
    batch: usize,
}

impl SparseWakes {
    /// `merge_sparse_10k`'s: 10,000 cells, 1,000 batches of 10 distinct cells drawn at random
    /// (a cell may fire in many batches).
    pub fn merge_sparse_10k() -> Self {
        Self::repeating(SPARSE_LEN, SPARSE_BATCHES, SPARSE_BATCH, 0x5_9A25_E0F1)
    }

    /// `unordered_sparse_10k`'s: 10,000 cells, each fired once, in random order, 10 at a
    /// time.
    pub fn unordered_sparse_10k() -> Self {
        Self::each_once(SPARSE_LEN, SPARSE_BATCH, 0x5_9A25_E0F2)
    }

    /// `len` cells and `batches` batches of `batch` distinct cells each, drawn at random from
    /// `seed`; a cell may fire in several batches, never twice in one.
    ///
    /// # Panics
    /// If `batch` is larger than `len`.
    pub fn repeating(len: usize, batches: usize, batch: usize, seed: u64) -> Self {
        assert!(batch <= len, "a batch fires distinct cells");
        let mut rng = Xorshift::new(seed);
        let mut fires = Vec::with_capacity(batches * batch);
        for _ in 0..batches {
            let start = fires.len();
            while fires.len() < start + batch {
                let cell = rng.up_to(len as u64 - 1) as usize;
                if !fires[start..].contains(&cell) {
                    fires.push(cell);
                }
            }
        }
        Self::with_fires(len, fires, batch)
    }

    /// `len` cells, each fired once: shuffled from `seed`, and fired `batch` at a time (the
    /// last batch may be shorter).
    pub fn each_once(len: usize, batch: usize, seed: u64) -> Self {
        let mut fires: Vec<usize> = (0..len).collect();
        let mut rng = Xorshift::new(seed);
        for i in (1..len).rev() {
            fires.swap(i, rng.up_to(i as u64) as usize);
        }
        Self::with_fires(len, fires, batch)
    }

    fn with_fires(len: usize, fires: Vec<usize>, batch: usize) -> Self {
        assert!(batch > 0, "a batch fires at least one cell");
        Self {
            cells: (0..len).map(|_| LocalSignalCell::new()).collect(),
            fires,
            batch,
        }
    }

    /// How many cells (streams, futures) there are.
    pub fn len(&self) -> usize {
        self.cells.len()
    }

    /// Whether there are no cells.
    pub fn is_empty(&self) -> bool {
        self.cells.is_empty()
    }

    /// The batches, in firing order: the indexes of the cells each fires.
    pub fn batches(&self) -> impl Iterator<Item = &[usize]> + '_ {
        self.fires.chunks(self.batch)
    }

    /// What a round takes in all: how many items, and their sum (each fire gives its cell's
    /// index).
    pub fn expected(&self) -> (u64, u64) {
        let sum = self.fires.iter().map(|&i| i as u64).sum();
        (self.fires.len() as u64, sum)
    }

    /// Cell `i`'s stream, for each cell in order: it gives `i` each time the cell fired.
    pub fn streams(&self) -> impl Iterator<Item = LocalSignalStream<'_>> + '_ {
        (0..).zip(&*self.cells).map(|(i, cell)| cell.stream(i))
    }

    /// Cell `i`'s future, for each cell in order: it finishes with `i` once the cell fired.
    pub fn signals(&self) -> impl Iterator<Item = LocalSignal<'_>> + '_ {
        (0..).zip(&*self.cells).map(|(i, cell)| cell.signal(i))
    }

    /// One round, under futures-executor's `block_on`. Untimed: the cells are reset, `make`
    /// builds the stream under test over [`streams`](Self::streams) or
    /// [`signals`](Self::signals), and it is polled (with `block_on`'s waker) until every
    /// cell has a waker registered. Timed: each batch's cells are fired, then the stream's
    /// items are awaited (with `poll_fn`) until the batch's count came. Returns the timed
    /// part.
    ///
    /// # Panics
    /// If the stream gives an item before the first batch, ends, or a poll while setting up
    /// registers no new waker; if a batch's items are not its cells' indexes (their sum); or
    /// if the round does not give [`expected`](Self::expected).
    pub fn round<'a, S>(&'a self, make: impl FnOnce(&'a Self) -> S) -> Duration
    where
        S: Stream<Item = u64> + Unpin,
    {
        for cell in &*self.cells {
            cell.reset();
        }
        let mut set = make(self);
        futures_executor::block_on(async {
            poll_fn(|cx| {
                let mut registered = self.registered();
                while registered < self.len() {
                    assert!(
                        poll_next(&mut set, cx).is_pending(),
                        "nothing has fired yet"
                    );
                    let now = self.registered();
                    assert!(now > registered, "each poll registers new wakers");
                    registered = now;
                }
                Poll::Ready(())
            })
            .await;
        });
        // A second `block_on` on the same thread: its waker wakes the same thread as the
        // wakers registered above.
        let (took, tally) = crate::timed(|| {
            futures_executor::block_on(async {
                let (mut count, mut sum) = (0u64, 0u64);
                for batch in self.batches() {
                    let mut due = 0;
                    for &i in batch {
                        self.cells[i].fire();
                        due += i as u64;
                    }
                    for _ in batch {
                        let item = poll_fn(|cx| poll_next(&mut set, cx))
                            .await
                            .expect("the stream ends only after every future finished");
                        due = due.wrapping_sub(item);
                        count += 1;
                        sum += item;
                    }
                    assert_eq!(due, 0, "a batch gives its cells' items");
                }
                (count, sum)
            })
        });
        assert_eq!(tally, self.expected(), "every fire's item once");
        took
    }

    /// Benchmarks `make`'s stream in `group` under `id`: one untimed [`round`](Self::round)
    /// counted for its allocations (after an uncounted one), then criterion's iterations, each
    /// a round of which only the timed part is summed.
    pub fn bench<'a, S>(
        &'a self,
        group: &mut Group<'_, 'a>,
        id: &str,
        make: impl Fn(&'a Self) -> S + 'a,
    ) where
        S: Stream<Item = u64> + Unpin,
    {
        group.bench_rounds(id, move || self.round(&make));
    }

    /// How many cells have a waker registered.
    fn registered(&self) -> usize {
        self.cells
            .iter()
            .filter(|cell| cell.is_registered())
            .count()
    }
}
