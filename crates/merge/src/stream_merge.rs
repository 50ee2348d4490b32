//! [`StreamMerge`]: the merge of streams, one form of pinfold-arena's [`KeyedSet`].

use pinfold_arena::{KeyedSet, Streams};

/// Many streams merged into one, whose items come out as the streams give them, stored in
/// `A`: [`MergeBounded<S>`](crate::MergeBounded) (an [`Arena`](pinfold_arena::Arena), a
/// fixed capacity) or [`Merge<S>`](crate::Merge) (a
/// [`GrowableArena`](pinfold_arena::GrowableArena)). Use those two names. It is
/// pinfold-arena's [`KeyedSet`] over [`Streams`]; pinfold-unordered's sets are the same type
/// over futures, with the same methods.
///
/// What a merge guarantees: its [keys](crate#keys), and the rules every pinfold primitive
/// keeps, stated in [`pinfold_arena::contract`] (the [order](pinfold_arena::contract#order) of
/// its items, [fairness](pinfold_arena::contract#fairness) within one `poll_next`, which streams
/// are polled and when its task is woken ([wakes](pinfold_arena::contract#wakes)), what a panic
/// leaves ([panics](pinfold_arena::contract#panics)), and what is allocated when
/// ([memory](pinfold_arena::contract#memory))); the crate's
/// [shared rules](crate#the-shared-rules) say what differs for a merge.
///
/// `Unpin` whatever `S` is (streams are pinned in the merge's own storage); `Send` if `S` is;
/// `Sync` if `S` is `Send + Sync`.
pub type StreamMerge<S, A> = KeyedSet<S, A, Streams>;
