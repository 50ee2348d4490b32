//! An async buffer pool with fixed memory: [`BufferPool::new(count, size)`](BufferPool::new)
//! allocates every buffer at once and never allocates again; [`acquire`](BufferPool::acquire)
//! waits, first come first served, while all are in use; a [`Buf`] writes like a slice; a
//! frozen buffer is shared as read-only [`Packet`]s; the buffer goes back when its `Buf`, or the
//! last `Packet` of it, is dropped, on any thread.
//!
//! # Example
//!
//! ```
//! use pinfold_pool::BufferPool;
//!
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let pool = BufferPool::new(2, 1024);
//! let mut buf = pool.acquire().await;
//! assert!(buf.try_extend_from_slice(b"hello"));
//! assert_eq!(&buf[..], b"hello");
//!
//! let packet = buf.freeze();
//! let world = packet.slice(1..3);
//! assert_eq!(&world[..], b"el");
//! assert_eq!(pool.available(), 1);
//! drop((packet, world)); // the last packet gives the buffer back
//! assert_eq!(pool.available(), 2);
//! # });
//! ```
//!
//! # Framing
//!
//! [`Buf::split_to`] cuts the bytes written so far into a [`Packet`] while the `Buf` keeps
//! its room and writes on after them; the buffer goes back when the `Buf` and every packet of
//! it are dropped. [`Framer`] builds on it: bytes read from a stream into the room of its
//! current buffer come out as frames, each a packet of that buffer, as soon as each is
//! complete. It does no I/O and never waits: when its buffer is full it says so
//! ([`Framer::needs_buffer`]) and the caller gives it the next, from
//! [`try_refill`](Framer::try_refill), [`refill`](Framer::refill)`.await` or
//! [`put_buffer`](Framer::put_buffer); the start of a frame that crosses the end of the
//! buffer is copied into the next one, the only copy made. The frames are
//! [`LengthPrefixed`] (1, 2, 4 or 8 bytes, big- or little-endian; the packet excludes the
//! prefix) or cut by a function ([`Framer::with_fn`]). A frame larger than a buffer, the end
//! of input inside a frame, and a framing function's error are [`FrameError`]s. With the
//! `tokio` feature, `FrameReader` does the reading from a `tokio::io::AsyncRead`, as a stream
//! of frames.
//!
//! ```
//! use core::convert::Infallible;
//! use pinfold_pool::{BufferPool, Framer};
//!
//! # futures_executor::block_on(async {
//! let pool = BufferPool::new(4, 16);
//! let mut framer = Framer::with_fn(&pool, |bytes: &[u8]| {
//!     Ok::<_, Infallible>(bytes.iter().position(|&b| b == b'\n').map(|at| at + 1))
//! });
//! let mut lines = Vec::new();
//! for read in [&b"GET /\nHost: pin"[..], b"fold\n\n"] {
//!     let mut read = read;
//!     while !read.is_empty() {
//!         if framer.needs_buffer() {
//!             framer.refill().await;
//!         }
//!         read = &read[framer.extend_from_slice(read)..];
//!         while let Some(line) = framer.next_frame()? {
//!             lines.push(line);
//!         }
//!     }
//! }
//! assert!(framer.finish()?.is_none());
//! assert_eq!(&lines[1][..], b"Host: pinfold\n"); // crossed into the second buffer
//! assert_eq!(lines.len(), 3);
//! # Ok::<(), pinfold_pool::FrameError>(())
//! # }).unwrap();
//! ```
//!
//! # Writing messages
//!
//! [`writer::channel`] makes the writing side of a message bus over the pool: [`Writer`]s on
//! any threads reserve room for a message in a shared buffer, write it in place and commit
//! it, and one [`Flusher`] takes the committed messages in [`Batch`]es of packets, each
//! writer's in commit order, to write to a socket. See the [`writer`] module.
//!
//! # The shared rules
//!
//! The pool polls no values in rounds, so the rules of pinfold's poll loop, stated once in
//! [`pinfold_arena::contract`](https://docs.rs/pinfold-arena/latest/pinfold_arena/contract/) for the sets, merges, maps, buffers and joins, are not its. The
//! sections below state its own, for the same questions:
//!
//! | Rule | The pool's own |
//! |------|----------------|
//! | Order | Waiters are served first come, first served ([*Order*](#order)). |
//! | Fairness | Nothing but that order: no waiter is passed over, by a newer one or by `try_acquire`. |
//! | Wakes | A release wakes the oldest waiter alone, once ([*Wakes*](#wakes)). |
//! | Panics | Only wakers run user code, and a panic in one loses nothing ([*Panics*](#panics)). |
//! | Memory | Two allocations in [`BufferPool::new`], none after ([*Memory*](#memory)). |
//!
//! # Order
//!
//! Tasks waiting in [`acquire`](BufferPool::acquire) are served first come, first served: in
//! the order of their first poll of the [`Acquire`] future, however often and in whatever
//! order they are polled after it. While a task waits, a buffer given back goes to the oldest
//! waiter, never to a free list (the shared one or a thread's stock), so neither [`try_acquire`](BufferPool::try_acquire) nor a
//! newer `acquire` goes ahead of it. A buffer is handed over whole: a [`Buf`] starts empty,
//! whatever its last owner wrote.
//!
//! # Wakes
//!
//! A release (the drop of a [`Buf`], or of the last [`Packet`] of a buffer, on any thread)
//! with tasks waiting hands the buffer to the oldest waiter and wakes it once, through the
//! waker of its latest poll; it wakes no other waiter. A waiter polled before its turn stays
//! pending and keeps its place. No wake is lost: the buffer is stored in the waiter's own
//! future before the wake, so a waiter polled for any reason after the hand-off returns it.
//!
//! A [`Buf`] waiting for the packets split off it ([`Buf::poll_reclaim`]) is woken once, by
//! the drop of the last of them, on whatever thread, through the waker of its latest poll.
//!
//! No user code runs under the pool's waiter lock: a task's waker is cloned before the lock is
//! taken, and a replaced or taken waker is dropped or woken after it is released, so a waker
//! whose clone, drop or wake gives a buffer of the same pool back does not deadlock.
//!
//! # Memory
//!
//! [`BufferPool::new`] allocates twice: the shared state (holding the threads' stocks of free
//! buffers, a fixed number of them) and one block holding a record per buffer (its free-list link
//! and depth, its packet count, and the waker of a `Buf` waiting for its packets, on 128 bytes
//! of its own), then the buffers' bytes,
//! uninitialized (a [`Buf`] and a [`Packet`] show only the bytes written). Nothing else is ever
//! allocated: not per acquire, not while waiting (a waiter's place in the queue lives in its pinned
//! [`Acquire`] future), not per freeze, split, clone or slice. Both are freed with the last handle,
//! `Buf` or `Packet` of the pool, on whatever thread drops it.
//!
//! # Cancellation
//!
//! Dropping a waiting [`Acquire`] gives up its place; the waiters behind it keep their order.
//! If a buffer was handed to it and not yet taken, the buffer goes on to the next waiter, or
//! back to the pool. Dropping an `Acquire` that never waited changes nothing.
//!
//! # Panics
//!
//! The user code the pool runs is the task's waker: its `clone` and `drop` in a poll of
//! [`Acquire`], and its `wake` and `drop` in a release. Rarely, an acquire runs other tasks'
//! wakers too: when the batch of buffers it took for its thread's stock meets a task that
//! started waiting meanwhile, it hands the rest of the batch over and wakes those waiters (in
//! [`try_acquire`](BufferPool::try_acquire) or a poll of [`Acquire`]). A panic there reaches
//! the code that ran it (the poll, `try_acquire`, or the drop of the `Buf` or `Packet`) and
//! loses nothing: no buffer (each is free, owned by a `Buf` or packets, or stored in the
//! waiter it was handed to), no place in line, no wake, and no clone of the waker. A release
//! that hands several buffers over wakes every waiter it served even if one wake panics (a
//! second panic among them aborts, as any panic while unwinding does). A waiter whose poll panicked can be polled
//! again or dropped: a buffer already handed to it stays its, and a place in the queue it had
//! stays its; one whose first poll panicked has no place yet. A release whose wake panicked
//! has handed its buffer over all the same: the waiter gets it when next polled.
//!
//! The pool's own panics: [`BufferPool::new`] with `u32::MAX` buffers or more, or a size that
//! overflows; [`Packet::slice`] out of bounds; an [`Acquire`] polled after it returned its
//! buffer. More than `u32::MAX / 4` packets of one buffer abort, as `Arc` does past
//! `isize::MAX`.
//!
//! # How it works
//!
//! **The free lists** are lock-free stacks of buffer indices, each in one `AtomicU64`: the
//! first free buffer's index, a tag that changes with every change of the head (so a pop whose
//! CAS would succeed after the head was popped and pushed back in between fails instead: the
//! ABA problem), and a `TO_WAITERS` bit (set while tasks wait: the list is empty and refuses
//! pushes, whose buffers go to the waiters instead). Each buffer's record holds its link and
//! its depth (how many buffers its list holds from it on, so a list's length is its head's
//! depth). A pop
//! loads the word with `Acquire` and CASes the head to the head's link with `Acquire`; a push
//! writes the buffer's link and depth, then CASes the head with `Release`. The push's
//! `Release` pairs with the pop's `Acquire`: whatever the last owner did with the buffer
//! happens before the next owner gets it. A batch moves with one CAS: a pop of up to a batch
//! walks the links from the head and CASes the head past the last one; a push of a batch
//! writes the batch's depths and its last link, then CASes its first buffer in.
//!
//! **Stocks.** A pool has one shared list and a fixed array of 32 stocks, each on a cache line
//! of its own. With `std`, a thread claims a stock at its first use of any pool (the same index
//! in every pool) and gives it back when it exits; a thread that finds all 32 claimed, and every
//! thread without `std`, uses the shared list only. A stock is its owner's: a list linked
//! through the buffers' records, with its first buffer and length in one word, popped and
//! pushed with plain loads and stores, no locked instruction. An acquire pops its stock; if that
//! is empty, it takes a batch from the shared list (one buffer for itself, the rest into the
//! stock), and only if that is empty too does it look further (below). A release pushes into
//! its stock; if the stock holds two batches already, the buffer and a batch from the stock go
//! back to the shared list. So the shared list is touched once per batch, not once per buffer.
//! A batch is a share of the pool small enough that the stocks together hold at most half of it
//! at their high-water mark. [`BufferPool::available`] adds the lists' lengths.
//!
//! **Reaching another thread's stock.** Each stock has a `busy` flag, and the pool a word of
//! flags (`WAITING`, `DRAINED`, `CLOSED`). An owner brackets each operation: it stores `busy`,
//! passes a light barrier, loads the flags (`Acquire`), and uses its stock only if none is set;
//! then it clears `busy` (`Release`). Whoever needs the buffers in other threads' stocks (a
//! task about to wait, a [`try_acquire`](BufferPool::try_acquire) that found nothing else, the
//! last handle's drop) sets a flag, passes a heavy barrier, and then, for each stock, waits
//! while its owner is busy (`Acquire`; an operation is a few instructions and runs no user
//! code) and takes what it holds. The two barriers order each side's store before its load, so
//! either the owner sees the flag and leaves its stock alone, or the sweeper sees it busy and
//! waits: no stock is used by two at once, and no buffer stays in one, out of a waiter's reach,
//! whether its owner works, idles or has exited. On Linux the light barrier is a compiler
//! fence, free, and the heavy one the `membarrier` system call
//! (`MEMBARRIER_CMD_PRIVATE_EXPEDITED`), paid once per sweep: it runs a full barrier on every
//! CPU running a thread of the process. Elsewhere (or if the kernel refuses it, in which case
//! no thread owns a stock), both are `fence(SeqCst)`.
//!
//! The stocks, the shared list, the flags and the barriers are one structure with one way in
//! and out: an acquire takes a buffer from it and a release gives one to it, and what it
//! cannot take or keep (every list empty, tasks waiting) is the caller's to take to the
//! waiters.
//!
//! **Waiters.** An [`Acquire`] that finds no free buffer takes the waiter lock, tries the
//! shared list once more, and otherwise sets `TO_WAITERS` on it (a CAS that fails if a buffer
//! was pushed meanwhile: then it takes that buffer) and sets `WAITING` and `DRAINED`; if no
//! flag was set before, it sweeps the stocks: if that finds buffers it takes one, puts the rest
//! in the shared list and clears `WAITING`. Otherwise it links a node that lives inside the
//! pinned future itself into a FIFO list, the wait queue (the only code that reads or writes a
//! node). `DRAINED` stays set while the pool is short of buffers: the stocks stay empty, their
//! owners take from and give to the shared list, and a task that waits again pays no barrier
//! (the stocks have been empty since the sweep); a release clears it once the shared list's
//! head has changed four times per buffer without the list being found empty. So a pool going
//! in and out of exhaustion pays the heavy barrier once per spell, not per wait. While the
//! flags are set the shared list and the stocks are empty, pops fail, and a release finds a
//! flag (on its CAS of the shared list, or after its light barrier) and takes the lock instead:
//! it unlinks the oldest node, stores the buffer's index in it, and wakes its task once the
//! lock is released. So a buffer released on any thread reaches the oldest waiter. A batch on
//! its way between two lists when the flags are set (taken by a refill or a return before,
//! pushed after) finds the flag on its push and is handed over the same way, one buffer per
//! waiter, under one hold of the lock (the rest to the shared list if the waiters run out). The
//! lock orders the hand-off (the releaser's use of the buffer happens before the waiter's). The
//! flags are set and cleared only with the lock held, together, and cleared when the list of
//! waiters empties (`Release`, which the owners' `Acquire` load of the flags pairs with: the
//! sweep's changes to their stocks happen before they use them again).
//!
//! **Lifetime.** The shared state counts what keeps it alive: one count for the handles
//! together, and one per buffer outside the shared list (held by a `Buf` or its packets, in a
//! stock, or on its way between). A batch taken from the shared list adds its length with one
//! `fetch_add` (`Relaxed`: an acquire holds a handle), and a batch pushed back subtracts it
//! (`Release`, and the subtraction that reaches 0 loads with `Acquire` and frees, as `Arc`
//! does); an acquire from or a release into a stock moves a buffer and its count together and
//! touches no shared count, so threads on their own stocks share no cache line. The last
//! handle's drop sets `CLOSED`, sweeps the stocks and gives up the counts of the buffers it
//! took; an owner that then finds the flag gives up its buffer's count instead of pushing it
//! where no acquire will come. A release touches nothing once its owner's `busy` is cleared, or
//! once its push to the shared list lands (the state may be gone): the sweep of the last
//! handle's drop waits for the owner to leave, and a push works on the list's atomic word and
//! the buffers' records through a copied pointer, not a reference to the state
//! (`loom-tests/tests/pool_last_handle_races_release.rs`).
//!
//! **Packets.** [`Buf::freeze`] sets the buffer's packet count to 1; a clone or slice adds 1
//! (`Relaxed`, as `Arc::clone`); a drop subtracts 1 with `Release`, and the drop that takes it
//! to 0 loads the count with `Acquire` (a load rather than a fence, which ThreadSanitizer does
//! not model), which pairs with every other drop's `Release`, before it gives the buffer back:
//! all reads of the packets happen before the next owner writes.
//!
//! **Splitting.** [`Buf::split_to`] makes the `Buf` a holder of the count too: the first split
//! of a buffer stores 2 (the packet and the `Buf`; `Relaxed`, as no packet exists yet to read
//! it), later ones add 1 (`Relaxed`: the `Buf`'s own count keeps it above 0). The `Buf` then
//! moves its start past the packet's bytes, so it never writes what a packet reads. A shared
//! `Buf`'s drop subtracts 1 as a packet's does (`Release`, then the `Acquire` load if it took the
//! count to 0), so whichever of the `Buf` and the packets drops last, on whatever thread, gives
//! the buffer back, and exactly once: one `fetch_sub` alone sees 1. [`Buf::freeze`] of a shared
//! `Buf` passes the `Buf`'s count on to the new packet and leaves the count as it is; of an
//! unshared one it stores 1. An unshared `Buf` never touches the count, which is 0 while the
//! buffer is free or owned by a `Buf` that has not split: its drop gives the buffer back at once.
//!
//! **Waker panics.** When a waker's code runs, each buffer is in a free list, owned by a
//! [`Buf`] or packets, or stored in the node of the waiter it was handed to, never in a local
//! only (an acquire that hands the rest of its batch over owns its own buffer as a `Buf`
//! first), so a panic there loses none (`tests/waker_faults.rs` panics at each such call).
//!
//! **Writing.** A [`Buf`] keeps its buffer's start, capacity and length in itself, and a write
//! that fits is one comparison and one copy of exactly the bytes given, a length known at
//! compile time once the write is inlined (guarded by `pool_cursor_2048x16`).
//!
//! **Model checks.** The loom models in `loom-tests/tests/pool_*.rs` drive this crate's real types
//! under every interleaving (up to the preemption bound): a release racing an acquire, the last
//! packet's drop racing an acquire, a `Buf`'s drop racing the drop of the last packet split
//! off it (`pool_split_drop`), a `Buf` waiting for its packets, or ceasing to, racing
//! their drops (`pool_reclaim_wake_races_packet_drop`), a cancelled waiter racing the
//! hand-off to it, a waiter re-polled with another task's waker racing the hand-off to it,
//! a release into a stock racing an acquire that must wait (`pool_stock_release_races_wait`),
//! a stock's owner that
//! works or idles while a task waits for what it released (`pool_stock_owner_races_sweep`,
//! with the barriers as `fence(SeqCst)` on both sides), a batch refill racing
//! a batch return and racing an acquire that must wait (`pool_batch_refill_races_*`), and the
//! spin lock that guards the waiters without `std` (`pool_spin_lock`); and two writers sharing
//! a buffer while the flusher takes it (`pool_writer_shared_buffer`), a full buffer's hand-over
//! to a waiting flusher (`pool_writer_full_buffer`), a buffer sealed while a reservation in it
//! is open, whose last commit wakes the flusher (`pool_writer_sealed_while_open`), and a
//! dropped flusher racing a reservation (`pool_writer_flusher_drop`). The tests run under Miri and
//! ThreadSanitizer in `cargo xtask ci`.
//!
//! # Features
//!
//! - `std` (default): `std::io::Write` for [`Buf`], `std::sync::Mutex` as the waiter lock
//!   (without it, a spin lock: it is held for a few list operations only), and a thread-local
//!   index that gives each thread a stock of its own (without it, every thread uses the shared
//!   list).
//! - `bytes`: [`bytes::BufMut`](https://docs.rs/bytes) for [`Buf`].
//! - `tokio`: `FrameReader`, a [`Framer`] over a `tokio::io::AsyncRead`, as a
//!   `futures_core::Stream` of frames (implies `std`).
//!
//! The pool has no `tokio-coop` feature: an `acquire` that finds a free buffer returns it
//! without spending tokio's budget.

#![cfg_attr(docsrs, feature(doc_cfg))]
// The README's examples (which write through `std::io::Write`), compiled and run as doctests.
#![cfg_attr(all(doctest, feature = "std"), doc = include_str!("../README.md"))]
#![no_std]

extern crate alloc;
#[cfg(any(feature = "std", test))]
extern crate std;

mod acquire;
mod block;
mod buf;
#[cfg(feature = "bytes")]
mod buf_mut;
mod framer;
mod free_buffers;
mod free_list;
mod packet;
mod pool;
mod reclaim;
mod shared;
mod stocks;
mod sync;
mod waiters;
pub mod writer;

/// The waiter lock used without `std`, for the loom model that checks it
/// (`loom-tests/tests/pool_spin_lock.rs`).
#[cfg(all(pinfold_loom, feature = "loom"))]
#[doc(hidden)]
pub use sync::spin::SpinLock;

pub use acquire::Acquire;
pub use buf::Buf;
pub use framer::{FnFraming, FrameError, FrameSpan, Framer, Framing, LengthPrefixed};
#[cfg(feature = "tokio")]
#[cfg_attr(docsrs, doc(cfg(feature = "tokio")))]
pub use framer::{FrameReadError, FrameReader};
pub use packet::Packet;
pub use pool::BufferPool;
pub use writer::{Batch, Flusher, Reservation, ReserveError, Writer};
