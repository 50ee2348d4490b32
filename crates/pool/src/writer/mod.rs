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
//! - **Batches.** The flusher gets a buffer when it is full (a message committed up to its
//!   last byte fills it: it takes no more, and goes as its reservations end), when a writer or
//!   the flusher asks
//!   for a flush ([`Writer::flush`], [`Flusher::flush_open`]: every lane's buffer being
//!   filled), when a writer is about to wait for a buffer (see *Waiting*), and when the last
//!   `Writer` handle is dropped. A buffer with a reservation still
//!   open is never flushed before that reservation ends, and holds back the later buffers of
//!   its lane only; asked for a flush meanwhile, it takes no more reservations (the rest of it
//!   goes unused), and is flushed as soon as its last reservation ends. A batch holds at most
//!   64 packets, or twice the pool's buffers if that is more; the rest come in the next.
//! - **Waiting.** A writer that needs a new buffer waits for one in the pool's
//!   [`acquire`](BufferPool::acquire) (first come, first served, no spinning): it waits while
//!   the pool is exhausted, which is also how a flusher that falls behind holds writers back.
//!   Before it waits, it seals every lane's buffer being filled, so that no buffer stays out
//!   of the flusher's reach while it waits; a buffer that another writer got from the pool
//!   before that seal, and starts filling after it, is sealed too, when the flusher next
//!   looks for a batch. A writer and flusher hold at most every buffer of the pool.
//! - **Errors.** A message larger than a buffer is refused with [`ReserveError::TooLarge`].
//!   Once the flusher is dropped, reservations fail with [`ReserveError::Closed`] (a writer
//!   waiting for a buffer gets it once the flusher's buffers are back, then fails).
//! - **Panics.** The user code the writer runs is the tasks' wakers: a writer's while it waits
//!   for a buffer, the flusher's while it waits for a batch. A panic in one reaches the code
//!   that ran it (a reservation, a commit, a flush, a handle's drop) and loses nothing: every
//!   message committed is still delivered once, and a reservation during which the flusher's
//!   wake panicked is abandoned, its room skipped.
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
//! one), sealing a current one (a full buffer is handed over by that, in O(1); a reservation
//! that reaches its slot's last byte seals it as it is committed, if the slot is still its
//! lane's current, so that an abandoned one gives its room back), an abandoned
//! reservation (its room is zeroed and goes back if nothing was handed out after it, by a CAS
//! of the word, or else is marked as a hole), the seal of every lane's current slot by a
//! writer about to wait for a buffer (counted in a word that a writer reads before it asks the
//! pool for a buffer, and again when it opens a slot on it: if a seal came in between, it
//! missed the slot, and the flusher's next walk seals it), and the flusher's walk: it goes
//! through the buffers in the order they were opened, skips the rest of a lane from its first
//! buffer whose
//! count (loaded with `Acquire`, which pairs with the commits' `Release`) is not 0, and gives
//! each run of committed bytes up to the word's offset as a slice of the buffer's packet.
//!
//! [`Packet`]: crate::Packet

use alloc::boxed::Box;
use alloc::collections::VecDeque;
use alloc::vec::Vec;
use core::fmt;
use core::ptr;
use core::task::Waker;

use crate::free_list::Padded;
use crate::pool::BufferPool;
use crate::sync::{Arc, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, Mutex, MutexGuard};

mod flusher;
mod reservation;
mod slot;

pub use flusher::{Batch, Flusher};
pub use reservation::{Reservation, Writer};
use slot::{Open, SEALED, Slot};

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
            seal_asked: false,
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
        seals: AtomicU32::new(0),
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
        taken: false,
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
    /// How many times a writer sealed the lanes before it waited for a buffer (wrapping).
    /// Changed under the lock only; a writer reads it before it asks the pool for a buffer,
    /// and again when it opens a slot on that buffer, to tell whether a seal missed the slot.
    seals: AtomicU32,
    /// Apart from the fields above, which every reservation reads.
    state: Padded<Mutex<State>>,
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

/// How many lanes a writer over a pool of `count` buffers has.
fn lanes(count: usize) -> usize {
    (count / BUFFERS_PER_LANE).clamp(1, MAX_LANES)
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

impl Shared {
    /// The lock. No user code runs with it held, so no panic leaves it half-changed, and a
    /// poisoned lock is used as is.
    fn lock(&self) -> MutexGuard<'_, State> {
        crate::sync::lock(&self.state)
    }
}
