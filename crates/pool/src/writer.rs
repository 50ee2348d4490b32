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
//!   A handle holds at most one reservation at a time ([`reserve`](Writer::reserve) takes
//!   `&mut self`), so commit order is reservation order; clone the handle to write from
//!   several tasks. Messages of different handles interleave in reservation order.
//! - **Batches.** The flusher gets a buffer when it is full, when a writer or the flusher asks
//!   for a flush ([`Writer::flush`], [`Flusher::flush_open`]), and when the last `Writer`
//!   handle is dropped. A buffer with a reservation still open is never flushed before that
//!   reservation ends; asked for a flush meanwhile, it takes no more reservations (the rest
//!   of it goes unused), and is flushed as soon as its last reservation ends. A batch holds
//!   at most 64 packets, or twice the pool's buffers if that is more; the rest come in the
//!   next.
//! - **Waiting.** A writer that needs a new buffer waits for one in the pool's
//!   [`acquire`](BufferPool::acquire) (first come, first served, no spinning): it waits while
//!   the pool is exhausted, which is also how a flusher that falls behind holds writers back.
//!   A writer and flusher hold at most every buffer of the pool.
//! - **Errors.** A message larger than a buffer is refused with [`ReserveError::TooLarge`].
//!   Once the flusher is dropped, reservations fail with [`ReserveError::Closed`] (a writer
//!   waiting for a buffer gets it once the flusher's buffers are back, then fails).
//! - **Memory.** [`channel`] allocates its bookkeeping once (a record per buffer of the pool,
//!   with one bit per byte to mark the room of abandoned reservations); nothing is allocated
//!   after it, by writers or by the flusher, beyond what a task's waker allocates when it is
//!   cloned.
//!
//! A reservation keeps its buffer from the flusher: awaiting anything while holding one (on
//! another handle, say) delays that buffer's batch, and can wait forever if the pool is
//! exhausted meanwhile. Fill the room, then commit or drop it.
//!
//! # How it works
//!
//! One lock guards the bookkeeping, held for a few word operations and never while user code
//! runs (a waker is woken or dropped after it is released); a full buffer is handed over by
//! marking it sealed under it, in O(1). A new buffer is zeroed and frozen into one packet of
//! all its bytes, which the writer keeps; a reservation is a range of that buffer, written in
//! place through a pointer taken before the freeze, and only its reservation writes there. A
//! buffer records how many bytes it handed out and up to where it was flushed; beside it, one
//! atomic word counts its open reservations and says whether it is sealed (or its flusher
//! gone). A reservation is made under the lock; a commit only counts down the word (with
//! `Release`), and takes the lock only if it ends the last open reservation of a sealed
//! buffer, to wake the flusher; the seal and the last commit are read-modify-writes of the
//! same word, so whichever comes second wakes it. An abandoned reservation marks its room
//! under the lock. The flusher walks the buffers in the order they were opened, stops at the
//! first whose count (loaded with `Acquire`, which pairs with the commits' `Release`) is not
//! 0, and gives each run of committed bytes as a slice of the buffer's packet.

use alloc::boxed::Box;
use alloc::collections::VecDeque;
use alloc::vec::Vec;
use core::fmt;
use core::future::poll_fn;
use core::mem::MaybeUninit;
use core::ops::{Deref, DerefMut};
use core::ptr::NonNull;
use core::task::{Context, Poll, Waker};

use crate::buf::Buf;
use crate::packet::Packet;
use crate::pool::BufferPool;
use crate::sync::{Arc, AtomicU64, Mutex, MutexGuard, Ordering};

/// A [`Writer`] and its [`Flusher`] over `pool`: the writer puts messages into the pool's
/// buffers, the flusher takes them in batches. Allocates the bookkeeping for every buffer of
/// the pool, once (see [*Memory*](self#guarantees)).
pub fn channel(pool: &BufferPool) -> (Writer, Flusher) {
    let count = pool.capacity();
    let words = pool.buffer_size().div_ceil(64);
    let slots = (0..count)
        .map(|_| Slot {
            packet: None,
            base: NonNull::dangling(),
            reserved: 0,
            flushed: 0,
            sealed: false,
            has_holes: false,
            holes: alloc::vec![0; words].into_boxed_slice(),
        })
        .collect();
    let shared = Arc::new(Shared {
        pool: pool.clone(),
        size: pool.buffer_size(),
        open: (0..count).map(|_| AtomicU64::new(0)).collect(),
        state: Mutex::new(State {
            slots,
            free: (0..count as u32).rev().collect(),
            queue: VecDeque::with_capacity(count),
            current: None,
            flush_requested: false,
            writers: 1,
            closed: false,
            flusher: None,
        }),
    });
    let batch = count.saturating_mul(2).max(64);
    let flusher = Flusher {
        shared: shared.clone(),
        out: Vec::with_capacity(batch),
        spent: Vec::with_capacity(count),
    };
    (Writer { shared }, flusher)
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
    /// Per slot, read and changed without the lock: how many reservations are open in it
    /// ([`OPEN`]), and whether it is [`SEALED`] or [`CLOSED`]. A commit counts down here
    /// alone; the reservation that takes the count to 0 in a sealed or closed slot takes the
    /// lock, to wake the flusher or give the buffer back.
    open: Box<[AtomicU64]>,
    state: Mutex<State>,
}

/// The slot takes no more reservations (its `Slot::sealed`, for a commit to read).
const SEALED: u64 = 1 << 63;
/// The flusher was dropped while reservations were open in the slot: the last one to end
/// gives the buffer back.
const CLOSED: u64 = 1 << 62;
/// The count of open reservations.
const OPEN: u64 = CLOSED - 1;

struct State {
    /// One per buffer of the pool: more than the writer can ever hold at once.
    slots: Box<[Slot]>,
    /// The slots holding no buffer.
    free: Vec<u32>,
    /// The slots holding a buffer, in the order they were opened.
    queue: VecDeque<u32>,
    /// The slot taking reservations (the back of `queue`), if any.
    current: Option<u32>,
    /// A flush of the current slot was asked for.
    flush_requested: bool,
    /// How many `Writer` handles live.
    writers: usize,
    /// The flusher was dropped.
    closed: bool,
    /// The waker of the flusher's latest pending poll.
    flusher: Option<Waker>,
}

// SAFETY: the only field that is not `Send` by itself is each slot's `base`, a pointer into
// the buffer that the slot's packet keeps out of the pool; it is only written through by the
// one reservation of each range, on whatever thread, and the lock orders those writes before
// any read (see the module's *How it works*).
unsafe impl Send for State {}

/// One buffer of the writer, while it holds it.
struct Slot {
    /// The packet of all the buffer's bytes; `None` while the slot is free.
    packet: Option<Packet>,
    /// The buffer's first byte, writable (taken from its `Buf` before it was frozen).
    base: NonNull<u8>,
    /// How many bytes were handed out to reservations.
    reserved: usize,
    /// How many bytes were handed to the flusher.
    flushed: usize,
    /// No more reservations: it is full, or a flush was asked for with a reservation open.
    sealed: bool,
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

    /// Moves the runs of committed bytes not flushed yet into `out`, as packets; `false` if
    /// `out` filled up first.
    fn emit(&mut self, out: &mut Vec<Packet>) -> bool {
        let end = self.reserved;
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
        self.reserved = 0;
        self.flushed = 0;
        self.sealed = false;
        self.base = NonNull::dangling();
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

    /// Reserves `len` bytes in the current slot, if it has room. Otherwise seals it and returns
    /// `None`: the caller gets a buffer.
    fn reserve_current(&self, len: usize) -> Result<Option<Room>, ReserveError> {
        let mut state = self.lock();
        if state.closed {
            return Err(ReserveError::Closed);
        }
        if let Some(room) = state.reserve_in_current(len, self.size, &self.open) {
            return Ok(Some(room));
        }
        let wake = state.seal_current(&self.open);
        drop(state);
        if let Some(waker) = wake {
            waker.wake();
        }
        Ok(None)
    }

    /// Opens a slot on `buf` (unless another writer opened one with room meanwhile) and
    /// reserves `len` bytes in it.
    fn reserve_new(&self, buf: Buf, len: usize) -> Result<Room, ReserveError> {
        let (packet, base) = prepare(buf);
        let mut state = self.lock();
        if state.closed {
            drop(state);
            drop(packet);
            return Err(ReserveError::Closed);
        }
        if let Some(room) = state.reserve_in_current(len, self.size, &self.open) {
            drop(state);
            drop(packet);
            return Ok(room);
        }
        let wake = state.seal_current(&self.open);
        let index = state
            .free
            .pop()
            .expect("the writer holds fewer buffers than the pool has");
        let slot = &mut state.slots[index as usize];
        slot.packet = Some(packet);
        slot.base = base;
        state.queue.push_back(index);
        state.current = Some(index);
        let room = state
            .reserve_in_current(len, self.size, &self.open)
            .expect("a new buffer has room for a message that fits in a buffer");
        drop(state);
        if let Some(waker) = wake {
            waker.wake();
        }
        Ok(room)
    }

    /// Commits `room` without the lock, unless it is the last open reservation of a sealed
    /// or closed slot.
    fn commit(&self, room: &Room) {
        // Release pairs with the flusher's Acquire load of the count (in `State::take`) and
        // with the Flusher's drop: the bytes written happen before they are read, and before
        // the buffer goes back.
        let before = self.open[room.slot as usize].fetch_sub(1, Ordering::Release);
        if before & OPEN == 1 && before & (SEALED | CLOSED) != 0 {
            self.last_ended(room.slot, before, None);
        }
    }

    /// Ends the reservation of `room` under the lock: abandoned (its room skipped), or, with
    /// `keep`, committed and kept as a packet, which is returned.
    fn end_locked(&self, room: &Room, keep: bool) -> Option<Packet> {
        let mut guard = self.lock();
        let state = &mut *guard;
        let current = state.current == Some(room.slot);
        let slot = &mut state.slots[room.slot as usize];
        let end = room.offset + room.len;
        let kept = if keep {
            slot.packet
                .as_ref()
                .map(|packet| packet.slice(room.offset..end))
        } else {
            if current && slot.reserved == end {
                // The last room handed out: hand it out again instead.
                slot.reserved = room.offset;
            } else {
                slot.mark_hole(room.offset, end);
            }
            None
        };
        // Release as in `commit`.
        let before = self.open[room.slot as usize].fetch_sub(1, Ordering::Release);
        if before & OPEN == 1 && before & (SEALED | CLOSED) != 0 {
            self.last_ended(room.slot, before, Some(guard));
        } else {
            drop(guard);
        }
        kept
    }

    /// The last open reservation of slot `index` ended, `before` being the count it took to
    /// 0: gives the buffer back if the slot was closed (the count was above 0, so the slot
    /// was not reused since), or else (it was sealed) wakes the flusher.
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

    /// Asks for the current slot's committed bytes to be flushed.
    fn request_flush(&self) {
        let mut state = self.lock();
        state.flush_requested = true;
        let wake = state.flusher.take();
        drop(state);
        if let Some(waker) = wake {
            waker.wake();
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

impl State {
    fn reserve_in_current(&mut self, len: usize, size: usize, open: &[AtomicU64]) -> Option<Room> {
        let index = self.current?;
        let slot = &mut self.slots[index as usize];
        if size - slot.reserved < len {
            return None;
        }
        let offset = slot.reserved;
        slot.reserved += len;
        // Relaxed: the count is only read to decide what to do next, under the lock or by the
        // read-modify-writes of the reservations' ends; the bytes are published by those.
        let before = open[index as usize].fetch_add(1, Ordering::Relaxed);
        if before & OPEN == OPEN {
            pinfold_arena::unwind::abort();
        }
        // SAFETY: `offset + len <= size`: the pointer stays within the buffer or one past it.
        let bytes = unsafe { slot.base.add(offset) };
        Some(Room {
            slot: index,
            offset,
            len,
            bytes,
        })
    }

    /// Takes no more reservations in the current slot; the flusher's waker, to wake if the
    /// slot is ready for it.
    fn seal_current(&mut self, open: &[AtomicU64]) -> Option<Waker> {
        let index = self.current.take()?;
        self.slots[index as usize].sealed = true;
        // Relaxed: whichever of this and the last reservation's end comes second sees the
        // other (one variable) and wakes the flusher, which then takes the lock.
        let before = open[index as usize].fetch_or(SEALED, Ordering::Relaxed);
        if before & OPEN == 0 {
            self.flusher.take()
        } else {
            None
        }
    }

    /// Moves every run of committed bytes that may be flushed now into `out` (while it has
    /// room) and the packets of slots done with into `spent`.
    fn take(&mut self, out: &mut Vec<Packet>, spent: &mut Vec<Packet>, open: &[AtomicU64]) {
        while let Some(&index) = self.queue.front() {
            let requested = self.flush_requested;
            let slot = &mut self.slots[index as usize];
            // Acquire pairs with the Release of every reservation's end: the bytes of the
            // rooms committed happen before they are read.
            if open[index as usize].load(Ordering::Acquire) & OPEN > 0 {
                if !requested || slot.sealed {
                    return;
                }
                // Flushed once its open reservations end; later ones go to a new buffer.
                slot.sealed = true;
                self.current = None;
                self.flush_requested = false;
                // Acquire as above, if the last one ended meanwhile: then flush it now.
                if open[index as usize].fetch_or(SEALED, Ordering::Acquire) & OPEN > 0 {
                    return;
                }
            }
            if !slot.sealed && !requested {
                return;
            }
            if !slot.emit(out) {
                return;
            }
            if !slot.sealed {
                // The current slot, flushed as asked: it takes reservations on.
                self.flush_requested = false;
                return;
            }
            if let Some(packet) = slot.reset() {
                spent.push(packet);
            }
            // Relaxed: no reservation is open, and the next is made under the lock.
            open[index as usize].store(0, Ordering::Relaxed);
            self.queue.pop_front();
            self.free.push(index);
        }
        self.flush_requested = false;
    }
}

/// A handle that writes messages into the pool's buffers, for its [`Flusher`]. Made by
/// [`channel`]; clone it for each task that writes (`Clone + Send + Sync`). See the
/// [module](self) for what is guaranteed.
pub struct Writer {
    shared: Arc<Shared>,
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
        let room = match self.shared.reserve_current(len)? {
            Some(room) => room,
            None => {
                let buf = self.shared.pool.acquire().await;
                self.shared.reserve_new(buf, len)?
            }
        };
        Ok(Reservation::new(self, room))
    }

    /// As [`reserve`](Writer::reserve), without waiting: [`ReserveError::WouldWait`] if the
    /// buffer being filled has no room and the pool has no free buffer.
    pub fn try_reserve(&mut self, len: usize) -> Result<Reservation<'_>, ReserveError> {
        self.check(len)?;
        let room = match self.shared.reserve_current(len)? {
            Some(room) => room,
            None => {
                let buf = self
                    .shared
                    .pool
                    .try_acquire()
                    .ok_or(ReserveError::WouldWait)?;
                self.shared.reserve_new(buf, len)?
            }
        };
        Ok(Reservation::new(self, room))
    }

    /// Asks the flusher to take the committed messages of the buffer being filled now, rather
    /// than when it is full: at once if no reservation is open in it, or else as soon as the
    /// open ones end (and new ones go to another buffer).
    pub fn flush(&self) {
        self.shared.request_flush();
    }

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
    fn clone(&self) -> Self {
        self.shared.lock().writers += 1;
        Self {
            shared: self.shared.clone(),
        }
    }
}

impl Drop for Writer {
    /// The last handle's drop seals the buffer being filled and wakes the flusher: no more
    /// writes are coming.
    fn drop(&mut self) {
        let mut state = self.shared.lock();
        state.writers -= 1;
        let wake = if state.writers == 0 {
            state
                .seal_current(&self.shared.open)
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

    fn deref(&self) -> &[u8] {
        // SAFETY: the range was zeroed when its buffer was opened and is only written through
        // this reservation; the slot's packet keeps the buffer alive while it is open.
        unsafe { core::slice::from_raw_parts(self.room.bytes.as_ptr(), self.room.len) }
    }
}

impl DerefMut for Reservation<'_> {
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
            state.take(&mut self.out, &mut self.spent, &self.shared.open);
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
        state.current = None;
        let waker = state.flusher.take();
        while let Some(index) = state.queue.pop_front() {
            // Acquire pairs with the Release of the reservations' ends: their writes happen
            // before the buffer goes back. Whichever of this and the last end comes second
            // gives it back.
            let before = self.shared.open[index as usize].fetch_or(CLOSED, Ordering::Acquire);
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
