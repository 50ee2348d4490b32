//! [`Keep`]: an output held through the refill that follows it, which goes to its adapter if
//! that refill unwinds (the source's panic, or the task waker's), for the adapter's next call.

use core::pin::Pin;

/// An adapter that keeps an output as the refill after it unwinds (see [`Keep`]).
pub(crate) trait KeepOnUnwind {
    type Output;
    /// Keeps `out` for the next call.
    fn keep_on_unwind(self: Pin<&mut Self>, out: Self::Output);
}

/// An output held through an adapter's refill: if the refill unwinds, it goes to the adapter.
pub(crate) struct Keep<'a, A: KeepOnUnwind> {
    adapter: Pin<&'a mut A>,
    out: Option<A::Output>,
}

impl<'a, A: KeepOnUnwind> Keep<'a, A> {
    /// Holds `out` while `refill` runs on `adapter`, and gives it back once `refill` returns.
    #[inline(always)]
    pub(crate) fn through(
        adapter: Pin<&'a mut A>,
        out: A::Output,
        refill: impl FnOnce(Pin<&mut A>),
    ) -> A::Output {
        let mut keep = Self {
            adapter,
            out: Some(out),
        };
        refill(keep.adapter.as_mut());
        keep.out
            .take()
            .expect("the output is held until the refill returns")
    }

    /// The output to the adapter, as the refill unwinds: out of the way of the refill that
    /// returns (`unordered_selfwake_100k_c64`, instructions).
    #[cold]
    #[inline(never)]
    fn keep(&mut self) {
        if let Some(out) = self.out.take() {
            self.adapter.as_mut().keep_on_unwind(out);
        }
    }
}

impl<A: KeepOnUnwind> Drop for Keep<'_, A> {
    #[inline(always)]
    fn drop(&mut self) {
        if self.out.is_some() {
            self.keep();
        }
    }
}
