//! The rules every pinfold primitive on the arena keeps, stated once: each crate's docs link
//! here and state only what is its own.
//!
//! The words used: a *primitive* is a set of futures (pinfold-unordered), a merge of streams
//! (pinfold-merge), a keyed map (pinfold-map), a stream buffer or ordered set (pinfold-buffer),
//! or a join (pinfold-join). Its *values* are the futures or streams it holds; an *output* is a
//! future's output or a stream's item; a *call* is one `poll_next` (or `poll_next_keyed`). A
//! join is one future: its polls follow [*Wakes*](#wakes) and [*Fairness*](#fairness) only
//! once its futures have wakers of their own (its crate docs say when).
//!
//! The rules are [*Order*](#order), [*Fairness*](#fairness), [*Wakes*](#wakes),
//! [*Panics*](#panics) and [*Memory*](#memory), then the [*Features*](#features) every crate
//! on the arena has. Each crate's docs hold a table of what differs for its types; where a
//! rule is not in that table, it holds as stated here.
//!
//! # Order
//!
//! A primitive other than a join is a [`Stream`](futures_core::Stream) of outputs, each
//! returned as soon as a call finds it, so outputs come in the order the primitive finds them,
//! not the order the values were added (the ordered buffers and sets, and the joins, give
//! theirs in input order: their docs say how).
//!
//! - A future gives its output once: it is dropped in place as soon as it finishes, before its
//!   output is returned, and its slot is free for the next value. The items of one stream come
//!   in that stream's order, none lost, none twice; a stream that ends is dropped in place at
//!   once, within the call (which goes on to the other values).
//! - Values are polled in the order they were queued: a value is queued when it is added, when
//!   it is woken, and (a stream) when it gave an item, which queues it again without a wake;
//!   one already queued keeps its place, so a value woken many times before its poll is polled
//!   once. Values woken since the last call are queued when the next call begins, behind the
//!   values queued before it, in an order the primitive chooses among themselves; values added
//!   keep the order of their adding. A growable primitive has one queue for all its groups, so
//!   this holds whatever group each value is in. So values ready when added give their outputs
//!   in that order; a woken value is never passed over by values added or woken after the
//!   call that follows its wake began, and its output waits behind at most as many outputs as
//!   the primitive holds values; a stream woken beside streams that are always ready is polled
//!   before any of them gives a second item after the wake. One exception keeps adding cheap:
//!   a value added into the slot of one removed before its poll takes that value's place in
//!   the queue.
//! - Removing a value (`remove`, replacing a key's value, `clear`) drops it in place at once:
//!   no output of it comes any more, also none it had ready.
//! - A call returns `Ready(None)` when the primitive holds no value; it is then
//!   [terminated](futures_core::FusedStream::is_terminated) until a value is added or `clear`
//!   is called. Polling it again is allowed, and gives `Ready(None)` again while it is empty.
//!
//! # Fairness
//!
//! One call is a *round* of the arena, with one [`Budget`](crate::Budget) for the whole
//! primitive, whatever group of a growable one each value is in:
//!
//! - It polls each value at most once, so it takes at most one item from each stream.
//! - It polls only the values that were woken, the streams that gave an item in an earlier
//!   call, and the values added and not polled yet; no other (see [*Wakes*](#wakes)).
//! - It yields (wakes its task and returns `Pending`) while values are still queued once it
//!   has polled as many values as the primitive held when it started, or once its strikes
//!   reach [`MAX_VAIN_REPOLLS`](crate::MAX_VAIN_REPOLLS) (32): a value polled in an earlier
//!   call, woken, and `Pending` again without waking itself is one strike (under tokio, once
//!   the task's coop budget is spent, tokio's own futures and streams do that until the next
//!   poll of the task). A value that wakes itself during its own poll, or a stream polled
//!   again because it gave an item, is never a strike: it is polled again in the next call,
//!   which the call wakes its task for. A value that is always ready, or always wakes itself,
//!   starves neither the executor nor the other values.
//! - Otherwise it returns `Pending` only when no woken value is left that it has not polled:
//!   wakes that arrive during the call are collected in it, and the values they woke are
//!   polled in it. A value polled in the call and woken again (or a stream that gave an item)
//!   waits for the next call, and the call wakes its task for it before it returns.
//!
//! The rule bounds one call. A task that loops over the outputs of values that are always
//! ready is not made to yield by the primitive, unless the `tokio-coop` feature is on (see
//! [*Features*](#features)).
//!
//! # Wakes
//!
//! Each value has a waker of its own; waking it queues that value alone. A call that returns
//! `Pending` has registered its task's waker (the latest call's replaces the one before), and
//! a wake that comes after the call's last collection of wakes wakes that task: no wake is
//! lost. Wakes coalesce: a value woken many times before it is polled is polled once, and a
//! burst of wakes, into one value or many (in a growable primitive, in any of its groups),
//! wakes the task once. A value that wakes itself, or another value of the primitive, while
//! the primitive polls wakes no task: the call collects that wake itself.
//!
//! Wakers are `Send + Sync` and may be cloned, woken and dropped on any thread at any time,
//! also after their value left (finished, ended, removed or replaced) and after the primitive
//! is dropped: then waking does nothing. A waker of a value that left does not cause a poll of
//! a value that takes its slot later (unless owned wakers of both of the slot's last two
//! departed values are alive at once, or a value had more than 16,384 owned wakers alive at
//! once: then one may cause a spurious poll).
//! Dropping the primitive forgets the registered task.
//!
//! # Panics
//!
//! A panic in user code (a value's poll or `Drop`, the task's waker) reaches the caller of the
//! method that ran it, and leaves the primitive consistent and usable: its length, its
//! iterators and its keyed methods agree, every value it no longer holds was dropped exactly
//! once, and nothing leaks.
//!
//! - A value whose poll panics is dropped in place, its slot freed and its key refused; the
//!   panic propagates out of the call. The other values are untouched: those not polled yet in
//!   that call are polled by the next one, and they give all their outputs. Before the panic
//!   leaves the call, the task's waker is registered and, if values are still queued or were
//!   woken, woken: later wakes reach the task as after a call that returned `Pending`. A
//!   second panic there (the value's `Drop` as it is dropped, a map key's `Drop`, or the task
//!   waker's `clone` or `wake`) is dropped: the poll's panic propagates, and later wakes reach
//!   the task all the same (after a `clone` that panicked, through the waker registered
//!   before).
//! - A value whose `Drop` panics (as it finishes or ends, in `remove`, in `clear`, or when the
//!   primitive is dropped) is gone all the same, and a future's output with it; then the panic
//!   propagates. When that happens inside a call (a value that finished or ended), the call
//!   ends as if with an output: the wakes that come meanwhile are polled by the next call, and
//!   reach the task once a call has returned `Pending`. `clear` and the primitive's drop drop
//!   every other value all the same, then the first panic propagates (without `std`, a second
//!   panic while the first unwinds aborts, see [*Features*](#features)).
//! - A panic in the task waker's `clone` (when a call registers it) or in the `drop` of the
//!   waker it replaces propagates out of the call. A panic in its `wake` propagates to whoever
//!   woke the value's waker (another thread, or the code that called `wake_by_ref`), or out of
//!   the call if the primitive woke its own task (when it yields). No value is blamed: none is
//!   dropped for it, the woken value's output still comes, and later wakes reach the task. Two
//!   cases need the next call first, since the waker could not be reached: a `clone` that
//!   panicked (nothing could be registered), and a `wake` that panicked on the thread that woke
//!   a value (that wake was the one notification of its burst of wakes; the next call finds
//!   every wake of the burst, as futures-util's `FuturesUnordered` does).
//!
//! # Memory
//!
//! Keys, wakers, wakes and outputs allocate nothing: a primitive allocates only its storage
//! (the buffers and joins state theirs in their own docs).
//!
//! A *bounded* set or merge (`FuturesUnorderedBounded`, `MergeBounded`) allocates its storage when it is made (two allocations: the slots, and the
//! wake table the wakers share) and nothing after that: adding, polling, waking, removing and
//! clearing allocate nothing. The slots are freed with the primitive, the wake table with the
//! primitive or the last waker of its values, whichever goes last. Its `from_iter` collects the values into a `Vec` first, to know their number.
//!
//! A slot takes 16 bytes beside its value, padded to the value's alignment (a value of 8 bytes
//! takes a slot of 24), and the wake table 8 bytes a slot and a few hundred bytes in all: a
//! set of 10,000 values of 8 bytes holds 32.3 bytes a value.
//!
//! A *growable* set or merge (`FuturesUnordered`, `Merge`) is a
//! [`GrowableArena`](crate::GrowableArena), as are a keyed map's values: a stack of arenas (its
//! *groups*), smallest first, at most 63. Made with `new`, it allocates nothing. The first value allocates the first
//! group, of 32 slots (or the capacity given to `with_capacity`, allocated then). Each group
//! after it holds as many slots as all the groups below it together (at least 32) while they
//! hold fewer than 256, so the capacity doubles: 32, 64, 128, 256; from 256 slots to 262,144
//! a group holds a quarter of what is below it (320, 400, 500, 625, ...), so that at most a
//! fifth of the slots are spare when a group is added; past 262,144 the capacity doubles
//! again, up to about 1.36 billion slots in the 63 groups. A group costs two allocations (its
//! slots and its wake table); the first group also allocates the hub the groups share and the
//! table of groups. So a primitive that grows to `n` values, between 256 and 262,144, has made
//! about `2 (5 + log1.25(n / 256))` allocations (44 for 10,000: 21 groups).
//!
//! A value goes into a free slot of the *smallest* group that has one. A group is added only
//! when every group is full. So free slots in older groups are reused first, and the values
//! that stay long drift down into the small groups while the large ones empty out.
//!
//! A group holding a value is never released (its values cannot move), and the first group
//! is kept as long as the primitive. Otherwise, right after each output (and after `clear`),
//! while the largest group holds no value, it is released if
//!
//! - the values left fill at most half of the groups below it (`len <= below / 2`, so the
//!   next values need no new group), and
//! - the capacity left is at least the *retained* capacity (below).
//!
//! Releasing from the top keeps the sizes geometric. When the largest group is empty after an
//! output and nothing is retained, either only the first group is left or `len > below / 2`;
//! a group added by regular growth holds at most as much as the groups below it (or 32), so
//! then the capacity is at most `4 * len + 32` (or the first group's capacity). A set that grew
//! to 100,000 futures holds 131,072 slots; once its futures but 100 have finished, and those
//! 100 sit in the small groups (the oldest do, and the rest drift there as new futures replace
//! finished ones), it holds at most 432 slots, 256 in fact.
//!
//! *Retained capacity* stops a primitive that cycles, such as a set that is filled with a
//! batch and drained, batch after batch, from releasing and reallocating its groups every
//! cycle. It is zero until the primitive grows back, before it has forgotten (below), into
//! capacity it released: then each group it adds holds up to the capacity released (at most
//! three times the capacity it has, so the bound above is `8 * len + 32` while such a group is
//! the largest), and the capacity reached is retained: the primitive does not release below
//! it. It forgets what it released and retained once it has given as many outputs as the
//! larger of the two in a row while holding at most a quarter of it; then it releases and
//! grows as a new one does. So a set that is filled with 256 futures and drained, again and
//! again, adds groups in its first two cycles and never again (14 allocations in all, the
//! first push's included), and a primitive that settles down gives its memory back after
//! doing that much work. A growable set's `reserve(n)` adds groups, sized as above, until `n`
//! slots are free, and retains the capacity it reaches in the same way.
//!
//! # Features
//!
//! Every crate on the arena has these two:
//!
//! - `std` (default): a panic in a value's poll or `Drop` is caught with `catch_unwind` and
//!   resumed once the primitive is consistent. Without it the crate is `#![no_std]` + `alloc`
//!   and stays consistent with drop guards while the panic unwinds; a second panic during that
//!   unwinding aborts the process, as it does for a `Vec` (see [`unwind`](crate::unwind)).
//! - `tokio-coop`: each output spends a unit of the task's tokio cooperative budget; once it
//!   is spent, the call returns `Pending` (tokio has woken the task), so a task that takes
//!   outputs in a loop lets the other tasks run, as with tokio's `JoinSet`. Without it, nothing
//!   of tokio is compiled in (see [`coop`](crate::coop)).
