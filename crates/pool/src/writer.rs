//! A batching writer: many [`Writer`]s put messages side by side into shared pooled buffers,
//! and one [`Flusher`] takes them in batches, as [`Packet`]s to write to a socket.
//!
//! [`channel`] makes a `Writer` and its `Flusher` over a [`BufferPool`]. A writer
//! [reserves](Writer::reserve) room for one message in the buffer being filled (several
//! messages, from any writers, share one buffer), writes it in place and
//! [commits](Reservation::commit) it, or keeps it as a `Packet` as well
//! ([`commit_packet`](Reservation::commit_packet)). The flusher's
//! [`next_batch`](Flusher::next_batch) gives the committed bytes as packets, each a run of
//! whole messages of one buffer, in order; a buffer goes back to the pool once it is flushed
//! and no packet of it lives.
//!
//! # Example
//!
//! ```
//! use pinfold_pool::{BufferPool, writer};
//!
//! # futures_executor::block_on(async {
//! let pool = BufferPool::new(4, 64);
//! let (mut writer, mut flusher) = writer::channel(&pool);
//! for word in [&b"one"[..], b"two", b"three"] {
//!     let mut message = writer.reserve(word.len()).await?;
//!     message.copy_from_slice(word);
//!     message.commit();
//! }
//! drop(writer); // no more writes: the partly filled buffer is flushed
//!
//! let mut sent = Vec::new();
//! while let Some(batch) = flusher.next_batch().await {
//!     for packet in batch.iter() {
//!         sent.extend_from_slice(packet);
//!     }
//! }
//! assert_eq!(sent, b"onetwothree");
//! assert_eq!(pool.available(), 4);
//! # Ok::<(), writer::ReserveError>(())
//! # }).unwrap();
//! ```
//!
//! # Guarantees
//!
//! - **Once.** Every committed message is in exactly one batch; a message whose
//!   [`Reservation`] is dropped without a commit is in none, and its room is skipped: the
//!   messages around it are delivered as usual, and nothing waits for it.
//! - **Order.** The messages of one `Writer` handle come out in the order they were committed.
//!   A handle holds at most one reservation at a time ([`reserve`](Writer::reserve) takes `&mut
//!   self`), so commit order is reservation order; clone the handle to write from several
//!   tasks. Messages of different handles come in no set order between them: a writer over a
//!   pool of 16 buffers or more has lanes (one per 8 buffers, up to 8), each with a buffer of
//!   its own being filled, and a clone takes the next lane in turn, so that handles on threads
//!   running side by side do not share a buffer; handles of one lane interleave in reservation
//!   order.
//! - **Batches.** The flusher gets a buffer when it is full, when a writer or the flusher asks
//!   for a flush ([`Writer::flush`], [`Flusher::flush_open`]: every lane's buffer being
//!   filled), and when the last `Writer` handle is dropped. A buffer with a reservation still
//!   open is never flushed before that reservation ends, and holds back the later buffers of
//!   its lane only; asked for a flush meanwhile, it takes no more reservations (the rest of it
//!   goes unused), and is flushed as soon as its last reservation ends. A batch holds at most
//!   64 packets, or twice the pool's buffers if that is more; the rest come in the next.
//! - **Waiting.** A writer that needs a new buffer waits for one in the pool's
//!   [`acquire`](BufferPool::acquire) (first come, first served, no spinning): it waits while
//!   the pool is exhausted, which is also how a flusher that falls behind holds writers back.
//!   Before it waits, it seals the other lanes' buffers being filled, so that no buffer stays
//!   out of the flusher's reach while it waits. A writer and flusher hold at most every buffer
//!   of the pool.
//! - **Errors.** A message larger than a buffer is refused with [`ReserveError::TooLarge`].
//!   Once the flusher is dropped, reservations fail with [`ReserveError::Closed`] (a writer
//!   waiting for a buffer gets it once the flusher's buffers are back, then fails).
//! - **Memory.** [`channel`] allocates its bookkeeping once (a record per buffer of the pool,
//!   with one bit per byte to mark the room of abandoned reservations, and a cache line of 128
//!   bytes for its word and base pointer); nothing is allocated after it, by writers or by the
//!   flusher, beyond what a task's waker allocates when it is cloned.
//!
//! A reservation keeps its buffer from the flusher: awaiting anything while holding one (on
//! another handle, say) delays that buffer's batch, and can wait forever if the pool is
//! exhausted meanwhile. Fill the room, then commit or drop it.
//!
//! # How it works
//!
//! A reservation takes no lock: each slot (a buffer the writer holds) has one atomic word
//! holding how many bytes it handed out, the lane it was opened for, how many reservations are
//! open in it, and whether it is sealed (full, asked to flush, or free) or its flusher gone;
//! another word per lane says which slot is the lane's current one. A reservation loads its
//! lane's current slot (`Acquire`) and CASes its word from what it read to that plus the
//! message's bytes and one open reservation (`Acquire`), and fails over to the lock if the
//! slot is sealed, has no room or is another lane's. The slot's base pointer is read after the
//! CAS, so a reservation that read a slot which was sealed, flushed and reopened meanwhile
//! finds it sealed, finds it another lane's (its CAS fails, however alike the rest of the
//! word), or reserves in the buffer it holds now for the reservation's own lane, the newest
//! of that lane. A commit only counts down the word (`Release`), and takes the lock only if it
//! ends the last open reservation of a sealed buffer, to wake the flusher; the seal and the
//! last commit are read-modify-writes of the same word, so whichever comes second wakes it. So
//! a message costs two read-modify-writes of one word, shared only by the handles of its lane
//! (each slot's word and base sit on a cache line of their own, so lanes filling slots side by
//! side do not pass a line between them), and the lock is taken once per buffer.
//!
//! The lock guards the rest, held for a few word operations and never while user code runs (a
//! waker is woken or dropped after it is released): opening a slot on a new buffer (zeroed and
//! frozen into one packet of all its bytes, which the writer keeps; its base is stored, then
//! its word with the opener's reservation, with `Release`, then it is made its lane's current
//! one), sealing a current one (a full buffer is handed over by that, in O(1)), an abandoned
//! reservation (its room is zeroed and goes back if nothing was handed out after it, by a CAS
//! of the word, or else is marked as a hole), and the flusher's walk: it goes through the
//! buffers in the order they were opened, skips the rest of a lane from its first buffer whose
//! count (loaded with `Acquire`, which pairs with the commits' `Release`) is not 0, and gives
//! each run of committed bytes up to the word's offset as a slice of the buffer's packet.

use alloc::boxed::Box;
use alloc::collections::VecDeque;
use alloc::vec::Vec;
use core::fmt;
use core::future::{Future, poll_fn};
use core::mem::MaybeUninit;
use core::ops::{Deref, DerefMut};
use core::ptr::{self, NonNull};
use core::task::{Context, Poll, Waker};

use crate::buf::Buf;
use crate::free_list::Padded;
use crate::packet::Packet;
use crate::pool::BufferPool;
use crate::sync::{Arc, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, Mutex, MutexGuard, Ordering};

/// A [`Writer`] and its [`Flusher`] over `pool`: the writer puts messages into the pool's
/// buffers, the flusher takes them in batches. Allocates the bookkeeping for every buffer of
/// the pool, once (see [*Memory*](self#guarantees)).
///
/// # Panics
/// If the pool's buffers have more than `u32::MAX` bytes each.
pub fn channel(pool: &BufferPool) -> (Writer, Flusher) {
    let count = pool.capacity();
    let size = pool.buffer_size();
    assert!(
        u32::try_from(size).is_ok(),
        "writer::channel: buffers of {size} bytes, more than u32::MAX"
    );
    let words = size.div_ceil(64);
    let slots = (0..count)
        .map(|_| Slot {
            packet: None,
            lane: 0,
            flushed: 0,
            flush_asked: false,
            has_holes: false,
            holes: alloc::vec![0; words].into_boxed_slice(),
        })
        .collect();
    let shared = Arc::new(Shared {
        pool: pool.clone(),
        size,
        // Free slots take no reservation.
        open: (0..count)
            .map(|_| {
                Padded(Open {
                    word: AtomicU64::new(SEALED),
                    base: AtomicPtr::new(ptr::null_mut()),
                })
            })
            .collect(),
        currents: (0..lanes(count)).map(|_| AtomicU32::new(NONE)).collect(),
        next_lane: AtomicUsize::new(1),
        state: Padded(Mutex::new(State {
            slots,
            free: (0..count as u32).rev().collect(),
            queue: VecDeque::with_capacity(count),
            writers: 1,
            closed: false,
            flusher: None,
        })),
    });
    let batch = count.saturating_mul(2).max(64);
    let flusher = Flusher {
        shared: shared.clone(),
        out: Vec::with_capacity(batch),
        spent: Vec::with_capacity(count),
    };
    (Writer { shared, lane: 0 }, flusher)
}

/// Why a reservation failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReserveError {
    /// The message is larger than a buffer of the pool.
    TooLarge {
        /// The length asked for.
        len: usize,
        /// How many bytes a buffer has.
        buffer_size: usize,
    },
    /// The [`Flusher`] was dropped: nothing written now would be delivered.
    Closed,
    /// From [`try_reserve`](Writer::try_reserve) only: there is no room without waiting for a
    /// buffer.
    WouldWait,
}

impl fmt::Display for ReserveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::TooLarge { len, buffer_size } => write!(
                f,
                "a message of {len} bytes does not fit in a buffer of {buffer_size} bytes"
            ),
            Self::Closed => f.write_str("the flusher was dropped"),
            Self::WouldWait => f.write_str("no room without waiting for a buffer"),
        }
    }
}

impl core::error::Error for ReserveError {}

/// What the writers and the flusher share.
struct Shared {
    pool: BufferPool,
    size: usize,
    /// Per slot, what reservations and commits touch without the lock, each slot's on a
    /// cache line of its own: the writers of different lanes fill different slots side by
    /// side (guarded by `writer_4x1000`).
    open: Box<[Padded<Open>]>,
    /// Per lane, the slot taking its reservations, or [`NONE`]. Changed under the lock only.
    currents: Box<[AtomicU32]>,
    /// The lane of the next `Writer` handle made, modulo the lanes.
    next_lane: AtomicUsize,
    /// Apart from the fields above, which every reservation reads.
    state: Padded<Mutex<State>>,
}

/// A slot's part of [`Shared::open`].
struct Open {
    /// How many bytes the slot handed out ([`offset`]), the lane it was opened for
    /// ([`LANE`]), how many reservations are open in it ([`OPEN`]), and whether it takes no
    /// more ([`SEALED`]: full, asked to flush, or free) or its flusher is gone ([`CLOSED`]).
    /// A reservation is a CAS here alone, a commit a subtraction here alone; the end that
    /// takes the count to 0 in a sealed or closed slot takes the lock, to wake the flusher or
    /// give the buffer back.
    word: AtomicU64,
    /// The first byte of the slot's buffer, writable (taken from its `Buf` before it was
    /// frozen); stored before the slot opens.
    base: AtomicPtr<u8>,
}

/// No slot.
const NONE: u32 = u32::MAX;

/// How many buffers of the pool each lane stands for: a pool of fewer than twice this has one
/// lane, so that every writer shares the buffer being filled. Two under loom, so that small
/// models have lanes.
#[cfg(not(all(pinfold_loom, feature = "loom")))]
const BUFFERS_PER_LANE: usize = 8;
#[cfg(all(pinfold_loom, feature = "loom"))]
const BUFFERS_PER_LANE: usize = 2;
/// The most lanes a writer has (at most 8: a slot's word keeps its lane in 3 bits).
const MAX_LANES: usize = 8;
const _: () = assert!((MAX_LANES as u64 - 1) << LANE_SHIFT <= LANE);

/// How many lanes a writer over a pool of `count` buffers has.
fn lanes(count: usize) -> usize {
    (count / BUFFERS_PER_LANE).clamp(1, MAX_LANES)
}
/// The slot takes no more reservations.
const SEALED: u64 = 1 << 63;
/// The flusher was dropped while the slot held a buffer: the last reservation to end gives
/// the buffer back.
const CLOSED: u64 = 1 << 62;
/// Where a slot's word keeps how many bytes it handed out (32 bits).
const OFFSET_SHIFT: u32 = 30;
/// Where a slot's word keeps the lane it was opened for (3 bits).
const LANE_SHIFT: u32 = 27;
/// The lane a slot was opened for: a reservation that read the slot as its lane's current one,
/// but finds it reopened for another lane, fails its CAS even if the rest of the word is as it
/// read it.
const LANE: u64 = (1 << OFFSET_SHIFT) - (1 << LANE_SHIFT);
/// The count of open reservations.
const OPEN: u64 = (1 << LANE_SHIFT) - 1;

/// How many bytes a slot whose word is `word` handed out.
fn offset(word: u64) -> usize {
    ((word >> OFFSET_SHIFT) & u64::from(u32::MAX)) as usize
}

/// The bits of a slot's word that say it was opened for `lane`.
fn lane_bits(lane: usize) -> u64 {
    (lane as u64) << LANE_SHIFT
}

/// The word of a slot just opened for `lane` with one reservation of `len` bytes.
fn opened(lane: usize, len: usize) -> u64 {
    ((len as u64) << OFFSET_SHIFT) | lane_bits(lane) | 1
}

struct State {
    /// One per buffer of the pool: more than the writer can ever hold at once.
    slots: Box<[Slot]>,
    /// The slots holding no buffer.
    free: Vec<u32>,
    /// The slots holding a buffer, in the order they were opened.
    queue: VecDeque<u32>,
    /// How many `Writer` handles live.
    writers: usize,
    /// The flusher was dropped.
    closed: bool,
    /// The waker of the flusher's latest pending poll.
    flusher: Option<Waker>,
}

/// One buffer of the writer, while it holds it: what only lock holders touch.
struct Slot {
    /// The packet of all the buffer's bytes; `None` while the slot is free.
    packet: Option<Packet>,
    /// The lane it was opened for.
    lane: u32,
    /// How many bytes were handed to the flusher.
    flushed: usize,
    /// A flush was asked for while it was its lane's current slot, and it has not been
    /// flushed since: the flusher takes its committed bytes as soon as no reservation is
    /// open in it, and it takes no more reservations if one is open then.
    flush_asked: bool,
    /// Whether any bit of `holes` is set.
    has_holes: bool,
    /// One bit per byte: set for the room of an abandoned reservation.
    holes: Box<[u64]>,
}

impl Slot {
    fn mark_hole(&mut self, start: usize, end: usize) {
        for at in start..end {
            self.holes[at / 64] |= 1 << (at % 64);
        }
        self.has_holes |= start < end;
    }

    /// The first byte at or after `from`, before `end`, whose hole bit is `hole`; or `end`.
    fn next_with(&self, from: usize, end: usize, hole: bool) -> usize {
        let mut at = from;
        while at < end {
            let word = self.holes[at / 64];
            let word = if hole { word } else { !word };
            // The bits from `at` on; those shifted in at the top are 0, never a match.
            let ahead = word >> (at % 64);
            if ahead != 0 {
                return (at + ahead.trailing_zeros() as usize).min(end);
            }
            at += 64 - at % 64;
        }
        end
    }

    /// Moves the runs of committed bytes not flushed yet, up to `end`, into `out`, as
    /// packets; `false` if `out` filled up first.
    fn emit(&mut self, end: usize, out: &mut Vec<Packet>) -> bool {
        let packet = self.packet.as_ref().expect("a queued slot holds a buffer");
        while self.flushed < end {
            if out.len() == out.capacity() {
                return false;
            }
            let (start, stop) = if self.has_holes {
                let start = self.next_with(self.flushed, end, false);
                (start, self.next_with(start, end, true))
            } else {
                (self.flushed, end)
            };
            if start < stop {
                out.push(packet.slice(start..stop));
            }
            self.flushed = stop;
        }
        true
    }

    /// Gives the slot back to the free list's state: its packet, to be dropped by the caller
    /// with the lock released.
    fn reset(&mut self) -> Option<Packet> {
        if self.has_holes {
            self.holes.fill(0);
            self.has_holes = false;
        }
        self.flushed = 0;
        self.flush_asked = false;
        self.packet.take()
    }
}

impl Shared {
    /// The lock. No user code runs with it held, so no panic leaves it half-changed, and a
    /// poisoned lock is used as is.
    fn lock(&self) -> MutexGuard<'_, State> {
        #[cfg(feature = "std")]
        return self
            .state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        #[cfg(not(feature = "std"))]
        return self.state.lock();
    }

    /// Reserves `len` bytes in the current slot of `lane`, if it has room, without the lock:
    /// one CAS of its word. `None` if there is no current slot, or it is sealed, closed, full
    /// or (reopened since `currents` was read) another lane's.
    #[inline]
    fn reserve_in_current(&self, lane: usize, len: usize) -> Option<Room> {
        // Acquire pairs with the Release store that made the slot current: its word and base
        // were stored before.
        let index = self.currents[lane].load(Ordering::Acquire);
        let open = self.open.get(index as usize)?;
        let word = &open.word;
        let mut before = word.load(Ordering::Relaxed);
        loop {
            if before & (SEALED | CLOSED | LANE) != lane_bits(lane) {
                return None;
            }
            let offset = offset(before);
            if self.size - offset < len {
                return None;
            }
            if before & OPEN == OPEN {
                pinfold_arena::unwind::abort();
            }
            // Acquire pairs with the Release store of the word that opened this slot (the
            // base, and the zeroed buffer, happen before the bytes are written): the CAS
            // reads it, or a later read-modify-write of the same word. If the slot was
            // sealed, flushed and opened again since `current` was read, the CAS fails if it
            // was opened for another lane (the lane is in the word), and otherwise reserves
            // in the buffer the slot holds when it lands, which is then the newest of this
            // lane: after every message of this handle. The base is read after the CAS.
            match word.compare_exchange_weak(
                before,
                before + ((len as u64) << OFFSET_SHIFT) + 1,
                Ordering::Acquire,
                Ordering::Relaxed,
            ) {
                Ok(_) => {
                    let base = open.base.load(Ordering::Relaxed);
                    // SAFETY: `offset + len <= size`: the pointer stays within the buffer
                    // the slot holds, or one past it.
                    let bytes = unsafe { base.add(offset) };
                    return Some(Room {
                        slot: index,
                        offset,
                        len,
                        bytes: NonNull::new(bytes).expect("an open slot has a buffer"),
                    });
                }
                Err(now) => before = now,
            }
        }
    }

    /// Reserves `len` bytes in the current slot of `lane`, if it has room. Otherwise seals it
    /// and returns `None`: the caller gets a buffer.
    #[inline]
    fn reserve(&self, lane: usize, len: usize) -> Result<Option<Room>, ReserveError> {
        match self.reserve_in_current(lane, len) {
            Some(room) => Ok(Some(room)),
            None => self.reserve_slow(lane, len),
        }
    }

    #[cold]
    #[inline(never)]
    fn reserve_slow(&self, lane: usize, len: usize) -> Result<Option<Room>, ReserveError> {
        let mut state = self.lock();
        if state.closed {
            return Err(ReserveError::Closed);
        }
        // Another writer may have opened a new slot meanwhile.
        if let Some(room) = self.reserve_in_current(lane, len) {
            return Ok(Some(room));
        }
        let wake = self.seal_current(lane, &mut state);
        drop(state);
        if let Some(waker) = wake {
            waker.wake();
        }
        Ok(None)
    }

    /// A buffer for a writer of `lane` whose current slot is full: at once if the pool has
    /// one free, or else once it has; if it waits, it first seals the other lanes' current
    /// slots (so that buffers no lane would fill for a while reach the flusher, and come
    /// back).
    async fn buffer_for(&self, lane: usize) -> Buf {
        let mut acquire = core::pin::pin!(self.pool.acquire());
        let mut sealed = false;
        poll_fn(|cx| {
            let poll = acquire.as_mut().poll(cx);
            if poll.is_pending() && !sealed {
                sealed = true;
                self.seal_others(lane);
            }
            poll
        })
        .await
    }

    /// Seals the current slot of every lane but `lane`.
    fn seal_others(&self, lane: usize) {
        if self.currents.len() == 1 {
            return;
        }
        let mut state = self.lock();
        let wake = self.seal_lanes(&mut state, Some(lane));
        drop(state);
        if let Some(waker) = wake {
            waker.wake();
        }
    }

    /// With the lock held: seals the current slot of every lane but `keep`; the flusher's
    /// waker, to wake if one of them is ready for it.
    fn seal_lanes(&self, state: &mut State, keep: Option<usize>) -> Option<Waker> {
        let mut wake = None;
        for lane in (0..self.currents.len()).filter(|&lane| Some(lane) != keep) {
            wake = self.seal_current(lane, state).or(wake);
        }
        wake
    }

    /// Opens a slot of `lane` on `buf` (unless another writer opened one with room meanwhile)
    /// and reserves `len` bytes in it.
    fn reserve_new(&self, lane: usize, buf: Buf, len: usize) -> Result<Room, ReserveError> {
        let (packet, base) = prepare(buf);
        let mut state = self.lock();
        if state.closed {
            drop(state);
            drop(packet);
            return Err(ReserveError::Closed);
        }
        if let Some(room) = self.reserve_in_current(lane, len) {
            drop(state);
            drop(packet);
            return Ok(room);
        }
        let wake = self.seal_current(lane, &mut state);
        let index = state
            .free
            .pop()
            .expect("the writer holds fewer buffers than the pool has");
        let slot = &mut state.slots[index as usize];
        slot.packet = Some(packet);
        slot.lane = lane as u32;
        state.queue.push_back(index);
        let open = &self.open[index as usize];
        open.base.store(base.as_ptr(), Ordering::Relaxed);
        // Release pairs with the Acquire of the reservations' CAS: the base, and the zeroed
        // buffer, happen before their writes. The word holds this writer's reservation.
        open.word.store(opened(lane, len), Ordering::Release);
        // Release pairs with the reservations' Acquire load of `currents`.
        self.currents[lane].store(index, Ordering::Release);
        drop(state);
        if let Some(waker) = wake {
            waker.wake();
        }
        Ok(Room {
            slot: index,
            offset: 0,
            len,
            bytes: base,
        })
    }

    /// With the lock held: the current slot of `lane` takes no more reservations; the
    /// flusher's waker, to wake if the slot is ready for it.
    fn seal_current(&self, lane: usize, state: &mut State) -> Option<Waker> {
        let index = self.currents[lane].load(Ordering::Relaxed);
        if index == NONE {
            return None;
        }
        // Relaxed: only lock holders change `currents`, and a reservation that read the old
        // value finds the slot sealed (or, reopened, current again).
        self.currents[lane].store(NONE, Ordering::Relaxed);
        // Relaxed: whichever of this and the last reservation's end comes second sees the
        // other (one variable) and wakes the flusher, which then takes the lock.
        let before = self.open[index as usize]
            .word
            .fetch_or(SEALED, Ordering::Relaxed);
        if before & OPEN == 0 {
            state.flusher.take()
        } else {
            None
        }
    }

    /// Commits `room` without the lock, unless it is the last open reservation of a sealed
    /// or closed slot.
    #[inline]
    fn commit(&self, room: &Room) {
        // Release pairs with the flusher's Acquire load of the word (in `take`) and with the
        // Flusher's drop: the bytes written happen before they are read, and before the
        // buffer goes back.
        let before = self.open[room.slot as usize]
            .word
            .fetch_sub(1, Ordering::Release);
        if before & OPEN == 1 && before & (SEALED | CLOSED) != 0 {
            self.last_ended(room.slot, before, None);
        }
    }

    /// Ends the reservation of `room` under the lock: abandoned (its room skipped, or handed
    /// out again if it is the last handed out), or, with `keep`, committed and kept as a
    /// packet, which is returned.
    fn end_locked(&self, room: &Room, keep: bool) -> Option<Packet> {
        let mut guard = self.lock();
        let slot = &mut guard.slots[room.slot as usize];
        let word = &self.open[room.slot as usize].word;
        let end = room.offset + room.len;
        let (kept, before) = if keep {
            let kept = slot
                .packet
                .as_ref()
                .map(|packet| packet.slice(room.offset..end));
            // Release as in `commit`.
            (kept, word.fetch_sub(1, Ordering::Release))
        } else {
            (None, Self::abandon(slot, word, room))
        };
        if before & OPEN == 1 && before & (SEALED | CLOSED) != 0 {
            self.last_ended(room.slot, before, Some(guard));
        } else {
            drop(guard);
        }
        kept
    }

    /// With the lock held: ends abandoned `room`, whose slot's word is `word`, and returns
    /// the word before. If nothing was handed out after it and the slot takes reservations,
    /// the room is zeroed and goes back (a CAS of the offset and the count together);
    /// otherwise it is marked as a hole, which the flusher skips.
    fn abandon(slot: &mut Slot, word: &AtomicU64, room: &Room) -> u64 {
        let end = room.offset + room.len;
        let mut before = word.load(Ordering::Relaxed);
        if before & (SEALED | CLOSED) == 0 && offset(before) == end {
            // Zeroed before it goes back, as a new reservation's room must be. If the CAS
            // below fails, the room becomes a hole, and its bytes are never read.
            // SAFETY: the room is `room.len` bytes of the slot's buffer, held by the slot's
            // packet while the reservation is open, and written through this reservation
            // alone until the CAS below hands it out again.
            unsafe { ptr::write_bytes(room.bytes.as_ptr(), 0, room.len) };
        }
        while before & (SEALED | CLOSED) == 0 && offset(before) == end {
            // Release as in `commit` (the room's bytes are not flushed, but the count is
            // what the flusher reads), and it pairs with the Acquire of the reservation that
            // takes the room next: the zeroes happen before its writes.
            match word.compare_exchange_weak(
                before,
                before - ((room.len as u64) << OFFSET_SHIFT) - 1,
                Ordering::Release,
                Ordering::Relaxed,
            ) {
                Ok(_) => return before,
                Err(now) => before = now,
            }
        }
        // Marked before the count goes down: the flusher reads the holes under the lock,
        // held here.
        slot.mark_hole(room.offset, end);
        // Release as in `commit`.
        word.fetch_sub(1, Ordering::Release)
    }

    /// The last open reservation of slot `index` ended, `before` being the count it took to
    /// 0: gives the buffer back if the slot was closed (the count was above 0, so the slot
    /// was not reused since), or else (it was sealed) wakes the flusher.
    #[cold]
    #[inline(never)]
    fn last_ended(&self, index: u32, before: u64, locked: Option<MutexGuard<'_, State>>) {
        let mut state = locked.unwrap_or_else(|| self.lock());
        let (spent, wake) = if before & CLOSED != 0 {
            (state.slots[index as usize].packet.take(), None)
        } else {
            (None, state.flusher.take())
        };
        drop(state);
        drop(spent);
        if let Some(waker) = wake {
            waker.wake();
        }
    }

    /// Asks for the committed bytes of every lane's current slot to be flushed: each is
    /// marked, and stays so until the flusher takes it, even if a slot opened before it in its
    /// lane holds it back meanwhile.
    fn request_flush(&self) {
        let mut state = self.lock();
        for current in &self.currents {
            // Relaxed: only lock holders change `currents`.
            let index = current.load(Ordering::Relaxed);
            if let Some(slot) = state.slots.get_mut(index as usize) {
                slot.flush_asked = true;
            }
        }
        let wake = state.flusher.take();
        drop(state);
        if let Some(waker) = wake {
            waker.wake();
        }
    }

    /// With the lock held: moves every run of committed bytes that may be flushed now into
    /// `out` (while it has room) and the packets of slots done with into `spent`. The slots
    /// go in the order they were opened, each lane's after the earlier ones of that lane: a
    /// slot that cannot be flushed yet holds back the later slots of its lane only.
    fn take(&self, state: &mut State, out: &mut Vec<Packet>, spent: &mut Vec<Packet>) {
        // One bit per lane held back.
        let mut held: u64 = 0;
        let mut at = 0;
        while let Some(&index) = state.queue.get(at) {
            let lane = state.slots[index as usize].lane as usize;
            if held & (1 << lane) != 0 {
                at += 1;
                continue;
            }
            let requested = state.slots[index as usize].flush_asked;
            let word = &self.open[index as usize].word;
            // Acquire pairs with the Release of every reservation's end: the bytes of the
            // rooms committed happen before they are read.
            let mut now = word.load(Ordering::Acquire);
            if now & OPEN > 0 && requested && now & SEALED == 0 {
                // Flushed once its open reservations end; later ones go to a new buffer.
                if self.currents[lane].load(Ordering::Relaxed) == index {
                    self.currents[lane].store(NONE, Ordering::Relaxed);
                }
                // Acquire as above, if the last one ended meanwhile: then flush it now.
                now = word.fetch_or(SEALED, Ordering::Acquire) | SEALED;
            }
            let sealed = now & SEALED != 0;
            if now & OPEN > 0 || (!sealed && !requested) {
                held |= 1 << lane;
                at += 1;
                continue;
            }
            let slot = &mut state.slots[index as usize];
            // No reservation is open below `offset(now)`: every room there ended.
            if !slot.emit(offset(now), out) {
                // `out` is full: the rest next time, the flush still asked for.
                return;
            }
            if !sealed {
                // Its lane's current slot, flushed as asked: it takes reservations on.
                slot.flush_asked = false;
                held |= 1 << lane;
                at += 1;
                continue;
            }
            if let Some(packet) = slot.reset() {
                spent.push(packet);
            }
            // Relaxed: no reservation is open, and the slot opens again under the lock. Free,
            // it takes none.
            word.store(SEALED, Ordering::Relaxed);
            state.queue.remove(at);
            state.free.push(index);
        }
    }
}

/// Zeroes `buf` (so that every byte of it is initialized) and freezes it whole: the packet
/// and a pointer through which its bytes are written.
fn prepare(mut buf: Buf) -> (Packet, NonNull<u8>) {
    let room = buf.spare_capacity_mut();
    room.fill(MaybeUninit::new(0));
    let len = room.len();
    let base = NonNull::new(room.as_mut_ptr().cast::<u8>()).expect("a slice's pointer");
    // SAFETY: all `len` bytes of the room were written just above.
    unsafe { buf.set_len(len) };
    (buf.freeze(), base)
}

/// A reserved range of a slot.
struct Room {
    slot: u32,
    offset: usize,
    len: usize,
    bytes: NonNull<u8>,
}

/// A handle that writes messages into the pool's buffers, for its [`Flusher`]. Made by
/// [`channel`]; clone it for each task that writes (`Clone + Send + Sync`). See the
/// [module](self) for what is guaranteed.
pub struct Writer {
    shared: Arc<Shared>,
    /// Which of the writer's lanes (each with a buffer being filled) this handle writes in.
    lane: usize,
}

impl Writer {
    /// Room for a message of `len` bytes (zeroed), in the buffer being filled, or in a new one
    /// as soon as the pool has one. Fill it, then [`commit`](Reservation::commit) it.
    ///
    /// Dropping the future while it waits for a buffer gives up its place in the pool's queue
    /// and loses nothing.
    ///
    /// # Errors
    /// [`ReserveError::TooLarge`] if `len` is more than a buffer's size;
    /// [`ReserveError::Closed`] if the flusher was dropped.
    ///
    /// # Example
    ///
    /// ```
    /// use pinfold_pool::{BufferPool, writer::{self, ReserveError}};
    ///
    /// # futures_executor::block_on(async {
    /// let pool = BufferPool::new(2, 16);
    /// let (mut writer, flusher) = writer::channel(&pool);
    /// let mut message = writer.reserve(5).await.unwrap();
    /// message.copy_from_slice(b"hello");
    /// let packet = message.commit_packet(); // delivered, and kept
    /// assert_eq!(&packet[..], b"hello");
    ///
    /// let error = writer.reserve(17).await.unwrap_err();
    /// assert_eq!(error, ReserveError::TooLarge { len: 17, buffer_size: 16 });
    /// drop(flusher);
    /// assert_eq!(writer.reserve(1).await.unwrap_err(), ReserveError::Closed);
    /// # });
    /// ```
    pub async fn reserve(&mut self, len: usize) -> Result<Reservation<'_>, ReserveError> {
        self.check(len)?;
        let room = match self.shared.reserve(self.lane, len)? {
            Some(room) => room,
            None => {
                let buf = self.shared.buffer_for(self.lane).await;
                self.shared.reserve_new(self.lane, buf, len)?
            }
        };
        Ok(Reservation::new(self, room))
    }

    /// As [`reserve`](Writer::reserve), without waiting: [`ReserveError::WouldWait`] if the
    /// buffer being filled has no room and the pool has no free buffer.
    #[inline]
    pub fn try_reserve(&mut self, len: usize) -> Result<Reservation<'_>, ReserveError> {
        self.check(len)?;
        let room = match self.shared.reserve(self.lane, len)? {
            Some(room) => room,
            None => {
                let Some(buf) = self.shared.pool.try_acquire() else {
                    // As `reserve` does before it waits.
                    self.shared.seal_others(self.lane);
                    return Err(ReserveError::WouldWait);
                };
                self.shared.reserve_new(self.lane, buf, len)?
            }
        };
        Ok(Reservation::new(self, room))
    }

    /// Asks the flusher to take the committed messages of the buffer being filled now, rather
    /// than when it is full: at once if no reservation is open in it, or else as soon as the
    /// open ones end (and new ones go to another buffer). The request holds until that buffer
    /// is flushed, also when an earlier buffer of its lane, with a reservation still open,
    /// holds it back meanwhile.
    pub fn flush(&self) {
        self.shared.request_flush();
    }

    #[inline]
    fn check(&self, len: usize) -> Result<(), ReserveError> {
        if len > self.shared.size {
            return Err(ReserveError::TooLarge {
                len,
                buffer_size: self.shared.size,
            });
        }
        Ok(())
    }
}

impl Clone for Writer {
    /// Another handle, in the next lane (see [*Order*](self#guarantees)).
    fn clone(&self) -> Self {
        self.shared.lock().writers += 1;
        // Relaxed: the counter only spreads the handles over the lanes.
        let lane =
            self.shared.next_lane.fetch_add(1, Ordering::Relaxed) % self.shared.currents.len();
        Self {
            shared: self.shared.clone(),
            lane,
        }
    }
}

impl Drop for Writer {
    /// The last handle's drop seals the buffers being filled and wakes the flusher: no more
    /// writes are coming.
    fn drop(&mut self) {
        let mut state = self.shared.lock();
        state.writers -= 1;
        let wake = if state.writers == 0 {
            self.shared
                .seal_lanes(&mut state, None)
                .or_else(|| state.flusher.take())
        } else {
            None
        };
        drop(state);
        if let Some(waker) = wake {
            waker.wake();
        }
    }
}

impl fmt::Debug for Writer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Writer")
            .field("buffer_size", &self.shared.size)
            .finish_non_exhaustive()
    }
}

/// Room for one message in a shared buffer, from [`Writer::reserve`]: dereferences to its
/// bytes (zeroed at first). [`commit`](Reservation::commit) delivers them; dropped without a
/// commit, the message is lost, and only it.
pub struct Reservation<'a> {
    writer: &'a mut Writer,
    room: Room,
}

// SAFETY: a reservation is the only access to its range of the buffer until it ends, and the
// rest is a `Writer`, which is `Send + Sync`.
unsafe impl Send for Reservation<'_> {}
// SAFETY: `&Reservation` only reads its own range, which nothing else writes.
unsafe impl Sync for Reservation<'_> {}

impl<'a> Reservation<'a> {
    fn new(writer: &'a mut Writer, room: Room) -> Self {
        Self { writer, room }
    }

    /// Delivers the message: the flusher gets it, after every message this handle committed
    /// before it.
    #[inline]
    pub fn commit(self) {
        let this = core::mem::ManuallyDrop::new(self);
        this.writer.shared.commit(&this.room);
    }

    /// Delivers the message, and keeps it as a [`Packet`] too (the buffer stays out of the
    /// pool while the packet lives).
    pub fn commit_packet(self) -> Packet {
        let this = core::mem::ManuallyDrop::new(self);
        this.writer
            .shared
            .end_locked(&this.room, true)
            .expect("the buffer of an open reservation is held")
    }
}

impl Deref for Reservation<'_> {
    type Target = [u8];

    #[inline]
    fn deref(&self) -> &[u8] {
        // SAFETY: the range was zeroed when its buffer was opened (or when an abandoned
        // reservation gave it back) and is only written through this reservation; the slot's
        // packet keeps the buffer alive while it is open.
        unsafe { core::slice::from_raw_parts(self.room.bytes.as_ptr(), self.room.len) }
    }
}

impl DerefMut for Reservation<'_> {
    #[inline]
    fn deref_mut(&mut self) -> &mut [u8] {
        // SAFETY: as in `deref`, and `&mut self` makes this the only access.
        unsafe { core::slice::from_raw_parts_mut(self.room.bytes.as_ptr(), self.room.len) }
    }
}

impl Drop for Reservation<'_> {
    /// Abandons the message: its room is skipped.
    fn drop(&mut self) {
        self.writer.shared.end_locked(&self.room, false);
    }
}

impl fmt::Debug for Reservation<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Reservation")
            .field("len", &self.room.len)
            .finish_non_exhaustive()
    }
}

/// The one consumer of a [`Writer`]'s messages: gives them in [`Batch`]es of packets, in
/// order (see the [module](self)). Dropping it makes reservations fail with
/// [`ReserveError::Closed`] and gives its buffers back.
pub struct Flusher {
    shared: Arc<Shared>,
    out: Vec<Packet>,
    spent: Vec<Packet>,
}

impl Flusher {
    /// The next batch: waits until a buffer is full, a flush is asked for, or the last writer
    /// is dropped. `None` once every `Writer` handle is dropped and every message delivered.
    pub async fn next_batch(&mut self) -> Option<Batch<'_>> {
        let more = poll_fn(|cx| self.poll_fill(Some(cx))).await;
        more.then(|| Batch {
            packets: &mut self.out,
        })
    }

    /// The batch ready now, if any, without waiting.
    pub fn try_next_batch(&mut self) -> Option<Batch<'_>> {
        let ready = self.poll_fill(None).is_ready() && !self.out.is_empty();
        ready.then(|| Batch {
            packets: &mut self.out,
        })
    }

    /// Whether every `Writer` handle is dropped and every message delivered.
    pub fn is_finished(&self) -> bool {
        let state = self.shared.lock();
        state.writers == 0 && state.queue.is_empty()
    }

    /// Asks for the committed messages of the buffer being filled to come in the next batch,
    /// as [`Writer::flush`] does.
    pub fn flush_open(&mut self) {
        self.shared.request_flush();
    }

    /// `Ready(true)` with `out` filled, `Ready(false)` when finished, `Pending` (with the
    /// waker of `cx` stored) when there is nothing yet.
    fn poll_fill(&mut self, cx: Option<&mut Context<'_>>) -> Poll<bool> {
        self.out.clear();
        let mut fresh: Option<Waker> = None;
        let result = loop {
            let mut state = self.shared.lock();
            self.shared.take(&mut state, &mut self.out, &mut self.spent);
            if !self.out.is_empty() {
                break Poll::Ready(true);
            }
            if state.writers == 0 && state.queue.is_empty() {
                break Poll::Ready(false);
            }
            let Some(cx) = cx.as_ref() else {
                break Poll::Pending;
            };
            if let Some(waker) = fresh.take() {
                let replaced = state.flusher.replace(waker);
                drop(state);
                drop(replaced);
                break Poll::Pending;
            }
            if state
                .flusher
                .as_ref()
                .is_some_and(|waker| waker.will_wake(cx.waker()))
            {
                break Poll::Pending;
            }
            drop(state);
            self.spent.clear();
            // Cloned with the lock released: a waker's code may take it.
            fresh = Some(cx.waker().clone());
        };
        self.spent.clear();
        result
    }
}

impl Drop for Flusher {
    /// Closes the writer: reservations fail from now on; every buffer without an open
    /// reservation goes back at once, the others when their reservations end.
    fn drop(&mut self) {
        let mut guard = self.shared.lock();
        let state = &mut *guard;
        state.closed = true;
        // Relaxed: reservations that read the old values find their slots closed.
        for current in &self.shared.currents {
            current.store(NONE, Ordering::Relaxed);
        }
        let waker = state.flusher.take();
        while let Some(index) = state.queue.pop_front() {
            // Acquire pairs with the Release of the reservations' ends: their writes happen
            // before the buffer goes back. Whichever of this and the last end comes second
            // gives it back.
            let before = self.shared.open[index as usize]
                .word
                .fetch_or(CLOSED, Ordering::Acquire);
            if before & OPEN == 0 {
                if let Some(packet) = state.slots[index as usize].reset() {
                    self.spent.push(packet);
                }
            }
        }
        drop(guard);
        drop(waker);
        self.spent.clear();
        self.out.clear();
    }
}

impl fmt::Debug for Flusher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Flusher").finish_non_exhaustive()
    }
}

/// The packets of one [`Flusher::next_batch`]: runs of whole messages, in order, to be
/// written out in turn. Dropping it drops them (a buffer goes back to the pool once no
/// packet of it lives); clone a packet to keep it.
pub struct Batch<'a> {
    packets: &'a mut Vec<Packet>,
}

impl Batch<'_> {
    /// How many bytes in all.
    pub fn bytes(&self) -> usize {
        self.packets.iter().map(|packet| packet.len()).sum()
    }

    /// Writes every packet to `out`, with vectored writes of up to 64 packets, until all is
    /// written or an error comes.
    #[cfg(feature = "std")]
    #[cfg_attr(docsrs, doc(cfg(feature = "std")))]
    pub fn write_all_to(&self, out: &mut impl std::io::Write) -> std::io::Result<()> {
        let mut cursor = BatchCursor::default();
        while cursor.next < self.packets.len() {
            let written = cursor.write_with(self.packets, |slices| out.write_vectored(slices))?;
            cursor.advance(self.packets, written)?;
        }
        Ok(())
    }

    /// [`write_all_to`](Batch::write_all_to) for a tokio `AsyncWrite` (a `TcpStream`, say).
    #[cfg(feature = "tokio")]
    #[cfg_attr(docsrs, doc(cfg(feature = "tokio")))]
    pub async fn write_all_to_async(
        &self,
        out: &mut (impl tokio::io::AsyncWrite + Unpin),
    ) -> std::io::Result<()> {
        let mut cursor = BatchCursor::default();
        while cursor.next < self.packets.len() {
            let written = core::future::poll_fn(|cx| {
                cursor.write_with(self.packets, |slices| {
                    core::pin::Pin::new(&mut *out).poll_write_vectored(cx, slices)
                })
            })
            .await?;
            cursor.advance(self.packets, written)?;
        }
        Ok(())
    }
}

/// How far a batch's vectored writes got: the next packet, and how many of its bytes are
/// written.
#[cfg(feature = "std")]
#[derive(Default)]
struct BatchCursor {
    next: usize,
    skip: usize,
}

#[cfg(feature = "std")]
impl BatchCursor {
    /// Calls `write` with the unwritten bytes of up to 64 packets from the cursor on.
    fn write_with<R>(
        &self,
        packets: &[Packet],
        write: impl FnOnce(&[std::io::IoSlice<'_>]) -> R,
    ) -> R {
        let mut slices = [std::io::IoSlice::new(&[]); 64];
        let mut count = 0;
        for (at, packet) in packets[self.next..].iter().take(64).enumerate() {
            slices[at] = std::io::IoSlice::new(if at == 0 {
                &packet[self.skip..]
            } else {
                packet
            });
            count += 1;
        }
        write(&slices[..count])
    }

    /// Moves past `written` bytes; a write of none is an error (`WriteZero`).
    fn advance(&mut self, packets: &[Packet], mut written: usize) -> std::io::Result<()> {
        if written == 0 {
            return Err(std::io::ErrorKind::WriteZero.into());
        }
        while written > 0 {
            let left = packets[self.next].len() - self.skip;
            if written >= left {
                written -= left;
                self.next += 1;
                self.skip = 0;
            } else {
                self.skip += written;
                written = 0;
            }
        }
        Ok(())
    }
}

impl Deref for Batch<'_> {
    type Target = [Packet];

    fn deref(&self) -> &[Packet] {
        self.packets
    }
}

impl Drop for Batch<'_> {
    fn drop(&mut self) {
        self.packets.clear();
    }
}

impl fmt::Debug for Batch<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Batch")
            .field("packets", &self.packets.len())
            .finish_non_exhaustive()
    }
}
