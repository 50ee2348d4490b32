//! The lock-free set of woken slots: a hierarchical atomic bitset.
//!
//! Level 0 has one bit per slot. Each higher level has one bit per word of the level below,
//! and the top level is a single word. A waker sets its slot's bit and climbs only while the
//! word it touched was empty before: a wake into a word that already had a bit set stops there
//! (the thread that made the word non-empty owns the climb). When the climb empties out of the
//! top word, the set went from empty to non-empty and the parent is notified: once per burst,
//! not once per slot.
//!
//! The owner drains top-down with `swap(0)`, always clearing a parent bit before the child word
//! it summarises. So a wake racing the drain either lands in a child word before the owner swaps
//! it (and is taken with it), or finds the child empty and climbs again, up to a top word the
//! owner has already cleared, and notifies the parent. No wake is lost.
//!
//! The top word always has a spare bit, [`BUSY`]. While the owner is in the middle of a poll
//! round it leaves `BUSY` set in the top word when it drains ([`Drain::KeepBusy`]): a wake that
//! climbs to the top then finds the word non-empty and stops, so a value waking itself (or
//! another value) while the owner polls does not wake the parent task, which is running
//! already. Before the owner returns `Pending` it drains with [`Drain::Arm`], which clears the
//! top word entirely: from then on the next wake raises the set and notifies the parent.

use crate::sync::{AtomicU64, Ordering};

/// The most levels any size needs: with 63 usable bits in the top word and 64 in the others,
/// 6 levels hold more than 2^32 bits, the most any table has.
const MAX_LEVELS: usize = 6;

/// The top word's spare bit: set by the owner while it polls (see the module documentation).
pub(crate) const BUSY: u64 = 1 << 63;

/// How [`drain`] leaves the top word.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Drain {
    /// Sets [`BUSY`]: the owner goes on polling, and wakes until the next drain notify nobody.
    KeepBusy,
    /// Clears it: the owner is about to wait, so the next wake notifies the parent.
    Arm,
}

/// Where each level of the bitset starts in the word array.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ReadyLayout {
    /// `start[level]` is the index of the level's first word; `start[levels]` is the total.
    start: [u32; MAX_LEVELS + 1],
    levels: u32,
    /// The total, `start[levels]`, kept apart: read by every wake (the length of the words), it
    /// needs no bound check there (`yield_16`, instructions).
    words: u32,
}

/// What a [`wake`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Woke {
    /// The slot's bit was already set: this wake coalesced with an earlier one.
    Already,
    /// The slot's bit is set; the levels above are (or are being) set by an earlier waker.
    Joined,
    /// The set went from empty to non-empty: the caller notifies the parent.
    Raised,
}

impl ReadyLayout {
    /// The layout of a set of `bits` bits. The top word holds at most 63 of its level's bits,
    /// so that [`BUSY`] is free.
    pub(crate) fn new(bits: usize) -> Self {
        let mut start = [0u32; MAX_LEVELS + 1];
        let mut bits = bits;
        let mut levels = 0;
        let mut total = 0usize;
        loop {
            let words = bits.div_ceil(64).max(1);
            start[levels] = u32::try_from(total).expect("ready set too large");
            total += words;
            levels += 1;
            if bits < 64 {
                break;
            }
            bits = words;
        }
        start[levels] = u32::try_from(total).expect("ready set too large");
        Self {
            start,
            levels: levels as u32,
            words: start[levels],
        }
    }

    /// How many words the whole bitset takes.
    #[inline]
    pub(crate) fn words(&self) -> usize {
        self.words as usize
    }

    #[inline]
    fn word(&self, level: usize, index: usize) -> usize {
        self.start[level] as usize + index
    }

    #[inline]
    fn top(&self) -> usize {
        self.levels as usize - 1
    }

    /// The index of the top word in the word array.
    pub(crate) fn top_word(&self) -> usize {
        self.word(self.top(), 0)
    }
}

/// Sets slot `index`'s bit: it is woken. Lock-free: one `fetch_or` per level climbed, usually one.
/// Every waker's wake runs it: the words are reached without bounds checks (guarded by
/// `yield_16`, instructions); a debug build checks.
///
/// # Safety
/// `words` holds the [`words`](ReadyLayout::words) of a set laid out by `layout`, and `index`
/// is below the number of bits the layout was made for.
#[inline]
pub(crate) unsafe fn wake(words: &[AtomicU64], layout: &ReadyLayout, index: usize) -> Woke {
    debug_assert!(
        words.len() >= layout.words(),
        "the words are not the layout's"
    );
    // The first level starts at word 0 and is always there: its word is found without the
    // layout, and only a wake that finds it empty reads the layout to climb (`yield_16`,
    // instructions).
    debug_assert!(layout.start[0] == 0 && layout.levels >= 1 && index / 64 < words.len());
    let bit = 1u64 << (index % 64);
    // SAFETY: bit `index` is one of the layout's (the caller's promise), in its first level,
    // which starts at word 0 of `words`.
    let word = unsafe { words.get_unchecked(index / 64) };
    // AcqRel: Release publishes whatever the waker did before waking (a channel's value)
    // to the owner's Acquire `swap` in `drain`; Acquire orders the climb after it.
    let prev = word.fetch_or(bit, Ordering::AcqRel);
    if prev & bit != 0 {
        return Woke::Already;
    }
    if prev != 0 {
        return Woke::Joined;
    }
    let mut index = index / 64;
    for level in 1..layout.levels as usize {
        let bit = 1u64 << (index % 64);
        debug_assert!(level < MAX_LEVELS + 1 && layout.word(level, index / 64) < words.len());
        // SAFETY: `level` is below `levels`, at most `MAX_LEVELS`, so `start[level]` is one of
        // the layout's starts; the level's word of a bit below the layout's count is one of
        // its words, all in `words` (the caller's promise).
        let word = unsafe {
            let start = *layout.start.get_unchecked(level) as usize;
            words.get_unchecked(start + index / 64)
        };
        // AcqRel: as at the first level.
        if word.fetch_or(bit, Ordering::AcqRel) != 0 {
            return Woke::Joined;
        }
        index /= 64;
    }
    Woke::Raised
}

/// Whether slot `index`'s bit is set now. A hint for the owner (self-wake detection), not a
/// synchronisation point.
#[cfg(test)]
pub(crate) fn is_woken(words: &[AtomicU64], index: usize) -> bool {
    words[index / 64].load(Ordering::Relaxed) & (1 << (index % 64)) != 0
}

/// Whether slot `index`'s bit is set now, without the bound check, for the entry of the value just polled (guarded by
/// `yield_16`, instructions).
///
/// # Safety
/// Bit `index` is in `words` (`index / 64 < words.len()`).
#[inline(always)]
pub(crate) unsafe fn is_woken_unchecked(words: &[AtomicU64], index: usize) -> bool {
    debug_assert!(index / 64 < words.len(), "bit {index} is not in the set");
    // SAFETY: the caller's bound.
    let word = unsafe { words.get_unchecked(index / 64) };
    word.load(Ordering::Relaxed) & (1 << (index % 64)) != 0
}

/// Whether any bit is set. A hint, as [`is_woken`].
#[cfg(test)]
pub(crate) fn is_empty(words: &[AtomicU64], layout: &ReadyLayout) -> bool {
    words[layout.word(layout.top(), 0)].load(Ordering::Relaxed) & !BUSY == 0
}

/// Whether the top word is all zero: no bit set and not [`BUSY`]. A hint, as [`is_woken`].
#[cfg(test)]
pub(crate) fn is_clear(words: &[AtomicU64], layout: &ReadyLayout) -> bool {
    words[layout.word(layout.top(), 0)].load(Ordering::Relaxed) == 0
}

/// The word through which an owner's task hears of wakes: a ready set's top word, or a hub's
/// (whose bits are its groups'). The owner's side of its protocol is written here once, for
/// both; the wakers' side is one `fetch_or` that tells whether the word was empty, in
/// [`wake`]'s climb for a ready set and in [`raise`](Self::raise) for a hub:
///
/// - a wake that makes the word non-empty notifies the task, unless the owner has [`BUSY`]
///   set (it is polling, and will collect before it waits);
/// - the owner [`take`](Self::take)s the set bits, leaving `BUSY` set or clearing it (to
///   *arm*: the next wake notifies);
/// - between calls it reads the word with plain loads: [`nothing_woken`](Self::nothing_woken)
///   and [`has_wakes`](Self::has_wakes) say whether a collection would find anything;
/// - without `std`, a round that a value's panic ends arms with [`try_arm`](Self::try_arm).
///
/// Public only as the type of a sealed trait's methods; not reachable from outside the crate.
#[repr(transparent)]
pub struct ParentWord(AtomicU64);

impl ParentWord {
    /// A word with no bit set and `BUSY` clear: armed.
    pub(crate) fn new() -> Self {
        Self(AtomicU64::new(0))
    }

    /// The ready set's top word `word`, as the parent word it is.
    #[inline(always)]
    pub(crate) fn of(word: &AtomicU64) -> &Self {
        // SAFETY: `ParentWord` is a `repr(transparent)` wrapper of `AtomicU64`, so the two have
        // one layout, and the reference keeps the borrow of `word`.
        unsafe { &*(word as *const AtomicU64).cast::<Self>() }
    }

    /// Whether the owner is busy (from an earlier call) and nothing was woken since: the word
    /// holds `BUSY` and nothing else. A hint, read with a plain load.
    #[inline(always)]
    pub(crate) fn nothing_woken(&self) -> bool {
        self.0.load(Ordering::Relaxed) == BUSY
    }

    /// Whether a [`take`](Self::take) in `mode` would take or change anything, read with one
    /// plain load: some bit is set or, for an arming take, `BUSY` is set (arming clears it).
    #[inline(always)]
    pub(crate) fn has_wakes(&self, mode: Drain) -> bool {
        let word = self.0.load(Ordering::Relaxed);
        match mode {
            Drain::KeepBusy => word & !BUSY != 0,
            Drain::Arm => word != 0,
        }
    }

    /// Sets [`BUSY`]: the owner starts polling, and wakes from now on notify nobody.
    #[inline(always)]
    pub(crate) fn set_busy(&self) {
        // Relaxed: a wake that finds BUSY leaves its bit for the owner's arming take, an
        // AcqRel swap of the same word, which reads the latest value whatever this order.
        self.0.fetch_or(BUSY, Ordering::Relaxed);
    }

    /// Takes the set bits, leaving `BUSY` set or clear as `mode` says.
    #[inline(always)]
    pub(crate) fn take(&self, mode: Drain) -> u64 {
        let fill = match mode {
            Drain::KeepBusy => BUSY,
            Drain::Arm => 0,
        };
        // AcqRel: Acquire pairs with the Release of the wakes' `fetch_or` (`wake`'s climb, or
        // `raise`); Release keeps this swap ordered before the owner's swaps of the words it
        // summarises.
        self.0.swap(fill, Ordering::AcqRel) & !BUSY
    }

    /// Sets `bits` (a waker's side): `true` if the word was empty before (no bit set and
    /// not `BUSY`), when the caller notifies the task.
    #[inline(always)]
    pub(crate) fn raise(&self, bits: u64) -> bool {
        // AcqRel: Release publishes what the waker set below to the owner's `take`.
        self.0.fetch_or(bits, Ordering::AcqRel) == 0
    }

    /// Clears [`BUSY`] if nothing else is set (no bit was set since the owner's last
    /// take), as an arming take would: the next wake then notifies the task. `false` if
    /// some bit is set: the owner must collect (or have its task do so) instead.
    #[cfg_attr(feature = "std", allow(dead_code))]
    pub(crate) fn try_arm(&self) -> bool {
        // AcqRel: as the arming take's swap, of which this is the case with nothing to take.
        self.0
            .compare_exchange(BUSY, 0, Ordering::AcqRel, Ordering::Relaxed)
            .is_ok()
    }
}

impl core::fmt::Debug for ParentWord {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "ParentWord({:#x})", self.0.load(Ordering::Relaxed))
    }
}

/// Clears bit `index`, from the owner's side, when no waker can set it concurrently (the
/// entry has no waker left). A summary bit above it may stay set: a drain that follows it finds
/// nothing, which is harmless.
#[inline]
pub(crate) fn clear(words: &[AtomicU64], index: usize) {
    clear_in(&words[index / 64], index);
}

/// [`clear`] without the bound check, for the entry of a value that leaves (guarded by
/// `ready_512k`, instructions).
///
/// # Safety
/// Bit `index` is in `words` (`index / 64 < words.len()`).
#[inline(always)]
pub(crate) unsafe fn clear_unchecked(words: &[AtomicU64], index: usize) {
    debug_assert!(index / 64 < words.len(), "bit {index} is not in the set");
    // SAFETY: the caller's bound.
    clear_in(unsafe { words.get_unchecked(index / 64) }, index);
}

/// Takes bit `index` out of the set, from the owner's side, right before the owner polls the
/// value it names: a wake that came after the collection that queued the value is answered by
/// this poll, and no later drain queues the value again for it (a value woken many times
/// before its poll is polled once). A summary bit above it may stay set, as after [`clear`].
///
/// # Safety
/// Bit `index` is in `words` (`index / 64 < words.len()`).
#[inline(always)]
pub(crate) unsafe fn take_unchecked(words: &[AtomicU64], index: usize) {
    debug_assert!(index / 64 < words.len(), "bit {index} is not in the set");
    // SAFETY: the caller's bound.
    let word = unsafe { words.get_unchecked(index / 64) };
    if word.load(Ordering::Relaxed) & (1 << (index % 64)) != 0 {
        take_bit(word, index);
    }
}

/// Clears bit `index`'s place in its word `word`: the rare half of [`take_unchecked`], out of
/// the poll loop's way (the mask too is made only here).
#[cold]
#[inline(never)]
fn take_bit(word: &AtomicU64, index: usize) {
    // Acquire: pairs with the waker's Release in `wake`, as a drain's swap does, so the poll
    // that answers the wake sees what the waker did before it.
    word.fetch_and(!(1 << (index % 64)), Ordering::Acquire);
}

/// Clears bit `index`'s place in its word `word`.
#[inline(always)]
fn clear_in(word: &AtomicU64, index: usize) {
    let bit = 1u64 << (index % 64);
    if word.load(Ordering::Relaxed) & bit != 0 {
        // Relaxed: no waker of this entry is left to synchronise with (the caller acquired
        // their last reference count decrement).
        word.fetch_and(!bit, Ordering::Relaxed);
    }
}

/// Takes every woken slot out of the set, calling `f` with each index, lowest first, and
/// leaves the top word as `mode` says.
///
/// `f` answers nothing: what the caller needs to know of the drain (whether a queue got any
/// slot) it reads off its queues once, after the drain, rather than per slot.
/// Sets of up to 4,032 slots (one level under the top word) are drained in loops of their own;
/// deeper ones out of line. Guarded by `unordered_selfwake_100k_c64`, instructions.
///
/// The words are reached without bound checks, as a wake reaches them: a drain runs at the
/// start of most calls (`unordered_selfwake_100k_c64`, instructions); a debug build checks.
///
/// # Safety
/// `words` holds the [`words`](ReadyLayout::words) of a set laid out by `layout`, and every
/// bit of a summary word (but [`BUSY`]) was set by [`wake`]'s climb from the word it stands
/// for (a wake table's wakers' and its owner's calls of this module keep it so; nothing else
/// writes a table's words).
#[inline(always)]
pub(crate) unsafe fn drain(
    words: &[AtomicU64],
    layout: &ReadyLayout,
    mode: Drain,
    mut f: impl FnMut(usize),
) {
    debug_assert!(
        words.len() >= layout.words(),
        "the words are not the layout's"
    );
    let top = layout.top();
    debug_assert!(top < MAX_LEVELS && layout.top_word() < words.len());
    // SAFETY: `top` is below `levels`, at most `MAX_LEVELS`, so its start is one of the
    // layout's, and the top word is one of its words, all in `words` (the caller's promise).
    let top_word = unsafe { words.get_unchecked(*layout.start.get_unchecked(top) as usize) };
    // Its top word is the parent's word: taken before the child words below.
    let bits = ParentWord::of(top_word).take(mode);
    match top {
        0 => each_bit(0, bits, &mut f),
        1 => {
            let mut children = bits;
            while children != 0 {
                let index = children.trailing_zeros() as usize;
                children &= children - 1;
                debug_assert!(
                    index < layout.start[1] as usize,
                    "top bit {index} names no first-level word"
                );
                // SAFETY: a bit of the top word is set only by a wake that climbed from the
                // first-level word it stands for (`wake`; `BUSY` is not among the bits taken),
                // one of the layout's words; the first level starts at word 0.
                let word = unsafe { words.get_unchecked(index) };
                each_bit(index * 64, take_all(word), &mut f);
            }
        }
        _ => drain_deep(words, layout, top, bits, f),
    }
}

/// [`drain`] below a top word at level `top` (2 or more), whose bits `bits` it took: depth
/// first, lowest first, with the bits still to visit at each level on a stack of its own.
#[inline(never)]
fn drain_deep(
    words: &[AtomicU64],
    layout: &ReadyLayout,
    top: usize,
    bits: u64,
    mut f: impl FnMut(usize),
) {
    debug_assert!((2..MAX_LEVELS).contains(&top));
    if top == 2 {
        // Up to 262,144 entries (a set of 10,000 or 100,000): two loops, in the same order as
        // the stack below, without its bookkeeping a word. Guarded by `unordered_sparse_10k`
        // (instructions).
        each_bit(0, bits, &mut |middle| {
            each_bit(
                middle * 64,
                take_word(words, layout, 1, middle),
                &mut |child| {
                    each_bit(child * 64, take_word(words, layout, 0, child), &mut f);
                },
            );
        });
        return;
    }
    // `pending[level]`: the bits of word `base[level]` of `level` not visited yet.
    let mut pending = [0u64; MAX_LEVELS];
    let mut base = [0usize; MAX_LEVELS];
    pending[top] = bits;
    let mut level = top;
    while level <= top {
        let bits = pending[level];
        if bits == 0 {
            level += 1;
            continue;
        }
        pending[level] = bits & (bits - 1);
        let child = base[level] * 64 + bits.trailing_zeros() as usize;
        let word = take_word(words, layout, level - 1, child);
        if level == 1 {
            each_bit(child * 64, word, &mut f);
        } else {
            level -= 1;
            pending[level] = word;
            base[level] = child;
        }
    }
}

/// Calls `f` with `base` plus the index of each bit of `bits`, lowest first.
#[inline(always)]
fn each_bit(base: usize, mut bits: u64, f: &mut impl FnMut(usize)) {
    while bits != 0 {
        let bit = bits.trailing_zeros() as usize;
        bits &= bits - 1;
        f(base + bit);
    }
}

/// Takes word `index` of `level`: its bits, leaving it empty.
#[inline(always)]
fn take_word(words: &[AtomicU64], layout: &ReadyLayout, level: usize, index: usize) -> u64 {
    take_all(&words[layout.word(level, index)])
}

/// Takes `word`'s bits, leaving it empty.
#[inline(always)]
fn take_all(word: &AtomicU64) -> u64 {
    // AcqRel: Acquire pairs with the wakers' Release in `wake`; Release keeps this clear
    // ordered before the child swaps that follow it.
    word.swap(0, Ordering::AcqRel)
}

#[cfg(all(test, not(all(pinfold_loom, feature = "loom"))))]
mod tests {
    use super::*;
    use std::format;
    use std::vec;
    use std::vec::Vec;

    /// The owner's reads between calls: whether a collection would find anything, and whether
    /// the owner may poll on without one (busy, nothing woken since).
    #[test]
    fn a_parent_word_says_what_a_collection_would_find() {
        let word = ParentWord::new();
        // Armed, no bit set: nothing to take, and the owner is not busy.
        assert!(!word.nothing_woken());
        assert!(!word.has_wakes(Drain::KeepBusy));
        assert!(!word.has_wakes(Drain::Arm));
        word.set_busy();
        // Busy, no bit set: a busy collection has nothing to do; an arming one clears BUSY.
        assert!(word.nothing_woken());
        assert!(!word.has_wakes(Drain::KeepBusy));
        assert!(word.has_wakes(Drain::Arm));
        // A wake while busy notifies nobody, and every collection now has something to take.
        assert!(!word.raise(1 << 5));
        assert!(!word.nothing_woken());
        assert!(word.has_wakes(Drain::KeepBusy));
        assert!(word.has_wakes(Drain::Arm));
        assert_eq!(word.take(Drain::KeepBusy), 1 << 5);
        assert!(word.nothing_woken());
        assert_eq!(word.take(Drain::Arm), 0);
        // Armed again: the next wake notifies.
        assert!(word.raise(1 << 7));
        assert_eq!(format!("{word:?}"), "ParentWord(0x80)");
    }

    /// Arming without a take (a round ended by a panic, without `std`): it succeeds only if
    /// nothing was woken since the last take, and then the next wake notifies.
    #[test]
    fn a_parent_word_arms_only_when_nothing_was_woken() {
        let word = ParentWord::new();
        word.set_busy();
        assert!(word.try_arm());
        assert!(!word.try_arm(), "armed already: nothing to clear");
        assert!(word.raise(1), "the first wake after arming notifies");
        word.set_busy();
        assert!(!word.try_arm(), "a wake is waiting to be taken");
        assert_eq!(word.take(Drain::Arm), 1);
    }

    /// [`super::wake`], for a bit of the set `set` made.
    fn wake(words: &[AtomicU64], layout: &ReadyLayout, index: usize) -> Woke {
        assert_eq!(words.len(), layout.words());
        assert!(
            index / 64 < layout.start[1] as usize,
            "bit {index} is not in the set"
        );
        // SAFETY: the words are the layout's, and the bit is one of its first level's.
        unsafe { super::wake(words, layout, index) }
    }

    fn set(capacity: usize) -> (Vec<AtomicU64>, ReadyLayout) {
        let layout = ReadyLayout::new(capacity);
        (
            (0..layout.words()).map(|_| AtomicU64::new(0)).collect(),
            layout,
        )
    }

    fn drained(words: &[AtomicU64], layout: &ReadyLayout) -> Vec<usize> {
        let mut out = Vec::new();
        // SAFETY: the words are the layout's (`set`), set only by `wake`.
        unsafe {
            drain(words, layout, Drain::Arm, |i| {
                out.push(i);
            })
        };
        out
    }

    /// A debug build checks what a drain relies on: each bit of a two-level set's top word
    /// names one of its first-level words. A bit that names the top word itself (only a bug in
    /// this module could set one) panics there instead of draining past the first level.
    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "names no first-level word")]
    fn a_drain_checks_the_top_words_bits_in_a_debug_build() {
        let (words, layout) = set(64);
        // One first-level word (word 0), the top word (word 1): bit 1 names the top word.
        assert_eq!(layout.top_word(), 1);
        ParentWord::of(&words[1]).raise(1 << 1);
        // SAFETY: the words are the layout's; the bit set breaks the drain's promise, which the
        // debug check catches before any word is reached by it.
        unsafe { drain(&words, &layout, Drain::KeepBusy, |_| {}) };
    }

    #[test]
    fn layout_sizes_follow_the_capacity() {
        assert_eq!(ReadyLayout::new(0).words(), 1);
        assert_eq!(ReadyLayout::new(63).words(), 1);
        // 64 bits fill a word: a top word above it keeps BUSY free.
        assert_eq!(ReadyLayout::new(64).words(), 1 + 1);
        assert_eq!(ReadyLayout::new(65).words(), 2 + 1);
        assert_eq!(ReadyLayout::new(4032).words(), 63 + 1);
        assert_eq!(ReadyLayout::new(4096).words(), 64 + 1 + 1);
        assert_eq!(ReadyLayout::new(4097).words(), 65 + 2 + 1);
    }

    #[test]
    fn first_wake_raises_and_later_wakes_join_or_coalesce() {
        let (words, layout) = set(10_000);
        assert_eq!(wake(&words, &layout, 5000), Woke::Raised);
        assert_eq!(wake(&words, &layout, 5000), Woke::Already);
        assert_eq!(wake(&words, &layout, 5001), Woke::Joined);
        assert_eq!(wake(&words, &layout, 9999), Woke::Joined);
        assert!(is_woken(&words, 5001));
        assert!(!is_woken(&words, 5002));
        assert_eq!(drained(&words, &layout), vec![5000, 5001, 9999]);
        assert!(is_empty(&words, &layout));
        assert_eq!(wake(&words, &layout, 3), Woke::Raised);
    }

    #[test]
    fn a_busy_top_word_absorbs_the_climb() {
        let (words, layout) = set(10_000);
        let mut seen = Vec::new();
        // SAFETY: as in `drained`.
        unsafe {
            drain(&words, &layout, Drain::KeepBusy, |i| {
                seen.push(i);
            })
        };
        assert!(seen.is_empty());
        assert!(is_empty(&words, &layout) && !is_clear(&words, &layout));
        // The owner is busy: the first wake joins instead of raising.
        assert_eq!(wake(&words, &layout, 70), Woke::Joined);
        // SAFETY: as in `drained`.
        unsafe {
            drain(&words, &layout, Drain::Arm, |i| {
                seen.push(i);
            })
        };
        assert_eq!(seen, [70]);
        assert!(is_clear(&words, &layout));
        assert_eq!(wake(&words, &layout, 70), Woke::Raised);
    }

    #[test]
    fn clear_clears_one_bit() {
        let (words, layout) = set(200);
        wake(&words, &layout, 130);
        wake(&words, &layout, 131);
        clear(&words, 130);
        assert_eq!(drained(&words, &layout), [131]);
        // Bit 66 is bit 2 of word 1, alone in its word; bit 130 is bit 2 of word 2.
        wake(&words, &layout, 66);
        wake(&words, &layout, 130);
        clear(&words, 66);
        assert_eq!(drained(&words, &layout), [130]);
    }

    #[test]
    fn every_woken_slot_is_drained_once() {
        // One level under the top word, then two, then three: each drained its own way.
        let capacities: &[usize] = if cfg!(miri) {
            &[40, 300]
        } else {
            &[40, 3_000, 70_000, 300_000]
        };
        for &capacity in capacities {
            let (words, layout) = set(capacity);
            let woken: Vec<usize> = (0..capacity)
                .filter(|i| i % 7 == 3 || i % 64 == 0)
                .collect();
            for &i in woken.iter().rev() {
                wake(&words, &layout, i);
            }
            assert_eq!(drained(&words, &layout), woken, "{capacity} slots");
            assert!(drained(&words, &layout).is_empty(), "{capacity} slots");
        }
    }
}
