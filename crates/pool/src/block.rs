//! The pool's one block of memory: a [`Meta`] per buffer, then the buffers' bytes, in a single
//! allocation made by [`Block::new`] and freed when the block is dropped.

use core::alloc::Layout;
use core::marker::PhantomData;
use core::mem::MaybeUninit;
use core::ptr::NonNull;

use crate::reclaim::WakerCell;
use crate::sync::{AtomicPtr, AtomicU32, Ordering, alloc, dealloc};

/// What the pool keeps beside each buffer: 40 bytes, on 128 of their own, so that threads
/// releasing different buffers into their own stocks (each write of a link and a depth) do
/// not share a cache line or its prefetch pair (guarded by `pool_4_threads_16`).
#[repr(align(128))]
pub(crate) struct Meta {
    /// The buffer's first byte, written once by [`Block::new`] (an atomic, so that a meta is
    /// atomics only, see [`Metas`]): an acquire that popped the buffer (reading `next` on this
    /// line) finds it here rather than computing it from the block.
    bytes: AtomicPtr<u8>,
    /// The next buffer in the free list, while this one is in it (see `free_list`).
    pub(crate) next: AtomicU32,
    /// How many buffers its list holds from this one to its end, while this one is in it.
    pub(crate) depth: AtomicU32,
    /// How many [`Packet`](crate::Packet)s share this buffer, once it is frozen.
    pub(crate) packets: AtomicU32,
    /// The waker of a [`Buf`](crate::Buf) of this buffer that waits for its packets to be
    /// dropped (see `reclaim`).
    pub(crate) waker: WakerCell,
}

/// `count` metas and `count` buffers of `size` bytes, in one allocation.
pub(crate) struct Block {
    base: NonNull<u8>,
    layout: Layout,
    count: u32,
    size: usize,
}

/// A block's metas, reached by a copied pointer rather than through a `&Block`: a release that
/// hands its buffer to a stock gives up the count that keeps the pool's state (and the block)
/// alive, and the state may be freed by another thread the moment the push lands, so nothing
/// the push holds may be a reference to more than atomics (a `Meta` is atomics only).
#[derive(Clone, Copy)]
pub(crate) struct Metas<'a> {
    base: NonNull<Meta>,
    count: u32,
    _block: PhantomData<&'a Meta>,
}

impl<'a> Metas<'a> {
    /// Buffer `index`'s meta, or `None` if `index` is not a buffer's (such as `NIL`).
    #[inline]
    pub(crate) fn try_get(self, index: u32) -> Option<&'a Meta> {
        if index >= self.count {
            return None;
        }
        // SAFETY: as in `get`.
        Some(unsafe { self.base.add(index as usize).as_ref() })
    }

    /// Buffer `index`'s meta.
    ///
    /// # Panics
    /// If `index` is not a buffer's (a bug of the pool).
    #[inline]
    pub(crate) fn get(self, index: u32) -> &'a Meta {
        assert!(index < self.count, "buffer index out of range");
        // SAFETY: `index < count`: the meta was written by `Block::new` and lives as long as
        // the block, which outlives `'a` for every use that holds a count of the pool (a
        // push that gives its count up uses the reference before its CAS only).
        unsafe { self.base.add(index as usize).as_ref() }
    }
}

// SAFETY: the block is plain memory; who may touch which part of it, from which thread, is the
// pool's protocol (a buffer's bytes belong to its one `Buf`, or are read-only while shared by
// packets; the metas are atomics).
unsafe impl Send for Block {}
// SAFETY: as for `Send`: shared access goes through atomics or follows the ownership protocol.
unsafe impl Sync for Block {}

impl Block {
    /// Allocates the metas (each with its free-list link and depth set to `list(i)`, and no
    /// packet) and `count * size` bytes, uninitialized.
    ///
    /// # Panics
    /// If the sizes overflow, or if `count` is `u32::MAX` or more (an index is a `u32`, and
    /// `u32::MAX` is the free list's end).
    pub(crate) fn new(count: usize, size: usize, list: impl Fn(u32) -> (u32, u32)) -> Self {
        let count = u32::try_from(count)
            .ok()
            .filter(|&count| count < u32::MAX)
            .expect("BufferPool: count must be less than u32::MAX");
        let metas = Layout::array::<Meta>(count as usize).expect("BufferPool: too many buffers");
        let bytes = size
            .checked_mul(count as usize)
            .and_then(|total| Layout::array::<u8>(total).ok())
            // Buffers start on a cache line, where writes into them are faster than at the
            // metas' alignment of 4. Guarded by `pool_cursor_2048x16`.
            .and_then(|bytes| bytes.align_to(64).ok())
            .expect("BufferPool: count * size overflows");
        let (layout, bytes_offset) = metas.extend(bytes).expect("BufferPool: too much memory");
        let layout = layout.pad_to_align();
        let base = if layout.size() == 0 {
            NonNull::<Meta>::dangling().cast()
        } else {
            // SAFETY: the layout has a non-zero size.
            let ptr = unsafe { alloc(layout) };
            NonNull::new(ptr).unwrap_or_else(|| alloc::alloc::handle_alloc_error(layout))
        };
        for index in 0..count {
            let (next, depth) = list(index);
            // SAFETY: `index < count`: the buffer's first byte is inside the allocation (or,
            // for buffers of 0 bytes, at its end).
            let bytes = unsafe { base.add(bytes_offset + index as usize * size) };
            let meta = Meta {
                bytes: AtomicPtr::new(bytes.as_ptr()),
                next: AtomicU32::new(next),
                depth: AtomicU32::new(depth),
                packets: AtomicU32::new(0),
                waker: WakerCell::new(),
            };
            // SAFETY: `index < count`, so the slot is inside the metas, which are aligned for
            // `Meta` (the array layout starts the block); nothing was written there yet.
            unsafe { base.cast::<Meta>().add(index as usize).write(meta) };
        }
        Self {
            base,
            layout,
            count,
            size,
        }
    }

    /// How many buffers.
    pub(crate) fn count(&self) -> u32 {
        self.count
    }

    /// How many bytes a buffer has.
    pub(crate) fn size(&self) -> usize {
        self.size
    }

    /// Buffer `index`'s meta.
    ///
    /// # Panics
    /// If `index` is not a buffer's (a bug of the pool).
    #[inline]
    pub(crate) fn meta(&self, index: u32) -> &Meta {
        self.metas().get(index)
    }

    /// The metas, by pointer (what the free lists work on).
    #[inline]
    pub(crate) fn metas(&self) -> Metas<'_> {
        Metas {
            base: self.base.cast(),
            count: self.count,
            _block: PhantomData,
        }
    }

    /// The first byte of buffer `index`.
    ///
    /// Reading or writing through it follows the pool's protocol: the buffer's `Buf` alone
    /// writes, and reads only what it wrote; frozen, its packets only read what was written.
    #[inline]
    pub(crate) fn bytes(&self, index: u32) -> NonNull<MaybeUninit<u8>> {
        debug_assert!(index < self.count);
        // SAFETY: `index < count` (a buffer's index, as every caller holds one): the meta was
        // written by `new` and lives as long as the block.
        let meta = unsafe { self.base.cast::<Meta>().add(index as usize).as_ref() };
        // Relaxed: written before the block was shared, and never again.
        let bytes = meta.bytes.load(Ordering::Relaxed);
        // SAFETY: `new` stored a pointer into the allocation, never null.
        unsafe { NonNull::new_unchecked(bytes) }.cast()
    }
}

impl Drop for Block {
    fn drop(&mut self) {
        for index in 0..self.count {
            // SAFETY: every meta was written by `new` and is dropped once, here.
            unsafe { self.base.cast::<Meta>().add(index as usize).drop_in_place() };
        }
        if self.layout.size() != 0 {
            // SAFETY: `base` was allocated by `alloc` with this layout, and is freed once.
            unsafe { dealloc(self.base.as_ptr(), self.layout) };
        }
    }
}
