//! The reorder ring: one entry per future pulled from the source and not yet yielded, in input
//! order, so that an output finished out of order waits at its place until the head is out.

use alloc::collections::VecDeque;

/// What became of one pulled future.
enum Entry<T> {
    /// Still running in the arena.
    Running,
    /// Finished; its output waits for every earlier one to be yielded.
    Held(T),
    /// Panicked (in its poll or its drop): it has no output, and its place is skipped.
    Lost,
}

/// Outputs in input order, indexed by sequence number.
///
/// Sequence numbers are handed out in pull order by [`push_running`](Self::push_running)
/// (and below the head by [`push_front_running`](Self::push_front_running)); they wrap. The
/// ring stands for every future pulled and not yet yielded, `head..tail`, but stores entries
/// only up to the last one that is not running: the entry of `seq` sits at position
/// `seq - head` if that is below `entries.len()`, and is [`Entry::Running`] implicitly past it.
/// So while futures finish in order nothing is stored at all (pushing is a counter, the head's
/// output goes out at once), and holding and releasing an output out of order is O(1)
/// amortized. The front is never [`Entry::Lost`].
pub(crate) struct ReorderRing<T> {
    /// Entries from the head on, up to the last that is not running (or shorter).
    entries: VecDeque<Entry<T>>,
    /// The sequence number of the next output to yield.
    head: u64,
    /// The sequence number the next [`push_running`](Self::push_running) hands out.
    tail: u64,
    /// How many entries are [`Entry::Held`].
    held: usize,
}

/// Every entry is dropped, also when the `Drop` of some outputs panics; then the first panic
/// goes on (see `pinfold_arena::unwind::drop_all`).
impl<T> Drop for ReorderRing<T> {
    fn drop(&mut self) {
        pinfold_arena::unwind::drop_all(self.entries.drain(..));
    }
}

impl<T> ReorderRing<T> {
    /// An empty ring. Allocates nothing until an output finishes out of order.
    pub(crate) const fn new() -> Self {
        Self {
            entries: VecDeque::new(),
            head: 0,
            tail: 0,
            held: 0,
        }
    }

    /// An empty ring with room for `capacity` stored entries before it reallocates.
    pub(crate) fn with_capacity(capacity: usize) -> Self {
        Self {
            entries: VecDeque::with_capacity(capacity),
            ..Self::new()
        }
    }

    /// Drops every entry, keeping the storage; sequence numbers go on from where they were.
    pub(crate) fn clear(&mut self) {
        self.head = self.tail;
        self.held = 0;
        pinfold_arena::unwind::drop_all(self.entries.drain(..));
    }

    /// How many places the ring has: futures pulled and not yet yielded (and lost ones not
    /// yet reached).
    pub(crate) fn len(&self) -> usize {
        self.tail.wrapping_sub(self.head) as usize
    }

    /// How many finished outputs wait for an earlier one.
    pub(crate) fn held(&self) -> usize {
        self.held
    }

    /// Adds a running future at the back and returns its sequence number.
    #[inline]
    pub(crate) fn push_running(&mut self) -> u64 {
        let seq = self.tail;
        self.tail = self.tail.wrapping_add(1);
        seq
    }

    /// Adds a running future at the front, ahead of every place, and returns its sequence
    /// number: the one before the head's.
    pub(crate) fn push_front_running(&mut self) -> u64 {
        self.head = self.head.wrapping_sub(1);
        if !self.entries.is_empty() {
            self.entries.push_front(Entry::Running);
        }
        self.head
    }

    /// Stores the output of the future with sequence number `seq`.
    ///
    /// # Panics
    /// If `seq` does not name a running future (a bug of the adapter).
    pub(crate) fn finish(&mut self, seq: u64, output: T) {
        let entry = self.entry_mut(seq);
        assert!(
            matches!(entry, Entry::Running),
            "sequence number {seq} finished twice"
        );
        *entry = Entry::Held(output);
        self.held += 1;
    }

    /// Marks the future with sequence number `seq` as lost: its place will be skipped.
    ///
    /// # Panics
    /// If `seq` does not name a running future (a bug of the adapter).
    pub(crate) fn lose(&mut self, seq: u64) {
        let entry = self.entry_mut(seq);
        assert!(
            matches!(entry, Entry::Running),
            "sequence number {seq} lost after it finished"
        );
        *entry = Entry::Lost;
        self.skip_lost();
    }

    /// Takes the place of the future with sequence number `seq` if it is the head: its output
    /// is the next one, and need not wait in the ring. `false` (and nothing changes) if it is
    /// not; then [`finish`](Self::finish) it.
    #[inline]
    pub(crate) fn finish_head(&mut self, seq: u64) -> bool {
        if seq != self.head {
            return false;
        }
        debug_assert!(matches!(self.entries.front(), None | Some(Entry::Running)));
        self.advance();
        true
    }

    /// The sequence number of the next output to yield.
    #[inline]
    pub(crate) fn head(&self) -> u64 {
        self.head
    }

    /// Whether the next output in input order has finished.
    #[inline]
    pub(crate) fn head_is_held(&self) -> bool {
        matches!(self.entries.front(), Some(Entry::Held(_)))
    }

    /// Removes and returns the next output in input order, if it has finished.
    #[inline]
    pub(crate) fn pop_head(&mut self) -> Option<T> {
        if self.held == 0 || !matches!(self.entries.front(), Some(Entry::Held(_))) {
            return None;
        }
        let Some(Entry::Held(output)) = self.entries.pop_front() else {
            unreachable!("the front entry was just seen to be held");
        };
        self.head = self.head.wrapping_add(1);
        self.held -= 1;
        self.skip_lost();
        Some(output)
    }

    /// Moves the head past its place, which is running (stored or not).
    #[inline]
    fn advance(&mut self) {
        self.head = self.head.wrapping_add(1);
        if !self.entries.is_empty() {
            self.entries.pop_front();
            self.skip_lost();
        }
    }

    /// The entry of `seq`, stored first (with running entries before it) if it was implicit.
    fn entry_mut(&mut self, seq: u64) -> &mut Entry<T> {
        let position = usize::try_from(seq.wrapping_sub(self.head))
            .ok()
            .filter(|&position| position < self.len());
        let Some(position) = position else {
            panic!(
                "sequence number {seq} is not in the ring (head {}, len {})",
                self.head,
                self.len()
            );
        };
        while self.entries.len() <= position {
            self.entries.push_back(Entry::Running);
        }
        &mut self.entries[position]
    }

    /// Restores the invariant that the front is not lost.
    #[inline]
    fn skip_lost(&mut self) {
        while matches!(self.entries.front(), Some(Entry::Lost)) {
            self.entries.pop_front();
            self.head = self.head.wrapping_add(1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::ReorderRing;
    use std::vec::Vec;

    #[test]
    fn outputs_come_out_in_sequence_order() {
        let mut ring = ReorderRing::new();
        let seqs: Vec<u64> = (0..4).map(|_| ring.push_running()).collect();
        assert_eq!(seqs, [0, 1, 2, 3]);

        ring.finish(2, "c");
        ring.finish(1, "b");
        assert_eq!(ring.pop_head(), None, "the head is still running");
        assert_eq!((ring.len(), ring.held()), (4, 2));

        ring.finish(0, "a");
        assert_eq!(ring.pop_head(), Some("a"));
        assert_eq!(ring.pop_head(), Some("b"));
        assert_eq!(ring.pop_head(), Some("c"));
        assert_eq!(ring.pop_head(), None);
        assert_eq!((ring.len(), ring.held()), (1, 0));

        assert_eq!(ring.push_running(), 4);
        ring.finish(3, "d");
        ring.finish(4, "e");
        assert_eq!(ring.pop_head(), Some("d"));
        assert_eq!(ring.pop_head(), Some("e"));
        assert_eq!(ring.len(), 0);
    }

    #[test]
    fn lost_places_are_skipped() {
        let mut ring = ReorderRing::new();
        for _ in 0..4 {
            ring.push_running();
        }
        ring.lose(1);
        ring.finish(2, 'c');
        ring.lose(0);
        assert_eq!(
            ring.len(),
            2,
            "lost places at the front are dropped at once"
        );
        assert_eq!(ring.pop_head(), Some('c'));
        ring.lose(3);
        assert_eq!(ring.len(), 0);
        assert_eq!(ring.push_running(), 4);
    }

    #[test]
    fn front_pushes_come_out_first_across_wrapping() {
        let mut ring = ReorderRing::new();
        let back = ring.push_running();
        let front = ring.push_front_running();
        assert_eq!(front, u64::MAX, "the sequence numbers wrap below 0");
        let first = ring.push_front_running();
        ring.finish(back, "back");
        ring.finish(front, "front");
        assert_eq!(ring.pop_head(), None, "the first front push still runs");
        ring.finish(first, "first");
        assert_eq!(ring.pop_head(), Some("first"));
        assert_eq!(ring.pop_head(), Some("front"));
        assert_eq!(ring.pop_head(), Some("back"));
        assert_eq!(ring.push_running(), 1);
    }

    #[test]
    fn the_head_finishes_without_waiting() {
        let mut ring = ReorderRing::new();
        for _ in 0..4 {
            ring.push_running();
        }
        assert!(!ring.finish_head(1), "1 is not the head");
        ring.lose(1);
        assert!(ring.finish_head(0));
        assert_eq!(ring.len(), 2, "the lost place behind the head went with it");
        ring.finish(3, 'd');
        assert!(ring.finish_head(2));
        assert_eq!(ring.pop_head(), Some('d'));
        assert_eq!(ring.len(), 0);
    }

    #[test]
    fn clear_empties_and_goes_on() {
        let mut ring = ReorderRing::with_capacity(4);
        ring.push_running();
        ring.push_running();
        ring.finish(1, 'b');
        ring.clear();
        assert_eq!((ring.len(), ring.held()), (0, 0));
        assert_eq!(ring.pop_head(), None);
        assert_eq!(ring.push_running(), 2);
    }

    #[test]
    #[should_panic(expected = "finished twice")]
    fn finishing_twice_panics() {
        let mut ring = ReorderRing::new();
        ring.push_running();
        ring.push_running();
        ring.finish(1, ());
        ring.finish(1, ());
    }

    #[test]
    #[should_panic(expected = "not in the ring")]
    fn unknown_sequence_number_panics() {
        let mut ring = ReorderRing::new();
        ring.push_running();
        ring.finish(1, ());
    }
}
