//! The reservations: a [`Writer`]'s room in its lane's current slot (one CAS of the slot's
//! word, or the lock when the slot is sealed, full or another lane's, and a new buffer when it
//! has no room), and a [`Reservation`]'s commit or abandon.

use core::fmt;
use core::future::{Future, poll_fn};
use core::ops::{Deref, DerefMut};
use core::ptr::{self, NonNull};
use core::task::Waker;

use super::slot::{
    CLOSED, LANE, OFFSET_SHIFT, OPEN, SEALED, Slot, lane_bits, offset, opened, prepare,
};
use super::{NONE, ReserveError, Shared, State};
use crate::buf::Buf;
use crate::packet::Packet;
use crate::sync::{Arc, AtomicU64, MutexGuard, Ordering};

impl Shared {
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
                pinfold_sync::abort();
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

    /// Seals slot `index`, which a reservation of `lane` about to be committed filled to its
    /// last byte: no later reservation fits, so the flusher gets its buffer as its
    /// reservations end, not once the next one finds it full. Unless a writer sealed it
    /// meanwhile (and may have opened another for the lane). The reservation is still open,
    /// so the slot holds the same buffer.
    #[cold]
    #[inline(never)]
    fn seal_filled(&self, lane: usize, index: u32) {
        let state = self.lock();
        // Relaxed: only lock holders change `currents`.
        let current = self.currents[lane].load(Ordering::Relaxed) == index;
        self.seal_and_unlock(lane, current, state);
    }

    /// Seals the current slot of `lane` if `seal`, lets `state`'s lock go, then wakes the
    /// flusher if the seal made the slot ready for it.
    fn seal_and_unlock(&self, lane: usize, seal: bool, mut state: MutexGuard<'_, State>) {
        let wake = if seal {
            self.seal_current(lane, &mut state)
        } else {
            None
        };
        drop(state);
        if let Some(waker) = wake {
            waker.wake();
        }
    }

    #[cold]
    #[inline(never)]
    fn reserve_slow(&self, lane: usize, len: usize) -> Result<Option<Room>, ReserveError> {
        let state = self.lock();
        if state.closed {
            return Err(ReserveError::Closed);
        }
        // Another writer may have opened a new slot meanwhile.
        if let Some(room) = self.reserve_in_current(lane, len) {
            return Ok(Some(room));
        }
        self.seal_and_unlock(lane, true, state);
        Ok(None)
    }

    /// A buffer for a writer whose current slot is full, and the count of [`seals`] it saw
    /// before it asked the pool (for [`reserve_new`]): at once if the pool has one free, or
    /// else once it has; if it waits, it first seals every lane's current slot (so that
    /// buffers no lane would fill for a while reach the flusher, and come back).
    ///
    /// [`seals`]: Shared::seals
    /// [`reserve_new`]: Shared::reserve_new
    async fn buffer_for(&self) -> (Buf, u32) {
        let mut seen = self.seals_before_acquire();
        let mut acquire = core::pin::pin!(self.pool.acquire());
        let mut sealed = false;
        let buf = poll_fn(|cx| {
            let poll = acquire.as_mut().poll(cx);
            if poll.is_pending() && !sealed {
                sealed = true;
                // Its own seal is not one this writer missed; another's counted before it is.
                if self.seal_for_waiter() == seen {
                    seen = seen.wrapping_add(1);
                }
            }
            poll
        })
        .await;
        (buf, seen)
    }

    /// The count of [`seals`](Shared::seals), read before a writer asks the pool for a buffer.
    fn seals_before_acquire(&self) -> u32 {
        // Acquire pairs with the Release store in `seal_for_waiter`: a seal read here was made
        // by a writer already queued in the pool when this one asks it, which the pool serves
        // first; the slot this writer opens is not one that writer waits for.
        self.seals.load(Ordering::Acquire)
    }

    /// Before a writer waits for a buffer: seals the current slot of every lane (its own
    /// lane's too, if a handle of that lane opened one since this writer found it full), and
    /// counts the seal in [`seals`](Shared::seals). The count before it.
    fn seal_for_waiter(&self) -> u32 {
        let mut state = self.lock();
        // Relaxed: changed under the lock only, held here.
        let before = self.seals.load(Ordering::Relaxed);
        // Release pairs with the Acquire load in `seals_before_acquire`.
        self.seals.store(before.wrapping_add(1), Ordering::Release);
        let wake = self.seal_lanes(&mut state);
        drop(state);
        if let Some(waker) = wake {
            waker.wake();
        }
        before
    }

    /// With the lock held: seals the current slot of every lane; the flusher's waker, to
    /// wake if one of them is ready for it.
    fn seal_lanes(&self, state: &mut State) -> Option<Waker> {
        let mut wake = None;
        for lane in 0..self.currents.len() {
            wake = self.seal_current(lane, state).or(wake);
        }
        wake
    }

    /// Opens a slot of `lane` on `buf` (unless another writer opened one with room meanwhile)
    /// and reserves `len` bytes in it. `seen` is the count of [`seals`](Shared::seals) read
    /// before `buf` was asked for: if a waiting writer sealed the lanes since, it missed this
    /// slot, which the flusher then seals when it next walks, as that seal would have, so that
    /// its buffer comes back to the pool.
    ///
    /// With the room, what is left to do once it is a [`Reservation`]'s ([`After`]).
    fn reserve_new(
        &self,
        lane: usize,
        buf: Buf,
        len: usize,
        seen: u32,
    ) -> Result<(Room, After), ReserveError> {
        let (packet, base) = prepare(buf);
        let mut state = self.lock();
        if state.closed {
            drop(state);
            drop(packet);
            return Err(ReserveError::Closed);
        }
        if let Some(room) = self.reserve_in_current(lane, len) {
            drop(state);
            return Ok((room, After::GiveBack(packet)));
        }
        let wake = self.seal_current(lane, &mut state);
        // Relaxed: changed under the lock only, held here.
        let missed = self.seals.load(Ordering::Relaxed) != seen;
        // The flusher walks again to seal the slot.
        let wake = if missed {
            wake.or_else(|| state.flusher.take())
        } else {
            wake
        };
        let index = state
            .free
            .pop()
            .expect("the writer holds fewer buffers than the pool has");
        let slot = &mut state.slots[index as usize];
        slot.packet = Some(packet);
        slot.lane = lane as u32;
        slot.seal_asked = missed;
        state.queue.push_back(index);
        let open = &self.open[index as usize];
        open.base.store(base.as_ptr(), Ordering::Relaxed);
        // Release pairs with the Acquire of the reservations' CAS: the base, and the zeroed
        // buffer, happen before their writes. The word holds this writer's reservation.
        open.word.store(opened(lane, len), Ordering::Release);
        // Release pairs with the reservations' Acquire load of `currents`.
        self.currents[lane].store(index, Ordering::Release);
        drop(state);
        let room = Room {
            slot: index,
            offset: 0,
            len,
            bytes: base,
        };
        Ok((room, wake.map_or(After::Nothing, After::Wake)))
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
}

/// A reserved range of a slot.
struct Room {
    slot: u32,
    offset: usize,
    len: usize,
    bytes: NonNull<u8>,
}

impl Room {
    /// Whether the room ends at the last byte of its buffer, of `size` bytes.
    fn fills(&self, size: usize) -> bool {
        self.offset + self.len == size
    }
}

/// A handle that writes messages into the pool's buffers, for its [`Flusher`]. Made by
/// [`channel`]; clone it for each task that writes (`Clone + Send + Sync`). See the
/// [module](super) for what is guaranteed.
///
/// [`Flusher`]: super::Flusher
/// [`channel`]: super::channel
pub struct Writer {
    pub(super) shared: Arc<Shared>,
    /// Which of the writer's lanes (each with a buffer being filled) this handle writes in.
    pub(super) lane: usize,
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
        let (room, after) = match self.shared.reserve(self.lane, len)? {
            Some(room) => (room, After::Nothing),
            None => {
                let (buf, seen) = self.shared.buffer_for().await;
                self.shared.reserve_new(self.lane, buf, len, seen)?
            }
        };
        Ok(Reservation::new(self, room).then(after))
    }

    /// As [`reserve`](Writer::reserve), without waiting: [`ReserveError::WouldWait`] if the
    /// buffer being filled has no room and the pool has no free buffer.
    #[inline]
    pub fn try_reserve(&mut self, len: usize) -> Result<Reservation<'_>, ReserveError> {
        self.check(len)?;
        let (room, after) = match self.shared.reserve(self.lane, len)? {
            Some(room) => (room, After::Nothing),
            None => {
                let seen = self.shared.seals_before_acquire();
                let Some(buf) = self.shared.pool.try_acquire() else {
                    // As `reserve` does before it waits.
                    self.shared.seal_for_waiter();
                    return Err(ReserveError::WouldWait);
                };
                self.shared.reserve_new(self.lane, buf, len, seen)?
            }
        };
        Ok(Reservation::new(self, room).then(after))
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
    /// Another handle, in the next lane (see [*Order*](super#guarantees)).
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
                .seal_lanes(&mut state)
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

/// What a writer that asked the pool for a buffer does once its room is a [`Reservation`]'s:
/// each calls into a waker, and if that panics, unwinding drops the reservation, which abandons
/// the room instead of leaving it open for ever (which would keep its buffer from the flusher,
/// and the flusher from ending).
enum After {
    /// Nothing: the room was found in an open slot, or no slot is ready for the flusher.
    Nothing,
    /// Wakes the flusher: a slot is ready for it.
    Wake(Waker),
    /// Gives back the buffer the writer took when another had opened a slot with room
    /// meanwhile: it may wake a writer or task waiting for one.
    GiveBack(Packet),
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

    /// Does what `after` holds, now that the room is the reservation's: if a waker panics
    /// there, unwinding drops the reservation, which abandons the room.
    #[inline]
    fn then(self, after: After) -> Self {
        match after {
            After::Nothing => {}
            After::Wake(waker) => waker.wake(),
            After::GiveBack(spare) => drop(spare),
        }
        self
    }

    /// Delivers the message: the flusher gets it, after every message this handle committed
    /// before it.
    #[inline]
    pub fn commit(self) {
        let this = core::mem::ManuallyDrop::new(self);
        this.seal_if_filled();
        this.writer.shared.commit(&this.room);
    }

    /// Seals the buffer if this reservation, about to be committed, fills it to its last byte:
    /// the flusher gets it as its reservations end. An abandoned one gives its room back
    /// instead.
    #[inline]
    fn seal_if_filled(&self) {
        let shared = &self.writer.shared;
        if self.room.fills(shared.size) {
            shared.seal_filled(self.writer.lane, self.room.slot);
        }
    }

    /// Delivers the message, and keeps it as a [`Packet`] too (the buffer stays out of the
    /// pool while the packet lives).
    pub fn commit_packet(self) -> Packet {
        let this = core::mem::ManuallyDrop::new(self);
        this.seal_if_filled();
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
