//! [`Weights`]: what a future queue has running, by weight, against its max weight and its
//! groups' max weights, and the queues of the futures that wait for their group's room; and
//! what the queues' sources give ([`WeightedFuture`], [`GroupedWeightedFuture`]).

use core::borrow::Borrow;
use core::fmt;
use core::future::Future;
use core::hash::Hash;
use core::task::Context;

use alloc::boxed::Box;
use alloc::collections::VecDeque;
use alloc::vec::Vec;
use hashbrown::HashMap;

use crate::limit::{Limit, Seat, Steering};

/// An item of the source of [`future_queue`](crate::BufferExt::future_queue): a weight and
/// a future, `(usize, F)`. Sealed; implemented for those tuples only.
pub trait WeightedFuture: sealed::Sealed {
    /// The future.
    type Future: Future;

    /// The weight and the future.
    fn into_parts(self) -> (usize, Self::Future);
}

impl<F: Future> sealed::Sealed for (usize, F) {}

impl<F: Future> WeightedFuture for (usize, F) {
    type Future = F;

    #[inline]
    fn into_parts(self) -> (usize, F) {
        self
    }
}

/// An item of the source of [`future_queue_grouped`](crate::BufferExt::future_queue_grouped):
/// a weight, a group if any, and a future, `(usize, Option<Q>, F)`. Sealed; implemented for
/// those tuples only.
pub trait GroupedWeightedFuture: sealed::Sealed {
    /// The future.
    type Future: Future;
    /// What names a group (`Q`, which the groups' keys `K` borrow as).
    type Group;

    /// The weight, the group and the future.
    fn into_parts(self) -> (usize, Option<Self::Group>, Self::Future);
}

impl<Q, F: Future> sealed::Sealed for (usize, Option<Q>, F) {}

impl<Q, F: Future> GroupedWeightedFuture for (usize, Option<Q>, F) {
    type Future = F;
    type Group = Q;

    #[inline]
    fn into_parts(self) -> (usize, Option<Q>, F) {
        self
    }
}

mod sealed {
    pub trait Sealed {}
}

/// What one future counts against the limits while it runs (and while its output waits in its
/// slot): its weight clamped to the max weight when it started, and, in a group, its weight
/// clamped to the group's max weight.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Charge {
    weight: usize,
    group_weight: usize,
    /// The group's index, or [`NO_GROUP`].
    group: usize,
}

const NO_GROUP: usize = usize::MAX;

impl Charge {
    /// The index of the future's group, if it has one.
    pub(crate) fn group(&self) -> Option<usize> {
        (self.group != NO_GROUP).then_some(self.group)
    }
}

/// One group: its max weight, the weight of its futures running, and its futures waiting (each
/// with its weight as given), in the order they came; and the seat of a [`Limit`] that steers
/// its max weight, if it has one.
///
/// [`Limit`]: crate::Limit
pub(crate) struct Group<Fut> {
    max: usize,
    running: usize,
    queued: VecDeque<(usize, Fut)>,
    /// Boxed: most groups have none, and each would carry a seat's bytes.
    seat: Option<Box<Seat>>,
}

impl<Fut> Group<Fut> {
    fn new(max: usize) -> Self {
        Self {
            max,
            running: 0,
            queued: VecDeque::new(),
            seat: None,
        }
    }

    /// `weight` clamped to the group's max weight now (its limit's, if lower), if that fits
    /// beside what runs; taken from its limit's budget if it has one (see [`Global::admits`]).
    #[inline]
    fn admits(&mut self, weight: usize, cx: &mut Context<'_>) -> Option<usize> {
        if self.seat.is_none() {
            let weight = weight.min(self.max);
            return (weight <= self.max - self.running).then_some(weight);
        }
        self.admits_steered(weight, cx)
    }

    /// [`admits`](Self::admits) for a group a limit steers.
    #[inline(never)]
    fn admits_steered(&mut self, weight: usize, cx: &mut Context<'_>) -> Option<usize> {
        admit_weight(self.max, self.running, &mut self.seat, weight, cx)
    }

    /// The units of its limit the group holds beyond what runs go back.
    #[inline]
    fn settle(&mut self) {
        self.seat.settle(self.running);
    }
}

/// What steers a max weight: a queue's [`Steering`], or a group's seat if it has one.
trait Steer {
    /// The limit's value now, if a limit steers the max weight.
    fn value(&self) -> Option<usize>;
    /// Whether `units` more may start while `running` are in use, all or none (see
    /// [`Seat::admit`]).
    fn admit(&mut self, running: usize, units: usize, cx: &mut Context<'_>) -> bool;
    /// `running` are in use: the units held beyond them go back.
    fn settle(&mut self, running: usize);
}

impl<S: Steering> Steer for S {
    #[inline(always)]
    fn value(&self) -> Option<usize> {
        self.concurrency().map(Seat::get)
    }

    #[inline(always)]
    fn admit(&mut self, running: usize, units: usize, cx: &mut Context<'_>) -> bool {
        crate::limit::sealed::Sealed::admit(self, running, units, cx)
    }

    #[inline(always)]
    fn settle(&mut self, running: usize) {
        crate::limit::sealed::Sealed::settle(self, running);
    }
}

impl Steer for Option<Box<Seat>> {
    #[inline(always)]
    fn value(&self) -> Option<usize> {
        self.as_deref().map(Seat::get)
    }

    #[inline(always)]
    fn admit(&mut self, running: usize, units: usize, cx: &mut Context<'_>) -> bool {
        self.as_mut()
            .is_none_or(|seat| seat.admit(running, units, cx))
    }

    #[inline(always)]
    fn settle(&mut self, running: usize) {
        if let Some(seat) = self {
            seat.settle(running);
        }
    }
}

/// `weight` clamped to `max` (and to the steering limit's value, if lower), if that fits beside
/// `running`. Asks `steer` to admit the whole weight (taken from a limit's budget, or none of
/// it): a caller that gets `Some` and does not start the future settles.
#[inline(always)]
fn admit_weight(
    max: usize,
    running: usize,
    steer: &mut impl Steer,
    weight: usize,
    cx: &mut Context<'_>,
) -> Option<usize> {
    loop {
        let limit = steer.value().map_or(max, |limit| limit.min(max));
        let weight = weight.min(limit);
        if weight > max - running {
            return None;
        }
        if steer.admit(running, weight, cx) {
            return Some(weight);
        }
        // Lowered between the two reads: clamp to the new value. Otherwise the room is
        // taken, and the limit wakes the task when it is given back.
        if steer.value().is_none_or(|now| now >= weight) {
            return None;
        }
    }
}

impl<Fut> fmt::Debug for Group<Fut> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Group")
            .field("max_weight", &self.max)
            .field("running_weight", &self.running)
            .field("queued", &self.queued.len())
            .field("limit", &self.seat.value())
            .finish()
    }
}

/// How a future queue reads the items of its source: one implementation of the queue serves
/// every adapter.
pub(crate) trait Grouping<Item> {
    /// The future of an item.
    type Future;

    /// The weight, the group's index and the future of `item`.
    ///
    /// # Panics
    /// If the item names a group that is not one of the queue's.
    fn split(&self, item: Item) -> (usize, Option<usize>, Self::Future);
}

/// The groups a future queue keeps, whatever its items.
pub(crate) trait Groups<Fut> {
    fn slice_mut(&mut self) -> &mut [Group<Fut>];
}

/// The items of [`future_queue`](crate::BufferExt::future_queue): no group.
#[derive(Debug)]
pub(crate) struct Ungrouped;

impl<I: WeightedFuture> Grouping<I> for Ungrouped {
    type Future = I::Future;

    #[inline]
    fn split(&self, item: I) -> (usize, Option<usize>, I::Future) {
        let (weight, future) = item.into_parts();
        (weight, None, future)
    }
}

/// The groups of [`future_queue_grouped`](crate::BufferExt::future_queue_grouped): each key's
/// index in a `Vec` of groups, so that a running future names its group by index.
pub(crate) struct GroupTable<K, Fut> {
    index: HashMap<K, usize, foldhash::fast::RandomState>,
    groups: Vec<Group<Fut>>,
    /// The method that made the queue, for panic messages.
    method: &'static str,
}

impl<K: Eq + Hash + fmt::Debug, Fut> GroupTable<K, Fut> {
    /// The groups `groups` names, each with its max weight; a key given twice keeps its last.
    ///
    /// # Panics
    /// If a group's max weight is 0.
    #[track_caller]
    pub(crate) fn new(groups: impl IntoIterator<Item = (K, usize)>, method: &'static str) -> Self {
        let mut table = Self {
            index: HashMap::default(),
            groups: Vec::new(),
            method,
        };
        for (key, max) in groups {
            assert!(
                max > 0,
                "{method}: the max weight of group {key:?} must be greater than 0"
            );
            match table.index.get(&key) {
                Some(&at) => table.groups[at].max = max,
                None => {
                    table.index.insert(key, table.groups.len());
                    table.groups.push(Group::new(max));
                }
            }
        }
        table
    }

    /// The group of `key`, if it is one.
    pub(crate) fn group<Q>(&self, key: &Q) -> Option<&Group<Fut>>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.index.get(key).map(|&at| &self.groups[at])
    }

    /// Lets `seat`'s limit steer the max weight of group `key`; the weight its futures run
    /// counts against it at once. `false` if the queue has no such group.
    pub(crate) fn steer<Q>(&mut self, key: &Q, mut seat: Seat) -> bool
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let Some(&at) = self.index.get(key) else {
            return false;
        };
        let group = &mut self.groups[at];
        seat.hold(group.running);
        // A seat it replaces is dropped, its units given back.
        group.seat = Some(Box::new(seat));
        true
    }

    /// The key of a group that `limit` steers, if one is.
    pub(crate) fn steered_by(&self, limit: &Limit) -> Option<&K> {
        self.index
            .iter()
            .find(|&(_, &at)| {
                self.groups[at]
                    .seat
                    .as_ref()
                    .is_some_and(|seat| seat.is_on(limit))
            })
            .map(|(key, _)| key)
    }

    /// The keys of the groups, for a message.
    pub(crate) fn keys(&self) -> impl fmt::Debug + '_ {
        self.index.keys()
    }
}

impl<K, Fut> fmt::Debug for GroupTable<K, Fut>
where
    K: fmt::Debug,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map()
            .entries(self.index.iter().map(|(key, &at)| (key, &self.groups[at])))
            .finish()
    }
}

impl<K, Q, I> Grouping<I> for GroupTable<K, Q>
where
    I: GroupedWeightedFuture,
    K: Borrow<I::Group> + Eq + Hash + fmt::Debug,
    I::Group: Eq + Hash + fmt::Debug,
{
    type Future = I::Future;

    fn split(&self, item: I) -> (usize, Option<usize>, I::Future) {
        let (weight, group, future) = item.into_parts();
        let Some(group) = group else {
            return (weight, None, future);
        };
        match self.index.get(&group) {
            Some(&at) => (weight, Some(at), future),
            None => panic!(
                "{}: unknown group {group:?} (the groups are {:?})",
                self.method,
                self.keys()
            ),
        }
    }
}

impl<Fut> Group<Fut> {
    pub(crate) fn max_weight(&self) -> usize {
        self.max
    }

    pub(crate) fn running_weight(&self) -> usize {
        self.running
    }
}

/// The max weight and the weight running, steered by `S`.
#[derive(Debug)]
pub(crate) struct Global<S> {
    max: usize,
    running: usize,
    steering: S,
}

impl<S: Steering> Global<S> {
    /// `weight` clamped to the max weight now (the queue's, or its [`Limit`]'s if lower), if
    /// that fits beside what runs. Asks the steering to admit the whole weight (taken from a
    /// limit's budget, or none of it): a caller that gets `Some` and does not start the
    /// future settles.
    ///
    /// [`Limit`]: crate::Limit
    fn admits(&mut self, weight: usize, cx: &mut Context<'_>) -> Option<usize> {
        admit_weight(self.max, self.running, &mut self.steering, weight, cx)
    }
}

/// What a future queue runs, by weight, and the futures that wait in their groups' queues.
#[derive(Debug)]
pub(crate) struct Weights<G, S> {
    global: Global<S>,
    groups: G,
    /// How many futures wait in the groups' queues.
    queued: usize,
}

impl<G, S: Steering> Weights<G, S> {
    pub(crate) fn new(max: usize, groups: G, steering: S) -> Self {
        Self {
            global: Global {
                max,
                running: 0,
                steering,
            },
            groups,
            queued: 0,
        }
    }

    /// The same, steered by `steer`'s result.
    pub(crate) fn steer<T: Steering>(self, steer: impl FnOnce(S) -> T) -> Weights<G, T> {
        let mut steering = steer(self.global.steering);
        // A limit given to a queue already running counts their weight.
        steering.hold(self.global.running);
        Weights {
            global: Global {
                max: self.global.max,
                running: self.global.running,
                steering,
            },
            groups: self.groups,
            queued: self.queued,
        }
    }

    pub(crate) fn max_weight(&self) -> usize {
        self.global.max
    }

    pub(crate) fn running_weight(&self) -> usize {
        self.global.running
    }

    pub(crate) fn queued(&self) -> usize {
        self.queued
    }

    pub(crate) fn grouping(&self) -> &G {
        &self.groups
    }

    /// Whether `limit` steers the max weight.
    pub(crate) fn steered_by(&self, limit: &Limit) -> bool {
        self.global
            .steering
            .concurrency()
            .is_some_and(|seat| seat.is_on(limit))
    }

    pub(crate) fn grouping_mut(&mut self) -> &mut G {
        &mut self.groups
    }

    /// Gives back what a future counted, its output taken (or the future gone in a panic).
    pub(crate) fn release<Fut>(&mut self, charge: Charge)
    where
        G: Groups<Fut>,
    {
        self.global.running -= charge.weight;
        if let Some(group) = charge.group() {
            let group = &mut self.groups.slice_mut()[group];
            group.running -= charge.group_weight;
            group.settle();
        }
        self.global.steering.settle(self.global.running);
    }

    /// `weight` clamped to the max weight now, if a future of that weight fits beside what
    /// runs. The caller starts the future ([`place`](Self::place)) when it gets `Some`.
    pub(crate) fn admits(&mut self, weight: usize, cx: &mut Context<'_>) -> Option<usize> {
        self.global.admits(weight, cx)
    }

    /// Whether a future from the source, of `weight` in `group`, may start in its group now:
    /// its group's weight if the group's queue is empty and has room for it (taken from its
    /// limit's budget if it has one), `None` if it has no group or must join its group's
    /// queue. Asked while the future still waits, so that a panic here (the task waker's, as
    /// a limit registers it) drops no future.
    pub(crate) fn admits_group<Fut>(
        &mut self,
        group: Option<usize>,
        weight: usize,
        cx: &mut Context<'_>,
    ) -> Option<usize>
    where
        G: Groups<Fut>,
    {
        let target = &mut self.groups.slice_mut()[group?];
        if !target.queued.is_empty() {
            return None;
        }
        target.admits(weight, cx)
    }

    /// Places a future from the source, of `weight` in `group`, which [`admits`](Self::admits)
    /// let in at `global` and [`admits_group`](Self::admits_group) at `group_weight`: it starts
    /// (the charge and the future are given back to start it) if it has no group or its group
    /// admitted it; otherwise it joins the back of its group's queue.
    pub(crate) fn place<Fut>(
        &mut self,
        global: usize,
        group_weight: Option<usize>,
        weight: usize,
        group: Option<usize>,
        future: Fut,
    ) -> Option<(Charge, Fut)>
    where
        G: Groups<Fut>,
    {
        let Some(at) = group else {
            return Some((self.charge(global, 0, NO_GROUP), future));
        };
        if let Some(group_weight) = group_weight {
            return Some((self.charge(global, group_weight, at), future));
        }
        self.groups.slice_mut()[at]
            .queued
            .push_back((weight, future));
        self.queued += 1;
        self.global.steering.settle(self.global.running);
        None
    }

    /// Starts the futures at the front of the groups' queues that fit, with `start`: those of
    /// `first` (the group of the future that finished) first, then each other group's in
    /// turn after it. Each group stops at its first future that does not fit.
    pub(crate) fn start_queued<Fut>(
        &mut self,
        first: Option<usize>,
        cx: &mut Context<'_>,
        mut start: impl FnMut(Charge, Fut),
    ) where
        G: Groups<Fut>,
    {
        if self.queued == 0 {
            return;
        }
        let count = self.groups.slice_mut().len();
        let first = first.unwrap_or(0);
        for at in (first..count).chain(0..first) {
            loop {
                let group = &mut self.groups.slice_mut()[at];
                let Some(&(weight, _)) = group.queued.front() else {
                    break;
                };
                let Some(group_weight) = group.admits(weight, cx) else {
                    break;
                };
                let Some(global) = self.global.admits(weight, cx) else {
                    // The units the group's limit gave go back.
                    self.groups.slice_mut()[at].settle();
                    break;
                };
                let group = &mut self.groups.slice_mut()[at];
                let Some((_, future)) = group.queued.pop_front() else {
                    unreachable!("the front was just read");
                };
                self.queued -= 1;
                start(self.charge(global, group_weight, at), future);
            }
            if self.queued == 0 {
                return;
            }
        }
    }

    /// Whether a group's first queued future fits both its group and the max weight the queue
    /// was made with: after each poll, none should.
    #[cfg(test)]
    pub(crate) fn has_startable_queue_head<Fut>(&mut self) -> bool
    where
        G: Groups<Fut>,
    {
        let (max, running) = (self.global.max, self.global.running);
        self.groups.slice_mut().iter().any(|group| {
            group.queued.front().is_some_and(|&(weight, _)| {
                let limit = group
                    .seat
                    .value()
                    .map_or(group.max, |limit| limit.min(group.max));
                weight.min(limit) <= group.max - group.running && weight.min(max) <= max - running
            })
        })
    }

    /// Counts a future that starts.
    fn charge<Fut>(&mut self, weight: usize, group_weight: usize, group: usize) -> Charge
    where
        G: Groups<Fut>,
    {
        self.global.running += weight;
        if group != NO_GROUP {
            // A group's limit gave its units to `admits` already.
            self.groups.slice_mut()[group].running += group_weight;
        }
        self.global.steering.settle(self.global.running);
        Charge {
            weight,
            group_weight,
            group,
        }
    }
}

impl<Fut> Groups<Fut> for Ungrouped {
    #[inline]
    fn slice_mut(&mut self) -> &mut [Group<Fut>] {
        &mut []
    }
}

impl<K, Fut> Groups<Fut> for GroupTable<K, Fut> {
    #[inline]
    fn slice_mut(&mut self) -> &mut [Group<Fut>] {
        &mut self.groups
    }
}
