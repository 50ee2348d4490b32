//! An async buffer pool with fixed memory: [`BufferPool::new(count, size)`](BufferPool::new)
//! allocates every buffer at once and never allocates again; [`acquire`](BufferPool::acquire)
//! waits, first come first served, while all are in use; a [`Buf`] writes like a slice; a
//! frozen buffer is shared as read-only [`Packet`]s; the buffer goes back when its `Buf`, or the
//! last `Packet` of it, is dropped, on any thread.
//!
//! # Example
//!
//! ```
//! use std::io::Write;
//! use pinfold_pool::BufferPool;
//!
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let pool = BufferPool::new(2, 1024);
//! let mut buf = pool.acquire().await;
//! buf.write_all(b"hello")?;
//! assert_eq!(&buf[..], b"hello");
//!
//! let packet = buf.freeze();
//! let world = packet.slice(1..3);
//! assert_eq!(&world[..], b"el");
//! assert_eq!(pool.available(), 1);
//! drop((packet, world)); // the last packet gives the buffer back
//! assert_eq!(pool.available(), 2);
//! # Ok::<(), std::io::Error>(())
//! # }).unwrap();
//! ```
//!
//! # Design
//!
//! **Memory.** The shared state (an `Arc`) and one block: a meta per buffer (its free-list
//! link and its packet count), then the buffers' bytes, uninitialized. Nothing else is ever
//! allocated: not per acquire, not while waiting, not per freeze, clone or slice.
//!
//! **The free list** is a lock-free stack of buffer indices in one `AtomicU64`: the first free
//! buffer's index, a tag that changes with every change of the head (so a pop whose CAS would
//! succeed after the head was popped and pushed back in between fails instead: the ABA
//! problem), and a `WAITERS` flag. A pop loads the word with `Acquire` and CASes the head to
//! the head's link with `Acquire`; a push writes the buffer's link, then CASes the head with
//! `Release`. The push's `Release` pairs with the pop's `Acquire`: whatever the last owner did
//! with the buffer happens before the next owner gets it.
//!
//! **Waiters.** An [`Acquire`] that finds no free buffer takes the waiter lock, tries the
//! free list once more, and otherwise sets `WAITERS` (a CAS that fails if a buffer was pushed
//! meanwhile) and links a node that lives inside the pinned future itself into a FIFO list.
//! While `WAITERS` is set the free list is empty, pops fail, and a release finds the flag on
//! its CAS and takes the lock instead: it unlinks the oldest node, stores the buffer's index
//! in it, and wakes its task once the lock is released. The lock orders the hand-off (the
//! releaser's use of the buffer happens before the waiter's). The flag is set and cleared only
//! with the lock held, and cleared when the list empties. [`try_acquire`](BufferPool::try_acquire)
//! never goes ahead of a waiter. A waiting `Acquire` that is dropped unlinks its node; if it
//! had been handed a buffer and not yet taken it, the buffer goes to the next waiter, or back
//! to the free list.
//!
//! **Packets.** [`Buf::freeze`] sets the buffer's packet count to 1; a clone or slice adds 1
//! (`Relaxed`, as `Arc::clone`); a drop subtracts 1 with `Release`, and the drop that takes it
//! to 0 loads the count with `Acquire` (a load rather than a fence, which ThreadSanitizer does
//! not model), which pairs with every other drop's `Release`, before it gives the buffer back:
//! all reads of the packets happen before the next owner writes.
//!
//! **No user code under the lock.** A task's waker is cloned before the waiter lock is taken
//! and a replaced or taken waker is dropped or woken after it is released: a waker whose clone,
//! drop or wake gives a buffer of the same pool back takes the lock itself. Nor does user code
//! run while a buffer is held in a local only: when a waker's code runs, each buffer is in the
//! free list, owned by a [`Buf`] or packets, or stored in the node of the waiter it was handed
//! to, so a panic in that code loses none (`tests/waker_faults.rs` panics at each such call).
//!
//! **Writing.** A [`Buf`] keeps its buffer's start, capacity and length in itself, and a write
//! that fits is one comparison and one copy of exactly the bytes given. That copy is why it
//! writes as fast as a `Vec` and faster than a `&mut [u8]`: the slice's `Write` copies
//! `min(data.len(), self.len())` bytes, a length known only at run time, so every small write
//! (a `u64` from a serializer) calls `memcpy`; a `Vec`'s `extend_from_slice` and a `Buf` copy
//! `data.len()` bytes, a constant once inlined, which compiles to one move. Guarded by
//! `pool_cursor_2048x16`.
//!
//! **Proofs.** The loom models in `loom-tests/tests/pool_*.rs` drive this crate's real types
//! under every interleaving (up to the preemption bound): a release racing an acquire, the last
//! packet's drop racing an acquire, a cancelled waiter racing the hand-off to it, a waiter
//! re-polled with another task's waker racing the hand-off to it, and the spin lock that
//! guards the waiters without `std` (`pool_spin_lock`). The tests run under Miri and
//! ThreadSanitizer in `cargo xtask ci`.
//!
//! # Features
//!
//! - `std` (default): `std::io::Write` for [`Buf`], and `std::sync::Mutex` as the waiter lock
//!   (without it, a spin lock: it is held for a few list operations only).
//! - `bytes`: [`bytes::BufMut`](https://docs.rs/bytes) for [`Buf`].

#![cfg_attr(docsrs, feature(doc_cfg))]
// The README's examples, compiled and run as doctests.
#![cfg_attr(doctest, doc = include_str!("../README.md"))]
#![no_std]

extern crate alloc;
#[cfg(any(feature = "std", test))]
extern crate std;

mod block;
mod buf;
#[cfg(feature = "bytes")]
mod buf_mut;
mod free_list;
mod packet;
mod pool;
mod sync;
mod waiters;

/// The waiter lock used without `std`, for the loom model that checks it
/// (`loom-tests/tests/pool_spin_lock.rs`).
#[cfg(all(pinfold_loom, feature = "loom"))]
#[doc(hidden)]
pub use sync::spin::SpinLock;

pub use buf::Buf;
pub use packet::Packet;
pub use pool::BufferPool;
pub use waiters::Acquire;
