//! Indexing by the indexes the arena keeps itself, without checking them again.

/// Element `index` of `items`, not bounds-checked again: for the indexes the arena keeps
/// itself, each below the length (a slot from the free list, a queue or a bound entry's
/// link, all of slots written, whose count only grows; a group named by a growable arena's
/// masks). Used on the
/// paths every output takes, where the checks cost a set's output more than the code they
/// guard (guarded by `ready_512k`, instructions). A debug build checks (`get_unchecked`'s own
/// precondition).
///
/// Under Miri the index is checked as by `items[index]`: a broken invariant panics there too,
/// and Miri runs the sets' tests 10-15% faster than through `get_unchecked`.
#[inline(always)]
pub(crate) fn trusted<E>(items: &[E], index: usize) -> &E {
    #[cfg(miri)]
    return &items[index];
    // SAFETY: `index` is one the arena keeps, below `items.len()` (above).
    #[cfg(not(miri))]
    unsafe {
        items.get_unchecked(index)
    }
}

/// [`trusted`], mutable.
#[inline(always)]
pub(crate) fn trusted_mut<E>(items: &mut [E], index: usize) -> &mut E {
    #[cfg(miri)]
    return &mut items[index];
    // SAFETY: as in `trusted`.
    #[cfg(not(miri))]
    unsafe {
        items.get_unchecked_mut(index)
    }
}
