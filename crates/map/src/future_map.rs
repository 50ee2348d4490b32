//! [`FutureMap`]: futures keyed by the user's keys.

use core::future::Future;
use core::hash::{BuildHasher, Hash};

use pinfold_buffer::Driven;

use crate::{DefaultHashBuilder, Futures, KeyedMap};
#[cfg(doc)]
use futures_core::Stream;

/// Futures keyed by the user's keys; a [`Stream`] of `(key, output)` in the order the futures
/// finish; its methods are those of [`KeyedMap`].
///
/// A future leaves the map when it finishes (its key with it, moved into the output, not
/// cloned), when it is removed, or when another is inserted under its key; its output then
/// never comes. Its order, fairness, wakes, panics and memory are those every pinfold primitive
/// keeps ([the shared rules](crate#the-shared-rules)). `Unpin` whatever `F` is; `Send` if `K`,
/// `F` and `H` are; `Sync` if `K` and `H` are `Sync` and `F` is `Send + Sync`. Keys are hashed
/// by `H` (see [`KeyedMap`]).
///
/// # Example
///
/// Requests keyed by id, answered out of order:
///
/// ```
/// use futures::channel::oneshot;
/// use futures::StreamExt;
/// use pinfold::FutureMap;
///
/// # futures::executor::block_on(async {
/// let mut pending = FutureMap::new();
/// let mut replies = Vec::new();
/// for id in 0..3u32 {
///     let (reply, answer) = oneshot::channel();
///     pending.insert(id, answer);
///     replies.push(reply);
/// }
///
/// replies.remove(1).send("one").unwrap();
/// assert_eq!(pending.next().await, Some((1, Ok("one"))));
/// assert!(!pending.contains_key(&1));
///
/// drop(replies); // the other senders go: their receivers give `Err(Canceled)`
/// let mut rest: Vec<u32> = pending.map(|(id, answer)| {
///     assert!(answer.is_err());
///     id
/// }).collect().await;
/// rest.sort();
/// assert_eq!(rest, [0, 2]);
/// # });
/// ```
pub type FutureMap<K, F, H = DefaultHashBuilder> = KeyedMap<K, F, Futures, H>;

impl<K: Hash + Eq + Clone, F: Future, H: BuildHasher> FutureMap<K, F, H> {
    /// The map as a [`Driven`]: [`BufferExt::driven`](pinfold_buffer::BufferExt::driven) for a
    /// map of futures, which `map.driven(limit)` calls instead of that one (a `StreamMap` has
    /// that one). Driven ([`poll_progress`](pinfold_buffer::ProgressStream::poll_progress)),
    /// the map is polled and its outputs taken ahead, and once `limit` are held it goes on
    /// polling the map: the futures keep running (one that holds a lock the consumer waits for
    /// lets it go), and the outputs they give are held past the limit, at most one per future
    /// ([*At the limit*](Driven#at-the-limit)).
    ///
    /// # Panics
    /// If `limit` is 0, with the message `driven: limit must be greater than 0`.
    ///
    /// # Example
    ///
    /// ```
    /// use pinfold::ProgressStreamExt;
    /// use pinfold::FutureMap;
    ///
    /// # futures::executor::block_on(async {
    /// let mut map = FutureMap::new();
    /// for id in 0..4u32 {
    ///     map.insert(id, async move { id * 10 });
    /// }
    /// let mut seen = Vec::new();
    /// map.driven(1)
    ///     .for_each_driven(|(id, output)| {
    ///         seen.push((id, output));
    ///         async {}
    ///     })
    ///     .await;
    /// seen.sort();
    /// assert_eq!(seen, [(0, 0), (1, 10), (2, 20), (3, 30)]);
    /// # });
    /// ```
    #[track_caller]
    pub fn driven(self, limit: usize) -> Driven<Self> {
        Driven::one_item_per_value(self, limit)
    }
}
