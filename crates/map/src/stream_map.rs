//! `StreamMap`: streams keyed by the user's keys.

use core::borrow::Borrow;
use core::fmt;
use core::hash::{BuildHasher, Hash};
use core::pin::Pin;
use core::task::{Context, Poll};

use futures_core::{FusedStream, Stream};

use crate::{Core, DefaultHashBuilder, Polled};

/// Streams keyed by the user's keys, merged into one [`Stream`] of `(key, item)`. See the
/// [crate documentation](crate).
///
/// A stream that ends is dropped at once and its key removed, before the next item is returned;
/// a stream also leaves when it is removed or another is inserted under its key. Items of one
/// stream come in its order. `Unpin` whatever `S` is; `Send` if `K`, `S` and `H` are; `Sync` if
/// `K` and `H` are `Sync` and `S` is `Send + Sync`. Keys are hashed by `H`, the
/// [`DefaultHashBuilder`] unless the map was made with a hasher of its own
/// ([`with_hasher`](Self::with_hasher)).
pub struct StreamMap<K, S, H = DefaultHashBuilder> {
    core: Core<K, S, H>,
}

crate::shared!(StreamMap, S, "stream");

impl<K: Hash + Eq + Clone, S: Stream, H: BuildHasher> Stream for StreamMap<K, S, H> {
    type Item = (K, S::Item);

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.get_mut()
            .core
            .poll_next(cx, |stream, cx| match stream.poll_next(cx) {
                Poll::Ready(Some(item)) => Polled::Item(item),
                Poll::Ready(None) => Polled::End,
                Poll::Pending => Polled::Pending,
            })
    }

    /// The sum of the streams' hints (this looks at every stream).
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.iter().fold((0, Some(0)), |(low, high), (_, stream)| {
            let (stream_low, stream_high) = stream.size_hint();
            let high = match (high, stream_high) {
                (Some(high), Some(stream_high)) => high.checked_add(stream_high),
                _ => None,
            };
            (low.saturating_add(stream_low), high)
        })
    }
}

impl<K: Hash + Eq + Clone, S: Stream, H: BuildHasher> FusedStream for StreamMap<K, S, H> {
    fn is_terminated(&self) -> bool {
        self.core.terminated
    }
}
