//! The primitives as the random programs drive them (the lockstep driver of
//! `tests/differential.rs`, the fault driver of `tests/faults.rs`): each set or stream buffer
//! behind one [`Subject`] trait, pinfold's and `futures-util`'s alike.

use std::fmt;
use std::pin::Pin;
use std::task::{Context, Poll};

use crate::ctl::{Ctl, Out};
use crate::source::{SourceHandle, source};
use futures_core::Stream;
use futures_util::stream::poll_fn;

/// One implementation of a set or buffer, as the program drives it.
// `len` is `None` for a buffer, which has no length of its own: an `is_empty` would say
// nothing there.
#[allow(clippy::len_without_is_empty)]
pub trait Subject: fmt::Debug {
    /// Adds a future (sends it into the source); gives it back if the set is full.
    fn push(&mut self, fut: Ctl<Out>) -> Result<(), Ctl<Out>>;
    /// The stream's `poll_next`.
    fn poll_next(&mut self, cx: &mut Context<'_>) -> Poll<Option<Out>>;
    /// `clear()` a set; end a buffer's source.
    fn clear(&mut self);
    /// How many futures a set holds (`None` for a buffer).
    fn len(&self) -> Option<usize>;
    /// A buffer's source.
    fn source(&self) -> Option<&SourceHandle<Ctl<Out>>> {
        None
    }
}

impl Subject for pinfold_unordered::FuturesUnorderedBounded<Ctl<Out>> {
    fn push(&mut self, fut: Ctl<Out>) -> Result<(), Ctl<Out>> {
        self.try_push(fut)
    }
    fn poll_next(&mut self, cx: &mut Context<'_>) -> Poll<Option<Out>> {
        Pin::new(self).poll_next(cx)
    }
    fn clear(&mut self) {
        (**self).clear();
    }
    fn len(&self) -> Option<usize> {
        Some((**self).len())
    }
}

impl Subject for pinfold_unordered::FuturesUnordered<Ctl<Out>> {
    fn push(&mut self, fut: Ctl<Out>) -> Result<(), Ctl<Out>> {
        (**self).push(fut);
        Ok(())
    }
    fn poll_next(&mut self, cx: &mut Context<'_>) -> Poll<Option<Out>> {
        Pin::new(self).poll_next(cx)
    }
    fn clear(&mut self) {
        (**self).clear();
    }
    fn len(&self) -> Option<usize> {
        Some((**self).len())
    }
}

impl Subject for futures_util::stream::FuturesUnordered<Ctl<Out>> {
    fn push(&mut self, fut: Ctl<Out>) -> Result<(), Ctl<Out>> {
        futures_util::stream::FuturesUnordered::push(self, fut);
        Ok(())
    }
    fn poll_next(&mut self, cx: &mut Context<'_>) -> Poll<Option<Out>> {
        Pin::new(self).poll_next(cx)
    }
    fn clear(&mut self) {
        futures_util::stream::FuturesUnordered::clear(self);
    }
    fn len(&self) -> Option<usize> {
        Some(futures_util::stream::FuturesUnordered::len(self))
    }
}

/// A stream buffer over a hand-fed [`source`].
pub struct Buffer {
    source: SourceHandle<Ctl<Out>>,
    stream: Pin<Box<dyn Stream<Item = Out>>>,
}

impl Buffer {
    /// A buffer made by `adapt` over a new, open source.
    pub fn boxed<S>(
        adapt: impl FnOnce(Pin<Box<dyn Stream<Item = Ctl<Out>>>>) -> S,
    ) -> Box<dyn Subject>
    where
        S: Stream<Item = Out> + 'static,
    {
        let (handle, mut pull) = source();
        let source: Pin<Box<dyn Stream<Item = Ctl<Out>>>> =
            Box::pin(poll_fn(move |cx| pull.poll_pull(cx)));
        Box::new(Self {
            source: handle,
            stream: Box::pin(adapt(source)),
        })
    }
}

impl fmt::Debug for Buffer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Buffer")
            .field("source", &self.source)
            .finish_non_exhaustive()
    }
}

impl Subject for Buffer {
    fn push(&mut self, fut: Ctl<Out>) -> Result<(), Ctl<Out>> {
        if self.source.is_ended() {
            return Err(fut);
        }
        self.source.push(fut);
        Ok(())
    }
    fn poll_next(&mut self, cx: &mut Context<'_>) -> Poll<Option<Out>> {
        self.stream.as_mut().poll_next(cx)
    }
    fn clear(&mut self) {
        self.source.end();
    }
    fn len(&self) -> Option<usize> {
        None
    }
    fn source(&self) -> Option<&SourceHandle<Ctl<Out>>> {
        Some(&self.source)
    }
}
