//! [`StreamMap`]: streams keyed by the user's keys.

use crate::{DefaultHashBuilder, KeyedMap, Streams};
#[cfg(doc)]
use futures_core::Stream;

/// Streams keyed by the user's keys, merged into one [`Stream`] of `(key, item)`; its methods
/// are those of [`KeyedMap`].
///
/// Each item comes with a clone of its stream's key, and the items of one stream come in its
/// order. A stream that ends is dropped at once and its key removed, before the next item is
/// returned; a stream also leaves when it is removed or another is inserted under its key.
/// Its order, fairness, wakes, panics and memory are those every pinfold primitive keeps
/// ([the shared rules](crate#the-shared-rules)). `Unpin` whatever `S` is; `Send` if `K`, `S`
/// and `H` are; `Sync` if `K` and `H` are `Sync` and `S` is `Send + Sync`. Keys are hashed by
/// `H` (see [`KeyedMap`]).
///
/// # Example
///
/// ```
/// use futures::channel::mpsc;
/// use futures::StreamExt;
/// use pinfold::StreamMap;
///
/// # futures::executor::block_on(async {
/// let (prices_tx, prices) = mpsc::unbounded();
/// let (trades_tx, trades) = mpsc::unbounded();
/// let mut feeds = StreamMap::new();
/// feeds.insert("prices", prices);
/// feeds.insert("trades", trades);
///
/// prices_tx.unbounded_send(101).unwrap();
/// assert_eq!(feeds.next().await, Some(("prices", 101)));
///
/// drop(prices_tx); // the price feed ends: the next poll drops it, and its key leaves
/// assert!(futures::poll!(feeds.next()).is_pending());
/// assert!(!feeds.contains_key("prices"));
/// assert_eq!(feeds.len(), 1);
///
/// trades_tx.unbounded_send(5).unwrap();
/// assert_eq!(feeds.next().await, Some(("trades", 5)));
/// # });
/// ```
pub type StreamMap<K, S, H = DefaultHashBuilder> = KeyedMap<K, S, Streams, H>;
