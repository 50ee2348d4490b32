//! [`FuturesUnorderedBounded`]: the set on a fixed-capacity [`Arena`].

use pinfold_arena::Arena;

use crate::UnorderedSet;

/// A fixed-capacity set of futures, polled concurrently, whose outputs come out in the order
/// the futures finish; its methods are those of [`UnorderedSet`].
///
/// Its storage is allocated by [`new`](UnorderedSet::new) and never again: pushing, polling,
/// waking, finishing and removing a future allocate nothing. A future never moves once pushed.
/// It keeps the rules every pinfold primitive keeps ([the shared rules](crate#the-shared-rules)):
/// it is the bounded set of [*Memory*](pinfold_arena::contract#memory).
///
/// # Capacity
///
/// A set of capacity `n` holds at most `n` futures. Pushing into a full set is refused:
/// [`try_push`](UnorderedSet::try_push) and [`try_insert`](UnorderedSet::try_insert) give the
/// future back, [`push`](UnorderedSet::push) and [`insert`](UnorderedSet::insert) panic. A
/// slot is free again as soon as its future finished (before its output is returned), was
/// removed, or the set was cleared.
///
/// # Example
///
/// ```
/// use futures_util::StreamExt;
/// use pinfold_unordered::FuturesUnorderedBounded;
///
/// async fn square(n: u64) -> u64 {
///     n * n
/// }
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let mut set = FuturesUnorderedBounded::new(8);
/// for n in 0..8 {
///     set.push(square(n));
/// }
/// assert!(set.try_push(square(100)).is_err()); // full: the future comes back
///
/// let mut squares: Vec<u64> = set.collect().await;
/// squares.sort();
/// assert_eq!(squares, [0, 1, 4, 9, 16, 25, 36, 49]);
/// # });
/// ```
pub type FuturesUnorderedBounded<F> = UnorderedSet<F, Arena<F>>;

/// The futures of a [`FuturesUnorderedBounded`], moved out by its `into_iter`, in no particular
/// order. Dropping it part-way drops the futures it has not given, once each.
pub type IntoIterBounded<F> = pinfold_arena::IntoValues<F>;
