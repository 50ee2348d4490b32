//! The slots: a buffer the writer holds, with its word (what reservations and commits touch
//! without the lock: how many bytes it handed out, its lane, how many reservations are open in
//! it, and whether it is sealed or closed) and what only lock holders touch (its packet, how far
//! it was flushed, and its holes).

use alloc::boxed::Box;
use alloc::vec::Vec;
use core::mem::MaybeUninit;
use core::ptr::NonNull;

use super::MAX_LANES;
use crate::buf::Buf;
use crate::packet::Packet;
use crate::sync::{AtomicPtr, AtomicU64};

/// A slot's part of [`Shared::open`](super::Shared::open).
pub(super) struct Open {
    /// How many bytes the slot handed out ([`offset`]), the lane it was opened for
    /// ([`LANE`]), how many reservations are open in it ([`OPEN`]), and whether it takes no
    /// more ([`SEALED`]: full, asked to flush, or free) or its flusher is gone ([`CLOSED`]).
    /// A reservation is a CAS here alone, a commit a subtraction here alone; the end that
    /// takes the count to 0 in a sealed or closed slot takes the lock, to wake the flusher or
    /// give the buffer back.
    pub(super) word: AtomicU64,
    /// The first byte of the slot's buffer, writable (taken from its `Buf` before it was
    /// frozen); stored before the slot opens.
    pub(super) base: AtomicPtr<u8>,
}

/// The slot takes no more reservations.
pub(super) const SEALED: u64 = 1 << 63;
/// The flusher was dropped while the slot held a buffer: the last reservation to end gives
/// the buffer back.
pub(super) const CLOSED: u64 = 1 << 62;
/// Where a slot's word keeps how many bytes it handed out (32 bits).
pub(super) const OFFSET_SHIFT: u32 = 30;
/// Where a slot's word keeps the lane it was opened for (3 bits).
const LANE_SHIFT: u32 = 27;
/// The lane a slot was opened for: a reservation that read the slot as its lane's current one,
/// but finds it reopened for another lane, fails its CAS even if the rest of the word is as it
/// read it.
pub(super) const LANE: u64 = (1 << OFFSET_SHIFT) - (1 << LANE_SHIFT);
/// The count of open reservations.
pub(super) const OPEN: u64 = (1 << LANE_SHIFT) - 1;
// Every lane fits in `LANE`.
const _: () = assert!((MAX_LANES as u64 - 1) << LANE_SHIFT <= LANE);

/// How many bytes a slot whose word is `word` handed out.
pub(super) fn offset(word: u64) -> usize {
    ((word >> OFFSET_SHIFT) & u64::from(u32::MAX)) as usize
}

/// The bits of a slot's word that say it was opened for `lane`.
pub(super) fn lane_bits(lane: usize) -> u64 {
    (lane as u64) << LANE_SHIFT
}

/// The word of a slot just opened for `lane` with one reservation of `len` bytes.
pub(super) fn opened(lane: usize, len: usize) -> u64 {
    ((len as u64) << OFFSET_SHIFT) | lane_bits(lane) | 1
}

/// One buffer of the writer, while it holds it: what only lock holders touch.
pub(super) struct Slot {
    /// The packet of all the buffer's bytes; `None` while the slot is free.
    pub(super) packet: Option<Packet>,
    /// The lane it was opened for.
    pub(super) lane: u32,
    /// How many bytes were handed to the flusher.
    pub(super) flushed: usize,
    /// A flush was asked for while it was its lane's current slot, and it has not been
    /// flushed since: the flusher takes its committed bytes as soon as no reservation is
    /// open in it, and it takes no more reservations if one is open then.
    pub(super) flush_asked: bool,
    /// It was opened after a writer waiting for a buffer sealed the lanes, on a buffer its
    /// opener asked the pool for before that seal: the flusher seals it when it next walks,
    /// as that seal would have, so that its buffer comes back.
    pub(super) seal_asked: bool,
    /// Whether any bit of `holes` is set.
    pub(super) has_holes: bool,
    /// One bit per byte: set for the room of an abandoned reservation.
    pub(super) holes: Box<[u64]>,
}

impl Slot {
    pub(super) fn mark_hole(&mut self, start: usize, end: usize) {
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
    pub(super) fn emit(&mut self, end: usize, out: &mut Vec<Packet>) -> bool {
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
    pub(super) fn reset(&mut self) -> Option<Packet> {
        if self.has_holes {
            self.holes.fill(0);
            self.has_holes = false;
        }
        self.flushed = 0;
        self.flush_asked = false;
        self.seal_asked = false;
        self.packet.take()
    }
}

/// Zeroes `buf` (so that every byte of it is initialized) and freezes it whole: the packet
/// and a pointer through which its bytes are written.
pub(super) fn prepare(mut buf: Buf) -> (Packet, NonNull<u8>) {
    let room = buf.spare_capacity_mut();
    room.fill(MaybeUninit::new(0));
    let len = room.len();
    let base = NonNull::new(room.as_mut_ptr().cast::<u8>()).expect("a slice's pointer");
    // SAFETY: all `len` bytes of the room were written just above.
    unsafe { buf.set_len(len) };
    (buf.freeze(), base)
}
