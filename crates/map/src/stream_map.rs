//! [`StreamMap`]: streams keyed by the user's keys.

use crate::{DefaultHashBuilder, KeyedMap, Streams};
#[cfg(doc)]
use futures_core::Stream;

/// Streams keyed by the user's keys, merged into one [`Stream`] of `(key, item)`; its methods
/// are those of [`KeyedMap`]. See the [crate documentation](crate).
///
/// A stream that ends is dropped at once and its key removed, before the next item is
/// returned; a stream also leaves when it is removed or another is inserted under its key.
/// Items of one stream come in its order. `Unpin` whatever `S` is; `Send` if `K`, `S` and `H` are;
/// `Sync` if `K` and `H` are `Sync` and `S` is `Send + Sync`. Keys are hashed by `H` (see
/// [`KeyedMap`]).
pub type StreamMap<K, S, H = DefaultHashBuilder> = KeyedMap<K, S, Streams, H>;
