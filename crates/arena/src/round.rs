//! The poll round: the one loop, shared by [`Arena`](crate::Arena),
//! [`GrowableArena`](crate::GrowableArena) and [`JoinArena`](crate::JoinArena), that polls woken
//! values fairly and decides when a call returns `Pending`; and, below it, the one loop that
//! polls an arena's queued slots ([`poll_queue`]), shared by `Arena` and `JoinArena`.

use core::pin::Pin;
use core::task::{Context, Poll, Waker};

use crate::key::Key;
use crate::ready_set::Drain;
use crate::step::Step;

/// The fairness budget of one poll round (one call of a set's `poll_next`, or one poll of a
/// join that takes several outputs).
///
/// A round polls each value at most once, and ends (the task is woken, `Pending` returned) once
/// it has polled as many values as the arena held when it started, or once
/// [`MAX_VAIN_REPOLLS`] values polled in an earlier round were woken and `Pending` again
/// without waking themselves. A value that wakes itself during its poll is polled again in the
/// next round, not in this one: however many do, a round polls each once. Get one from
/// [`Arena::budget`](crate::Arena::budget) or
/// [`GrowableArena::budget`](crate::GrowableArena::budget), which start the round.
#[derive(Debug, Clone)]
pub struct Budget {
    /// The round's number: a value polled in this round carries it.
    pub(crate) round: u32,
    limit: usize,
    polled: usize,
    /// Values polled again in vain (see [`MAX_VAIN_REPOLLS`]); the round is spent at
    /// `MAX_VAIN_REPOLLS`.
    vain: u32,
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
        Self {
            round,
            limit: len.max(1),
            polled: 0,
            vain: 0,
        }
    }

    /// Whether the round must yield now.
    #[inline]
    pub(crate) fn is_spent(&self) -> bool {
        self.polled >= self.limit || self.vain >= MAX_VAIN_REPOLLS as u32
    }

    /// Counts a poll.
    #[inline]
    pub(crate) fn polled(&mut self) {
        self.polled += 1;
    }

    /// Counts a value polled in an earlier round that was `Pending` again without waking
    /// itself.
    #[inline]
    pub(crate) fn vain(&mut self) {
        self.vain += 1;
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

/// What the round loop needs of an arena or a stack of arenas.
pub(crate) trait Rounds<T> {
    /// How many values are held.
    fn held(&self) -> usize;

    /// Polls the values queued for this round, each at most once, until one gives an output,
    /// none is left, or `budget` is spent.
    fn poll_queued<R, F>(&mut self, budget: &mut Budget, f: &mut F) -> Queued<(Key, R)>
    where
        F: FnMut(Key, Pin<&mut T>, &mut Context<'_>) -> Step<R>;

    /// Moves the values woken since the last collection into the queues: those not yet polled
    /// in round `round` into this round's queue, the others into the next round's. `true` if
    /// this round's queue got any.
    fn collect(&mut self, round: u32, mode: Drain) -> bool;

    /// Registers the task to wake at the next wake after an [`Drain::Arm`] collection.
    fn register(&self, waker: &Waker);

    /// Whether values wait for the next round.
    fn has_deferred(&self) -> bool;

    /// Marks the owner busy for the round: wakes from now on notify nobody until the round's
    /// arming collection.
    fn begin(&mut self);
}

/// [`poll_round`] for values that may leave without an output (a stream that ends gives
/// `Step::Done(None)`): such a `None` is skipped and the round goes on, within the same budget.
#[inline]
pub(crate) fn poll_round_some<T, R, A, F>(
    arena: &mut A,
    cx: &mut Context<'_>,
    budget: &mut Budget,
    f: &mut F,
) -> Poll<Option<(Key, R)>>
where
    A: Rounds<T>,
    F: FnMut(Key, Pin<&mut T>, &mut Context<'_>) -> Step<Option<R>>,
{
    loop {
        match poll_round(arena, cx, budget, f) {
            Poll::Ready(Some((key, Some(out)))) => return Poll::Ready(Some((key, out))),
            // The value left (the arena dropped it) without an output.
            Poll::Ready(Some((_, None))) => {}
            Poll::Ready(None) => return Poll::Ready(None),
            Poll::Pending => return Poll::Pending,
        }
    }
}

/// One poll round over `arena`: the next output of any woken value, fairly.
///
/// Returns `Ready(None)` when nothing is held, `Ready(Some)` at an output, and `Pending` when
/// the round is over: every woken value not yet polled in it was polled (the task is woken by
/// the next wake, or at once if values polled in this round were woken again), or the budget
/// is spent (the task has been woken already). Wakes that arrive during the round are
/// collected in it, so no call returns `Pending` while it could still poll something it has
/// not polled.
#[inline(always)]
pub(crate) fn poll_round<T, R, A, F>(
    arena: &mut A,
    cx: &mut Context<'_>,
    budget: &mut Budget,
    f: &mut F,
) -> Poll<Option<(Key, R)>>
where
    A: Rounds<T>,
    F: FnMut(Key, Pin<&mut T>, &mut Context<'_>) -> Step<R>,
{
    if arena.held() == 0 {
        return Poll::Ready(None);
    }
    arena.begin();
    loop {
        match arena.poll_queued(budget, f) {
            Queued::Ready(out) => return Poll::Ready(Some(out)),
            Queued::Yield => {
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
            Queued::Empty => {}
        }
        // Wakes that came while we polled: collect them, staying busy (wakes meanwhile do not
        // wake the task, which is running).
        if arena.collect(budget.round, Drain::KeepBusy) {
            continue;
        }
        // Nothing left to poll. Register first, so that a wake after the collection below
        // wakes the task; that collection arms the wake.
        arena.register(cx.waker());
        if arena.collect(budget.round, Drain::Arm) {
            continue;
        }
        if arena.has_deferred() {
            // Values polled in this round were woken again: the next round polls them.
            cx.waker().wake_by_ref();
        }
        return Poll::Pending;
    }
}

/// A slot the poll loop polled: see [`SlotQueue::poll_front`].
pub(crate) struct Turn {
    /// The slot.
    pub(crate) index: usize,
    /// The key handed to the poll and returned with an output.
    pub(crate) key: Key,
    /// The wake table entry whose waker the poll lent.
    pub(crate) entry: usize,
    /// Whether a `Pending` of this poll is a vain one (see [`MAX_VAIN_REPOLLS`]): the value was
    /// polled in an earlier round, and was not queued again because it gave an item.
    pub(crate) counts_as_vain: bool,
}

/// An arena's queues of slots, as [`poll_queue`] drives them: what differs between an
/// [`Arena`](crate::Arena) and a [`JoinArena`](crate::JoinArena) (where a slot's queue links,
/// round and value live, how its key is made, what a value that leaves or stays `Pending` does
/// to the queues), so that the rules of a round's polls are written once.
///
/// Taking a slot out of the queue, marking it and polling it are one method: its writes to
/// the slot and its reads of the arena's storage stay in one inlined body, where the compiler
/// sees that they do not overlap and keeps the storage's address in a register (with a method
/// for each step, every poll would read it again). Guarded by `ready_512k`.
pub(crate) trait SlotQueue<T> {
    /// Whether a slot is queued for this round.
    fn has_queued(&self) -> bool;

    /// Takes the first slot queued for this round out of its queue (there is one), prefetching
    /// the slot queued after it if `prefetch`. If the slot holds a value, marks it as polled in
    /// round `round` and polls the value with `poll` (given its key), in a context of its own
    /// waker; `None` (the slot is skipped) if it holds none.
    fn poll_front<R>(
        &mut self,
        round: u32,
        prefetch: bool,
        poll: impl FnOnce(Key, Pin<&mut T>, &mut Context<'_>) -> R,
    ) -> Option<(Turn, R)>;

    /// Whether the value of entry `entry`, just `Pending`, holds no waker of its own where that
    /// means it waits for a waker it was given before it had one (see
    /// [`JoinArena::poll_with_budget`](crate::JoinArena::poll_with_budget)); read before the
    /// entry's ready mark. Always `false` in an arena that lends each value its own waker from
    /// its first poll on.
    fn waits_for_an_earlier_waker(&self, entry: usize) -> bool;

    /// Whether entry `entry` was woken since its value's poll began.
    fn is_marked(&self, entry: usize) -> bool;

    /// Queues slot `index`, `Pending` and not woken, for every later round, as
    /// [`waits_for_an_earlier_waker`](Self::waits_for_an_earlier_waker) said it must be.
    fn queue_unbound(&mut self, index: usize);

    /// Queues slot `index` for the next round: it gave an item and has more
    /// ([`Step::Repoll`]).
    fn queue_repoll(&mut self, index: usize);

    /// Slot `index`'s value gave its last output ([`Step::Done`]).
    fn done(&mut self, index: usize);
}

/// Polls the slots queued for this round until one gives an output, none is left, or `budget`
/// is spent, prefetching the next queued slot while it polls one if `PREFETCH`: the loop under
/// [`Rounds::poll_queued`] of an [`Arena`](crate::Arena) and a [`JoinArena`](crate::JoinArena).
/// Each queued slot is polled once, marked with the round, counted against the budget; a
/// `Pending` value polled again in vain strikes the round.
#[inline(always)]
pub(crate) fn poll_queue<const PREFETCH: bool, T, R, Q, F>(
    queue: &mut Q,
    budget: &mut Budget,
    f: &mut F,
) -> Queued<(Key, R)>
where
    Q: SlotQueue<T>,
    F: FnMut(Key, Pin<&mut T>, &mut Context<'_>) -> Step<R>,
{
    loop {
        if !queue.has_queued() {
            return Queued::Empty;
        }
        if budget.is_spent() {
            return Queued::Yield;
        }
        let round = budget.round;
        let polled = queue.poll_front(round, PREFETCH, |key, value, cx| {
            budget.polled();
            f(key, value, cx)
        });
        let Some((turn, step)) = polled else {
            continue;
        };
        if let Some(out) = settle(queue, turn, step, budget) {
            return Queued::Ready(out);
        }
    }
}

/// What a poll of a queued slot (`turn`) came to, applied to the queues and the budget: the
/// output to hand on, or `None` if the round goes on to the next queued slot.
#[inline(always)]
pub(crate) fn settle<T, R, Q: SlotQueue<T>>(
    queue: &mut Q,
    turn: Turn,
    step: Step<R>,
    budget: &mut Budget,
) -> Option<(Key, R)> {
    let Turn {
        index,
        key,
        entry,
        counts_as_vain,
    } = turn;
    match step {
        Step::Pending => {
            let unbound = queue.waits_for_an_earlier_waker(entry);
            // A value that woke itself costs the round nothing beyond its poll: it is polled
            // once a round, and the round polls at most as many values as the arena held.
            if !queue.is_marked(entry) {
                if counts_as_vain {
                    budget.vain();
                }
                if unbound {
                    queue.queue_unbound(index);
                }
            }
            None
        }
        Step::Keep(out) => Some((key, out)),
        Step::Settled => None,
        Step::Repoll(out) => {
            queue.queue_repoll(index);
            Some((key, out))
        }
        Step::Done(out) => {
            queue.done(index);
            Some((key, out))
        }
    }
}
