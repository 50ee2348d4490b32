//! The reorder ring: one entry per future pulled from the source and not yet yielded, in input
//! order, so that an output finished out of order waits at its place until the head is out.

use std::collections::VecDeque;

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
/// Sequence numbers are handed out in pull order by [`push_running`](Self::push_running). The
/// entry of sequence number `seq` sits at position `seq - head`, where `head` is the sequence
/// number of the next output to yield: insertion and release are O(1), and the ring holds
/// exactly the futures pulled but not yet yielded (`running + held`, plus the places of lost
/// futures not yet reached). The front is never [`Entry::Lost`].
pub(crate) struct ReorderRing<T> {
    entries: VecDeque<Entry<T>>,
    /// The sequence number of the front entry.
    head: u64,
    /// How many entries are [`Entry::Held`].
    held: usize,
}

impl<T> ReorderRing<T> {
    /// An empty ring. Allocates nothing until the first push.
    pub(crate) const fn new() -> Self {
        Self {
            entries: VecDeque::new(),
            head: 0,
            held: 0,
        }
    }

    /// An empty ring with room for `capacity` entries before it reallocates.
    pub(crate) fn with_capacity(capacity: usize) -> Self {
        Self {
            entries: VecDeque::with_capacity(capacity),
            head: 0,
            held: 0,
        }
    }

    /// Drops every entry, keeping the storage; sequence numbers go on from where they were.
    pub(crate) fn clear(&mut self) {
        self.head = self.head.wrapping_add(self.entries.len() as u64);
        self.held = 0;
        self.entries.clear();
    }

    /// How many entries the ring holds: futures pulled and not yet yielded.
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    /// How many finished outputs wait for an earlier one.
    pub(crate) fn held(&self) -> usize {
        self.held
    }

    /// Adds a running future at the back and returns its sequence number.
    pub(crate) fn push_running(&mut self) -> u64 {
        let seq = self.head.wrapping_add(self.entries.len() as u64);
        self.entries.push_back(Entry::Running);
        seq
    }

    /// Adds a running future at the front, ahead of every entry, and returns its sequence
    /// number: the one before the head's (sequence numbers wrap).
    pub(crate) fn push_front_running(&mut self) -> u64 {
        self.head = self.head.wrapping_sub(1);
        self.entries.push_front(Entry::Running);
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

    /// Removes and returns the next output in input order, if it has finished.
    pub(crate) fn pop_head(&mut self) -> Option<T> {
        if !matches!(self.entries.front(), Some(Entry::Held(_))) {
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

    fn entry_mut(&mut self, seq: u64) -> &mut Entry<T> {
        let position = usize::try_from(seq.wrapping_sub(self.head))
            .ok()
            .filter(|&position| position < self.entries.len());
        match position {
            Some(position) => &mut self.entries[position],
            None => panic!(
                "sequence number {seq} is not in the ring (head {}, len {})",
                self.head,
                self.entries.len()
            ),
        }
    }

    /// Restores the invariant that the front is not lost.
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
