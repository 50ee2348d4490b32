//! [`StreamMerge`]: the merge of streams, one form of pinfold-arena's [`KeyedSet`].

use pinfold_arena::{KeyedSet, Streams};

/// Many streams merged into one, whose items come out as the streams give them, stored in
/// `A`: [`MergeBounded<S>`](crate::MergeBounded) (an [`Arena`](pinfold_arena::Arena), a
/// fixed capacity) or [`Merge<S>`](crate::Merge) (a
/// [`GrowableArena`](pinfold_arena::GrowableArena)). Use those two names. It is
/// pinfold-arena's [`KeyedSet`] over [`Streams`]; pinfold-unordered's sets are the same type
/// over futures, with the same methods.
///
/// What a merge guarantees is in the crate documentation: the [order](crate#order) of its
/// items and its keys, [fairness](crate#fairness) within one `poll_next`, which streams are
/// polled and when its task is woken ([wakes](crate#wakes)), what a panic leaves
/// ([panics](crate#panics)), and what is allocated when ([memory](crate#memory)).
///
/// `Unpin` whatever `S` is (streams are pinned in the merge's own storage); `Send` if `S` is;
/// `Sync` if `S` is `Send + Sync`.
pub type StreamMerge<S, A> = KeyedSet<S, A, Streams>;
