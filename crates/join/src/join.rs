//! The state [`JoinAll`](crate::JoinAll) and [`TryJoinAll`](crate::TryJoinAll) share: the input
//! futures in a [`Fixed`] arena indexed by input position, how many still run, and whether the
//! join has completed.

use core::fmt;
use core::mem::MaybeUninit;
use core::pin::Pin;
use core::task::{Context, Poll};

use pinfold_arena::unwind::{self, Panic};
use pinfold_arena::{Filled, Fixed, Step, with_noted_wakes};

use crate::slot::Slot;
use alloc::vec::Vec;

/// Joins of at most this many futures poll every running future with the task's own waker in
/// their first two polls; larger joins in their first poll only (see the crate docs, *Polls*).
pub(crate) const SMALL: usize = 32;

/// Cancels the join it holds when dropped while one of its futures' poll or drop is running,
/// which only an unwinding poll or drop leaves behind.
struct CancelOnUnwind<'a, F, T> {
    join: &'a mut Join<F, T>,
    /// Set while a future's poll or drop runs: a panic caught with it set is the future's; one
    /// caught without it came from the task's waker (its registration or a yield), and leaves
    /// the join as it was. Kept here, not in the join, so that making a join does not write it.
    in_future: bool,
}

impl<F, T> Drop for CancelOnUnwind<'_, F, T> {
    fn drop(&mut self) {
        if self.in_future {
            // A drop's panic here is caught by `cancel` and dropped (without `std`, it aborts,
            // as a second panic does): the future's goes on.
            let _ = self.join.cancel();
        }
    }
}

/// How far a join has come, in one word: how many inputs still run (the low 32 bits), how many
/// polls have polled every running input with the task's waker (the next 8), and whether the
/// join has completed (returned `Ready`, or let a future's panic through); once it has, the low
/// bits say how many futures it joined (its storage is gone by then).
///
/// One word, because a join is moved as soon as it is made (into the caller's future, into an
/// executor), and the move reads it back in 16-byte pieces: a piece that holds bytes of a
/// write still in the processor's store buffer, but not only that one write's, waits for the
/// write to reach the cache (a store-forwarding stall), and narrow fields make more such
/// pieces. Making a join writes its storage's `Vec`, the arena's empty wake-table marker and
/// this word, nothing else.
#[derive(Clone, Copy)]
struct Progress(u64);

impl Progress {
    const RUNNING: u64 = u32::MAX as u64;
    const PASS: u64 = 1 << 32;
    const PASSES: u64 = 0xff << 32;
    const TERMINATED: u64 = 1 << 40;

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
/// value for `try_join_all`).
// `repr(C)` and the gap put `progress` in the join's last 8 bytes, after a whole number of 16
// bytes: a move copies the join in 16-byte pieces from its start and the rest in smaller ones,
// so the word is read back by a load of its own, which the store that wrote it forwards.
// Sharing a 16-byte piece with bytes not written by that store, it would stall every move of
// a new join (perf on the join benchmarks' driver: 44% of the move's samples on that load).
#[repr(C)]
pub(crate) struct Join<F, T> {
    /// Input `i` at index `i`; emptied when the join completes.
    inputs: Fixed<Slot<F, T>>,
    /// Never written (see above).
    _gap: [MaybeUninit<u8>; GAP],
    progress: Progress,
}

/// The bytes between a join's inputs and its `progress` that fill the inputs' last 16-byte
/// piece (a `Fixed`'s size does not depend on what it holds).
const GAP: usize = (16 - size_of::<Fixed<()>>() % 16) % 16;

impl<F, T> Join<F, T> {
    /// Stores every future of `iter` in order: one allocation when the iterator's `size_hint`
    /// is exact (what `collect` costs otherwise).
    #[inline]
    pub(crate) fn new<I: Iterator<Item = F>>(iter: I) -> Self {
        let inputs = Fixed::new(iter.map(Slot::Running));
        let len = u32::try_from(inputs.len()).expect("a fixed arena holds fewer than u32::MAX");
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
    /// every other future and every kept output. A panic in a future drops all the others and
    /// kept outputs before it propagates. In each case the join is terminated.
    ///
    /// # Panics
    /// If the join is terminated, with the message "`{name}` polled after completion"; and with
    /// a future's panic.
    // Inlined, with `poll_futures` and `take_outputs`, into the caller's poll: the output
    // `Vec` then reaches the caller in registers, not written to memory and read straight back
    // (wider than written, which stalls): it took a join of two ready futures from 43 to 30 ns.
    #[inline]
    pub(crate) fn poll<E, P>(
        &mut self,
        cx: &mut Context<'_>,
        name: &str,
        poll: P,
    ) -> Poll<Result<Vec<T>, E>>
    where
        P: FnMut(Pin<&mut F>, &mut Context<'_>) -> Poll<Result<T, E>>,
    {
        assert!(
            !self.progress.is_terminated(),
            "{name} polled after completion"
        );
        // The join's output spends a unit of tokio's budget (with the `tokio-coop` feature).
        pinfold_arena::coop::poll_once(cx, |cx| self.poll_futures(cx, poll))
    }

    /// [`poll`](Self::poll) without tokio's budget.
    #[inline]
    fn poll_futures<E, P>(&mut self, cx: &mut Context<'_>, mut poll: P) -> Poll<Result<Vec<T>, E>>
    where
        P: FnMut(Pin<&mut F>, &mut Context<'_>) -> Poll<Result<T, E>>,
    {
        // If a future's poll or drop unwinds, the guard drops every other future and output
        // on the way out (the future's panic is the one that goes on); a panic of the task's
        // waker (its registration or a yield) leaves the join as it was.
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
            Poll::Ready(Err(err)) => {
                if let Err(panic) = join.cancel() {
                    unwind::resume(panic);
                }
                Poll::Ready(Err(err))
            }
        }
    }

    /// `Ready(Ok)` once every future has finished (with the outputs if they are already out of
    /// the inputs, `None` if they are kept in them), `Ready(Err)` at the first error, `Pending`
    /// otherwise. The first poll (the first two for a join of at most [`SMALL`] futures) polls
    /// every running future once with the task's waker; the next arms the inputs' own wakers
    /// and polls every running future once with its own; after that, only woken futures are
    /// polled, fairly (at most once each per poll, yielding after as many polls as futures
    /// run, or after two futures woke themselves).
    #[inline(always)]
    fn drive<E, P>(
        &mut self,
        cx: &mut Context<'_>,
        poll: &mut P,
        in_future: &mut bool,
    ) -> Poll<Result<Option<Vec<T>>, E>>
    where
        P: FnMut(Pin<&mut F>, &mut Context<'_>) -> Poll<Result<T, E>>,
    {
        let running = self.progress.running();
        if running == 0 {
            return Poll::Ready(Ok(None));
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
            self.inputs.arm(Slot::is_running);
        }
        let Self {
            inputs, progress, ..
        } = self;
        let mut budget = inputs.budget();
        let mut poll_slot = |_, slot: Pin<&mut Slot<F, T>>, cx: &mut Context<'_>| {
            *in_future = true;
            let step = slot.poll(cx, poll);
            *in_future = false;
            step
        };
        // Counted in a local, written back once: a panic out of the loop terminates the join.
        let before = progress.running();
        let mut running = before;
        let polled = loop {
            if running == 0 {
                break Poll::Ready(Ok(None));
            }
            match inputs.poll_with_budget(cx, &mut budget, &mut poll_slot) {
                Poll::Ready(Some((_, Ok(())))) => running -= 1,
                Poll::Ready(Some((_, Err(err)))) => break Poll::Ready(Err(err)),
                Poll::Ready(None) => unreachable!("a fixed arena never ends"),
                Poll::Pending => break Poll::Pending,
            }
        };
        progress.finished(before - running);
        polled
    }

    /// Polls every input once with the task's waker, when all are running: each output goes
    /// straight to its place in the output `Vec` while every future before it has finished
    /// (which leaves nothing to move when they all do); from the first future that does not
    /// finish on, as [`poll_every_running`](Self::poll_every_running).
    #[inline]
    fn poll_every_input<E, P>(
        &mut self,
        cx: &mut Context<'_>,
        poll: &mut P,
        in_future: &mut bool,
    ) -> Poll<Result<Option<Vec<T>>, E>>
    where
        P: FnMut(Pin<&mut F>, &mut Context<'_>) -> Poll<Result<T, E>>,
    {
        // Set across the pass: only a future's poll or drop can unwind out of it (the outputs
        // taken so far are put back in their slots first).
        *in_future = true;
        let filled = self
            .inputs
            .fill_in_place(|slot| slot.poll_output(cx, poll), Slot::Done);
        *in_future = false;
        match filled {
            Filled::All(outputs) => {
                self.progress.terminate(outputs.len());
                Poll::Ready(Ok(Some(outputs)))
            }
            Filled::Stopped {
                reason: Some(err), ..
            } => Poll::Ready(Err(err)),
            Filled::Stopped { at, reason: None } => {
                // Inputs `0..at` finished, `at` is pending.
                self.progress.finished(at as u32);
                self.poll_every_running(cx, poll, at + 1, in_future)
                    .map_ok(|()| None)
            }
            Filled::Unfit => self
                .poll_every_running(cx, poll, 0, in_future)
                .map_ok(|()| None),
        }
    }

    /// Polls every running future from input `start` on once with the task's waker, lent
    /// through [`with_noted_wakes`]: the futures that yield in the pass wake the task once
    /// after it, not once each.
    #[inline(always)]
    fn poll_every_running<E, P>(
        &mut self,
        cx: &mut Context<'_>,
        poll: &mut P,
        start: usize,
        in_future: &mut bool,
    ) -> Poll<Result<(), E>>
    where
        P: FnMut(Pin<&mut F>, &mut Context<'_>) -> Poll<Result<T, E>>,
    {
        let Self {
            inputs, progress, ..
        } = self;
        // `move`: the pass owns its borrows. The running count is kept up to date in the pass,
        // before the noted wake goes out: a panic of the task's waker then leaves the join as
        // it was.
        let passed = with_noted_wakes(cx, move |cx| {
            // Set across the loop: only a future's poll or drop can unwind out of it.
            *in_future = true;
            for mut slot in inputs.iter_pin_mut_from(start) {
                if !slot.as_mut().is_running() {
                    continue;
                }
                match slot.poll(cx, poll) {
                    Step::Keep(Ok(())) => progress.finished(1),
                    Step::Done(Err(err)) | Step::Keep(Err(err)) | Step::Repoll(Err(err)) => {
                        *in_future = false;
                        return Err(err);
                    }
                    Step::Pending | Step::Done(Ok(())) | Step::Repoll(Ok(())) => {}
                }
            }
            *in_future = false;
            Ok(progress.running() == 0)
        });
        match passed {
            Err(err) => Poll::Ready(Err(err)),
            Ok(true) => Poll::Ready(Ok(())),
            // Every running future holds the task's waker: the next wake of any polls again.
            Ok(false) => Poll::Pending,
        }
    }

    /// Moves every output out, in input order, into a `Vec` (in the inputs' own storage when
    /// the layouts allow), and terminates the join.
    #[inline]
    fn take_outputs(&mut self) -> Vec<T> {
        self.progress.terminate(self.inputs.len());
        self.inputs.take_vec_with(|slot| {
            Slot::take_output(slot)
                .unwrap_or_else(|| unreachable!("a finished join lacks an output"))
        })
    }

    /// Drops every future and every kept output now, and terminates the join. If a `Drop`
    /// panics, the others are dropped all the same, and the first panic is returned (see
    /// `pinfold_arena::unwind`).
    fn cancel(&mut self) -> Result<(), Panic> {
        self.progress.terminate(self.inputs.len());
        unwind::each_despite_panics(self.inputs.iter_pin_mut(), Slot::clear)
    }
}
