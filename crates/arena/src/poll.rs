//! The poll loop, written once for every arena kind: [`Rounds`] owns the queues of slots to
//! poll, numbers the rounds and keeps the budget, and polls woken values fairly until one gives
//! an output or the call must return `Pending`. An arena kind supplies only its storage
//! ([`PollStorage`]): a slot by id and its waker, its mark, its wake table and its parent's wake.
//! What a poll of one value came to is a [`Step`]; the queues are intrusive FIFOs of slots
//! ([`Queue`]), each slot carrying a [`Mark`] (its link, and the round that last polled it),
//! reached through [`Marks`].

use core::pin::Pin;
use core::task::{Context, Poll, Waker};

use crate::key::Key;
use crate::unwind::Kept;
#[cfg(feature = "std")]
use crate::unwind::{self, Panic};
use crate::wake::ready_set::{Drain, ParentWord};

// What polling one value came to.

/// What polling a value came to; returned by the closure given to the arenas' `poll_next`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step<R> {
    /// No output: the value is polled again once its waker fires.
    Pending,
    /// An output; the value stays in its slot and is polled again only when its waker fires
    /// (a finished value kept for later, such as a join's output).
    Keep(R),
    /// An output; the value stays and is polled again in the next round without a wake (a
    /// stream that may have more items ready).
    Repoll(R),
    /// An output; the value is dropped in place and its slot freed before the output is handed
    /// on (a finished future).
    Done(R),
    /// No output handed on: the value has settled (it keeps what it made, such as a join's
    /// finished output), is polled again only when its waker fires, and the round goes on to
    /// the next woken value. Unlike `Pending`, never counted against the round's budget.
    Settled,
}

impl<R> Step<R> {
    /// The step of a future: `Done` when it is ready, `Pending` otherwise.
    pub fn of_future(poll: Poll<R>) -> Self {
        match poll {
            Poll::Ready(out) => Step::Done(out),
            Poll::Pending => Step::Pending,
        }
    }
}

impl<I> Step<Option<I>> {
    /// The step of a stream: `Repoll` with each item, `Done(None)` at its end, `Pending`
    /// otherwise.
    pub fn of_stream(poll: Poll<Option<I>>) -> Self {
        match poll {
            Poll::Ready(Some(item)) => Step::Repoll(Some(item)),
            Poll::Ready(None) => Step::Done(None),
            Poll::Pending => Step::Pending,
        }
    }
}

/// The fairness budget of one poll round (one call of a set's `poll_next`, or one poll of a
/// join that takes several outputs).
///
/// A round polls each value at most once, and ends (the task is woken, `Pending` returned) once
/// it has polled as many values as the arena held when it started, or once
/// [`MAX_VAIN_REPOLLS`] values polled in an earlier round were woken and `Pending` again
/// without waking themselves. A value that wakes itself during its poll is polled again in the
/// next round, not in this one: however many do, a round polls each once. Get one from
/// [`Arena::start_round`](crate::Storage::start_round) or
/// [`GrowableArena::start_round`](crate::Storage::start_round), which start the round.
#[derive(Debug, Clone)]
pub struct Budget {
    /// The round's number: a value polled in this round carries it.
    pub(crate) round: u32,
    /// How many values the round may still poll: what the arena held when it started, less
    /// those polled; 0 also once [`MAX_VAIN_REPOLLS`] were polled in vain. The one count the
    /// loop tests before each poll.
    left: usize,
    /// What `left` started at: a round has polled something when `left` is below it.
    limit: usize,
    /// How many more values polled again in vain the round allows (see [`MAX_VAIN_REPOLLS`]).
    vain_left: u32,
}

/// The most values a round polls again in vain: values polled in an earlier round, woken,
/// and `Pending` again, not by waking themselves. Past it the round yields, as for a spent
/// budget.
///
/// Without it a round of a large arena under tokio is quadratic: once the task's coop budget
/// (128 units a poll) is spent, tokio's own futures (timers, channels, I/O) return `Pending`
/// and defer their wake to the end of the task's poll, where the round cannot see it as a
/// self-wake. Every woken value would be polled in vain, each poll of the task, until few
/// enough were left. With the cap, a poll of the task costs at most this many vain polls
/// beyond the ones that make progress. A value's first poll never counts, nor the poll of a
/// stream queued again because it gave an item (`Step::Repoll`), nor a value that woke itself
/// (it is polled once a round, and a round polls at most as many values as the arena held):
/// those cannot be a deferred wake.
pub const MAX_VAIN_REPOLLS: usize = 32;

impl Budget {
    /// A budget for round `round` of an arena holding `len` values.
    #[inline]
    pub(crate) fn new(round: u32, len: usize) -> Self {
        let limit = len.max(1);
        Self {
            round,
            left: limit,
            limit,
            vain_left: MAX_VAIN_REPOLLS as u32,
        }
    }

    /// Whether the round must yield now.
    #[inline]
    pub(crate) fn is_spent(&self) -> bool {
        self.left == 0
    }

    /// Whether the round has polled a value.
    #[inline]
    pub(crate) fn has_polled(&self) -> bool {
        self.left < self.limit
    }

    /// Counts a poll; the round is not spent.
    #[inline]
    pub(crate) fn polled(&mut self) {
        debug_assert!(!self.is_spent(), "a poll counted against a spent budget");
        self.left -= 1;
    }

    /// Counts a value polled in an earlier round that was `Pending` again without waking
    /// itself: the last one the round allows spends it.
    #[inline]
    pub(crate) fn vain(&mut self) {
        self.vain_left -= 1;
        if self.vain_left == 0 {
            self.left = 0;
        }
    }
}

/// The next round number after `round`: never 0, which marks values not polled in any round.
#[inline]
pub(crate) fn next_round(round: u32) -> u32 {
    round.wrapping_add(1).max(1)
}

/// What polling the queued values came to.
pub(crate) enum Queued<R> {
    /// A value gave an output.
    Ready(R),
    /// Nothing is queued for this round.
    Empty,
    /// The budget is spent while values are still queued.
    Yield,
}

/// What the poll loop needs of an arena kind: storage. A slot is named by an id (`u32`, below
/// [`UNLINKED`]) that the kind chooses; [`Marks`] gives each slot's mark.
///
/// The loop never holds a value or a waker across these calls: each is a lookup, a poll of
/// one value in a context of its own waker, or a look at the wake table. Every method is
/// always inlined where the loop calls it, so that the loop's body sees the storage's fields
/// (the compiler then keeps their addresses in registers across a round; guarded by
/// `ready_512k` and `merge_hot_16`, instructions).
pub trait PollStorage<T>: Marks {
    /// Whether a value may return `Pending` holding no waker of its own, waiting for a waker
    /// it was given before the kind lent it one (a join's values, polled first with the
    /// task's waker): such a value is queued for every later round (see
    /// [`JoinArena::poll_with_budget`](crate::JoinArena::poll_with_budget)).
    const MAY_WAIT_UNBOUND: bool;

    /// How many values are held.
    fn count(&self) -> usize;

    /// The owner's parent word: the wake table's top word, or a hub's; `None` while the kind
    /// has no wake table yet (a growable arena before its first group).
    fn parent_word(&self) -> Option<&ParentWord>;

    /// Registers the task to wake at the next wake after an arming collection.
    fn register(&self, waker: &Waker);

    /// Drains the wakes in `mode`, filing each woken slot that holds a value with [`file()`]
    /// for round `round`. `true` if `ready` got any.
    fn drain(&mut self, mode: Drain, round: u32, ready: &mut Queue, deferred: &mut Queue) -> bool;

    /// Polls slot `id`'s value, if it holds one, with `poll` (given its key), in a context of
    /// its own waker; its key and the wake table entry whose waker it lent come back with
    /// what `poll` returned ([`Polled`]). `None` if the slot holds no value (it left while
    /// queued). If `take_wake`, the slot's bit in the ready set is taken first: a wake that
    /// came since the collection that queued the value is answered by this poll, not by
    /// another. If `WATCH`, a kind that can watches the poll: a first wake of the value during
    /// it is told in [`Polled::woken`], not through the ready set. If
    /// `poll` panics, the kind does what its panics rule says (an arena drops the value and
    /// frees its slot; a panic of the value's `Drop` then is dropped) and, with `std`,
    /// returns the panic for the round to repair and resume; without `std` it calls
    /// `panicked` with its parent while the panic goes on. A kind whose owner ends at a
    /// panic (a join) lets it go on. When `poll` returns [`Step::Pending`], the slot's mark
    /// is of round `round` ([`mark_polled`]): written here, where the slot is at hand, not
    /// looked up again by the round (a growable arena's decode of the id; guarded by
    /// `unordered_held_100k`, instructions). If `UNLINK`, the slot was just taken out of its
    /// queue by [`Queue::pop_for_poll`], which left its link as it was: the kind makes it
    /// [`UNLINKED`] before anything else (before it looks whether the slot holds a value, and
    /// before `poll` runs or panics).
    fn poll_slot<const WATCH: bool, const UNLINK: bool, R>(
        &mut self,
        id: u32,
        take_wake: bool,
        round: u32,
        poll: impl FnOnce(Key, Pin<&mut T>, &mut Context<'_>) -> Step<R>,
        panicked: impl FnOnce(&ParentWord),
    ) -> Result<Option<Polled<R>>, Kept>;

    /// Whether entry `entry` (of slot `id`) was woken since its value's poll began.
    fn is_woken(&self, id: u32, entry: u32) -> bool;

    /// Whether no waker of entry `entry` (of slot `id`) is alive; read before its mark (see
    /// [`MAY_WAIT_UNBOUND`](Self::MAY_WAIT_UNBOUND)). Only called when that is `true`.
    fn holds_no_waker(&self, id: u32, entry: u32) -> bool;

    /// Slot `id`'s value gave its last output ([`Step::Done`]): an arena drops it and frees
    /// the slot; a join keeps it. A growable arena may release a group then, taking its slots
    /// out of `rounds`' queues (the slot polled is out of them already).
    fn remove(&mut self, id: u32, rounds: &mut Rounds);

    /// A value's poll panicked and the kind dropped it: what the storage does before the panic
    /// leaves the call (with `std`). A growable arena releases what its memory policy allows,
    /// taking the released slots out of `rounds`' queues; other kinds do nothing.
    #[cfg(feature = "std")]
    #[inline(always)]
    fn after_unwind(&mut self, rounds: &mut Rounds) {
        let _ = rounds;
    }
}

/// What the poll of a queued slot's value came to ([`PollStorage::poll_slot`]).
#[derive(Debug)]
pub struct Polled<R> {
    /// The value's key.
    pub(crate) key: Key,
    /// The wake table entry whose waker the value was lent.
    pub(crate) entry: u32,
    /// What the poll came to.
    pub(crate) step: Step<R>,
    /// Whether a waker of the value woke it during the poll, a wake not in the ready set: the
    /// value stays ([`Step::Pending`], [`Step::Keep`], [`Step::Settled`], [`Step::Repoll`]) and
    /// its slot goes to the next round's queue. Only where the poll was watched.
    pub(crate) woken: bool,
    /// After [`Step::Pending`], whether the slot's mark was of a round (not 0) before the
    /// poll ([`mark_polled`]); `false` after any other step.
    pub(crate) polled_before: bool,
}

/// Marks a slot whose value's poll came to [`Step::Pending`] as polled in round `round`;
/// `true` if it was polled in a round before (its mark not 0: neither new nor queued to be
/// polled again since), which makes a poll with no wake since a vain one.
#[inline(always)]
pub(crate) fn mark_polled(mark: &mut Mark, round: u32) -> bool {
    let before = mark.round != 0;
    mark.round = round;
    before
}

/// Files woken slot `id` for round `round`: in `deferred` if that round polled it already
/// (a value is polled at most once a round), in `ready` otherwise. A slot in a queue already
/// stays where it is, so a drain's caller learns whether `ready` got any slot from its tail
/// ([`Queue::last`]) before and after, not from each call.
#[inline(always)]
pub(crate) fn file(
    marks: &mut (impl Marks + ?Sized),
    id: u32,
    round: u32,
    ready: &mut Queue,
    deferred: &mut Queue,
) {
    let mark = marks.mark(id);
    if mark.next == UNLINKED {
        mark.next = NIL;
        let queue = if mark.round != round { ready } else { deferred };
        queue.link_last(marks, id);
    }
}

/// What [`Rounds::poll_first`] came to.
enum First<R> {
    /// Something was woken since the last call, nothing was queued, or the first queued
    /// slot's value had left: nothing was polled, and the round starts in full.
    NotTaken,
    /// The first queued stream gave an item and went to the tail of the queue.
    Rotated(Key, R),
    /// The first queued value was polled and came to this (an output, or none: the round goes
    /// on from there, with this budget).
    Polled(Option<(Key, R)>, Budget),
}

/// The poll loop's state: the queues of slots to poll, the round number, and whether the owner
/// has left `BUSY` set. One per arena (a growable arena's groups share their owner's).
#[derive(Debug)]
pub struct Rounds {
    /// Slots to poll in this round.
    pub(crate) ready: Queue,
    /// Slots polled in this round and woken again (or queued again for an item): polled in
    /// the next.
    deferred: Queue,
    /// Values that wait for a waker they were given before they had their own (see
    /// [`PollStorage::MAY_WAIT_UNBOUND`]): polled again by every round.
    unbound: Queue,
    /// The number of the round in progress or last run.
    round: u32,
    /// Whether the owner has left `BUSY` set in its parent word (1 or 0): from one round to the
    /// next, until a round arms it. Only the owner sets or clears it, so it knows without
    /// looking. A byte, not a `bool`: a `bool`'s invalid values are where an `Option` of a join
    /// arena's armed state would keep its `None`, written as one byte that the first move of a
    /// fresh join reads back inside a wider load, which stalls; without them, `None` is the
    /// wake table's null pointer, a whole word.
    busy: u8,
}

impl Rounds {
    pub(crate) const NEW: Self = Self {
        ready: Queue::EMPTY,
        deferred: Queue::EMPTY,
        unbound: Queue::EMPTY,
        round: 0,
        busy: 0,
    };

    /// Whether slots are queued for this round, and for the next.
    #[cfg(test)]
    pub(crate) fn queued(&self) -> (bool, bool) {
        (!self.ready.is_empty(), !self.deferred.is_empty())
    }

    /// Takes every slot out of the queues, each unlinked: every value left (`clear`).
    pub(crate) fn forget_all(&mut self, marks: &mut (impl Marks + ?Sized)) {
        self.ready.unlink_all(marks);
        self.deferred.unlink_all(marks);
        self.unbound.unlink_all(marks);
    }

    /// Takes every slot for which `keep` says `false` out of the queues (slots about to be
    /// freed with their storage).
    pub(crate) fn retain(&mut self, marks: &mut (impl Marks + ?Sized), keep: impl Fn(u32) -> bool) {
        self.ready.retain(marks, &keep);
        self.deferred.retain(marks, &keep);
        self.unbound.retain(marks, &keep);
    }

    /// Whether values wait to be polled, after slot `id`'s value panicked in its poll: a
    /// merge's head that panicked in place (`in_place`) stays at the head of the queue, to be
    /// skipped, and does not count.
    fn queued_after_panic(&self, in_place: bool) -> bool {
        (if in_place {
            self.ready.len_above_one()
        } else {
            !self.ready.is_empty()
        }) || !self.deferred.is_empty()
    }

    /// What a round does when a value panicked in its poll (the kind dropped it already),
    /// before the panic `panic` leaves the call: the task (`task`) is registered, every wake
    /// since the last collection is collected and the parent word armed, so later wakes reach
    /// the task although the call did not end as a round does; and if values wait to be
    /// polled, the task is woken, so that its next poll polls them. A panic of the task's
    /// waker here (its `clone` or `wake`) is dropped: the registration, the collection and the
    /// arming hold all the same (a panicking `clone` leaves the waker registered before), and
    /// the value's panic goes on. The storage's own repair ([`PollStorage::after_unwind`]) comes
    /// before the wake.
    #[cfg(feature = "std")]
    #[cold]
    #[inline(never)]
    fn after_panic<T, S: PollStorage<T>>(
        &mut self,
        slots: &mut S,
        in_place: bool,
        task: &Waker,
        panic: Panic,
    ) -> ! {
        use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
        drop(catch_unwind(AssertUnwindSafe(|| slots.register(task))));
        let collected = self.collect(slots, Drain::Arm);
        let due = collected || self.queued_after_panic(in_place);
        // After the count of values due: a merge's head that panicked in place is counted out
        // of its queue there, and a released group's slots leave the queues here.
        slots.after_unwind(self);
        if due {
            drop(catch_unwind(AssertUnwindSafe(|| task.wake_by_ref())));
        }
        resume_unwind(panic)
    }

    /// [`after_panic`](Self::after_panic) without `std`, from the kind while the value's panic
    /// unwinds, where user code (the waker's `clone` and `wake`) must not run: the word is
    /// armed if nothing waits to be polled and nothing was woken since the last collection,
    /// and the next call registers.
    #[cfg(not(feature = "std"))]
    #[cold]
    #[inline(never)]
    fn arm_after_panic(&mut self, parent: &ParentWord, in_place: bool) {
        if !self.queued_after_panic(in_place) && parent.try_arm() {
            self.busy = 0;
        }
    }

    /// What the kind calls while a value's panic unwinds: nothing with `std` (the kind returns
    /// the panic instead); without `std`, `arm_after_panic`.
    #[inline(always)]
    fn unwinding(&mut self, parent: &ParentWord, in_place: bool) {
        #[cfg(not(feature = "std"))]
        self.arm_after_panic(parent, in_place);
        #[cfg(feature = "std")]
        let _ = (parent, in_place);
    }

    /// Repairs after a value's poll panicked, given what the kind returned: with `std`, the
    /// panic (see [`after_panic`](Self::after_panic)); without, nothing is ever returned.
    #[inline(always)]
    fn repair<T, S: PollStorage<T>, P>(
        &mut self,
        slots: &mut S,
        in_place: bool,
        task: &Waker,
        polled: Result<P, Kept>,
    ) -> P {
        match polled {
            Ok(polled) => polled,
            #[cfg(feature = "std")]
            Err(kept) => self.after_panic(slots, in_place, task, unwind::take_kept(kept)),
            #[cfg(not(feature = "std"))]
            Err(never) => {
                let _ = (slots, in_place, task);
                match never {}
            }
        }
    }

    /// Queues the value just put into slot `id` at the end of this round's queue. A slot still
    /// linked where its last value was queued (`linked`: it left before a round reached it:
    /// removed, or dropped at a panic of its poll where a merge polls the head of its queue in
    /// place) keeps that place, which no value queued after it had reached (finding its place
    /// in the queue would take a walk of it), except at the head of this round's queue: there
    /// it goes to the end ([`push_linked`](Self::push_linked)). A slot in no queue has its link
    /// set to end one already (by [`Store::insert`](crate::storage::store::Store::insert)).
    #[inline(always)]
    pub(crate) fn push_inserted(
        &mut self,
        marks: &mut (impl Marks + ?Sized),
        id: u32,
        linked: bool,
    ) {
        if !linked {
            self.ready.link_last(marks, id);
        } else if self.ready.front() == Some(id) {
            self.push_linked(marks, id);
        }
    }

    /// [`push_inserted`](Self::push_inserted) into the slot at the head of this round's queue,
    /// still linked there: it goes to the end.
    #[cold]
    #[inline(never)]
    fn push_linked(&mut self, marks: &mut (impl Marks + ?Sized), id: u32) {
        self.ready.pop(marks);
        marks.mark(id).next = NIL;
        self.ready.link_last(marks, id);
    }

    /// Marks the owner busy for the round: wakes from now on notify nobody until the round's
    /// arming collection.
    #[inline]
    fn begin<T, S: PollStorage<T>>(&mut self, slots: &S) {
        if self.busy == 0 {
            if let Some(word) = slots.parent_word() {
                word.set_busy();
            }
            self.busy = 1;
        }
    }

    /// Moves the values woken since the last collection to the ends of the queues: those not
    /// yet polled in this round to its queue, behind every value queued before them, the
    /// others to the next round's. `true` if this round's queue got any.
    /// Always inlined: it runs at the start of every call (guarded by `ready_512k`,
    /// instructions).
    #[inline(always)]
    fn collect<T, S: PollStorage<T>>(&mut self, slots: &mut S, mode: Drain) -> bool {
        if !slots.parent_word().is_some_and(|word| word.has_wakes(mode)) {
            return false;
        }
        self.busy = u8::from(matches!(mode, Drain::KeepBusy));
        slots.drain(mode, self.round, &mut self.ready, &mut self.deferred)
    }

    /// Starts a poll round: the fairness budget for [`poll`](Self::poll). The round's queue
    /// holds, in this order: the values queued before the last round ended that it did not
    /// reach, the values woken since the last collection, and the values polled in the last
    /// round and due again (woken again, or streams queued again after an item). So a woken
    /// value is never passed over by values pushed or woken after a later call began, and the
    /// wakes that come while a round runs are collected by the next one at its start, also
    /// when its queue never runs empty (always-ready streams).
    #[inline]
    pub(crate) fn start_round<T, S: PollStorage<T>>(&mut self, slots: &mut S) -> Budget {
        self.round = next_round(self.round);
        self.collect(slots, Drain::KeepBusy);
        self.ready.append(slots, &mut self.deferred);
        if S::MAY_WAIT_UNBOUND {
            self.ready.append(slots, &mut self.unbound);
        }
        Budget::new(self.round, slots.count())
    }

    /// One poll round: the next output of any woken value, fairly.
    ///
    /// Returns `Ready(None)` when nothing is held, `Ready(Some)` at an output, and `Pending`
    /// when the round is over: every woken value not yet polled in it was polled (the task is
    /// woken by the next wake, or at once if values polled in this round were woken again), or
    /// the budget is spent (the task has been woken already). Wakes that arrive during the
    /// round are collected in it, so no call returns `Pending` while it could still poll
    /// something it has not polled.
    #[inline(always)]
    pub(crate) fn poll<T, S, R, F>(
        &mut self,
        slots: &mut S,
        cx: &mut Context<'_>,
        budget: &mut Budget,
        f: &mut F,
    ) -> Poll<Option<(Key, R)>>
    where
        S: PollStorage<T>,
        F: FnMut(Key, Pin<&mut T>, &mut Context<'_>) -> Step<R>,
    {
        if slots.count() == 0 {
            return Poll::Ready(None);
        }
        self.begin(slots);
        loop {
            match self.poll_queued(slots, cx.waker(), budget, f) {
                Queued::Ready(out) => return Poll::Ready(Some(out)),
                Queued::Yield => {
                    self.wake_task(slots, cx);
                    return Poll::Pending;
                }
                Queued::Empty => {}
            }
            // Wakes that came while we polled: collect them, staying busy (wakes meanwhile do
            // not wake the task, which is running).
            if self.collect(slots, Drain::KeepBusy) {
                continue;
            }
            // Nothing left to poll. Register first, so that a wake after the collection below
            // wakes the task; that collection arms the wake.
            self.register(slots, cx.waker());
            if self.collect(slots, Drain::Arm) {
                continue;
            }
            if !self.deferred.is_empty() {
                // Values polled in this round were woken again: the next round polls them.
                cx.waker().wake_by_ref();
            }
            return Poll::Pending;
        }
    }

    /// Wakes the task at a yield, with `BUSY` still set (the task polls again at once). If the
    /// task's waker panics, the round registers it and arms, as a call that returns `Pending`
    /// with nothing left to poll does: later wakes reach the task.
    #[cold]
    fn wake_task<T, S: PollStorage<T>>(&mut self, slots: &mut S, cx: &mut Context<'_>) {
        let waker = cx.waker();
        crate::unwind::repair_on_unwind(
            &mut (self, slots),
            |_| waker.wake_by_ref(),
            |(rounds, slots)| {
                rounds.register(*slots, waker);
                rounds.collect(*slots, Drain::Arm);
            },
        );
    }

    /// Registers the task's waker. If its clone panics, the round arms with the waker
    /// registered before: later wakes reach it, not nobody; and, with `std`, if values wait to
    /// be polled (woken since the last collection, or in the next round's queue), the task is
    /// woken for them, as a call that returns `Pending` does (without `std` no user code runs
    /// while the panic unwinds).
    #[inline]
    fn register<T, S: PollStorage<T>>(&mut self, slots: &mut S, waker: &Waker) {
        crate::unwind::repair_on_unwind(
            &mut (self, slots),
            |(_, slots)| slots.register(waker),
            |(rounds, slots)| {
                let collected = rounds.collect(*slots, Drain::Arm);
                #[cfg(feature = "std")]
                if collected || rounds.queued_after_panic(false) {
                    waker.wake_by_ref();
                }
                #[cfg(not(feature = "std"))]
                let _ = collected;
            },
        );
    }

    /// Polls the slots queued for this round until one gives an output, none is left, or
    /// `budget` is spent. Each queued slot is polled once and counted against the budget; a
    /// `Pending` value polled again in vain strikes the round.
    #[inline(always)]
    fn poll_queued<T, S, R, F>(
        &mut self,
        slots: &mut S,
        task: &Waker,
        budget: &mut Budget,
        f: &mut F,
    ) -> Queued<(Key, R)>
    where
        S: PollStorage<T>,
        F: FnMut(Key, Pin<&mut T>, &mut Context<'_>) -> Step<R>,
    {
        loop {
            if self.ready.is_empty_before_pop() {
                return Queued::Empty;
            }
            if budget.is_spent() {
                return Queued::Yield;
            }
            let id = self.ready.pop_for_poll(slots);
            // Only a value polled earlier in this round can have woken this one since the
            // collection that queued it (a wake from another thread meanwhile is concurrent
            // with the poll, which may miss it): the first poll of a round need not look.
            let take_wake = budget.has_polled();
            let rounds = &mut *self;
            let polled = slots.poll_slot::<true, true, R>(
                id,
                take_wake,
                budget.round,
                |key, value, cx| {
                    budget.polled();
                    f(key, value, cx)
                },
                |parent| rounds.unwinding(parent, false),
            );
            let polled = self.repair(slots, false, task, polled);
            // A slot whose value left while it was queued is skipped.
            let Some(polled) = polled else {
                continue;
            };
            if let Some(out) = self.settle(slots, id, polled, budget) {
                return Queued::Ready(out);
            }
        }
    }

    /// What the poll of slot `id` came to, applied to its mark, the queues and the budget: the
    /// output to hand on, or `None` if the round goes on to the next queued slot.
    #[inline(always)]
    fn settle<T, S: PollStorage<T>, R>(
        &mut self,
        slots: &mut S,
        id: u32,
        polled: Polled<R>,
        budget: &mut Budget,
    ) -> Option<(Key, R)> {
        let Polled {
            key,
            entry,
            step,
            woken,
            polled_before,
        } = polled;
        // Whoever took it out of the queue: `pop`, or `pop_for_poll` and the kind's poll.
        debug_assert_eq!(
            slots.mark(id).next,
            UNLINKED,
            "a slot polled out of its queue is in none"
        );
        match step {
            // The poll left the slot's mark of this round (`poll_slot`).
            Step::Pending => {
                // A value that woke itself costs the round nothing beyond its poll: it is
                // polled once a round, and the round polls at most as many values as the
                // arena held. Woken during its poll, it waits for the next round.
                if woken {
                    self.deferred.push(slots, id);
                    return None;
                }
                let unbound = S::MAY_WAIT_UNBOUND && slots.holds_no_waker(id, entry);
                // A value waiting for the waker it was given first is polled again by every
                // round, by design, not for a wake it may have missed: never a vain poll.
                // The bit is read only when it matters: a first poll is never a vain one.
                if (unbound || polled_before) && !slots.is_woken(id, entry) {
                    if unbound {
                        self.unbound.push(slots, id);
                    } else {
                        budget.vain();
                    }
                }
                None
            }
            Step::Keep(out) => {
                self.stays(slots, id, budget, woken);
                Some((key, out))
            }
            Step::Settled => {
                self.stays(slots, id, budget, woken);
                None
            }
            Step::Repoll(out) => {
                // Its next poll is needed anyway: never a vain one.
                slots.mark(id).round = 0;
                self.deferred.push(slots, id);
                Some((key, out))
            }
            Step::Done(out) => {
                if !core::mem::needs_drop::<R>() {
                    slots.remove(id, self);
                    return Some((key, out));
                }
                // The output is held through the value's `Drop`: if that panics, the output is
                // dropped as the panic unwinds, and a panic of its own `Drop` then is dropped.
                // Only for an output with a `Drop`: the guard's unwinding path is paid on the
                // hot merge's every item. Guarded by `merge_hot_16_noop` (instructions).
                let out = crate::unwind::QuietDrop::new(out);
                slots.remove(id, self);
                Some((key, out.into_inner()))
            }
        }
    }

    /// Slot `id`'s value stays after an output kept in place (`Keep`, `Settled`): polled in
    /// this round, and in the next if it woke itself during the poll (`woken`).
    #[inline(always)]
    fn stays<T, S: PollStorage<T>>(
        &mut self,
        slots: &mut S,
        id: u32,
        budget: &Budget,
        woken: bool,
    ) {
        slots.mark(id).round = budget.round;
        if woken {
            self.deferred.push(slots, id);
        }
    }

    /// One call of a set's `poll_next`: a round of its own.
    #[inline(always)]
    pub(crate) fn next_output<T, S, R, F>(
        &mut self,
        slots: &mut S,
        cx: &mut Context<'_>,
        mut f: F,
    ) -> Poll<Option<(Key, R)>>
    where
        S: PollStorage<T>,
        F: FnMut(Key, Pin<&mut T>, &mut Context<'_>) -> Step<R>,
    {
        let mut budget = self.start_round(slots);
        self.poll(slots, cx, &mut budget, &mut f)
    }

    /// One call of a merge's `poll_next`, for values that may leave without an output
    /// (`Step::of_stream`): an output of `None` (a stream's end) is not returned; the round
    /// goes on to the next value, within the same budget. Its common case, a merge of busy
    /// streams, is [`poll_first`](Self::poll_first).
    #[inline(always)]
    pub(crate) fn next_output_some<T, S, R, F>(
        &mut self,
        slots: &mut S,
        cx: &mut Context<'_>,
        mut f: F,
    ) -> Poll<Option<(Key, R)>>
    where
        S: PollStorage<T>,
        F: FnMut(Key, Pin<&mut T>, &mut Context<'_>) -> Step<Option<R>>,
    {
        let mut budget = match self.poll_first(slots, cx.waker(), &mut f) {
            First::Rotated(key, out) => return Poll::Ready(Some((key, out))),
            First::Polled(Some(out), _) => return Poll::Ready(Some(out)),
            First::Polled(None, budget) => budget,
            First::NotTaken => self.start_round(slots),
        };
        self.poll_rest_some(slots, cx, &mut budget, &mut f)
    }

    /// The rest of a [`next_output_some`](Self::next_output_some) round, after its first poll.
    #[inline(never)]
    fn poll_rest_some<T, S, R, F>(
        &mut self,
        slots: &mut S,
        cx: &mut Context<'_>,
        budget: &mut Budget,
        f: &mut F,
    ) -> Poll<Option<(Key, R)>>
    where
        S: PollStorage<T>,
        F: FnMut(Key, Pin<&mut T>, &mut Context<'_>) -> Step<Option<R>>,
    {
        loop {
            match self.poll(slots, cx, budget, f) {
                Poll::Ready(Some((key, Some(out)))) => return Poll::Ready(Some((key, out))),
                // The value left (the arena dropped it) without an output.
                Poll::Ready(Some((_, None))) => {}
                Poll::Ready(None) => return Poll::Ready(None),
                Poll::Pending => return Poll::Pending,
            }
        }
    }

    /// The common call of a merge of busy streams, a branch of the round: when the parent
    /// word says the owner is busy from an earlier call and nothing was woken since, the
    /// round starts with nothing to collect, so the head of the queue is polled here, and if
    /// it gives an item it goes straight to the tail of the queue (it had its turn; this call
    /// ends with its item, and the next round polls it after the others) and the item is the
    /// call's output, with no round numbered and no budget made. Anything else goes on as the
    /// round in full, from that first poll. Guarded by `merge_hot_16` (instructions).
    #[inline(always)]
    fn poll_first<T, S, R, F>(&mut self, slots: &mut S, task: &Waker, f: &mut F) -> First<R>
    where
        S: PollStorage<T>,
        F: FnMut(Key, Pin<&mut T>, &mut Context<'_>) -> Step<Option<R>>,
    {
        if !slots.parent_word().is_some_and(ParentWord::nothing_woken) {
            return First::NotTaken;
        }
        // Nothing woken: the streams that gave an item in the last round go behind those
        // still queued, and the round starts.
        self.ready.append(slots, &mut self.deferred);
        if self.ready.is_empty() {
            return First::NotTaken;
        }
        let id = self.ready.head_unchecked();
        let held = slots.count();
        // Polled in place at the head of the queue: nothing else touches the queue meanwhile,
        // and a value that panics is dropped and its slot skipped when met, as any removed one.
        // Nothing was woken since the last collection: the value's mark is clear.
        let rounds = &mut *self;
        // A value that panics here stays at the head of the queue (see `push`), to be skipped.
        // Not watched: a stream that gives an item is queued again anyway.
        let polled = slots.poll_slot::<false, false, Option<R>>(
            id,
            false,
            // Not numbered yet: the round is numbered below unless the value rotates (the
            // hot path, which computes no round). Guarded by `merge_hot_16` (instructions).
            0,
            |key, value, cx| f(key, value, cx),
            |parent| rounds.unwinding(parent, true),
        );
        let Some(polled) = self.repair(slots, true, task, polled) else {
            // A value that left: the round in full skips it.
            return First::NotTaken;
        };
        if let Step::Repoll(Some(out)) = polled.step {
            let key = polled.key;
            // Its next poll is needed anyway, never vain; its round mark matters only to a
            // value out of the queue.
            self.ready.rotate(slots, |mark| mark.round = 0);
            return First::Rotated(key, out);
        }
        // Anything else: as if the round had taken it out of the queue to poll it. A rotation
        // leaves no mark of its round, so only this path numbers one.
        self.round = next_round(self.round);
        self.ready.pop(slots);
        if let Step::Pending = polled.step {
            slots.mark(id).round = self.round;
        }
        let mut budget = Budget::new(self.round, held);
        budget.polled();
        let out = match self.settle(slots, id, polled, &mut budget) {
            Some((key, Some(out))) => Some((key, out)),
            // The value left without an output, or gave none: the round goes on.
            Some((_, None)) | None => None,
        };
        First::Polled(out, budget)
    }
}

// The owner's intrusive FIFO of slots, written once for every arena kind.

/// "No slot": the end of a queue.
pub(crate) const NIL: u32 = u32::MAX;

/// The link of a slot in no queue.
pub(crate) const UNLINKED: u32 = u32::MAX - 1;

/// What the poll loop keeps on each slot: its link in a queue, and the round that last polled
/// it. Eight bytes, so that a join arena keeps one per value in a word of its wake table.
#[derive(Clone, Copy, Debug)]
#[repr(C, align(8))]
pub struct Mark {
    /// The next slot in its queue (`NIL` at the end), or `UNLINKED` when in no queue. A slot
    /// just taken out by [`Queue::pop_for_poll`] keeps its old link until its poll, which
    /// makes it `UNLINKED` before anything else.
    pub(crate) next: u32,
    /// The last round that polled the slot's value and saw it stay (`Pending`, or an output
    /// kept in place); 0 for none since it came, or since it was queued again for an item
    /// (its next poll is needed anyway, so it is never counted as a vain one).
    pub(crate) round: u32,
}

impl Mark {
    /// The mark of a slot that no round has polled and no queue holds.
    pub(crate) const NEW: Self = Self {
        next: UNLINKED,
        round: 0,
    };

    /// The mark's bytes as a word, for storage kept in `u64`s (a join arena's owner words).
    pub(crate) fn to_word(self) -> u64 {
        let mut bytes = [0; 8];
        bytes[..4].copy_from_slice(&self.next.to_ne_bytes());
        bytes[4..].copy_from_slice(&self.round.to_ne_bytes());
        u64::from_ne_bytes(bytes)
    }
}

/// Where the marks of an arena kind's slots live, by slot id.
pub trait Marks {
    /// The mark of slot `id`, which is one of the kind's.
    fn mark(&mut self, id: u32) -> &mut Mark;

    /// [`mark`](Self::mark) for the head of a queue that rotates on every item (a busy
    /// merge's): the link read from it is the next item's head, so a kind whose lookup loads
    /// an address that depends on the id (a growable arena's group) may take another way to
    /// its common case, at a branch's cost.
    #[inline(always)]
    fn rotating_mark(&mut self, id: u32) -> &mut Mark {
        self.mark(id)
    }
}

impl Marks for [Mark] {
    #[inline(always)]
    fn mark(&mut self, id: u32) -> &mut Mark {
        crate::index::trusted_mut(self, id as usize)
    }
}

/// An intrusive FIFO of slots.
#[derive(Clone, Copy, Debug)]
pub struct Queue {
    head: u32,
    tail: u32,
}

impl Queue {
    pub(crate) const EMPTY: Self = Self {
        head: NIL,
        tail: NIL,
    };

    #[inline(always)]
    pub(crate) fn is_empty(&self) -> bool {
        self.head == NIL
    }

    /// [`is_empty`](Self::is_empty) for a caller that pops next: tests `tail` (`NIL` exactly
    /// when `head` is), so that `head` is read once, in `pop_for_poll`. Guarded by
    /// `ready_512k`.
    #[inline(always)]
    pub(crate) fn is_empty_before_pop(&self) -> bool {
        self.tail == NIL
    }

    /// Whether the queue holds more than one slot.
    #[inline]
    pub(crate) fn len_above_one(&self) -> bool {
        self.head != self.tail
    }

    /// The first slot; the queue is not empty.
    #[inline(always)]
    pub(crate) fn head_unchecked(&self) -> u32 {
        debug_assert!(!self.is_empty());
        self.head
    }

    /// The last slot, `NIL` if none. A drain only appends, and only slots in no queue (a
    /// slot queued already stays where it is), so the tail differs after a drain exactly when
    /// the drain appended any.
    #[inline(always)]
    pub(crate) fn last(&self) -> u32 {
        self.tail
    }

    /// The first slot, if any.
    #[inline(always)]
    pub(crate) fn front(&self) -> Option<u32> {
        (self.head != NIL).then_some(self.head)
    }

    /// Appends slot `id` unless it is in a queue already. Always inlined: a busy merge
    /// appends on every call (guarded by `merge_hot_16`, instructions).
    #[inline(always)]
    pub(crate) fn push(&mut self, marks: &mut (impl Marks + ?Sized), id: u32) {
        let mark = marks.mark(id);
        if mark.next != UNLINKED {
            return;
        }
        mark.next = NIL;
        self.link_last(marks, id);
    }

    /// Appends slot `id`, whose mark was in no queue and now ends one (`next` is `NIL`): the
    /// second half of [`push`](Self::push), for a caller that has looked at the mark already.
    #[inline(always)]
    pub(crate) fn link_last(&mut self, marks: &mut (impl Marks + ?Sized), id: u32) {
        if self.tail == NIL {
            self.head = id;
        } else {
            marks.mark(self.tail).next = id;
        }
        self.tail = id;
    }

    /// Takes the first slot out; the queue is not empty.
    #[inline(always)]
    pub(crate) fn pop(&mut self, marks: &mut (impl Marks + ?Sized)) -> u32 {
        let id = self.head;
        let mark = marks.mark(id);
        // The link is read into a local before the mark is written: the compiler cannot tell
        // the mark from `self.head`, and would load `head` again after that write
        // (`unordered_held_100k`, instructions).
        let next = mark.next;
        mark.next = UNLINKED;
        self.head = next;
        if next == NIL {
            self.tail = NIL;
        }
        id
    }

    /// [`pop`](Self::pop) for a caller that polls the slot next: the slot's mark keeps its
    /// link, which the poll makes [`UNLINKED`] first, where the slot is at hand
    /// ([`PollStorage::poll_slot`] with `UNLINK`). No store to
    /// the mark then sits between the two lookups of the slot, and the compiler makes them one
    /// (a growable arena's decode of the id was done twice). Guarded by `unordered_held_100k`
    /// (instructions).
    #[inline(always)]
    pub(crate) fn pop_for_poll(&mut self, marks: &mut (impl Marks + ?Sized)) -> u32 {
        let id = self.head;
        let next = marks.mark(id).next;
        self.head = next;
        if next == NIL {
            self.tail = NIL;
        }
        id
    }

    /// Moves the first slot to the end (the queue is not empty), applying `first` to its mark:
    /// what a pop and a push of the same slot do, with only the links that change written,
    /// and each mark looked up once. Guarded by `merge_hot_16` (instructions).
    #[inline(always)]
    pub(crate) fn rotate(
        &mut self,
        marks: &mut (impl Marks + ?Sized),
        first: impl FnOnce(&mut Mark),
    ) {
        let head = self.head;
        let mark = marks.rotating_mark(head);
        first(mark);
        if head == self.tail {
            return;
        }
        let next = mark.next;
        mark.next = NIL;
        marks.mark(self.tail).next = head;
        self.tail = head;
        self.head = next;
    }

    /// Appends every slot of `other`, which is left empty.
    #[inline]
    pub(crate) fn append(&mut self, marks: &mut (impl Marks + ?Sized), other: &mut Queue) {
        if other.is_empty() {
            return;
        }
        let tail = core::mem::replace(other, Queue::EMPTY);
        if self.is_empty() {
            *self = tail;
        } else {
            marks.mark(self.tail).next = tail.head;
            self.tail = tail.tail;
        }
    }

    /// Takes every slot out of the queue, each unlinked (its value left).
    pub(crate) fn unlink_all(&mut self, marks: &mut (impl Marks + ?Sized)) {
        let mut id = self.head;
        while id != NIL {
            let mark = marks.mark(id);
            id = mark.next;
            mark.next = UNLINKED;
        }
        *self = Queue::EMPTY;
    }

    /// Takes out every slot for which `keep` says `false` (their marks are left alone: the
    /// caller is about to free them), keeping the others in order.
    pub(crate) fn retain(&mut self, marks: &mut (impl Marks + ?Sized), keep: impl Fn(u32) -> bool) {
        let mut kept = Queue::EMPTY;
        let mut id = self.head;
        while id != NIL {
            let next = marks.mark(id).next;
            if keep(id) {
                if kept.tail == NIL {
                    kept.head = id;
                } else {
                    marks.mark(kept.tail).next = id;
                }
                kept.tail = id;
            }
            id = next;
        }
        if kept.tail != NIL {
            marks.mark(kept.tail).next = NIL;
        }
        *self = kept;
    }
}
