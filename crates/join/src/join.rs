//! The state [`JoinAll`](crate::JoinAll) and [`TryJoinAll`](crate::TryJoinAll) share: the input
//! futures in a [`JoinArena`] indexed by input position, how many still run, whether one has
//! failed, and whether the join has completed.

use core::fmt;
use core::mem::MaybeUninit;
use core::pin::Pin;
use core::task::{Context, Poll};

use pinfold_arena::unwind::{self, Panic};
use pinfold_arena::{Filled, JoinArena, Step, coop, with_noted_wakes};

use crate::input::Input;
use alloc::vec::Vec;

/// Joins of at most this many futures poll every running future with the task's own waker in
/// their first two polls; larger joins in their first poll only (see the crate docs, *Polls*).
pub(crate) const SMALL: usize = 32;

/// Cancels the join it holds when dropped while one of its futures' poll is running, which
/// only an unwinding poll leaves behind.
struct CancelOnUnwind<'a, F, T, E> {
    join: &'a mut Join<F, T, E>,
    /// Set while a future's poll runs: a panic that unwinds with it set is the future's poll's,
    /// and cancels the join; any other (a future's or an output's drop, the task's waker) left
    /// the join consistent, and leaves it as it is. Kept here, not in the join, so that making
    /// a join does not write it.
    in_future: bool,
}

impl<F, T, E> Drop for CancelOnUnwind<'_, F, T, E> {
    fn drop(&mut self) {
        if self.in_future {
            // A drop's panic here is caught by `cancel` and dropped (without `std`, it aborts,
            // as a second panic does): the future's goes on.
            let _ = self.join.cancel();
        }
    }
}

/// How far a join has come, in one word: how many inputs still run (the low 32 bits), how many
/// polls have polled every running input with the task's waker (the next 8), whether the
/// join has completed (returned `Ready`, or let a future's poll's panic through), and whether an input
/// failed (its error kept in its slot until the join returns it); once the join has completed,
/// the low bits say how many futures it joined (its storage is gone by then).
///
/// One word, because a join is moved as soon as it is made (into the caller's future, into an
/// executor), and the move reads it back in 16-byte pieces: a piece that holds bytes of a
/// write still in the processor's store buffer, but not only that one write's, waits for the
/// write to reach the cache (a store-forwarding stall), and narrow fields make more such
/// pieces. Making a join writes its storage's `Vec`, the arena's empty wake-table marker and
/// this word, nothing else. Guarded by `join_all_10`.
#[derive(Clone, Copy)]
struct Progress(u64);

impl Progress {
    const RUNNING: u64 = u32::MAX as u64;
    const PASS: u64 = 1 << 32;
    const PASSES: u64 = 0xff << 32;
    const TERMINATED: u64 = 1 << 40;
    const FAILED: u64 = 1 << 41;

    fn new(running: u32) -> Self {
        Self(u64::from(running))
    }

    fn running(self) -> u32 {
        if self.is_terminated() {
            0
        } else {
            (self.0 & Self::RUNNING) as u32
        }
    }

    /// `inputs` running inputs fewer.
    fn finished(&mut self, inputs: u32) {
        debug_assert!(self.running() >= inputs, "more inputs finished than ran");
        self.0 -= u64::from(inputs);
    }

    fn task_passes(self) -> u64 {
        (self.0 & Self::PASSES) >> 32
    }

    fn add_task_pass(&mut self) {
        self.0 += Self::PASS;
    }

    fn is_terminated(self) -> bool {
        self.0 & Self::TERMINATED != 0
    }

    /// An input failed: its error is in its slot.
    fn fail(&mut self) {
        self.0 |= Self::FAILED;
    }

    fn is_failed(self) -> bool {
        self.0 & Self::FAILED != 0
    }

    /// Completed, having joined `len` futures: nothing runs any more.
    fn terminate(&mut self, len: usize) {
        self.0 = Self::TERMINATED | (len as u64 & Self::RUNNING);
    }

    /// How many futures the join joined, once it has completed.
    fn joined(self) -> Option<u32> {
        self.is_terminated()
            .then_some((self.0 & Self::RUNNING) as u32)
    }
}

/// A join of futures `F` whose finished outputs are `T` (`F::Output` for `join_all`, the `Ok`
/// value for `try_join_all`) and whose errors are `E` (`Infallible` for `join_all`).
// `repr(C)` and the gap put `progress` in the join's last 8 bytes, after a whole number of 16
// bytes: a move copies the join in 16-byte pieces from its start and the rest in smaller ones,
// so the word is read back by a load of its own, which the store that wrote it forwards.
// Sharing a 16-byte piece with bytes not written by that store, it would stall every move of
// a new join. Guarded by `join_all_ready_2_block_on`.
#[repr(C)]
pub(crate) struct Join<F, T, E> {
    /// Input `i` at index `i`; emptied when the join completes.
    inputs: JoinArena<Input<F, T, E>>,
    /// Never written (see above).
    _gap: [MaybeUninit<u8>; GAP],
    progress: Progress,
}

/// The bytes between a join's inputs and its `progress` that fill the inputs' last 16-byte
/// piece (a `JoinArena`'s size does not depend on what it holds).
const GAP: usize = (16 - size_of::<JoinArena<()>>() % 16) % 16;

/// What polling one running input came to.
enum InputPoll<T> {
    /// The future is pending.
    Pending,
    /// The future finished with this output, and is counted as finished: the caller drops it
    /// and keeps the output.
    Output(T),
    /// The future failed: it was dropped, its error is in its slot and the join is marked
    /// failed.
    Failed,
}

/// What stopped a pass of [`JoinArena::fill_in_place`] over the inputs.
enum Halt {
    /// The input is pending.
    Pending,
    /// The input failed (see [`InputPoll::Failed`]).
    Failed,
    /// The task's tokio budget is spent: the input was not polled.
    Spent,
}

/// Polls input `slot`, if its future is still running, with `poll`. The join's state is kept
/// true at every point user code runs: a finished input is counted before its future is
/// dropped (by the caller), a failed one marked before it is, and its error is in its slot
/// even if that drop panics. `in_future` is set while the future's poll runs.
#[inline(always)]
fn poll_input<F, T, E, P>(
    slot: Pin<&mut Input<F, T, E>>,
    cx: &mut Context<'_>,
    poll: &mut P,
    progress: &mut Progress,
    in_future: &mut bool,
) -> InputPoll<T>
where
    P: FnMut(Pin<&mut F>, &mut Context<'_>) -> Poll<Result<T, E>>,
{
    let mut slot = slot;
    let Some(fut) = slot.as_mut().running() else {
        // A finished input polled by a stale wake.
        return InputPoll::Pending;
    };
    *in_future = true;
    let polled = poll(fut, cx);
    *in_future = false;
    match polled {
        Poll::Pending => InputPoll::Pending,
        Poll::Ready(Ok(out)) => {
            progress.finished(1);
            InputPoll::Output(out)
        }
        Poll::Ready(Err(err)) => {
            progress.fail();
            slot.fail(err);
            InputPoll::Failed
        }
    }
}

impl<F, T, E> Join<F, T, E> {
    /// Stores every future of `iter` in order: one allocation when the iterator's `size_hint`
    /// is exact (what `collect` costs otherwise).
    #[inline]
    pub(crate) fn new<I: Iterator<Item = F>>(iter: I) -> Self {
        let inputs = JoinArena::new(iter.map(Input::Running));
        let len = u32::try_from(inputs.len()).expect("a join arena holds fewer than u32::MAX");
        Self {
            inputs,
            _gap: [MaybeUninit::uninit(); GAP],
            progress: Progress::new(len),
        }
    }

    /// Whether the join has completed.
    pub(crate) fn is_terminated(&self) -> bool {
        self.progress.is_terminated()
    }

    /// The `Debug` output of the public type `name` that wraps this join.
    pub(crate) fn fmt_as(&self, name: &str, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct(name)
            .field(
                "len",
                &self
                    .progress
                    .joined()
                    .map_or(self.inputs.len(), |len| len as usize),
            )
            .field("running", &self.progress.running())
            .field("terminated", &self.progress.is_terminated())
            .finish_non_exhaustive()
    }

    /// Polls the futures (see the crate docs, *Polls*) with `poll`. Returns every output in
    /// input order once all are `Ok`, or the first `Err` as soon as it comes, after dropping
    /// every other future and every kept output; the join is then terminated. A panic in a
    /// future's poll drops all the others and the kept outputs before it propagates, and
    /// terminates the join too. Any other panic (a future's or an output's drop, the task's
    /// waker) propagates with the join consistent and not terminated: polling it again goes on
    /// (see the crate docs, *Panics*).
    ///
    /// # Panics
    /// If the join is terminated, with the message "`{name}` polled after completion"; and with
    /// the panics above.
    // Inlined, with `poll_futures` and `take_outputs`, into the caller's poll: the output
    // `Vec` then reaches the caller in registers, not written to memory and read straight back
    // (wider than written, which stalls). Guarded by `join_all_ready_2_block_on`.
    #[inline]
    pub(crate) fn poll<P>(
        &mut self,
        cx: &mut Context<'_>,
        name: &str,
        mut poll: P,
    ) -> Poll<Result<Vec<T>, E>>
    where
        P: FnMut(Pin<&mut F>, &mut Context<'_>) -> Poll<Result<T, E>>,
    {
        assert!(
            !self.progress.is_terminated(),
            "{name} polled after completion"
        );
        // If a future's poll unwinds, the guard drops every other future and output on the way
        // out (the future's panic is the one that goes on); any other panic leaves the join as
        // it was.
        let mut guard = CancelOnUnwind {
            join: self,
            in_future: false,
        };
        let polled = guard.join.drive(cx, &mut poll, &mut guard.in_future);
        let join = &mut *guard.join;
        match polled {
            Poll::Pending => Poll::Pending,
            Poll::Ready(Ok(Some(outputs))) => {
                join.progress.terminate(outputs.len());
                Poll::Ready(Ok(outputs))
            }
            Poll::Ready(Ok(None)) => Poll::Ready(Ok(join.take_outputs())),
            Poll::Ready(Err(())) => Poll::Ready(Err(join.take_error())),
        }
    }

    /// `Ready(Ok)` once every future has finished (with the outputs if they are already out of
    /// the inputs, `None` if they are kept in them), `Ready(Err)` once one has failed (its
    /// error kept in its slot), `Pending` otherwise. The first poll (the first two for a join
    /// of at most [`SMALL`] futures) polls every running future once with the task's waker;
    /// the next arms the inputs' own wakers and polls every running future once with its own;
    /// after that, only woken futures are polled, fairly (at most once each per poll, yielding
    /// after as many polls as futures run, or after 32 vain repolls; a future that woke itself
    /// is polled again in the next poll). With the `tokio-coop` feature, a poll that finds
    /// tokio's budget spent returns `Pending` at once, and each future completed spends a unit:
    /// the first that finds none left stops the poll there (its output kept), which returns
    /// `Pending`; tokio wakes the task in both cases.
    #[inline(always)]
    fn drive<P>(
        &mut self,
        cx: &mut Context<'_>,
        poll: &mut P,
        in_future: &mut bool,
    ) -> Poll<Result<Option<Vec<T>>, ()>>
    where
        P: FnMut(Pin<&mut F>, &mut Context<'_>) -> Poll<Result<T, E>>,
    {
        if self.progress.is_failed() {
            // A panic came after the failure, before the error was returned.
            return Poll::Ready(Err(()));
        }
        let running = self.progress.running();
        if running == 0 {
            return Poll::Ready(Ok(None));
        }
        if !coop::may_proceed(cx) {
            return Poll::Pending;
        }
        let len = self.inputs.len();
        let task_passes = if len <= SMALL { 2 } else { 1 };
        if self.progress.task_passes() < task_passes {
            self.progress.add_task_pass();
            if running as usize == len {
                return self.poll_every_input(cx, poll, in_future);
            }
            return self
                .poll_every_running(cx, poll, 0, in_future)
                .map_ok(|()| None);
        }
        if !self.inputs.is_armed() {
            self.inputs.arm(Input::is_running);
        }
        let Self {
            inputs, progress, ..
        } = self;
        let mut budget = inputs.start_round();
        loop {
            if progress.running() == 0 {
                return Poll::Ready(Ok(None));
            }
            // Counts a finished input as it finishes (see `poll_input`): a panic later in the
            // round (a future's drop, the task's waker) leaves the count true.
            let mut poll_slot =
                |_, mut slot: Pin<&mut Input<F, T, E>>, cx: &mut Context<'_>| match poll_input(
                    slot.as_mut(),
                    cx,
                    poll,
                    progress,
                    in_future,
                ) {
                    InputPoll::Pending => Step::Pending,
                    InputPoll::Output(out) => {
                        slot.finish(out);
                        // Without tokio's budget to spend, the round goes on past a finished
                        // input, up to the last one.
                        if coop::ENABLED || progress.running() == 0 {
                            Step::Keep(Ok(()))
                        } else {
                            Step::Settled
                        }
                    }
                    InputPoll::Failed => Step::Keep(Err(())),
                };
            match inputs.poll_with_budget(cx, &mut budget, &mut poll_slot) {
                Poll::Ready(Some((_, Ok(())))) => {
                    if !coop::spend(cx) && progress.running() != 0 {
                        return Poll::Pending;
                    }
                }
                Poll::Ready(Some((_, Err(())))) => return Poll::Ready(Err(())),
                Poll::Ready(None) => unreachable!("a join arena never ends"),
                Poll::Pending => return Poll::Pending,
            }
        }
    }

    /// Polls every input once with the task's waker, when all are running: each output goes
    /// straight to its place in the output `Vec` while every future before it has finished
    /// (which leaves nothing to move when they all do); from the first future that does not
    /// finish on, as [`poll_every_running`](Self::poll_every_running).
    #[inline]
    fn poll_every_input<P>(
        &mut self,
        cx: &mut Context<'_>,
        poll: &mut P,
        in_future: &mut bool,
    ) -> Poll<Result<Option<Vec<T>>, ()>>
    where
        P: FnMut(Pin<&mut F>, &mut Context<'_>) -> Poll<Result<T, E>>,
    {
        let Self {
            inputs, progress, ..
        } = self;
        // Set once an output finds tokio's budget spent: the pass stops before the next input.
        let mut spent = false;
        // A future's drop that panics here finds the outputs taken so far put back in their
        // slots, its own in its slot, and each counted already: the join stays consistent.
        let filled = inputs.fill_in_place(
            |slot| {
                if spent {
                    return Err(Halt::Spent);
                }
                match poll_input(slot, cx, poll, progress, in_future) {
                    InputPoll::Output(out) => {
                        spent = !coop::spend(cx);
                        Ok(out)
                    }
                    InputPoll::Pending => Err(Halt::Pending),
                    InputPoll::Failed => Err(Halt::Failed),
                }
            },
            Input::Done,
        );
        match filled {
            Filled::All(outputs) => {
                self.progress.terminate(outputs.len());
                Poll::Ready(Ok(Some(outputs)))
            }
            Filled::Stopped {
                reason: Halt::Failed,
                ..
            } => Poll::Ready(Err(())),
            // The futures from `at` on are polled by the next poll, which tokio's wake brings.
            Filled::Stopped {
                reason: Halt::Spent,
                ..
            } => Poll::Pending,
            // Inputs `0..at` finished, `at` is pending.
            Filled::Stopped {
                at,
                reason: Halt::Pending,
            } => self
                .poll_every_running(cx, poll, at + 1, in_future)
                .map_ok(|()| None),
            Filled::Unfit => self
                .poll_every_running(cx, poll, 0, in_future)
                .map_ok(|()| None),
        }
    }

    /// Polls every running future from input `start` on once with the task's waker, lent
    /// through [`with_noted_wakes`]: the futures that yield in the pass wake the task once
    /// after it, not once each (and not at all if the pass completes the join).
    #[inline(always)]
    fn poll_every_running<P>(
        &mut self,
        cx: &mut Context<'_>,
        poll: &mut P,
        start: usize,
        in_future: &mut bool,
    ) -> Poll<Result<(), ()>>
    where
        P: FnMut(Pin<&mut F>, &mut Context<'_>) -> Poll<Result<T, E>>,
    {
        let Self {
            inputs, progress, ..
        } = self;
        // `move`: the pass owns its borrows. The running count is kept up to date in the pass
        // (see `poll_input`): a panic of a future's drop, or of the task's waker in the wake
        // after the pass, leaves the join as it was.
        with_noted_wakes(cx, move |cx| {
            for mut slot in inputs.iter_pin_mut_from(start) {
                if !slot.as_mut().is_running() {
                    continue;
                }
                match poll_input(slot.as_mut(), cx, poll, progress, in_future) {
                    InputPoll::Pending => {}
                    InputPoll::Output(out) => {
                        slot.finish(out);
                        if !coop::spend(cx) {
                            // The futures not polled yet are polled by the next poll, which
                            // tokio's wake brings.
                            break;
                        }
                    }
                    InputPoll::Failed => return Poll::Ready(Err(())),
                }
            }
            if progress.running() == 0 {
                Poll::Ready(Ok(()))
            } else {
                // Every running future holds the task's waker: the next wake of any polls
                // again.
                Poll::Pending
            }
        })
    }

    /// Moves every output out, in input order, into a `Vec` (in the inputs' own storage when
    /// the layouts allow), and terminates the join. If dropping the wake table panics (the
    /// task's waker it holds), the outputs stay where they are, and the next poll takes them.
    #[inline]
    fn take_outputs(&mut self) -> Vec<T> {
        let outputs = self.inputs.take_vec_with(|slot| {
            Input::take_output(slot)
                .unwrap_or_else(|| unreachable!("a finished join lacks an output"))
        });
        self.progress.terminate(outputs.len());
        outputs
    }

    /// Drops every future and every kept output now but the error a failed input keeps, then
    /// moves the error out and terminates the join. If a `Drop` panics, the others are dropped
    /// all the same, and the first panic goes on with the error still kept: the next poll
    /// returns it.
    #[cold]
    fn take_error(&mut self) -> E {
        if let Err(panic) =
            unwind::each_despite_panics(self.inputs.iter_pin_mut(), Input::clear_unless_failed)
        {
            unwind::resume(panic);
        }
        let err = self
            .inputs
            .iter_pin_mut()
            .find_map(Input::take_error)
            .unwrap_or_else(|| unreachable!("a failed join lacks its error"));
        self.progress.terminate(self.inputs.len());
        err
    }

    /// Drops every future and every kept output now, and terminates the join. If a `Drop`
    /// panics, the others are dropped all the same, and the first panic is returned (see
    /// `pinfold_arena::unwind`).
    fn cancel(&mut self) -> Result<(), Panic> {
        self.progress.terminate(self.inputs.len());
        unwind::each_despite_panics(self.inputs.iter_pin_mut(), Input::clear)
    }
}
