//! [`FuturesUnordered`]: the set on a [`GrowableArena`].

use pinfold_arena::GrowableArena;

use crate::UnorderedSet;

/// A growable set of futures, polled concurrently, whose outputs come out in the order the
/// futures finish; its methods are those of [`UnorderedSet`].
///
/// It has no capacity limit: it grows a group of slots at a time (its capacity doubling up to
/// 256 slots, then growing by a quarter up to 262,144) and gives the empty groups back after a
/// burst ([*Memory*](pinfold_arena::contract#memory)). A future never moves once pushed, and
/// growing never reallocates the futures already in the set. It keeps the rules every pinfold
/// primitive keeps ([the shared rules](crate#the-shared-rules)), with one queue for all its
/// groups.
///
/// # Example
///
/// ```
/// use futures_util::StreamExt;
/// use pinfold_unordered::FuturesUnordered;
///
/// # futures_executor::block_on(async {
/// let mut set: FuturesUnordered<_> = (0..40u32).map(|n| async move { n * 2 }).collect();
/// assert_eq!(set.capacity(), 64); // two groups of 32
///
/// let outputs: Vec<u32> = set.by_ref().take(40).collect().await;
/// assert_eq!(outputs.iter().sum::<u32>(), (0..40).map(|n| n * 2).sum());
/// assert_eq!(set.capacity(), 32); // the empty second group was given back
/// # });
/// ```
pub type FuturesUnordered<F> = UnorderedSet<F, GrowableArena<F>>;

/// The futures of a [`FuturesUnordered`], moved out by its `into_iter`, in no particular order.
/// Dropping it part-way drops the futures it has not given, once each.
pub type IntoIter<F> = pinfold_arena::growable_iter::IntoValues<F>;
