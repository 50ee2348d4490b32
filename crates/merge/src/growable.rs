//! [`Merge`]: the merge on a [`GrowableArena`].

use pinfold_arena::GrowableArena;

use crate::StreamMerge;

/// A growable merge of streams, whose items come out as the streams give them; its methods
/// are those of [`StreamMerge`]. [`merge`](crate::merge) makes one from an iterator.
///
/// It has no capacity limit: it grows a group of slots at a time and gives the empty groups
/// back after a burst ([*Memory*](pinfold_arena::contract#memory)); a merge that stays within
/// its capacity allocates nothing. It keeps the rules every pinfold primitive keeps
/// ([the shared rules](crate#the-shared-rules)), with one queue for all its groups.
///
/// # Example
///
/// ```
/// use futures_util::{StreamExt, stream};
/// use pinfold_merge::Merge;
///
/// # futures_executor::block_on(async {
/// let mut merged = Merge::new();
/// merged.extend((0..40).map(|n| stream::iter(vec![n; 2])));
/// assert_eq!(merged.capacity(), 64); // two groups of 32
///
/// let items: Vec<u32> = merged.by_ref().collect().await;
/// assert_eq!(items.len(), 80);
/// assert_eq!(merged.capacity(), 32); // the empty second group was given back
/// # });
/// ```
pub type Merge<S> = StreamMerge<S, GrowableArena<S>>;
