//! `FutureMap`: futures keyed by the user's keys.

use core::borrow::Borrow;
use core::fmt;
use core::future::Future;
use core::hash::{BuildHasher, Hash};
use core::pin::Pin;
use core::task::{Context, Poll};

use futures_core::{FusedStream, Stream};

use crate::{Core, DefaultHashBuilder, Polled};

/// Futures keyed by the user's keys; a [`Stream`] of `(key, output)` in the order the futures
/// finish. See the [crate documentation](crate).
///
/// A future leaves the map when it finishes (its key with it), when it is removed, or when
/// another is inserted under its key. `Unpin` whatever `F` is; `Send` if `K`, `F` and `H` are;
/// `Sync` if `K` and `H` are `Sync` and `F` is `Send + Sync`. Keys are hashed by `H`, the
/// [`DefaultHashBuilder`] unless the map was made with a hasher of its own
/// ([`with_hasher`](Self::with_hasher)).
pub struct FutureMap<K, F, H = DefaultHashBuilder> {
    core: Core<K, F, H>,
}

crate::shared!(FutureMap, F, "future");

impl<K: Hash + Eq + Clone, F: Future, H: BuildHasher> Stream for FutureMap<K, F, H> {
    type Item = (K, F::Output);

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.get_mut()
            .core
            .poll_next(cx, |future, cx| match future.poll(cx) {
                Poll::Ready(out) => Polled::Last(out),
                Poll::Pending => Polled::Pending,
            })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.len(), Some(self.len()))
    }
}

impl<K: Hash + Eq + Clone, F: Future, H: BuildHasher> FusedStream for FutureMap<K, F, H> {
    fn is_terminated(&self) -> bool {
        self.core.terminated
    }
}
