//! A flag and a registered waker on one thread: what the sparse-wake workloads fire, with the
//! future and the stream that wait on it.

use core::cell::{Cell, RefCell};
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll, Waker};

use futures_core::Stream;

/// A flag the thread that polls also sets: [`fire`](LocalSignalCell::fire) sets it and wakes
/// the registered waker. Unlike [`SignalCell`](crate::SignalCell) it is neither `Send` nor
/// `Sync` (no atomic, no lock), and it can fire again once its [`LocalSignalStream`] has
/// taken the previous fire.
#[derive(Debug, Default)]
pub struct LocalSignalCell {
    fired: Cell<bool>,
    waker: RefCell<Option<Waker>>,
}

impl LocalSignalCell {
    /// A cell that has not fired.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the flag and wakes the registered waker, if there is one (which it forgets: the
    /// next poll that finds the flag clear registers again).
    pub fn fire(&self) {
        self.fired.set(true);
        let waker = self.waker.borrow_mut().take();
        if let Some(waker) = waker {
            waker.wake();
        }
    }

    /// Clears the flag and forgets the registered waker, for the next round.
    pub fn reset(&self) {
        self.fired.set(false);
        self.waker.borrow_mut().take();
    }

    /// Whether a poll registered a waker that has not been woken yet.
    pub fn is_registered(&self) -> bool {
        self.waker.borrow().is_some()
    }

    /// A future that finishes with `value` once the cell has fired.
    pub fn signal(&self, value: u64) -> LocalSignal<'_> {
        LocalSignal { cell: self, value }
    }

    /// A stream that gives `value` once for each time the cell fired, and never ends.
    pub fn stream(&self, value: u64) -> LocalSignalStream<'_> {
        LocalSignalStream { cell: self, value }
    }

    /// Takes the fire, if the cell fired; otherwise registers `cx`'s waker, unless the one
    /// registered would wake the same task.
    fn poll_take(&self, cx: &mut Context<'_>) -> Poll<()> {
        if self.fired.replace(false) {
            return Poll::Ready(());
        }
        let mut registered = self.waker.borrow_mut();
        match &*registered {
            Some(waker) if waker.will_wake(cx.waker()) => {}
            _ => *registered = Some(cx.waker().clone()),
        }
        Poll::Pending
    }
}

/// Finishes with its value once its [`LocalSignalCell`] has fired.
#[derive(Debug)]
pub struct LocalSignal<'a> {
    cell: &'a LocalSignalCell,
    value: u64,
}

impl Future for LocalSignal<'_> {
    type Output = u64;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<u64> {
        self.cell.poll_take(cx).map(|()| self.value)
    }
}

/// Gives its value once for each time its [`LocalSignalCell`] fired (fires before the stream
/// took the last one count once), is pending otherwise, and never ends.
#[derive(Debug)]
pub struct LocalSignalStream<'a> {
    cell: &'a LocalSignalCell,
    value: u64,
}

impl Stream for LocalSignalStream<'_> {
    type Item = u64;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<u64>> {
        self.cell.poll_take(cx).map(|()| Some(self.value))
    }
}
