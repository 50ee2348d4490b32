//! [`FreeBuffers`]: where a pool's free buffers are, and the one way in and out of there for
//! the pool, its acquires and its releases: [`take`](FreeBuffers::take) and
//! [`give`](FreeBuffers::give) and their slower forms. Behind it: the threads' stocks (see
//! `stocks`), the shared free list (see `free_list`), the pool's flags with their policy
//! ([`WAITING`], [`DRAINED`], [`CLOSED`]) and the barriers that order the stocks' owners
//! against sweeps.
//!
//! It counts nothing: a buffer outside the shared list holds a count of the pool's state, and
//! each method says which buffers left or entered the shared list, for the caller (see
//! `shared`) to count. Nor does it know the waiters: a buffer given while tasks wait comes
//! back as [`Unstocked::Waiting`], for the caller to hand over under the wait queue's lock.

use crate::block::{Block, Metas};
use crate::free_list::{CHANGES_MASK, Chain, FreeList, Padded, changes};
use crate::stocks::{self, CLOSED, DRAINED, STOCKS, Stock, WAITING, barrier};
use crate::sync::{AtomicU32, Ordering};

/// A pool's free buffers.
pub(crate) struct FreeBuffers {
    /// [`WAITING`], [`DRAINED`] and [`CLOSED`] (see `stocks`): read by every stock
    /// operation. Changed by read-modify-writes only: set with the wait queue's lock held
    /// (`CLOSED` by the last handle's drop), `WAITING` cleared with it held, `DRAINED` cleared
    /// by a give.
    flags: AtomicU32,
    /// The shared list's count of changes (see [`FreeList::changes`]) when it was last found
    /// empty under the wait queue's lock ([`take_or_wait`](Self::take_or_wait)): a
    /// [`DRAINED`] spell ends once the list's head has changed
    /// [`drain_span`](Self::drain_span) times since.
    last_empty: AtomicU32,
    /// How many changes of the shared list's head, with none finding it empty, end a
    /// [`DRAINED`] spell: four per buffer.
    drain_span: u32,
    /// How many buffers move between a stock and the shared list at once.
    batch: u32,
    /// How many buffers a stock holds at most: two batches.
    high: u32,
    /// The shared free list.
    shared: Padded<FreeList>,
    /// The threads' stocks (see `stocks`).
    stocks: [Padded<Stock>; STOCKS],
}

/// What [`FreeBuffers::take_or_wait`] found.
pub(crate) enum Taken {
    /// A buffer from the shared list: the caller counts it.
    Shared(u32),
    /// A buffer from the stocks, which the sweep emptied: counted already. `returned` more
    /// buffers of theirs went to the shared list: the caller gives up their counts.
    Swept { index: u32, returned: u32 },
}

/// Where [`FreeBuffers::give`] put a buffer.
#[must_use]
pub(crate) enum Given<'a> {
    /// In the calling thread's stock, which the caller is still inside (see
    /// [`InStock::leave`]): the buffer's count is the stock's.
    Stocked(InStock<'a>),
    /// Anywhere else: see [`Unstocked`].
    Unstocked(Unstocked),
}

/// Where a give put buffers that did not stay in the caller's stock. A type of its own, apart
/// from [`Given`], so that the slow gives return no stock and the fast one writes nothing to
/// memory for its answer.
#[must_use]
pub(crate) enum Unstocked {
    /// This many buffers are free, in the shared list or in a closed pool (whose memory goes
    /// with its last count): the caller gives up their counts.
    Free(usize),
    /// Tasks wait: the buffers of the chain, each still holding its count, are the caller's
    /// to hand to them.
    Waiting(Chain),
}

/// A stock its owner is inside, with a buffer just given to it.
pub(crate) struct InStock<'a>(&'a Stock);

impl InStock<'_> {
    /// Ends the owner's operation. From then on the buffer's count is the stock's, and the
    /// pool's state may be freed by another thread (the last handle's drop sweeps the stock
    /// and gives its counts up), so the caller touches nothing of the pool after it. This is
    /// why [`give`](FreeBuffers::give) returns before the stock is left: no reference to the
    /// state but this one, to a stock's atomics, is alive when it is.
    #[inline]
    pub(crate) fn leave(self) {
        self.0.leave();
    }
}

impl FreeBuffers {
    /// The free buffers of a pool of `count`, every one of them in the shared list, in order
    /// (their links and depths were set by the block).
    pub(crate) fn new(count: u32) -> Self {
        let batch = stocks::batch(count);
        Self {
            flags: AtomicU32::new(0),
            last_empty: AtomicU32::new(0),
            drain_span: count.saturating_mul(4),
            batch,
            high: 2 * batch,
            shared: Padded(FreeList::new(count)),
            stocks: core::array::from_fn(|_| Padded(Stock::new())),
        }
    }

    /// How many buffers are free: in the shared list and in the stocks (a snapshot).
    pub(crate) fn available(&self, block: &Block) -> usize {
        let metas = block.metas();
        let stocked: usize = self.stocked().map(|len| len as usize).sum();
        self.shared.len(metas) + stocked
    }

    /// Whether any stock looks to hold a buffer that a sweep would take (a snapshot: a buffer
    /// whose give has not landed yet is not seen).
    pub(crate) fn any_stocked(&self) -> bool {
        self.stocked().any(|len| len != 0)
    }

    /// How many buffers each stock holds that a sweep would take (a snapshot): none for an
    /// [abandoned](Stock::abandoned) one.
    fn stocked(&self) -> impl Iterator<Item = u32> + '_ {
        self.stocks.iter().enumerate().map(|(slot, stock)| {
            if stock.abandoned(slot) {
                0
            } else {
                stock.len()
            }
        })
    }

    /// The calling thread's stock, if it owns one.
    #[inline]
    fn stock(&self) -> Option<&Stock> {
        // `%` of a power of two, which also spares the bounds check.
        stocks::slot().map(|slot| &*self.stocks[slot % STOCKS])
    }

    /// Every stock's buffers, once a flag is set and the heavy barrier passed (see `stocks`),
    /// as one chain.
    fn sweep(&self, metas: Metas<'_>) -> Option<Chain> {
        self.stocks
            .iter()
            .enumerate()
            .filter_map(|(slot, stock)| stock.sweep(metas, slot))
            .reduce(|chain, more| chain.append(metas, more))
    }

    /// The last handle's drop: sets [`CLOSED`] and takes every stock's buffers, so that no
    /// buffer stays where no acquire will come; a give from now on leaves its buffer nowhere
    /// ([`Unstocked::Free`]). Returns how many it took (their counts are the caller's to give up).
    pub(crate) fn close(&self, block: &Block) -> usize {
        // No handle is left, so no task waits and nobody holds the lock to change the flags.
        self.flags.fetch_or(CLOSED, Ordering::Relaxed);
        barrier::heavy();
        self.sweep(block.metas())
            .map_or(0, |chain| chain.len as usize)
    }

    /// A buffer from the calling thread's stock, if it owns one: counted already. `None` if
    /// the stock is empty, or a flag is set.
    #[inline]
    pub(crate) fn take(&self, block: &Block) -> Option<u32> {
        let stock = self.stock()?;
        if !stock.enter(&self.flags) {
            return None;
        }
        let popped = stock.pop(block.metas());
        stock.leave();
        popped
    }

    /// For a take whose stock is empty: buffers from the shared list, a batch if the calling
    /// thread owns a stock and no flag is set, else one. The caller counts them, then puts all
    /// but one in its stock with [`stock_rest`](Self::stock_rest). `None` if the shared list is
    /// empty, or tasks wait.
    pub(crate) fn take_batch(&self, block: &Block) -> Option<Chain> {
        // A batch only for a stock in use (a hint: if a flag is set before the batch is in the
        // stock, `stock_rest` refuses it).
        let stocking = self.stock().is_some() && self.flags.load(Ordering::Relaxed) == 0;
        let max = if stocking { self.batch } else { 1 };
        self.shared.pop_chain(block.metas(), max)
    }

    /// Puts the rest of a batch (counted) in the calling thread's stock. `Err(rest)` if a flag
    /// was set meanwhile: the caller gives the buffers to the tasks that wait, or back.
    pub(crate) fn stock_rest(&self, block: &Block, rest: Chain) -> Result<(), Chain> {
        match self.stock() {
            Some(stock) if stock.enter(&self.flags) => {
                stock.put(block.metas(), rest);
                stock.leave();
                Ok(())
            }
            _ => Err(rest),
        }
    }

    /// With the wait queue's lock held, for a task about to wait: takes a buffer from the
    /// shared list, or, if there is none, sets the waiting flags (the shared list's
    /// [`TO_WAITERS`](crate::free_list::TO_WAITERS), and [`WAITING`] with [`DRAINED`]), so
    /// that the next give returns [`Unstocked::Waiting`]. If no flag was set, it then sweeps every
    /// stock (a flag already set means they are empty, and have been since the sweep that set
    /// it): it takes one buffer for the caller, puts the rest in the shared list and clears the
    /// waiting flags again ([`stop_waiting`](Self::stop_waiting)). `None`: every list was
    /// empty, and the flags stay set for the caller to queue (or to clear).
    ///
    /// The stocks stay `DRAINED` (unused: their owners take from and give to the shared list)
    /// until the shared list has gone [`drain_span`](Self::drain_span) changes without being
    /// found empty, so that a pool going in and out of exhaustion pays the sweep's barrier
    /// once, not at every wait.
    pub(crate) fn take_or_wait(&self, block: &Block) -> Option<Taken> {
        let metas = block.metas();
        if let Some(index) = self.shared.pop_or_set_to_waiters(metas) {
            return Some(Taken::Shared(index));
        }
        self.last_empty
            .store(self.shared.changes(), Ordering::Relaxed);
        // Relaxed: the flags publish nothing here; the barrier orders them.
        if self.flags.fetch_or(WAITING | DRAINED, Ordering::Relaxed) != 0 {
            return None;
        }
        barrier::heavy();
        let (index, rest) = self.sweep(metas)?.split_first(metas);
        // Nobody waits (no flag was set), so the rest goes to the shared list.
        self.stop_waiting();
        let returned = rest.map_or(0, |rest| {
            self.give_unwaited(block, rest);
            rest.len
        });
        Some(Taken::Swept { index, returned })
    }

    /// With the wait queue's lock held, once the queue is empty: clears the waiting flags, if
    /// set, so that takes and gives use the lists again.
    pub(crate) fn stop_waiting(&self) {
        // The flags are set and cleared together, under the lock.
        if self.shared.is_to_waiters() {
            self.shared.clear_to_waiters();
            // Release pairs with the owners' Acquire in `Stock::enter`: the sweep's changes
            // to their stocks happen before they use them again (once `DRAINED` is cleared
            // too, see `end_drain_if_due`).
            self.flags.fetch_and(!WAITING, Ordering::Release);
        }
    }

    /// Gives buffer `index` back, holding its count: to the calling thread's stock (or, if
    /// the stock holds two batches, with a batch from there to the shared list), or to the
    /// shared list. See [`Given`] for what the caller does next.
    #[inline]
    pub(crate) fn give(&self, block: &Block, index: u32) -> Given<'_> {
        // The block's metas are read once the stock is entered, not before the thread-local
        // read of `stock`, which would keep them in registers saved across that call.
        let unstocked = match self.stock() {
            Some(stock) if stock.enter(&self.flags) => {
                if stock.push(block.metas(), index, self.high) {
                    return Given::Stocked(InStock(stock));
                }
                self.give_spilling(stock, block.metas(), index)
            }
            Some(_) => self.give_flagged(block.metas(), index),
            None => self.give_unstocked(block.metas(), index),
        };
        Given::Unstocked(unstocked)
    }

    /// A give by a stock's owner whose stock is full (between `enter` and `leave`): the
    /// buffer and a batch from the stock go to the shared list.
    #[cold]
    #[inline(never)]
    fn give_spilling(&self, stock: &Stock, metas: Metas<'_>, index: u32) -> Unstocked {
        let batch = stock.take(metas, self.batch);
        stock.leave();
        let chain = match batch {
            Some(batch) => batch.prepend(metas, index),
            None => Chain::single(index),
        };
        self.give_chain(metas, chain)
    }

    /// A give by a stock's owner that found a flag set.
    #[cold]
    #[inline(never)]
    fn give_flagged(&self, metas: Metas<'_>, index: u32) -> Unstocked {
        // Relaxed: `CLOSED` is set for good, `WAITING` is read again under the lock (and a
        // push to the shared list is refused while tasks wait).
        let flags = self.flags.load(Ordering::Relaxed);
        if flags & CLOSED != 0 {
            return Unstocked::Free(1);
        }
        if flags & WAITING == 0 {
            return self.give_chain(metas, Chain::single(index));
        }
        Unstocked::Waiting(Chain::single(index))
    }

    /// A give by a thread without a stock.
    #[cold]
    #[inline(never)]
    fn give_unstocked(&self, metas: Metas<'_>, index: u32) -> Unstocked {
        self.give_chain(metas, Chain::single(index))
    }

    /// Gives the buffers of `chain` (each holding its count) to the shared list, or, if tasks
    /// wait, back to the caller to hand to them.
    fn give_chain(&self, metas: Metas<'_>, chain: Chain) -> Unstocked {
        match self.shared.push_chain(metas, chain) {
            Ok(state) => {
                self.end_drain_if_due(state);
                Unstocked::Free(chain.len as usize)
            }
            Err(chain) => Unstocked::Waiting(chain),
        }
    }

    /// With the wait queue's lock held and the waiting flags clear (nobody waits): gives the
    /// buffers of `chain` to the shared list; the caller gives up their counts.
    pub(crate) fn give_unwaited(&self, block: &Block, chain: Chain) {
        if self.shared.push_chain(block.metas(), chain).is_err() {
            unreachable!("nobody waits and the flag is only set under the lock");
        }
    }

    /// After a give to the shared list that left its word `state`: ends a [`DRAINED`] spell
    /// once the list has gone [`drain_span`](Self::drain_span) changes of its head without
    /// being found empty.
    #[inline]
    fn end_drain_if_due(&self, state: u64) {
        if self.flags.load(Ordering::Relaxed) & DRAINED == 0 {
            return;
        }
        let since = changes(state).wrapping_sub(self.last_empty.load(Ordering::Relaxed));
        if since & CHANGES_MASK >= self.drain_span {
            // Release, continuing the release sequence of the flags' last change: the sweep's
            // changes to the stocks happen before the owners use them again.
            self.flags.fetch_and(!DRAINED, Ordering::Release);
        }
    }
}

/// What the pool's unit tests look at.
#[cfg(test)]
impl FreeBuffers {
    /// Whether the stocks are [`DRAINED`].
    pub(crate) fn drained(&self) -> bool {
        self.flags.load(Ordering::Relaxed) & DRAINED != 0
    }

    /// The shared list.
    pub(crate) fn shared(&self) -> &FreeList {
        &self.shared
    }

    /// Stock `slot`, and the flags it enters by.
    pub(crate) fn stock_at(&self, slot: usize) -> (&Stock, &AtomicU32) {
        (&self.stocks[slot % STOCKS], &self.flags)
    }

    /// How many buffers move between a stock and the shared list at once.
    pub(crate) fn batch(&self) -> u32 {
        self.batch
    }
}
