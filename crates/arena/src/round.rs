//! The poll round: the one loop, shared by [`Arena`](crate::Arena) and
//! [`GrowableArena`](crate::GrowableArena), that polls woken values fairly and decides when a
//! call returns `Pending`.

use core::pin::Pin;
use core::task::{Context, Poll, Waker};

use crate::key::Key;
use crate::ready_set::Drain;
use crate::step::Step;

/// The fairness budget of one poll round (one call of a set's `poll_next`, or one poll of a
/// join that takes several outputs).
///
/// A round polls each value at most once, and ends (the task is woken, `Pending` returned) once
/// it has polled as many values as the arena held when it started, once two values woke
/// themselves during their own poll, or once [`MAX_VAIN_REPOLLS`] values polled in an earlier
/// round were `Pending` again (the two count together: a value that woke itself counts as
/// half of [`MAX_VAIN_REPOLLS`]). Get one from [`Arena::budget`](crate::Arena::budget) or
/// [`GrowableArena::budget`](crate::GrowableArena::budget), which start the round.
#[derive(Debug, Clone)]
pub struct Budget {
    /// The round's number: a value polled in this round carries it.
    pub(crate) round: u32,
    limit: usize,
    polled: usize,
    /// Strikes against the round: [`SELF_WAKE`] for each value that woke itself during its
    /// poll, 1 for each value polled again in vain (see [`MAX_VAIN_REPOLLS`]); the round is
    /// spent at `MAX_VAIN_REPOLLS`. One counter, so that the check stays one comparison.
    strikes: u32,
}

/// The strikes of a value that woke itself during its poll: two of them spend a round.
const SELF_WAKE: u32 = MAX_VAIN_REPOLLS as u32 / 2;

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
/// stream queued again because it gave an item (`Step::Repoll`): those are needed anyway, and
/// cannot be a deferred wake.
pub const MAX_VAIN_REPOLLS: usize = 32;

impl Budget {
    /// A budget for round `round` of an arena holding `len` values.
    #[inline]
    pub(crate) fn new(round: u32, len: usize) -> Self {
        Self {
            round,
            limit: len.max(1),
            polled: 0,
            strikes: 0,
        }
    }

    /// Whether the round must yield now.
    #[inline]
    pub(crate) fn is_spent(&self) -> bool {
        self.polled >= self.limit || self.strikes >= MAX_VAIN_REPOLLS as u32
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
        self.strikes += 1;
    }

    /// Counts a value that woke itself during its poll.
    #[inline]
    pub(crate) fn self_woken(&mut self) {
        self.strikes += SELF_WAKE;
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
