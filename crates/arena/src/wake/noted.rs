//! A context whose waker notes wakes and passes them on to the task once.
//!
//! A join polls its futures with the task's own waker until it arms wakers of their own (see
//! [`JoinArena`](crate::JoinArena)). A future that yields (wakes its waker and returns
//! `Pending`) then wakes the task itself, and a pass over ten such futures wakes it ten times:
//! under futures-executor's `block_on` each wake is an atomic swap on the thread's notifier.
//! [`with_noted_wakes`] runs the pass with a waker that only notes a wake, and wakes the task
//! once after the pass if any was noted. Guarded by `join_all_10_block_on`.

use core::mem::ManuallyDrop;
use core::sync::atomic::{AtomicBool, Ordering};
use core::task::{Context, Poll, RawWaker, RawWakerVTable, Waker};

/// What the noting waker's data points to.
struct Noted<'a> {
    /// Set by a wake; read once the pass is over.
    woken: AtomicBool,
    /// The task's waker: what a clone of the noting waker is, and what the pass's wakes reach.
    task: &'a Waker,
}

/// The noting waker's functions. Its clones are clones of the task's waker (so a waker kept
/// after the pass is the task's, and never points at the pass's stack); only the borrowed
/// waker itself has this table, so `wake` and `drop` of an owned one never run, and are
/// defined as a borrowed waker's would be.
static VTABLE: RawWakerVTable = RawWakerVTable::new(clone, wake_by_ref, wake_by_ref, drop);

/// A clone of the task's waker.
///
/// # Safety
/// `data` points to a live `Noted` (the waker's borrow in [`with_noted_wakes`] ends before the
/// `Noted` does).
unsafe fn clone(data: *const ()) -> RawWaker {
    // SAFETY: the caller's contract.
    let noted = unsafe { &*data.cast::<Noted<'_>>() };
    // Ownership of the clone passes to the `RawWaker`, dropped by its vtable's `drop`.
    let task = ManuallyDrop::new(noted.task.clone());
    RawWaker::new(task.data(), task.vtable())
}

/// Notes a wake.
///
/// # Safety
/// As [`clone`].
unsafe fn wake_by_ref(data: *const ()) {
    // SAFETY: the caller's contract.
    let noted = unsafe { &*data.cast::<Noted<'_>>() };
    // Relaxed: the flag is read by the thread that runs the pass after the pass; a wake from
    // another thread can only reach the borrowed waker within a future's poll (a scoped
    // thread, joined before the poll returns), and that join orders the store before the read.
    // Stored once, not on every wake: a load of the flag is cheaper than a store of the same
    // byte again. Guarded by `join_all_10`.
    if !noted.woken.load(Ordering::Relaxed) {
        noted.woken.store(true, Ordering::Relaxed);
    }
}

/// Nothing to drop: the waker owns nothing.
fn drop(_: *const ()) {}

/// Runs `pass` with a context whose waker notes wakes instead of passing each on, then, if the
/// pass is `Pending`, wakes `cx`'s waker once if any was noted: a pass that is `Ready` has no
/// later poll for a wake to cause, and wakes nothing (so a panic of the task's waker cannot
/// come after it). A clone of the lent waker is a clone of `cx`'s waker: a waker kept for
/// later wakes the task directly. If `pass` unwinds, the noted wakes are not passed on.
///
/// The wake after a `Pending` pass is the last thing done: if it panics, the pass is over and
/// its caller's state is as the pass left it.
#[inline]
pub fn with_noted_wakes<R>(
    cx: &mut Context<'_>,
    pass: impl FnOnce(&mut Context<'_>) -> Poll<R>,
) -> Poll<R> {
    let noted = Noted {
        woken: AtomicBool::new(false),
        task: cx.waker(),
    };
    let data: *const Noted<'_> = &noted;
    // SAFETY: the vtable's functions keep `RawWaker`'s contract for `data`, which points to
    // `noted`: `clone` gives an independent waker (the task's), `wake_by_ref` stores to an
    // atomic (callable from any thread), `wake` does the same and `drop` nothing. The waker
    // is only lent, inside `pass`, through the context, and `noted` outlives both.
    // Not dropped (its `drop` does nothing): saves the call.
    let waker = ManuallyDrop::new(unsafe { Waker::new(data.cast::<()>(), &VTABLE) });
    let mut noting = Context::from_waker(&waker);
    let out = pass(&mut noting);
    if out.is_pending() && noted.woken.load(Ordering::Relaxed) {
        noted.task.wake_by_ref();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::with_noted_wakes;
    use core::task::{Context, Poll};
    use pinfold_testkit::waker::counting_waker;

    #[test]
    fn wakes_in_the_pass_wake_the_task_once_after_it() {
        let (waker, task) = counting_waker();
        let mut cx = Context::from_waker(&waker);
        let _ = with_noted_wakes(&mut cx, |cx| {
            cx.waker().wake_by_ref();
            cx.waker().wake_by_ref();
            assert_eq!(
                task.count(),
                0,
                "a wake in the pass reached the task at once"
            );
            Poll::<()>::Pending
        });
        assert_eq!(task.count(), 1);
    }

    #[test]
    fn a_pass_that_is_ready_passes_no_wake_on() {
        let (waker, task) = counting_waker();
        let mut cx = Context::from_waker(&waker);
        let out = with_noted_wakes(&mut cx, |cx| {
            cx.waker().wake_by_ref();
            Poll::Ready(7)
        });
        assert_eq!(out, Poll::Ready(7));
        assert_eq!(task.count(), 0);
    }

    #[test]
    fn no_wake_in_the_pass_wakes_nothing() {
        let (waker, task) = counting_waker();
        let mut cx = Context::from_waker(&waker);
        assert_eq!(
            with_noted_wakes(&mut cx, |_| Poll::<u8>::Pending),
            Poll::Pending
        );
        assert_eq!(task.count(), 0);
    }

    #[test]
    fn a_clone_is_the_tasks_waker_and_wakes_it_after_the_pass() {
        let (waker, task) = counting_waker();
        let mut cx = Context::from_waker(&waker);
        let kept = with_noted_wakes(&mut cx, |cx| {
            let kept = cx.waker().clone();
            // The same data (`will_wake` compares the vtables too, whose addresses Miri
            // does not keep unique).
            assert_eq!(kept.data(), waker.data(), "a clone is not the task's waker");
            kept.wake_by_ref();
            assert_eq!(
                task.count(),
                1,
                "a clone's wake did not reach the task at once"
            );
            Poll::Ready(kept)
        });
        let Poll::Ready(kept) = kept else {
            unreachable!()
        };
        assert_eq!(task.count(), 1, "the clone's wake was passed on twice");
        kept.wake();
        assert_eq!(task.count(), 2);
    }

    #[test]
    fn a_wake_from_a_scoped_thread_in_the_pass_is_passed_on() {
        let (waker, task) = counting_waker();
        let mut cx = Context::from_waker(&waker);
        let _ = with_noted_wakes(&mut cx, |cx| {
            let lent = cx.waker();
            std::thread::scope(|s| {
                s.spawn(|| lent.wake_by_ref());
                s.spawn(|| lent.wake_by_ref());
            });
            Poll::<()>::Pending
        });
        assert_eq!(task.count(), 1);
    }
}
