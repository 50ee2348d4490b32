//! [`MergeBounded`]: the merge on a fixed-capacity [`Arena`].

use pinfold_arena::Arena;

use crate::StreamMerge;

/// A merge of at most `capacity` streams, whose items come out as the streams give them; its
/// methods are those of [`StreamMerge`].
///
/// Its storage is allocated by [`new`](StreamMerge::new) and never again: adding, polling,
/// waking, ending and removing streams allocate nothing. It keeps the rules every pinfold
/// primitive keeps ([the shared rules](crate#the-shared-rules)): it is the bounded merge of
/// [*Memory*](pinfold_arena::contract#memory).
///
/// # Capacity
///
/// A merge of capacity `n` holds at most `n` streams. Adding a stream to a full merge is
/// refused: [`try_push`](StreamMerge::try_push) and [`try_insert`](StreamMerge::try_insert)
/// give the stream back, [`push`](StreamMerge::push) and [`insert`](StreamMerge::insert)
/// panic. A slot is free again as soon as its stream ended (within the call that saw its
/// end), was removed, or the merge was cleared.
pub type MergeBounded<S> = StreamMerge<S, Arena<S>>;
