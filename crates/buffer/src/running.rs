//! The machinery both adapters share: the source stream, and the arena of futures pulled from
//! it and running.

use core::pin::Pin;
use core::task::{Context, Poll};

use futures_core::Stream;
use pin_project::pin_project;
use pinfold_arena::{Arena, Budget, Key, Step, Storage};

use crate::limit::sealed::Sealed as _;
use crate::limit::{Fixed, Seat, Steered, Steering};

/// The source of futures and the futures running, at most `concurrency` of them (the arena's
/// capacity), and fewer while a [`Limit`] of its [`Steering`] says so.
#[pin_project]
pub(crate) struct Running<St, T, S = Fixed> {
    #[pin]
    source: St,
    /// The source returned `None`: it is not polled again.
    source_done: bool,
    arena: Arena<T>,
    /// The handles that set the concurrency and the window while the buffer runs, if any.
    steering: S,
}

impl<St: Stream, T> Running<St, T> {
    /// Room for `concurrency` running futures; allocates the arena now.
    ///
    /// # Panics
    /// If `concurrency` is more than `(u32::MAX - 1) / 2`, at the adapter's caller.
    #[track_caller]
    pub(crate) fn new(source: St, concurrency: usize) -> Self {
        Self {
            source,
            source_done: false,
            arena: Arena::new(concurrency),
            steering: Fixed,
        }
    }
}

impl<St: Stream, T, S: Steering> Running<St, T, S> {
    /// The same, with handles changed by `steer`.
    #[track_caller]
    pub(crate) fn steer(self, steer: impl FnOnce(Steered) -> Steered) -> Running<St, T, Steered> {
        let mut steering = steer(self.steering.steered());
        // A limit given to a buffer already running counts its futures.
        steering.hold(self.arena.len());
        Running {
            source: self.source,
            source_done: self.source_done,
            arena: self.arena,
            steering,
        }
    }

    /// The seat on the window's handle, if one was given.
    pub(crate) fn window_limit(&self) -> Option<&Seat> {
        self.steering.window()
    }

    /// How many futures may run now: the concurrency, or the limit if it is lower.
    pub(crate) fn current_limit(&self) -> usize {
        let capacity = self.arena.capacity();
        self.steering
            .concurrency()
            .map_or(capacity, |limit| limit.get().min(capacity))
    }

    /// How many futures run now.
    pub(crate) fn len(&self) -> usize {
        self.arena.len()
    }

    /// How many futures the arena holds at most: the capacity, whatever the limit.
    pub(crate) fn concurrency(&self) -> usize {
        self.arena.capacity()
    }

    /// Lowers the concurrency to `concurrency` if nothing runs yet, reallocating the arena.
    pub(crate) fn lower_concurrency(&mut self, concurrency: usize) {
        if concurrency < self.arena.capacity() && self.arena.is_empty() {
            self.arena = Arena::new(concurrency);
        }
    }

    /// Whether the source has ended.
    pub(crate) fn source_done(&self) -> bool {
        self.source_done
    }

    pub(crate) fn source(&self) -> &St {
        &self.source
    }

    pub(crate) fn source_mut(&mut self) -> &mut St {
        &mut self.source
    }

    pub(crate) fn source_pin_mut(self: Pin<&mut Self>) -> Pin<&mut St> {
        self.project().source
    }

    pub(crate) fn into_source(self) -> St {
        self.source
    }

    /// The source's size hint, `(0, Some(0))` once it has ended.
    pub(crate) fn source_size_hint(&self) -> (usize, Option<usize>) {
        if self.source_done {
            (0, Some(0))
        } else {
            self.source.size_hint()
        }
    }

    /// Starts one poll of the adapter: a round of the arena, whose budget every
    /// [`poll_output`](Self::poll_output) of this poll shares.
    pub(crate) fn begin_poll(self: Pin<&mut Self>) -> Budget {
        self.project().arena.start_round()
    }

    /// Takes what `take` gets out of the value of `key`, if it is still there and `take` gets
    /// something; the value is then dropped and its slot freed.
    pub(crate) fn take_with<R>(
        self: Pin<&mut Self>,
        key: Key,
        take: impl FnOnce(Pin<&mut T>) -> Option<R>,
    ) -> Option<R> {
        let this = self.project();
        let out = take(this.arena.get_pin_mut(key)?)?;
        this.arena.remove(key);
        this.steering.settle(this.arena.len());
        Some(out)
    }

    /// Pulls futures from the source into free slots, at most `room` of them, each made into
    /// what the arena stores by `start`. Stops when the arena is full or the limit reached (a
    /// raise of the limit, or a unit given back, wakes the task), the source is `Pending` (it
    /// will wake the task) or has ended.
    ///
    /// A unit of a shared limit is taken for one future at a time, just before the source is
    /// polled for it: a buffer whose source is `Pending` takes one unit and gives it back, not
    /// every unit free, so it does not wake the other buffers that wait for units (which would
    /// do the same to it, for ever, while both sources stall).
    ///
    /// Most calls find the arena full (a buffer at its concurrency refills one slot per
    /// output) or the source ended: that is tested here, inlined where the buffer polls, so
    /// such a call costs no call (`unordered_selfwake_100k_c64`, instructions).
    #[inline]
    pub(crate) fn refill(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        room: usize,
        start: impl FnMut(St::Item) -> T,
    ) {
        if room == 0 || self.source_done || self.arena.is_full() {
            return;
        }
        self.refill_from_source(cx, room, start);
    }

    /// [`refill`](Self::refill) once there may be something to do.
    fn refill_from_source(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        mut room: usize,
        mut start: impl FnMut(St::Item) -> T,
    ) {
        let this = self.project();
        let mut source = this.source;
        let running = Settle {
            arena: this.arena,
            steering: this.steering,
        };
        while room > 0 && !*this.source_done && !running.arena.is_full() {
            if running.steering.room(running.arena.len(), 1, cx) == 0 {
                break;
            }
            match source.as_mut().poll_next(cx) {
                Poll::Ready(Some(fut)) => {
                    if running.arena.insert(start(fut)).is_err() {
                        unreachable!("the arena had a free slot");
                    }
                    room -= 1;
                }
                Poll::Ready(None) => *this.source_done = true,
                Poll::Pending => break,
            }
        }
        // `running` dropped: the unit taken for a future the source did not give goes back.
    }

    /// Polls the running futures that were woken, until one gives an output.
    ///
    /// `Ready(None)` means that nothing runs. `Pending` means that every woken future was
    /// polled (the task is woken when another one is) or that `budget` is spent (the task has
    /// been woken already, to let others run). A budget is shared by the calls of one poll of
    /// the adapter, so that each future is polled at most once in it.
    pub(crate) fn poll_output<R>(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        budget: &mut Budget,
        poll: &mut impl FnMut(Key, Pin<&mut T>, &mut Context<'_>) -> Step<R>,
    ) -> Poll<Option<R>> {
        let this = self.project();
        if !S::STEERED {
            return this
                .arena
                .poll_with_budget(cx, budget, poll)
                .map(|polled| polled.map(|(_, out)| out));
        }
        let running = Settle {
            arena: this.arena,
            steering: this.steering,
        };
        let polled = running.arena.poll_with_budget(cx, budget, poll);
        // The finished future's unit goes back, for the other buffers of a shared limit (as
        // `running` is dropped, also if a future's poll or `Drop` panicked).
        drop(running);
        polled.map(|polled| polled.map(|(_, out)| out))
    }
}

/// The arena and the steering of a [`Running`], which settles the steering with what the arena
/// holds when dropped: also while a panic unwinds, when a future whose poll or `Drop` panicked
/// is gone from the arena, or a source panicked as it was polled for the future a unit was
/// taken for. So a panic leaves no unit of a shared limit held for a future that is not there.
struct Settle<'a, T, S: Steering> {
    arena: &'a mut Arena<T>,
    steering: &'a mut S,
}

impl<T, S: Steering> Drop for Settle<'_, T, S> {
    fn drop(&mut self) {
        self.steering.settle(self.arena.len());
    }
}
