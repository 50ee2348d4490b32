//! [`Block`]: the parts of a `Vec` whose value type is forgotten, dropped as that `Vec`. A
//! store's slots and a join arena's values are each one.
//!
//! Its holder is generic over the values and keeps their type in a `PhantomData`; the block has
//! no parameter, so its `Drop` is not one of a type generic over the values: such a `Drop`
//! would make the compiler require every value's borrows to outlive the holder, and a value
//! borrowing a local declared after its set would not compile. The holder's `PhantomData<T>`
//! tells the compiler the values are dropped with it, as `Vec<T>` does.

use core::mem::{self, ManuallyDrop};
use core::ptr::{self, NonNull};

use crate::unwind;
use alloc::vec::Vec;

/// A `Vec<X>` whose `X` is forgotten: its pointer, how many of its first places hold a value
/// (`len`), its capacity, and the function that drops those values and frees it as that `Vec`.
/// Never grown, shrunk or moved: the values stay where they were written.
pub(crate) struct Block {
    base: NonNull<u8>,
    len: usize,
    capacity: usize,
    drop: unsafe fn(NonNull<u8>, usize, usize),
}

// SAFETY: a `Block` is only ever a field of a type generic over its values (a store's
// `SlotBox<T>`, a join arena's `Cells<T>`) whose `PhantomData` gives it the auto traits of
// those values' `Vec`, and the values are reached only through that type.
unsafe impl Send for Block {}
// SAFETY: as for `Send`.
unsafe impl Sync for Block {}

impl Drop for Block {
    fn drop(&mut self) {
        // No allocation, no value (a `Vec` of zero-sized values has the largest capacity): a
        // block taken, or one of no places, costs no call.
        if self.capacity != 0 {
            // SAFETY: the fields are the parts of one `Vec` of the type `drop` is for (from
            // `Block::holding`, its length set by `set_len`), and this drop is the only one.
            unsafe { (self.drop)(self.base, self.len, self.capacity) }
        }
    }
}

/// Drops the `Vec<X>` of `len` values and `capacity` at `base`: every value, also when the
/// `Drop` of some panics (see [`drop_each`](unwind::drop_each)), then the allocation; the first
/// panic goes on.
///
/// # Safety
/// The parts are those of a `Vec<X>` not dropped yet, whose block is not used again.
unsafe fn drop_vec<X>(base: NonNull<u8>, len: usize, capacity: usize) {
    let values = base.cast::<X>().as_ptr();
    // SAFETY: the `Vec`'s own parts (the caller), given back to it once; with length 0 it
    // frees the allocation and drops no value, after the values (also while a panic of
    // theirs unwinds).
    let _block = unsafe { Vec::from_raw_parts(values, 0, capacity) };
    unwind::drop_each(len, |index| {
        // SAFETY: `index < len`: a written value, dropped once, in place.
        unsafe { ptr::drop_in_place(values.add(index)) }
    });
}

/// [`drop_vec`] for values with nothing to drop: frees the allocation.
///
/// # Safety
/// As for [`drop_vec`], and the values have nothing to drop.
unsafe fn free_vec<X>(base: NonNull<u8>, _len: usize, capacity: usize) {
    // SAFETY: the `Vec`'s own parts (the caller), given back to it once; with length 0 it
    // frees the allocation and drops no value.
    drop(unsafe { Vec::from_raw_parts(base.cast::<X>().as_ptr(), 0, capacity) });
}

impl Block {
    /// The parts of `vec`: its values are the block's from now on.
    #[inline]
    pub(crate) fn new<X>(vec: Vec<X>) -> Self {
        Self::holding(vec, mem::needs_drop::<X>())
    }

    /// [`new`](Self::new), where `drops` says whether a written place has anything to drop: a
    /// store's slot has a `Drop` (for its value), but nothing to drop when its value's type has
    /// none, and then its block's drop frees the allocation without a walk over the slots.
    #[inline]
    pub(crate) fn holding<X>(vec: Vec<X>, drops: bool) -> Self {
        let mut vec = ManuallyDrop::new(vec);
        Self {
            base: NonNull::new(vec.as_mut_ptr().cast::<u8>()).expect("a Vec's pointer is not null"),
            len: vec.len(),
            capacity: vec.capacity(),
            drop: if drops { drop_vec::<X> } else { free_vec::<X> },
        }
    }

    /// How many of the first places hold a value.
    #[inline(always)]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// How many places the block has.
    #[inline(always)]
    pub(crate) fn capacity(&self) -> usize {
        self.capacity
    }

    /// The first place, as a pointer to the block's value type `X`: values `0..len` are
    /// written. Reading or writing through it is the caller's to justify.
    #[inline(always)]
    pub(crate) fn base<X>(&self) -> *mut X {
        self.base.cast::<X>().as_ptr()
    }

    /// Sets how many of the first places hold a value to `len`.
    ///
    /// # Safety
    /// Places `0..len` hold values, no other place's value needs dropping, and `len` is at
    /// most the capacity.
    #[inline(always)]
    pub(crate) unsafe fn set_len(&mut self, len: usize) {
        debug_assert!(len <= self.capacity, "a block's length past its capacity");
        self.len = len;
    }

    /// The values, moved out as their `Vec`: the block holds none after, and no allocation.
    ///
    /// # Safety
    /// `X` is the type the block was made for.
    #[inline]
    pub(crate) unsafe fn take<X>(&mut self) -> Vec<X> {
        // SAFETY: the parts of the `Vec<X>` the block was made from (the caller), taken out
        // once: the block is left the parts of an empty `Vec`, which its drop skips.
        let vec = unsafe { Vec::from_raw_parts(self.base::<X>(), self.len, self.capacity) };
        self.base = NonNull::<X>::dangling().cast::<u8>();
        self.len = 0;
        self.capacity = 0;
        vec
    }
}
