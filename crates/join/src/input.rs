//! What one arena slot of a join holds: the input future while it runs, then its output (or,
//! for `try_join_all`, its error).

use core::pin::Pin;

use pin_project::pin_project;

/// One input of a join, in the arena slot whose index is its position in the input.
///
/// A slot starts `Running`. When its future finishes, the future is dropped in place and its
/// output kept in the same slot (`Done`), so finished outputs need no storage of their own;
/// an error is kept the same way (`Failed`) until the join returns it. When every slot is
/// `Done`, the outputs are moved out in input order and the slots left `Taken`.
#[pin_project(project = InputProj, project_replace = InputOwn)]
pub(crate) enum Input<F, T, E> {
    /// The future, still running.
    Running(#[pin] F),
    /// Its output, kept until every future has finished.
    Done(T),
    /// Its error, kept until the join returns it.
    Failed(E),
    /// The output or the error was moved out, or the future or the output dropped.
    Taken,
}

impl<F, T, E> Input<F, T, E> {
    /// The future, if it is still running. Takes the slot pinned and mutable, not shared: a
    /// shared reference covering a pending future that borrows itself would take that
    /// borrow's permission away.
    #[inline]
    pub(crate) fn running(self: Pin<&mut Self>) -> Option<Pin<&mut F>> {
        match self.project() {
            InputProj::Running(fut) => Some(fut),
            _ => None,
        }
    }

    /// Whether the future is still running.
    pub(crate) fn is_running(self: Pin<&mut Self>) -> bool {
        self.running().is_some()
    }

    /// Drops the finished future in place and keeps its output in the slot: the output is
    /// written even if that drop panics.
    #[inline]
    pub(crate) fn finish(self: Pin<&mut Self>, out: T) {
        self.project_replace(Input::Done(out));
    }

    /// Drops the failed future in place and keeps its error in the slot: the error is written
    /// even if that drop panics.
    pub(crate) fn fail(self: Pin<&mut Self>, err: E) {
        self.project_replace(Input::Failed(err));
    }

    /// Drops the future or the output in place now, leaving the slot `Taken` (even if that
    /// drop panics).
    pub(crate) fn clear(self: Pin<&mut Self>) {
        self.project_replace(Input::Taken);
    }

    /// As [`clear`](Self::clear), but keeps an error.
    pub(crate) fn clear_unless_failed(mut self: Pin<&mut Self>) {
        if !matches!(self.as_mut().project(), InputProj::Failed(_)) {
            self.clear();
        }
    }

    /// Moves the output out, leaving the slot `Taken`; `None` if the slot holds no output.
    pub(crate) fn take_output(mut self: Pin<&mut Self>) -> Option<T> {
        if !matches!(self.as_mut().project(), InputProj::Done(_)) {
            return None;
        }
        match self.project_replace(Input::Taken) {
            InputOwn::Done(out) => Some(out),
            InputOwn::Running(_) | InputOwn::Failed(_) | InputOwn::Taken => None,
        }
    }

    /// Moves the error out, leaving the slot `Taken`; `None` if the slot holds no error.
    pub(crate) fn take_error(mut self: Pin<&mut Self>) -> Option<E> {
        if !matches!(self.as_mut().project(), InputProj::Failed(_)) {
            return None;
        }
        match self.project_replace(Input::Taken) {
            InputOwn::Failed(err) => Some(err),
            InputOwn::Running(_) | InputOwn::Done(_) | InputOwn::Taken => None,
        }
    }
}
