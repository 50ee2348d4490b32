//! [`UnorderedSet`]: the set of futures, one form of pinfold-arena's [`KeyedSet`].

use pinfold_arena::{Futures, KeyedSet};

/// A set of futures, polled concurrently, whose outputs come out in the order the futures
/// finish, stored in `A`: [`FuturesUnorderedBounded<F>`](crate::FuturesUnorderedBounded) (an
/// [`Arena`](pinfold_arena::Arena), a fixed capacity) or
/// [`FuturesUnordered<F>`](crate::FuturesUnordered) (a
/// [`GrowableArena`](pinfold_arena::GrowableArena)). Use those two names. It is
/// pinfold-arena's [`KeyedSet`] over [`Futures`]; pinfold-merge's merges are the same type
/// over streams, with the same methods.
///
/// What a set guarantees: its [keys](crate#keys), and the rules every pinfold primitive keeps,
/// stated in [`pinfold_arena::contract`] (the [order](pinfold_arena::contract#order) of its
/// outputs, [fairness](pinfold_arena::contract#fairness) within one `poll_next`, which futures
/// are polled and when its task is woken ([wakes](pinfold_arena::contract#wakes)), what a panic
/// leaves ([panics](pinfold_arena::contract#panics)), and what is allocated when
/// ([memory](pinfold_arena::contract#memory))); the crate's
/// [shared rules](crate#the-shared-rules) say what differs for a set.
///
/// `Unpin` whatever `F` is (futures are pinned in the set's own storage); `Send` if `F` is;
/// `Sync` if `F` is `Send + Sync`.
pub type UnorderedSet<F, A> = KeyedSet<F, A, Futures>;
