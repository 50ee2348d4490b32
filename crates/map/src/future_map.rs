//! [`FutureMap`]: futures keyed by the user's keys.

use crate::{DefaultHashBuilder, Futures, KeyedMap};
#[cfg(doc)]
use futures_core::Stream;

/// Futures keyed by the user's keys; a [`Stream`] of `(key, output)` in the order the futures
/// finish; its methods are those of [`KeyedMap`]. See the [crate documentation](crate).
///
/// A future leaves the map when it finishes (its key with it), when it is removed, or when
/// another is inserted under its key. `Unpin` whatever `F` is; `Send` if `K`, `F` and `H` are;
/// `Sync` if `K` and `H` are `Sync` and `F` is `Send + Sync`. Keys are hashed by `H` (see
/// [`KeyedMap`]).
pub type FutureMap<K, F, H = DefaultHashBuilder> = KeyedMap<K, F, Futures, H>;
