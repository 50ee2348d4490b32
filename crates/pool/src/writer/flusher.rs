//! The flusher's hand-over: flush requests, the walk that takes the committed bytes of the
//! slots in the order they were opened, and the [`Flusher`] and its [`Batch`]es.

use alloc::vec::Vec;
use core::fmt;
use core::future::poll_fn;
use core::ops::Deref;
use core::task::{Context, Poll, Waker};

use super::slot::{CLOSED, OPEN, SEALED, offset};
use super::{NONE, Shared, State};
use crate::packet::Packet;
use crate::sync::{Arc, Ordering};

impl Shared {
    /// Asks for the committed bytes of every lane's current slot to be flushed: each is
    /// marked, and stays so until the flusher takes it, even if a slot opened before it in its
    /// lane holds it back meanwhile.
    pub(super) fn request_flush(&self) {
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
            let seal = state.slots[index as usize].seal_asked;
            let word = &self.open[index as usize].word;
            // Acquire pairs with the Release of every reservation's end: the bytes of the
            // rooms committed happen before they are read.
            let mut now = word.load(Ordering::Acquire);
            if now & SEALED == 0 && (seal || (requested && now & OPEN > 0)) {
                // Flushed once its open reservations end (and then free, as it is sealed);
                // later ones go to a new buffer.
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

/// The one consumer of a [`Writer`]'s messages: gives them in [`Batch`]es of packets, in
/// order (see the [module](super)). Dropping it makes reservations fail with
/// [`ReserveError::Closed`] and gives its buffers back.
///
/// [`Writer`]: super::Writer
/// [`ReserveError::Closed`]: super::ReserveError::Closed
pub struct Flusher {
    pub(super) shared: Arc<Shared>,
    pub(super) out: Vec<Packet>,
    pub(super) spent: Vec<Packet>,
    /// Whether `out` holds a batch taken and not handed out yet: the buffers done with go back
    /// after the take, and a wake of a writer waiting for one may panic there; the batch is
    /// then the next call's.
    pub(super) taken: bool,
}

impl Flusher {
    /// The next batch: waits until a buffer is full, a flush is asked for, or the last writer
    /// is dropped. `None` once every `Writer` handle is dropped and every message delivered.
    pub async fn next_batch(&mut self) -> Option<Batch<'_>> {
        let more = poll_fn(|cx| self.poll_fill(Some(cx))).await;
        self.taken = false;
        more.then(|| Batch {
            packets: &mut self.out,
        })
    }

    /// The batch ready now, if any, without waiting.
    pub fn try_next_batch(&mut self) -> Option<Batch<'_>> {
        let ready = self.poll_fill(None).is_ready() && !self.out.is_empty();
        self.taken = false;
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
    /// as [`Writer::flush`](super::Writer::flush) does.
    pub fn flush_open(&mut self) {
        self.shared.request_flush();
    }

    /// `Ready(true)` with `out` filled, `Ready(false)` when finished, `Pending` (with the
    /// waker of `cx` stored) when there is nothing yet.
    fn poll_fill(&mut self, cx: Option<&mut Context<'_>>) -> Poll<bool> {
        if self.taken {
            // Taken by a call that panicked as the spent buffers went back: not lost.
            return Poll::Ready(true);
        }
        self.out.clear();
        let mut fresh: Option<Waker> = None;
        let result = loop {
            let mut state = self.shared.lock();
            self.shared.take(&mut state, &mut self.out, &mut self.spent);
            if !self.out.is_empty() {
                self.taken = true;
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
    /// written or an error comes. A write that fails with `ErrorKind::Interrupted` is made
    /// again, as `std::io::Write::write_all` does.
    #[cfg(feature = "std")]
    #[cfg_attr(docsrs, doc(cfg(feature = "std")))]
    pub fn write_all_to(&self, out: &mut impl std::io::Write) -> std::io::Result<()> {
        let mut cursor = BatchCursor::default();
        while cursor.next < self.packets.len() {
            let written = match cursor.write_with(self.packets, |slices| out.write_vectored(slices))
            {
                Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
                written => written?,
            };
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
