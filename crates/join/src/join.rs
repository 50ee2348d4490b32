//! The state [`JoinAll`](crate::JoinAll) and [`TryJoinAll`](crate::TryJoinAll) share: the input
//! futures in arena slots indexed by input position, how many still run, and whether the join
//! has completed.

use core::any::Any;
use core::fmt;
use core::pin::Pin;
use core::task::{Context, Poll};
use std::iter;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};

use pinfold_arena::{Arena, Step};

use crate::slot::Slot;

/// A join of futures `F` whose finished outputs are `T` (`F::Output` for `join_all`, the `Ok`
/// value for `try_join_all`).
pub(crate) struct Join<F, T> {
    /// Input `i` in slot `i`.
    head: Part<F, T>,
    /// The inputs past the count an iterator promised with an exact `size_hint` (a buggy
    /// iterator yielded more): input `head.len + i` in slot `i`. `None` for every correct
    /// iterator.
    spill: Option<Box<Part<F, T>>>,
    /// Set once the join has returned `Ready` or a future's panic has passed through it.
    terminated: bool,
    /// Set while a future's poll runs: a panic caught with it set is the future's; one caught
    /// without it came from the task's waker (its registration or a yield), and leaves the join
    /// as it was.
    in_future: bool,
}

/// One arena of inputs, slot `i` holding the part's `i`-th input.
struct Part<F, T> {
    arena: Arena<Slot<F, T>>,
    /// How many inputs the part holds (slots `0..len`).
    len: usize,
    /// How many of them are still running.
    running: usize,
}

impl<F, T> Join<F, T> {
    /// Stores every future of `iter` in a slot: the arena's two allocations when the
    /// iterator's `size_hint` is exact; when it is not, the futures are first collected into a
    /// `Vec` to count them (its allocations come on top; it is freed here).
    pub(crate) fn new<I: Iterator<Item = F>>(mut iter: I) -> Self {
        let (lower, upper) = iter.size_hint();
        if upper != Some(lower) {
            let futures: Vec<F> = iter.collect();
            return Self::from_parts(Part::new(futures.len(), futures.into_iter()), None);
        }
        let head = Part::new(lower, iter.by_ref());
        // Only an iterator that lied about its length gets here with more to give (a short one
        // has ended: it is not asked again, as `collect` would not ask it).
        let spill = if head.len == lower {
            iter.next().map(|next| {
                let rest: Vec<F> = iter::once(next).chain(iter).collect();
                Box::new(Part::new(rest.len(), rest.into_iter()))
            })
        } else {
            None
        };
        Self::from_parts(head, spill)
    }

    fn from_parts(head: Part<F, T>, spill: Option<Box<Part<F, T>>>) -> Self {
        Self {
            head,
            spill,
            terminated: false,
            in_future: false,
        }
    }

    /// Whether the join has completed.
    pub(crate) fn is_terminated(&self) -> bool {
        self.terminated
    }

    /// How many futures were joined.
    pub(crate) fn len(&self) -> usize {
        self.head.len + self.spill.as_ref().map_or(0, |spill| spill.len)
    }

    /// How many futures are still running.
    pub(crate) fn running(&self) -> usize {
        self.head.running + self.spill.as_ref().map_or(0, |spill| spill.running)
    }

    /// The `Debug` output of the public type `name` that wraps this join.
    pub(crate) fn fmt_as(&self, name: &str, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct(name)
            .field("len", &self.len())
            .field("running", &self.running())
            .field("terminated", &self.terminated)
            .finish_non_exhaustive()
    }

    /// Polls the woken futures with `poll`. Returns every output in input order once all are
    /// `Ok`, or the first `Err` as soon as it comes, after dropping every other future and
    /// every kept output. A panic in a future drops all the others and kept outputs before it
    /// propagates. In each case the join is terminated.
    ///
    /// # Panics
    /// If the join is terminated, with the message "`{name}` polled after completion"; and with
    /// a future's panic.
    pub(crate) fn poll<E, P>(
        &mut self,
        cx: &mut Context<'_>,
        name: &str,
        mut poll: P,
    ) -> Poll<Result<Vec<T>, E>>
    where
        P: FnMut(Pin<&mut F>, &mut Context<'_>) -> Poll<Result<T, E>>,
    {
        assert!(!self.terminated, "{name} polled after completion");
        let (head, spill, in_future) = (&mut self.head, &mut self.spill, &mut self.in_future);
        let caught = catch_unwind(AssertUnwindSafe(|| {
            drive(head, spill, cx, &mut poll, in_future)
        }));
        // Set if a future's poll or drop was running when it ended.
        let blame_future = core::mem::take(&mut self.in_future);
        match caught {
            Ok(Poll::Pending) => Poll::Pending,
            Ok(Poll::Ready(Ok(()))) => Poll::Ready(Ok(self.take_outputs())),
            Ok(Poll::Ready(Err(err))) => {
                if let Some(panic) = self.cancel() {
                    resume_unwind(panic);
                }
                Poll::Ready(Err(err))
            }
            Err(panic) if blame_future => {
                // The future's panic is the one to report, not a drop's.
                drop(self.cancel());
                resume_unwind(panic)
            }
            // The task's waker panicked: no future did, and the join goes on when polled again.
            Err(panic) => resume_unwind(panic),
        }
    }

    /// Moves every output out, in input order, into a `Vec` of exactly their number, and
    /// terminates the join.
    fn take_outputs(&mut self) -> Vec<T> {
        self.terminated = true;
        let mut outputs = Vec::with_capacity(self.len());
        self.head.take_outputs(&mut outputs);
        if let Some(spill) = &mut self.spill {
            spill.take_outputs(&mut outputs);
        }
        outputs
    }

    /// Drops every future and every kept output now, and terminates the join. If a `Drop`
    /// panics, the others are dropped all the same, and the first panic is returned.
    fn cancel(&mut self) -> Option<Box<dyn Any + Send>> {
        self.terminated = true;
        let mut first_panic = None;
        for part in iter::once(&mut self.head).chain(self.spill.as_deref_mut()) {
            // `clear` drops every value even when one's `Drop` panics, then raises the first.
            if let Err(panic) = catch_unwind(AssertUnwindSafe(|| part.cancel())) {
                first_panic.get_or_insert(panic);
            }
        }
        first_panic
    }
}

/// Polls each part: `Ready(Ok)` once every future has finished, `Ready(Err)` at the first
/// error.
fn drive<F, T, E, P>(
    head: &mut Part<F, T>,
    spill: &mut Option<Box<Part<F, T>>>,
    cx: &mut Context<'_>,
    poll: &mut P,
    in_future: &mut bool,
) -> Poll<Result<(), E>>
where
    P: FnMut(Pin<&mut F>, &mut Context<'_>) -> Poll<Result<T, E>>,
{
    let head = head.drive(cx, poll, in_future)?;
    let spill = match spill {
        Some(spill) => spill.drive(cx, poll, in_future)?,
        None => Poll::Ready(()),
    };
    match (head, spill) {
        (Poll::Ready(()), Poll::Ready(())) => Poll::Ready(Ok(())),
        _ => Poll::Pending,
    }
}

impl<F, T> Part<F, T> {
    /// An arena of `capacity` slots holding up to `capacity` futures of `futures`, input `i`
    /// in slot `i`.
    fn new(capacity: usize, futures: impl Iterator<Item = F>) -> Self {
        let mut arena = Arena::new(capacity);
        let mut len = 0;
        for fut in futures.take(capacity) {
            if arena.insert(Slot::Running(fut)).is_err() {
                unreachable!("an arena of capacity {capacity} is full after {len} inserts");
            }
            len += 1;
        }
        Self {
            arena,
            len,
            running: len,
        }
    }

    /// Polls the woken futures of this part, each at most once, as fairly as the arena's
    /// `poll_next` does: `Ready(Ok)` once none is running, `Ready(Err)` at the first error,
    /// `Pending` when no woken future is left (the task is woken by the next wake) or when the
    /// fairness budget is spent (the task has been woken already).
    ///
    /// `in_future` is set while a future is polled or its finished future dropped.
    fn drive<E, P>(
        &mut self,
        cx: &mut Context<'_>,
        poll: &mut P,
        in_future: &mut bool,
    ) -> Poll<Result<(), E>>
    where
        P: FnMut(Pin<&mut F>, &mut Context<'_>) -> Poll<Result<T, E>>,
    {
        let mut budget = self.arena.budget();
        let mut poll_slot = |_, slot: Pin<&mut Slot<F, T>>, cx: &mut Context<'_>| {
            *in_future = true;
            let step = slot.poll(cx, poll);
            // A `Done` slot (an error) is dropped by the arena after this returns.
            if !matches!(step, Step::Done(_)) {
                *in_future = false;
            }
            step
        };
        while self.running > 0 {
            match self.arena.poll_with_budget(cx, &mut budget, &mut poll_slot) {
                Poll::Ready(Some((_, Ok(())))) => self.running -= 1,
                Poll::Ready(Some((_, Err(err)))) => return Poll::Ready(Err(err)),
                Poll::Ready(None) => unreachable!("a running future left the arena"),
                Poll::Pending => return Poll::Pending,
            }
        }
        Poll::Ready(Ok(()))
    }

    /// Appends the outputs to `outputs` in slot order (a fresh arena fills its slots in
    /// order, so that is input order) and empties the arena.
    fn take_outputs(&mut self, outputs: &mut Vec<T>) {
        for (key, slot) in self.arena.iter_pin_mut() {
            let output = Slot::take_output(slot)
                .unwrap_or_else(|| unreachable!("{key:?} of a finished join has no output"));
            outputs.push(output);
        }
        self.arena.clear();
    }

    /// Drops every future and kept output in place.
    fn cancel(&mut self) {
        self.running = 0;
        self.arena.clear();
    }
}
