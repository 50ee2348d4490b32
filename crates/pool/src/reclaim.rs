//! How a [`Buf`](crate::Buf) waits for the packets split off it to be dropped (see
//! [`Buf::poll_reclaim`](crate::Buf::poll_reclaim)): its waker, kept in the buffer's meta, and
//! a flag in the buffer's packet count that says it waits.
//!
//! The protocol, on the packet count (the `Buf`'s 1, plus one per packet):
//! - The `Buf` watches by putting its waker in the meta's cell, then adding [`WATCH`] and one
//!   count of the watch's own. The count cannot fall to the `Buf`'s 1 while the flag is set.
//! - The drop that leaves only the `Buf`'s count and the watch's (`WATCH + 2`) owns the cell
//!   and the watch's count: it takes the waker, gives the flag and that count up (leaving 1),
//!   and wakes the `Buf`'s task.
//! - The `Buf` stops watching by taking the flag and the watch's count back while a packet is
//!   left (`WATCH + 3` or more); it owns the cell again then. At `WATCH + 2` the last packet's
//!   drop is between its two steps, and the `Buf` waits for it to clear the flag: it still
//!   holds its own count, so the drop never gives the buffer back.
//!
//! The cell is two atomic pointers (the waker's data and vtable), so that a meta stays atomics
//! only (see `Metas`); only one side touches it at a time, as above. Checked by the loom model
//! `loom-tests/tests/pool_reclaim_wake_races_packet_drop.rs`.

use core::ptr;
use core::task::{RawWaker, RawWakerVTable, Waker};

use crate::sync::{AtomicPtr, AtomicU32, Ordering, spin_loop};

/// The packet count's flag: a `Buf` of the buffer waits for its packets to be dropped.
pub(crate) const WATCH: u32 = 1 << 31;

/// More packets of one buffer than this is a leak (as `Arc` aborts past `isize::MAX`); far
/// below [`WATCH`], so that no count of packets reaches the flag.
pub(crate) const MAX_PACKETS: u32 = u32::MAX / 4;

/// Whether a packet count read before an increment (the flag left out) is past
/// [`MAX_PACKETS`].
#[inline]
pub(crate) fn too_many(before: u32) -> bool {
    before & !WATCH > MAX_PACKETS
}

/// The waker of a `Buf` that watches, in its buffer's meta: empty (both null) otherwise.
pub(crate) struct WakerCell {
    data: AtomicPtr<()>,
    vtable: AtomicPtr<RawWakerVTable>,
}

impl WakerCell {
    pub(crate) fn new() -> Self {
        Self {
            data: AtomicPtr::new(ptr::null_mut()),
            vtable: AtomicPtr::new(ptr::null_mut()),
        }
    }

    /// Puts `waker` (a clone) in the empty cell. Relaxed: the count's update that follows
    /// publishes it.
    fn put(&self, waker: &Waker) {
        let waker = core::mem::ManuallyDrop::new(waker.clone());
        self.data.store(waker.data().cast_mut(), Ordering::Relaxed);
        let vtable: *const RawWakerVTable = waker.vtable();
        self.vtable.store(vtable.cast_mut(), Ordering::Relaxed);
    }

    /// Takes the waker out, if any, and leaves the cell empty. The caller owns the cell (see
    /// the protocol above) and has acquired the `put`.
    fn take(&self) -> Option<Waker> {
        let vtable = self.vtable.swap(ptr::null_mut(), Ordering::Relaxed);
        let data = self.data.swap(ptr::null_mut(), Ordering::Relaxed);
        if vtable.is_null() {
            return None;
        }
        // SAFETY: the pair is the data and the `'static` vtable of a waker that `put` forgot;
        // the cell is emptied above, so the waker is rebuilt once, and owned by the caller.
        Some(unsafe { Waker::from_raw(RawWaker::new(data, &*vtable)) })
    }
}

/// What a watch found.
pub(crate) enum Watched {
    /// Only the `Buf`'s count is left: no packet of the buffer lives, and their drops happen
    /// before this (acquired). The `Buf` does not watch.
    Alone,
    /// Packets are left; the `Buf` watches, and `waker` will be woken when the last is dropped.
    Waiting,
}

impl WakerCell {
    /// For a `Buf` that does not watch: watches, with `waker`, unless no packet is left.
    pub(crate) fn watch(&self, packets: &AtomicU32, waker: &Waker) -> Watched {
        // Acquire as in `Buf::try_reclaim`: the packets' reads happen before the `Buf` writes.
        if packets.load(Ordering::Acquire) == 1 {
            return Watched::Alone;
        }
        self.put(waker);
        // Release publishes the waker to the drop that takes it; Acquire, in case that no
        // packet is left after all, as above.
        if packets.fetch_add(WATCH + 1, Ordering::AcqRel) == 1 {
            // The last packet was dropped since the load: none is left to take the cell.
            packets.fetch_sub(WATCH + 1, Ordering::Relaxed);
            drop(self.take());
            return Watched::Alone;
        }
        Watched::Waiting
    }

    /// For a `Buf` that watches: stops, and takes its waker back (for the caller to drop once
    /// done with the count: its drop may panic), or waits for the last packet's drop to finish
    /// taking it. Afterwards the count holds no flag, and the cell is empty.
    pub(crate) fn unwatch(&self, packets: &AtomicU32) -> Option<Waker> {
        // Acquire: once the flag is gone, the drop's use of the cell happens before the
        // `Buf`'s next one.
        let mut count = packets.load(Ordering::Acquire);
        loop {
            if count & WATCH == 0 {
                return None;
            }
            if count == WATCH + 2 {
                // The last packet's drop owns the cell, between its two steps.
                spin_loop();
                count = packets.load(Ordering::Acquire);
                continue;
            }
            match packets.compare_exchange_weak(
                count,
                count - (WATCH + 1),
                Ordering::Acquire,
                Ordering::Acquire,
            ) {
                Ok(_) => return self.take(),
                Err(now) => count = now,
            }
        }
    }

    /// For the drop of a packet that left `WATCH + 2`: the `Buf`'s count and the watch's.
    /// Takes the `Buf`'s waker, gives the watch up and wakes it. The `Buf` holds its count
    /// until the flag is gone, so the buffer and the pool's state outlive this.
    #[cold]
    #[inline(never)]
    pub(crate) fn wake_watcher(&self, packets: &AtomicU32) {
        // Acquire pairs with the Release of `watch`: the waker was put before the flag.
        packets.load(Ordering::Acquire);
        let waker = self.take();
        // Release: the reads of the cell happen before the `Buf` uses it again, and this
        // packet's reads of the bytes before the `Buf` writes (see `Buf::try_reclaim`).
        packets.fetch_sub(WATCH + 1, Ordering::Release);
        if let Some(waker) = waker {
            waker.wake();
        }
    }
}
