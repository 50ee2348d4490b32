//! The set: a stack of arena groups sharing one hub, polled round-robin with one budget.

use core::fmt;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};

use futures_core::{FusedStream, Stream};
use pinfold_arena::{Arena, Budget, Hub, Queued, Step};

use crate::sizing::{MAX_GROUP, Sizing};

/// A growable set of futures, polled concurrently, whose outputs come out in the order the
/// futures finish. See the [crate documentation](crate) for how it grows, gives memory back,
/// and stays fair.
///
/// `Unpin` whatever `F` is (futures are pinned in the set's own storage); `Send` if `F` is;
/// `Sync` if `F` is `Send + Sync`.
pub struct FuturesUnordered<F> {
    /// The groups, smallest first. Group `i` has bit `i` in the hub and in the masks below.
    groups: Vec<Arena<F>>,
    /// The one parent of every group; made with the first group.
    hub: Option<Hub>,
    /// How many futures the groups hold.
    len: usize,
    /// How many slots the groups have.
    capacity: usize,
    /// Groups with a free slot.
    not_full: u64,
    /// Groups with slots queued to be polled: pushed futures, and wakes collected from the hub.
    queued: u64,
    /// The group the next poll looks at first: the one after the group of the latest output.
    cursor: u32,
    /// When to add and release groups.
    sizing: Sizing,
    /// Set when `poll_next` returned `Ready(None)`; cleared by a push.
    terminated: bool,
}

impl<F> FuturesUnordered<F> {
    /// An empty set. Allocates nothing: the first push allocates the first group.
    pub const fn new() -> Self {
        Self {
            groups: Vec::new(),
            hub: None,
            len: 0,
            capacity: 0,
            not_full: 0,
            queued: 0,
            cursor: 0,
            sizing: Sizing::new(),
            terminated: false,
        }
    }

    /// An empty set whose first group has `capacity` slots, allocated now; the first group is
    /// kept as long as the set. `with_capacity(0)` is [`new`](Self::new) and allocates nothing.
    pub fn with_capacity(capacity: usize) -> Self {
        let mut set = Self::new();
        if capacity > 0 {
            set.add_group(capacity.min(MAX_GROUP));
            while set.capacity < capacity {
                let size = set.sizing.grow(set.capacity);
                set.add_group(size);
            }
        }
        set
    }

    /// Adds a future to the set; it is polled by the next `poll_next`.
    ///
    /// The future goes into a free slot of the smallest group that has one; only when every
    /// group is full is a group added (see the crate documentation, *Memory*).
    ///
    /// # Panics
    /// If every one of the 64 groups is full (more futures than memory can hold).
    pub fn push(&mut self, fut: F) {
        let group = if self.not_full == 0 {
            self.grow()
        } else {
            self.not_full.trailing_zeros() as usize
        };
        let arena = &mut self.groups[group];
        if arena.insert(fut).is_err() {
            unreachable!("group {group} is marked as having a free slot");
        }
        if arena.is_full() {
            self.not_full &= !bit(group);
        }
        self.queued |= bit(group);
        self.len += 1;
        self.terminated = false;
    }

    /// How many futures the set holds.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the set holds no future.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// How many slots the set has allocated now: the sum of its groups' capacities.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Drops every future in the set, then releases empty groups as after an output (all but
    /// the first, unless the set retains capacity; see the crate documentation, *Memory*).
    ///
    /// If a future's `Drop` panics, the panic propagates; the set stays consistent and usable,
    /// and the futures not yet dropped stay in it.
    pub fn clear(&mut self) {
        self.repairing(|set| {
            for arena in &mut set.groups {
                arena.clear();
            }
        });
        self.resync();
        self.release_empty_groups();
    }

    /// The futures in the set, in no particular order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &F> + '_ {
        Counted {
            inner: self
                .groups
                .iter()
                .flat_map(|arena| arena.iter().map(|(_, fut)| fut)),
            left: self.len,
        }
    }

    /// The futures in the set, pinned, in no particular order.
    pub fn iter_pin_mut(&mut self) -> impl ExactSizeIterator<Item = Pin<&mut F>> + '_ {
        Counted {
            inner: self
                .groups
                .iter_mut()
                .flat_map(|arena| arena.iter_pin_mut().map(|(_, fut)| fut)),
            left: self.len,
        }
    }

    /// Adds a group on top, sized by the memory policy; returns its index.
    fn grow(&mut self) -> usize {
        let size = self.sizing.grow(self.capacity);
        self.add_group(size)
    }

    /// Adds a group of `size` slots on top; returns its index.
    fn add_group(&mut self, size: usize) -> usize {
        let group = self.groups.len();
        assert!(
            group < Hub::MAX_ARENAS,
            "FuturesUnordered is full: {} groups, {} futures",
            Hub::MAX_ARENAS,
            self.len
        );
        let hub = self.hub.get_or_insert_with(Hub::new);
        self.groups.push(Arena::with_hub(size, hub, group));
        self.capacity += size;
        self.not_full |= bit(group);
        group
    }

    /// Releases the top group while it holds no future and the memory policy allows it.
    fn release_empty_groups(&mut self) {
        while let [_, .., top] = self.groups.as_slice() {
            if !top.is_empty() {
                return;
            }
            let below = self.capacity - top.capacity();
            if !self.sizing.may_release(self.len, below) {
                return;
            }
            self.sizing.released(self.capacity);
            // Dropping the arena frees its slots; its wake table lives on while stale wakers
            // do. Their wakes set this group's hub bit: ignored while no group has it, and
            // costing a look that finds nothing at the group that takes the bit later.
            self.groups.pop();
            let group = self.groups.len();
            self.not_full &= !bit(group);
            self.queued &= !bit(group);
            self.capacity = below;
        }
    }

    /// Bookkeeping after group `group` handed out an output (its future is gone).
    fn finished(&mut self, group: usize) {
        self.len -= 1;
        self.not_full |= bit(group);
        if !self.groups[group].has_queued() {
            self.queued &= !bit(group);
        }
        self.cursor = (group as u32 + 1) % u64::BITS;
        self.sizing.output(self.len);
        if let [_, .., top] = self.groups.as_slice() {
            if top.is_empty() {
                self.release_empty_groups();
            }
        }
    }

    /// Runs `f`; if it panics (a future's `poll` or `Drop` did), recounts what the groups hold
    /// before the panic goes on, so that the set stays consistent.
    fn repairing<R>(&mut self, f: impl FnOnce(&mut Self) -> R) -> R {
        match catch_unwind(AssertUnwindSafe(|| f(self))) {
            Ok(out) => out,
            Err(panic) => {
                self.resync();
                resume_unwind(panic);
            }
        }
    }

    /// Recomputes the length and the masks from the groups.
    fn resync(&mut self) {
        self.len = 0;
        self.not_full = 0;
        self.queued = 0;
        for (group, arena) in self.groups.iter().enumerate() {
            self.len += arena.len();
            if !arena.is_full() {
                self.not_full |= bit(group);
            }
            if arena.has_queued() {
                self.queued |= bit(group);
            }
        }
    }

    /// One bit per group that exists.
    fn live_groups(&self) -> u64 {
        1u64.checked_shl(self.groups.len() as u32)
            .map_or(u64::MAX, |bit| bit - 1)
    }
}

impl<F: Future> FuturesUnordered<F> {
    /// The body of `poll_next`: the arena's `poll_next` spread across the groups.
    fn poll_groups(&mut self, cx: &mut Context<'_>) -> Poll<Option<F::Output>> {
        if self.len == 0 {
            return Poll::Ready(None);
        }
        // One budget for all groups: each future is polled at most once in this call.
        let mut budget = Budget::new(self.len);
        loop {
            // Poll the queued slots, group after group, from the cursor on.
            while self.queued != 0 {
                let group = first_from(self.queued, self.cursor);
                match self.groups[group].poll_queued(&mut budget, &mut poll_future::<F>) {
                    Queued::Ready(_, out) => {
                        self.finished(group);
                        return Poll::Ready(Some(out));
                    }
                    Queued::Empty => self.queued &= !bit(group),
                    Queued::Yield => {
                        cx.waker().wake_by_ref();
                        return Poll::Pending;
                    }
                }
            }
            // Nothing queued: collect the wakes. Register first, so that a wake after the
            // collection below wakes the task. A group's bit is set when its ready set goes
            // from empty to non-empty, so every group whose bit is taken is collected now.
            let Some(hub) = &self.hub else {
                unreachable!("a set holding futures has a hub");
            };
            hub.register(cx.waker());
            let mut woken = hub.take_ready() & self.live_groups();
            while woken != 0 {
                let group = woken.trailing_zeros() as usize;
                woken &= woken - 1;
                if self.groups[group].collect_woken() {
                    self.queued |= bit(group);
                }
            }
            if self.queued == 0 {
                return Poll::Pending;
            }
            if budget.visited() == 0 {
                continue;
            }
            // Slots woken during this call may have been polled in it: poll them in the next.
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
    }
}

/// Polls one future for the arena: a finished future is dropped before its output is returned.
fn poll_future<F: Future>(_: usize, fut: Pin<&mut F>, cx: &mut Context<'_>) -> Step<F::Output> {
    match fut.poll(cx) {
        Poll::Ready(out) => Step::Done(out),
        Poll::Pending => Step::Pending,
    }
}

/// The mask bit of group `group`.
fn bit(group: usize) -> u64 {
    1 << group
}

/// The first group in `mask` at or after `from`, wrapping around. `mask` is not empty.
fn first_from(mask: u64, from: u32) -> usize {
    ((mask.rotate_right(from).trailing_zeros() + from) % u64::BITS) as usize
}

impl<F: Future> Stream for FuturesUnordered<F> {
    type Item = F::Output;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<F::Output>> {
        let this = self.get_mut();
        let polled = this.repairing(|set| set.poll_groups(cx));
        if matches!(polled, Poll::Ready(None)) {
            this.terminated = true;
        }
        polled
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.len, Some(self.len))
    }
}

impl<F: Future> FusedStream for FuturesUnordered<F> {
    fn is_terminated(&self) -> bool {
        self.terminated
    }
}

impl<F> Default for FuturesUnordered<F> {
    fn default() -> Self {
        Self::new()
    }
}

impl<F> FromIterator<F> for FuturesUnordered<F> {
    /// A set holding every future of the iterator, grown group by group as by `push`.
    fn from_iter<I: IntoIterator<Item = F>>(iter: I) -> Self {
        let mut set = Self::new();
        set.extend(iter);
        set
    }
}

impl<F> Extend<F> for FuturesUnordered<F> {
    fn extend<I: IntoIterator<Item = F>>(&mut self, iter: I) {
        for fut in iter {
            self.push(fut);
        }
    }
}

impl<F> Drop for FuturesUnordered<F> {
    fn drop(&mut self) {
        // Stale wakers may outlive the set (and keep the hub alive): they must not reach the
        // task that polled it. The futures are dropped in place with the groups, on this thread.
        if let Some(hub) = &self.hub {
            hub.forget_waker();
        }
    }
}

impl<F> fmt::Debug for FuturesUnordered<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FuturesUnordered")
            .field("len", &self.len)
            .field("capacity", &self.capacity)
            .field("groups", &self.groups.len())
            .finish_non_exhaustive()
    }
}

/// An iterator that knows how many items are left.
struct Counted<I> {
    inner: I,
    left: usize,
}

impl<I: Iterator> Iterator for Counted<I> {
    type Item = I::Item;

    fn next(&mut self) -> Option<I::Item> {
        let item = self.inner.next()?;
        self.left -= 1;
        Some(item)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl<I: Iterator> ExactSizeIterator for Counted<I> {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_from_wraps_around() {
        assert_eq!(first_from(0b1010, 0), 1);
        assert_eq!(first_from(0b1010, 1), 1);
        assert_eq!(first_from(0b1010, 2), 3);
        assert_eq!(first_from(0b1010, 4), 1);
        assert_eq!(first_from(1 << 63, 5), 63);
        assert_eq!(first_from(1, 63), 0);
    }
}
