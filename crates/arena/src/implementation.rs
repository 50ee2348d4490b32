//! How the arena works: the design, for readers of the code.
//!
//! # Two allocations
//!
//! An [`Arena<T>`](crate::Arena) owns a block of slots and one reference to a *wake table*.
//! The slots are touched only by the owner (through `&mut Arena`), so they need no
//! synchronisation: each holds its value or, while free, its link in the free list (one union);
//! a word of its generation and whether it is occupied; and its mark (a link in a poll queue,
//! and the round that last polled it). For a value of 8 bytes a slot is 24. The block is never
//! reallocated, and a value is only dropped in place, which is what makes handing out
//! `Pin<&mut T>` sound. It is dropped through a function with no type parameter, with a
//! `PhantomData<T>`, so that values may borrow what the arena outlives, as in a `Vec`.
//!
//! An arena's slots are written as they are first taken, not when it is made: the free list
//! ends in the first slot not written yet (its link has a bit no slot index has), and an insert
//! that reaches it writes the slot whole, with no free link or generation to read first and no
//! waker to look for. Making an arena of a million slots writes none of them. Counted against
//! `8c44c0c`, where every slot was written when the arena was made: `held_10k` 99.1 to 95.1,
//! `held_256` 105.5 to 101.4, `merge_held_10k` 97.2 to 92.2. A caller that asks whether the
//! arena is full before it inserts tests the link twice, where the compiler had made the two
//! tests of `NIL` one: `for_each_concurrent_10k_c64` 380.5 to 384.5,
//! `unordered_selfwake_100k_c64` 416.6 to 420.6. A growable arena's groups still write every
//! slot when they are added: its insert is inlined into the caller's, and the extra case made
//! the closure around `FuturesOrdered::push_back` too large to be inlined in turn
//! (`futures_ordered_ready_512k` 222.8 to 248.8, `keyed_churn_100k` growable 381.0 to 403.4).
//!
//! The wake table is a single block shared with the wakers:
//!
//! ```text
//! [ Header: refs | parent | sizes ][ Pair 0 | Pair 1 | ... ][ ready bitset words ... ]
//! ```
//!
//! # Entries: a waker names one stay of one value
//!
//! A waker is a `RawWaker` whose data pointer names an *entry*: entries `2 i` and `2 i + 1` share
//! a *pair* of eight bytes, the pair's own index (from which the header is found by pointer
//! arithmetic, and the entries' bits in the ready set) and one word of state, a half-word for
//! each entry: the count of the owned wakers pointing at it, and its `RETIRED` flag. A waker of
//! entry `e` points at byte `4 (e % 2)` of its pair, so its pointer rounded down to 8 is the
//! pair, and what was rounded off says which half is its own. A half-word counts up to 16,384
//! owned wakers (64 under Miri, to reach the limit in a test); a clone past that is made
//! *uncounted* (another vtable): it wakes its entry as any waker does, holds a reference to the
//! table, and is not counted, so once its value has left it may cause a spurious poll of a
//! later value of the slot. Loom's models drive a pair's two entries changed at once by
//! different threads. The table has two entries per slot, `2 i`
//! and `2 i + 1`, which the slot's values take in turn: the value of generation `g` has entry
//! `2 i + (g & 1)`, so the slot stores no entry, and a drained bit names its slot (`e / 2`),
//! which holds the entry's value if it is occupied with a generation of the entry's parity.
//! When a value leaves, if no owned waker of its entry is alive (the count is zero, read with
//! Acquire, which pairs with the Release decrement of each waker's drop), the entry is free at
//! once, its ready bit cleared; otherwise it is *retired* (`fetch_or(RETIRED)`). A wake of an
//! entry whose slot holds another value is drained and ignored. An insert looks at the entry
//! whose turn it is: free, it is taken; retired with its count back at zero, it is cleared and
//! taken; still with wakers, the slot's other entry is taken if it is free, and the generation
//! skips one to match it (keys only ever grow). So a waker that outlives its value never
//! causes a poll of a later value in its slot, with one exception: when wakers of both of the
//! slot's last two departed values are alive, the insert shares the entry of the one before
//! last, and its old wakers may cause one spurious poll of the new value.
//!
//! Cloning a waker adds one to its entry's count and dropping it takes one off: one atomic
//! operation each, on the entry's word, which only that pair's wakers share. The table is freed
//! when the arena and every waker are gone, so a waker may outlive the arena and waking it then
//! only sets a bit nobody reads. The table's reference count has one reference for the arena,
//! one for each uncounted waker, and one for each retired entry whose count is above zero: the
//! arena takes it before it sets `RETIRED` on such an entry (when the value leaves, and for every
//! entry with wakers still alive when the arena is dropped), and the drop that takes a retired
//! count to zero gives it up, as does the arena if it shares the entry with a new value first.
//! Which of them gives it up is decided by the state each one's atomic operation read, so it is
//! given up once; loom's models drive the last waker's drop against the arena's drop and
//! against the sharing. A clone never starts a retired entry's count from zero: a counted clone
//! is made from a counted waker, or through a borrow of the arena (the waker lent to a poll,
//! `Storage::waker`), whose entry is bound. The arena lends *borrowed*
//! wakers to the values it polls (no reference counting unless the value clones it). A by-value
//! `wake` releases its references even if the parent's waker panics.
//!
//! Keys (a slot counted across a growable arena's groups, and a 64-bit generation) are checked by
//! the owner only: the slot's generation rises with each value stored in it (by two when the value
//! skips an entry a stale waker holds), so a key of a departed value never matches. Generations
//! count in 63 bits of the slot's word (the 64th says whether it is occupied): a slot whose
//! generation reaches `2^63 - 1` is retired (left off the free list) rather than wrapped, so no
//! generation ever repeats. Each arena's slots start at a generation of its own, the number of
//! arenas made before it with its bits reversed (below `2^62`), so that a key of another arena does
//! not match either (see [`Key`](crate::Key) for how far apart arenas start). That costs one atomic
//! add when an arena is made, and nothing on any other path: a key still is its slot's generation,
//! compared as before.
//!
//! # The ready set
//!
//! A hierarchical atomic bitset: one bit per entry, a summary bit per word, and so on up to a
//! single top word, which always has a spare bit, `BUSY`. A wake does `fetch_or` on its entry's
//! word and climbs only if that word was empty; so a burst of wakes costs one atomic each, and
//! only the wake that made the whole set non-empty notifies the parent. That is the coalescing:
//! many wakes of one value set one bit, and many values woken in a burst wake the parent task
//! once. The top word's protocol (`BUSY`, the owner's take, arming, the plain loads between
//! calls) is one type, `ParentWord` (in `wake/ready_set.rs`), which is also a growable arena's
//! hub word: the hub's bits are its groups', and a group's top word raises its bit there.
//!
//! The owner drains top-down with `swap`, clearing each parent bit before the word it
//! summarises. A wake racing the drain either lands in a word not yet swapped (and is taken
//! with it) or finds its word empty and climbs to a top word already cleared, and notifies the
//! parent. The parent registers its waker *before* the last drain of a round, so that
//! notification reaches it. While the owner is polling, its drains leave `BUSY` in the top word
//! instead of clearing it: a value that wakes itself (or another) during the round then stops
//! at the top word and wakes nobody, since the owner will drain again before it waits. The last
//! drain of a round, after registering, clears the top word entirely (it *arms* the set). The
//! loom models in `loom-tests/` check this protocol. A round starts with a drain whenever
//! something was woken since the last, so a drain is often short: a set of up to 4,032 slots
//! (one level under the top word) is drained in a loop of its own, and a larger one depth
//! first from a small stack, with no recursion and the filing of each slot inlined.
//!
//! # The poll watch
//!
//! The commonest wake of a busy value is its own, during its poll (a future that yields, one
//! that finds more work and asks to be polled again). While an owner polls a value, it keeps
//! the address of the entry whose waker it lent in a thread-local cell (`wake_table::watch`);
//! a wake of that entry on the same thread while the poll runs only sets the cell's low bit
//! (an entry's address is a multiple of 4), and the owner, reading the cell back as the poll
//! ends, queues the value for the next round itself (`Polled::woken`):
//! no atomic operation, no ready bit, no climb and no drain. No other thread reads or writes the
//! cell, so nothing needs ordering: a wake from another thread (which finds its own cell), of
//! another entry, a second wake in the same poll, or a wake once the poll is over goes to the
//! ready set as before, and the drain files a slot already queued nowhere twice. The owner
//! puts back what the cell held before the poll, also when the poll unwinds, so a set polled
//! inside another set's value (nested sets) leaves the outer watch as it found it, flag and
//! all. A merge's fast path (`Rounds::poll_first`) and a join's values are not watched: a
//! stream that gave an item is queued again anyway, and a join's values are polled through
//! its own loop. Without `std` there is no thread-local cell and nothing is watched; under
//! loom the cell is loom's thread-local, so that its threads keep theirs apart.
//!
//! # Rounds and fairness
//!
//! One call of a set's `poll_next` (or one poll of a join) is a *round*, numbered. The owner keeps
//! two intrusive FIFO queues through the slots: the slots to poll in this round, and the slots
//! polled in it that were woken again (for the next round). A newly inserted value is appended to
//! this round's queue, with no atomic operation. A drained slot goes to this round's queue unless
//! it was polled in this round, then to the next. The round polls its queue; when it is empty it
//! drains the ready set again (busy), and polls what that brought; when that brings nothing it
//! registers, drains once more (armed) and only then returns `Pending`, waking its own task first
//! if slots wait for the next round. So a call never returns `Pending` while a woken value it has
//! not polled is waiting, and never polls a value twice. With the budget rule (yield after polling
//! as many values as the arena held, or after [`MAX_VAIN_REPOLLS`](crate::MAX_VAIN_REPOLLS) vain
//! repolls) a value that always wakes itself can starve neither the executor (it waits for the next
//! call, and the call wakes its task) nor the other values (each is polled once a call, in turn). A
//! stream's slot (`Step::Repoll`) goes to the next round's queue after each item, so one round
//! takes at most one item of each stream. Such slots would keep the queue from ever running empty
//! (an always-ready stream is queued again after every item), and within a round wakes are
//! collected when its queue runs empty; so every round starts by collecting the wakes since the
//! last collection, behind the slots still queued from earlier rounds and ahead of the deferred
//! ones: a woken value is never passed over by values pushed or woken after the call that follows
//! its wake began, and a stream woken while always-ready streams run is polled before any of them
//! has a second turn. A value woken again between the collection that queued it and its poll is
//! polled once: a poll after the round's first takes the slot's bit in the ready set before it
//! polls.
//!
//! A merge's call takes one item and ends, so its common case is shorter, a branch of the same loop
//! (`Rounds::poll_first`, in `poll.rs`): when the top word of the ready set says nothing was
//! woken since the last call (it holds `BUSY` and no bit), the deferred slots are appended and the
//! slot at the head of the queue is polled in place; if it gives an item, it moves to the tail of
//! the queue (two links rewritten, no round numbered, no budget made) and the item is the call's
//! output. That is what deferring it and appending it at the next call would have done, since
//! nothing woken waits to go ahead of it. Anything else (a wake to collect, a value that is
//! `Pending` or ends) goes on as the round above, from that first poll. A growable arena does the
//! same, with the hub's word for the top word.
//!
//! # Price list
//!
//! What each mechanism on the way from a wake to an output costs, and which promise it keeps.
//! Figures are instructions per item on x86-64, counted by valgrind's callgrind with `cargo xtask
//! instructions ROW` at commit `01f25af` (rustc 1.95.0, the bench profile): each figure is the
//! count with the mechanism minus the count with it switched off (removed or short-circuited, even
//! where that breaks its promise). Since that commit a value's first `Pending` no longer reads its
//! ready bit, which the vain-repoll row includes. The counts are deterministic, but switching one
//! off also moves what the compiler inlines, so a difference within about 2 is layout, not cost.
//! Rows (as counted): `ready_512k` 156.0 (bounded set) and `unordered_ready_512k` 237.0 (growable
//! set), ready futures through a set kept at 256; `yield_16` 140.0 (bounded), futures that wake
//! themselves 16 times; `burst_100k` 470.2 (growable), up to 100,000 futures and back;
//! `unordered_selfwake_100k_c64` 589.0 (`unordered_buffer`, a bounded arena, under `block_on`);
//! `merge_hot_16` 50.0 bounded, 62.0 growable, and `merge_hot_16_noop` 46.0, 55.0, 16 always-ready
//! streams; `keyed_churn_100k` 339.8 bounded, 490.7 growable, inserts and removals by key. A row a
//! cell does not name did not move. The peers' column says how futures-buffered 0.2.14,
//! futures-util 0.3.34 and tokio-stream 0.1.19 keep the same promise: *measured* figures are
//! callgrind's count of their own functions in the same rows, *estimated* ones are read off their
//! code.
//!
//! | Mechanism | Promise | pinfold, switched off | Peers |
//! |---|---|---|---|
//! | tokio's budget (`coop::poll_output`, the `tokio-coop` feature), one unit per output | coop | off in these builds: 0. Switched on instead (off a runtime: a thread-local read per call): `ready_512k`: 27; `unordered_ready_512k`: 28; `merge_hot_16`: 30 bounded, 33 growable; `merge_hot_16_noop`: 28 bounded, 34 growable; `keyed_churn_100k`: 17 bounded, 20 growable; `burst_100k`: 24; `unordered_selfwake_100k_c64`: 9 | futures-buffered (its own `tokio-coop` feature) asks tokio before each value it pops, not each output: estimated as much per poll. futures-util's set and `StreamMap` spend nothing themselves |
//! | The poll watch (`wake_table::watch`, `Polled::woken`; counted against `7c97eb5`, where self-wakes went through the ready set) | order and fairness as before (a value that woke itself waits for the next round), with no atomic operation for a self-wake | a saving where values wake themselves: `yield_16`: −22.4; `unordered_selfwake_100k_c64`: −89; `for_each_concurrent_10k_c64`: about −44; `keyed_churn_100k`: −31 bounded, −29 growable; `ordered_selfwake_100k_c64`: about −27. A cost where they do not, two reads and two writes of the cell a poll and a read a wake (and the lent waker's address, which a future that never looks at its waker does not otherwise need): `ready_512k`: +12; `unordered_ready_512k`: +13; `held_10k`: +9; `unordered_held_100k`: +16; `merge_held_10k`: +9 bounded, +14 growable; `wakes_4_threads`: +16; `sleep_65k_cpu`: +22; `unordered_sparse_10k`: +16 bounded, +20 growable; the merges' hot rows: 0 (not watched) | futures-buffered and futures-util treat a self-wake as any wake: an atomic swap into their queue, and a pop |
//! | The merge's rotation fast path (`Rounds::poll_first`, `Queue::rotate`) | order and fairness of a merge at no extra cost: each stream one item a turn, a woken one first | a saving: `merge_hot_16`: −105 bounded, −123 growable; `merge_hot_16_noop`: −94 bounded, −113 growable (the full round it skips costs that much more) | futures-buffered's `MergeBounded` queues the stream again through its wake queue after each item: push 18 and pop 30 per item, and 33 to register the task's waker on every call, measured on `merge_hot_16_noop`. `StreamMap` polls every stream from a random start each call: its thread-local generator is 29 of its 55 per item, measured on `merge_hot_16_noop`. futures-util's `select_all` makes a new `StreamFuture` task (an allocation) per item: 395 per item in all |
//! | The start-of-call collection (`Rounds::start_round`: a drain before the deferred slots are appended) | order: a woken value goes ahead of values queued after it, and of always-ready streams' second turns | `ready_512k`: 5; `unordered_ready_512k`: 5; `merge_hot_16_noop`: 6 bounded, 0 growable; `merge_hot_16`: 2 bounded, 0 growable; `keyed_churn_100k`: 5 bounded, 4.5 growable; `burst_100k`: 7; `unordered_selfwake_100k_c64`: 72 (without it wakes are collected only when the queue runs empty, in fewer and larger drains) | futures-util and futures-buffered keep the order of wakes in an intrusive MPSC queue: a swap of its head per wake and a few loads per pop (futures-buffered's pop, with its per-slot lock: 30 per poll on `yield_16`, measured). `StreamMap` keeps no order |
//! | The entry chosen from the generation's parity (`Store::entry_of`: entry `2 i + (g & 1)`) | stale wakers: a waker that outlives its value never polls the next value of its slot | entry always `2 i`, the drain testing occupancy only: `ready_512k`: 5; `unordered_ready_512k`: 2; `yield_16`: 5; `unordered_selfwake_100k_c64`: 18; `burst_100k`: 12; `keyed_churn_100k`: 10 bounded, 11 growable | futures-buffered has one waker per slot and no generation: each wake of a stale waker may poll the slot's next value spuriously, at no cost to the others. futures-util keeps each task (`Arc<Task>`) alive while any waker of it is, so nothing is reused, paid in an allocation per future |
//! | The drain's test that a woken entry is its slot's value's (`Store::drain`: the slot's tag against the entry's parity) | stale wakers; no poll of a departed value | `yield_16`: 7.5; `unordered_selfwake_100k_c64`: 18; `burst_100k`: 10; `keyed_churn_100k`: 8 bounded, 11 growable; 0 on the rows without wakes | futures-buffered tests only that the slot is occupied: estimated 2 to 3 per poll. futures-util: nothing to test, the queue holds the task itself |
//! | The key check at `remove` (`Store::live`: the slot's tag against the key's generation) | keys: a key of a departed value never matches, also after its slot was reused | `keyed_churn_100k`: 0 bounded (−1.3, layout), 5 growable (which also finds the key's group). Since, a growable key names its group by number, as a slot id does: the group is a shift where a search of the groups' first slot numbers was, and `remove` checks the key once: `keyed_churn_100k` growable 380.0 to 354.0, `map_churn_100k` 909.2 to 880.7 | `StreamMap` finds a key by a linear search of its entries: estimated a comparison per stream held. futures-util and futures-buffered have no keys (the row removes from futures-util's set through `Abortable`: 999 per item in all) |
//! | The pre-poll take of a slot's bit in the ready set (`take_wake`, `ready_set::take_unchecked`) | no double poll: a value woken again between the collection that queued it and its poll is polled once | `yield_16`: 9.6; `unordered_selfwake_100k_c64`: 13; `burst_100k`: 15; `keyed_churn_100k`: 11 bounded, 16 growable; 0 on `ready_512k`, `unordered_ready_512k` and the merges (a round's first poll skips it) | futures-util: a per-task `queued` flag, swapped to false before each poll and to true by each wake (a locked exchange each, estimated 3 or 4 instructions but a full barrier). futures-buffered: a per-slot spin lock around a flag, taken by each wake and each pop (inside its 41 per wake and 30 per pop on `yield_16`, measured) |
//! | The growable id-to-slot decode (`split`, `stores[group]`) | memory: a growable arena grows by groups and never moves a value | `merge_hot_16`: 10 growable; `merge_hot_16_noop`: 10 growable (measured with the decode replaced by group 0, so only on rows that fit in one group; the other growable rows hold several). Its latency counts more than its instructions: with the groups 128 bytes apart (`Group`), a shift where a multiplication was, one more instruction (63 and 56) but the hot merges' time fell 12 to 15% on Zen 4 (`merge_hot_16` 1.32-1.43x to 1.15-1.20x `StreamMap`); replacing the decode by group 0 in the poll alone took `merge_hot_16_noop` from 4.15 to 3.34 ms | futures-buffered's growable set polls its groups (bounded sets, each with its own wake queue) in turn: estimated a loop step per group per call. futures-util needs no decode (a task is a pointer) and pays an allocation per future instead |
//! | The `catch_unwind` around each poll (`Store::poll_value`) and the repair after a panic | panic repair: the value dropped, its slot freed, the set usable | no consistent cost: from −12 to +9 depending on the row, in both directions (the catch is unwind tables, not instructions on the path; the differences are inlining) | futures-util: a drop guard releases the task if its poll unwinds, estimated 0 on the path. futures-buffered and `StreamMap`: no repair (the value stays), 0 |
//! | The round mark (`Mark::round`, read by `poll::file`, written by `poll_slot` after a `Pending` poll and by `settle` after the other steps) | no double poll within a round, and fairness: a value woken again during a round waits for the next | `yield_16`: 12; `unordered_selfwake_100k_c64`: 27; `burst_100k`: 25; `keyed_churn_100k`: 16 bounded, 23 growable; merges: 2 bounded, 2 growable; `ready_512k`: 1; `unordered_ready_512k`: 1. Since, a drain learns whether the round's queue got a slot from the queue's tail before and after, not from each slot it files: 5.8 fewer on `yield_16`, 12.7 on `unordered_selfwake_100k_c64`, 5.2 on `burst_100k`, 6.2 on `keyed_churn_100k` (5.1 growable). Since, a value that stays `Pending` has its mark written by the kind's poll, where its slot is at hand, not looked up again from its id: `unordered_held_256` 163.5 to 158.5, `unordered_held_100k` 146.9 to 141.9, `merge_held_10k` 151.3 to 147.3 growable and 99.2 to 98.2 bounded, `held_10k` 99.1 to 98.1; `merge_sparse_10k` 447.7 to 452.6; the merges' hot rows unchanged (their first poll of a round marks nothing unless it stays `Pending`) | futures-util polls a future woken during its poll again in the same call; futures-buffered likewise (both bound it by their yield rules below) |
//! | The vain-repoll rule (`MAX_VAIN_REPOLLS`, `Budget::vain`, `PollStorage::is_woken`) | coop under tokio: a round of a large arena stays linear when tokio defers wakes | `yield_16`: 14; `unordered_selfwake_100k_c64`: 38; `burst_100k`: 22; `keyed_churn_100k`: 22 bounded, 21 growable | none. The nearest is futures-util's per-task `woken` flag (set by each wake, cleared and read around each poll, to count self-wakes): estimated 3 per poll |
//! | The budget (a round yields after polling as many values as it held) | fairness: neither the executor nor the other values starve | `yield_16`: 1.4; `unordered_selfwake_100k_c64`: 15; `burst_100k`: 11; `keyed_churn_100k`: 7 bounded, 8 growable; 0 on `ready_512k` and the merges. Since, the loop tests one count before each poll (the polls left, which the last vain repoll the round allows sets to 0) instead of two: 4.9 fewer on `yield_16`, 11 on `held_10k` and `burst_100k`, 14 on `unordered_selfwake_100k_c64` | futures-util yields after polling as many futures as it holds or after two self-wakes, estimated 3 or 4 per poll; futures-buffered after 61 pops in one call, estimated 2 |
//! | The entry's release and reuse check (`WakeTable::unbind` when a value leaves, `pair_is_clear` at insert) | stale wakers: an entry with live wakers is retired, not reused, and its ready bit cleared | `ready_512k`: 42 (21 of them at insert); `unordered_ready_512k`: 26 (6 at insert); `burst_100k`: 25; `keyed_churn_100k`: 27 bounded, 25 growable; `unordered_selfwake_100k_c64`: 31; merges: 1 or 0 | futures-util frees each task when its last reference goes (the set's, then the wakers'): releasing it, its `Arc` and its memory is 147 of its 398 per item on `ready_512k`, measured. futures-buffered: nothing (see the parity row) |
//! | The growable arena's release check (`Groups::leaving`: `Sizing::output`, `release_due`) | memory: the top group is released when the policy allows | `burst_100k`: 37; `unordered_ready_512k`: 26; `keyed_churn_100k`: 24 growable; merges: 1 to 2 growable. Since, the top group is looked at only from the output that leaves the values filling at most half of the groups under it (the policy's own bound): 7 fewer on `unordered_ready_512k`, 3 on `burst_100k` and `keyed_churn_100k`. Since, a release left due by a panic is done as the panic leaves (`PollStorage::after_unwind`, and a guard around a drop), not looked for at the start of every call: 2 fewer on every growable merge row, 1 on `unordered_ready_512k` | futures-buffered keeps its groups for good: 0, with the memory. futures-util frees per future (previous row) |
//! | A collection's walk of the ready set's levels (`ready_set::drain`, `drain_deep`) | one parent wake per burst, and each woken entry found without a scan of the whole set | under a top word two levels up (4,097 to 262,144 entries), two nested loops in place of a stack of levels took `unordered_sparse_10k` from 385.0 to 354.8 and `merge_sparse_10k` from 478.8 to 448.7 (10 wakes a collection, each in its own first-level word). What remains is a swap per word taken, and for each wake a compare-exchange loop per level it climbs (a `fetch_or` whose whole old value is read): 2.4 a wake on `unordered_sparse_10k` | futures-buffered and futures-util: a swap of the queue's head per wake, no levels |
//! | The pair decode in a wake (`header_of`: the table's header and the entry's index from the waker's pointer) | memory and stale wakers: a waker is one pointer into the shared table, no allocation per value | replaced by a global pointer to the one table (itself 3 instructions, so a lower bound): `yield_16`: 8.5; `unordered_selfwake_100k_c64`: 19 | futures-buffered decodes its wakers the same way (an index stored in each item): estimated the same. futures-util's waker is the task's `Arc`: no decode, but an upgrade of the set's `Weak` on every wake; its whole wake is 50 per wake on `yield_16`, measured |
//! | An owned waker's counts (`clone_waker`, `drop_waker`: the entry's count; the table's reference count only for uncounted wakers and retired entries, `WakeTable::retire`) | stale wakers and memory: a waker may outlive its value and its arena, and a retired entry is bound again only once its wakers are gone | one atomic operation per clone and per drop, where each took two before (the table's count as well); in instructions the same on the timer rows (`unordered_1k_c10` 2078.8, `sleep_65k_wall` 1374.8: the clone's look at the `counted` flag costs what the increment did), in time 3 to 8% on the rows that clone a waker per registration (`unordered_1k_c10`, `sleep_65k_cpu`, Zen 4, three runs each way) | futures-buffered: one atomic per clone and per drop, on one count shared by all the set's wakers; futures-util: one, on the task's `Arc` |
//! | The registration and the arming drain before `Pending` (`Rounds::register`, `collect(Drain::Arm)`) | no lost wake, and one parent wake per burst | measured on the rows polled with a no-op waker only (under `block_on` a call without them never wakes again): `burst_100k`: 4; 0 on `ready_512k`, `unordered_ready_512k`, `yield_16`, `merge_hot_16_noop` | futures-util registers the task's waker at the start of every call: 29 per item on `ready_512k`, measured; futures-buffered too: 33 per item on `merge_hot_16_noop`, measured |
//!
//! What the list says: the promises that cost the most are those about stale wakers (the entry's
//! release and reuse check, the parity and the drain's test: about 47 of `ready_512k`'s 156 and 67
//! of `unordered_selfwake_100k_c64`'s 589), the fairness rules on values that wake themselves (the
//! round mark, the vain-repoll rule, the budget and the pre-poll take: about 37 of `yield_16`'s 140
//! and 93 of `unordered_selfwake_100k_c64`'s 589), and a growable arena's memory policy (the
//! release check: 37 of `burst_100k`'s 470, 439 without the prefetch since removed). Panic repair
//! and the key check cost nothing measurable, tokio's budget nothing unless it is enabled, and the
//! merge's rotation saves more than any mechanism costs. Not every figure is a saving to be had:
//! when a value leaves, the owner learns whether both of its slot's entries were free of wakers,
//! and no counted waker of a freed entry can appear before the entry is bound again, so a flag in
//! the free slot's link can stand for the insert's look at the table. Built, it did not lower
//! `ready_512k` (157 against 156): the look is a load and a test, and carrying the flag from the
//! release to the link costs as much; the rest of the 21 was what the compiler inlined once the
//! check was gone. Groups laid out in one reserved range of addresses would make a growable id an
//! index, and the decode free, at the price of reserving the addresses.
//!
//! Measured and not kept (counts against `0309155`'s: `yield_16` 117.3, `ready_512k` 154.0,
//! `unordered_selfwake_100k_c64` 522.1, `held_10k` 90.1): the bitset's first level laid out
//! last and reversed, ending at the header, so that a wake finds its word from the pair's index
//! alone (no read of where the words start): the wake lost 3 instructions (28 to 25), and the
//! owner's looks at the same words (the pre-poll take, the vain-repoll read, the clear at
//! release), now counted back from the end, gained more (`yield_16` 120.3, `ready_512k` 157.0,
//! `unordered_selfwake_100k_c64` 537.8, `held_10k` 93.1). A drain filing into copies of its
//! queues, written back after, took 3 off each hot merge and added 11 to
//! `unordered_selfwake_100k_c64`. Telling a set's depth from its top word's index (no read of
//! the layout in a drain) took 3 off `unordered_selfwake_100k_c64` and added 1 a woken slot to
//! every drain's loop (`yield_16` 118.0). A growable arena's first group reached by a branch
//! (`id < 1 << GROUP_SHIFT`) instead of the decode: in the marks alone, `merge_hot_16`'s time
//! fell by a fifth but `merge_hot_16_noop`'s did not, for 3 more instructions an item; in the
//! poll too, the compiler made the branch a conditional move unless the poll was inlined twice,
//! which cost the growable rows 5 to 27% more instructions (`map_streams_10k` 305.7 to 388.3).
//! With the round mark written by the kind's poll (counts against it): the vain-repoll look
//! (the ready bit read after a `Pending` poll of a value polled before) moved there too, beside
//! the mark: `keyed_churn_100k` 274.3 to 279.3 (405.5 to 413.5 growable), `yield_16` 94.7 to
//! 98.3. The queue's pop folded into the kind's poll (the slot unlinked where it is at hand,
//! the queue's head moved on after the poll): `yield_16` 94.7 to 120.2, `ready_512k` 166 to 195,
//! `unordered_ready_512k` 221.7 to 240.7, since the head then lives in memory across the
//! value's poll. Kept: the head moved on before the poll (`Queue::pop_for_poll`) and only the
//! link written by the kind's poll, where the slot is at hand (`PollStorage::poll_slot` with
//! `UNLINK`): 1 to 6 fewer an item on the rows that poll from the queue (`burst_100k` 370.4 to
//! 364.4, `unordered_held_100k` 140.9 to 136.9, `merge_held_10k` 144.3 to 141.3 growable),
//! `futures_ordered_bounded_ready_512k` 176 to 178 (register allocation). The merge's head
//! rotated in place (its poll writes its mark ready to end the queue, round 0 and link `NIL`,
//! and gives back the link it had; the queue writes only the tail's link): 3 to 4 fewer on
//! the bounded hot merges (`merge_hot_16_noop` 42 to 38), 5 to 6 on the growable ones (57 to
//! 51, `merge_ready_1k` 67.3 to 65.2), but on an Intel Xeon the bounded `merge_hot_16_noop`
//! took about a tenth longer over `StreamMap` (0.82-0.94x to 0.98-1.05x, also with every jump
//! target aligned). For the growable kinds only, with the head's group reached through
//! `hot_mut` for its whole poll: `merge_hot_16_noop` unchanged (1.09-1.14x to 1.08-1.14x),
//! `merge_ready_1k` (1,000 streams, most past group 0) 0.96-1.03x to 1.08-1.12x; the whole
//! poll through the plain lookup instead: `merge_ready_1k` 0.87-0.93x, but
//! `merge_hot_16_noop` 1.53-1.55x (three runs each, the three builds alternating).
//! `wake_by_ref` forced inline into the by-value `wake` (timers and channels wake theirs
//! so): the common cross-thread wake ran 52 instructions either way, the call's cost spent
//! again on the entry's offset, and a wake that raised the set ran 2 more.
//!
//! Counted against `896c4f7`: a growable arena of one group polled through a view of it whose
//! slot ids are the group's indexes, taken when a call finds one group. In the hot merge's
//! code (callgrind) the head's and the tail's lookups were a bounded arena's, but the caller
//! held two copies of the loop, whose result came back through the stack, and each call tested
//! the count of groups: `merge_hot_16_noop` growable 57 to 58, `merge_hot_16` growable 63 to
//! 66, `merge_ready_1k` growable (several groups) 67.3 to 76.2. Timed on an AMD EPYC Zen 4
//! (family 25, model 17; each build's row, then `StreamMap`'s in the next process, three runs
//! each, the two builds alternating): `merge_hot_16_noop` 1.20-1.22x to 1.33-1.36x `StreamMap`,
//! `merge_hot_16` 1.07-1.10x to 1.20-1.28x, `merge_ready_1k` 0.69-0.83x to 0.65-0.73x (a noisy
//! row). For the sets alone (not timed): `unordered_held_100k` 130.5 to 125.5 and
//! `unordered_held_256` 156.6 to 151.6, but `keyed_churn_100k` growable 380.0 to 384.5,
//! `unordered_ready_512k` 188.7 to 190.7 and `burst_100k` 343.9 to 345.9. Instructions only:
//! the rotation's write to the tail's link through `rotating_mark`, `merge_hot_16_noop`
//! growable 57 to 58, `merge_hot_16` 63 to 64, `merge_ready_1k` 67.3 to 73.1; every growable
//! poll's lookup through `hot_mut` (the branch above, with its checked index), 0 to 13% more on
//! the growable rows (`merge_hot_16` unchanged at 63, `merge_hot_16_noop` 57 to 60,
//! `merge_ready_1k` 67.3 to 76.1, `unordered_held_100k` 130.5 to 136.5); a group's slots
//! written four to a turn of `make_all`'s loop, which the compiler unrolls by two already,
//! `unordered_held_100k` 130.5 to 130.2, `merge_held_10k` growable 127.9 to 127.7.
//!
//! Counted against `7325ecf` (instructions only): the same view for a merge's first poll alone
//! (`Rounds::poll_first` through the view while the arena has one group, the rest of the round
//! through the groups). With both ways inlined: `merge_hot_16_noop` growable 57 to 51,
//! `merge_hot_16` unchanged at 63, but `merge_ready_1k` (several groups) 67.3 to 80.2 and
//! `merge_sparse_10k` 528.4 to 531.7: the several-group way ran more of its own code, its
//! decode and the tail's lookup among it (callgrind, line by line). With the several-group way
//! out of line: 48 and 56 on the one-group rows, but `merge_ready_1k` 108.3 and
//! `merge_sparse_10k` 572.9. Reaching group 0 through `first` in the view, in place of the
//! groups' vector, changed no count.
//!
//! Counted again against `8aa8e24`, where a key names its group by number: the view for the three
//! poll entries, `poll_next`, `poll_next_some` and `poll_with_budget`. Instructions:
//! `merge_hot_16_noop` growable 57 to 50, `merge_hot_16` 63 to 59, `merge_hot_16_u32` 64 to 59,
//! `merge_hot_16_24b` 67 to 62, `unordered_held_256` 152.2 to 148.2, `unordered_held_100k` 130.4 to
//! 126.4 and `future_queue_10k` 519.4 to 510.4; but `merge_ready_1k` growable 67.2 to 76.1,
//! `merge_sparse_10k` growable 528.4 to 535.8, `unordered_ready_512k` 188.7 to 190.7 and its
//! `block_on` row 174.7 to 178.7. In `merge_ready_1k`'s code (callgrind, instruction by
//! instruction), the several-group loop read the head's id and the groups' vector again after the
//! stream's poll and decoded the id twice, beside each call's test of the count of groups. Timed on
//! an AMD EPYC Zen 4 (family 25, model 17; two runs each, the two builds alternating, `StreamMap`
//! in the same process): `merge_hot_16_noop` growable 3.00-3.01 to 2.79-2.81 ms (1.11-1.14x to
//! 1.07-1.08x `StreamMap`), `merge_hot_16` growable 3.02-3.08 to 3.10-3.14 ms, `merge_ready_1k`
//! growable 446-449 to 475-480 µs (0.92-0.93x to 0.97-0.98x `StreamMap`): the no-op hot merge's
//! gain, which left it slower than `StreamMap` still, paid by the merges past one group.
//!
//! Counted against `fde0122` (instructions only): a push small enough for the caller's loop to
//! inline. In `ready_512k` the bench's push closure is not inlined into its refill loop (LLVM's
//! inline cost 485 against a threshold of 325; under `block_on` the threshold is 525 and it is,
//! which is most of the 15 between the two rows). With every case but a listed slot whose pair
//! is clear out of line in one call (a slot not made yet, a pair not clear, a slot still
//! linked), the panic of a full set given the capacity alone, and a bounded store's ids not
//! read, the cost was 340; with slots made 64 at a time by that call (so that the insert has one
//! path, the free list's), it was inlined: `ready_512k` 144.0 to 130.0 (futures-buffered: 137).
//! But the slots made ahead are read back by the insert that takes them: `held_256` 101.4 to
//! 109.3, `held_10k` 95.1 to 103.0, `merge_held_10k` 92.2 to 101.0, and the growable rows rose
//! 1 to 2% (`unordered_ready_512k` 188.7 to 191.0, `future_queue_10k` 516.1 to 527.7), `yield_16`
//! 87.6 to 89.0. Not kept; two parts that cost nothing were (the pair looked at once inline, a
//! bounded store's ids not read): `held_256` 101.5 to 100.4, `ready_512k` 144.0 to 143.0.
//!
//! Counted against `d24581e` (instructions only): every growable lookup by id (the poll's, the
//! head's and the tail's marks) testing the id itself against the index mask, group 0 reached
//! through `first` with the id as its index and no decode, the others decoded as before. Every
//! growable row it was counted on rose: `merge_hot_16_noop` 57 to 60, `merge_hot_16` 63 to 65,
//! `merge_ready_1k` 67.3 to 78.1, `merge_sparse_10k` 528.4 to 541.4, `keyed_churn_100k` 380.0
//! to 416.7, `unordered_sparse_10k` 429.0 to 438.1, `merge_held_10k` 127.9 to 143.8. The
//! decode it skips is a shift and a mask; the branch, and the two ways the compiler then keeps
//! apart after it, cost more.
//!
//! Counted against `8e6effb` (instructions only): a growable `extend` (and so `collect`) making
//! room for its iterator's lower size hint first, in one group beside the first, where growth
//! adds a group a quarter past 256 slots (21 groups for 10,000): `merge_held_10k` growable
//! 128.6 to 124.8, and 10,000 values collected in 6 allocations, not 44. Not kept: the growth
//! costs little of that row (the groups' slots and tables are made per slot either way), and a
//! group many times larger than those below it, once empty, stays while more values than fill
//! half the groups below it do, also once the arena has forgotten it (as it forgets what
//! `reserve` retains): past the bound after an output (at most `4 len + 32` slots once the
//! largest group is empty and nothing is retained). A first group of the hint, as `reserve`
//! makes on an empty arena, is kept as long as the arena. A slot
//! kept by pointer through its value's poll (the value reached from it, the round mark written
//! through it after, where the slots were looked up again): `yield_16` 87.5 to 85.6,
//! `keyed_churn_100k` growable 353.9 to 350.4, `held_256` 100.4 to 99.4, but `burst_100k`
//! 342.7 to 345.7 (354.1 to 358.7 under `block_on`), `merge_held_10k` growable 128.6 to 129.6,
//! `future_queue_10k` 516.5 to 518.5: not kept, two more `unsafe` functions for no gain across
//! the rows.
//!
//! Removed after measuring: a round of a growable arena past 256 KiB of slots prefetched the next
//! queued slot while it polled one. It had taken a sixth off a map of 10,000 streams woken from 4
//! threads, on the CPU it was added on and with the loop of then. Switched off on an Intel Xeon
//! (family 6, model 167; three runs each, the two builds alternating, over a peer in the same
//! process), no row gained from it: `unordered_held_100k` 0.390-0.397x to 0.370-0.374x
//! futures-buffered, `burst_100k` 0.413-0.437x to 0.399-0.421x, `unordered_sparse_10k` growable
//! 0.740-0.773x to 0.723-0.746x, `merge_held_10k` growable 1.73-1.78x to 1.63-1.74x the bounded,
//! `map_streams_10k` 0.94-1.06x to 0.90-0.95x `StreamMap`; `merge_wakes_10k` growable, a noisy row
//! of 4 threads, 0.93-1.24x to 0.77-1.37x the bounded (seven runs). Removed on an AMD EPYC Zen 4
//! (family 25, model 17; three runs each, the two builds alternating, each over a peer run just
//! after it), the rows it ran on: `merge_held_10k` growable 0.86-0.91x to 0.81-0.85x
//! futures-buffered, `unordered_held_100k` 0.750-0.755x to 0.712-0.732x, `burst_100k` 0.750-0.766x
//! to 0.707-0.717x, `unordered_sparse_10k` growable 1.01-1.04x to 0.97-1.00x; `map_streams_10k`
//! 0.66-0.82x to 0.61-0.76x `StreamMap` and `merge_wakes_10k` growable 0.84-1.17x to 0.82-1.85x
//! `StreamMap` (ten runs, medians 0.95x and 0.93x), both noisy rows of 4 threads (of their runs
//! without it, three of `map_streams_10k`'s six and seven of `merge_wakes_10k`'s ten had the
//! prefetch switched off by a constant, not removed). Rows it did not run on, which the loop's code
//! moved: `unordered_ready_512k` 5.27-5.47 to 5.11-5.19 ms, `merge_ready_1k` growable 0.80-0.84x to
//! 0.78-0.81x `StreamMap`, `merge_hot_16_noop` growable 1.20-1.21x to 1.06-1.24x,
//! `keyed_churn_100k` growable 2.57-2.62 to 2.56-2.64 ms, `unordered_held_256` 0.80-0.83x to
//! 0.82-0.83x futures-buffered. Instructions against `16fa764`: `burst_100k` 364.8 to 343.9,
//! `merge_held_10k` growable 141.9 to 127.9, `unordered_held_100k` 137.5 to 130.5,
//! `unordered_sparse_10k` growable 440.6 to 429.0, `unordered_ready_512k` 191.7 to 188.7, the hot
//! merges and `merge_ready_1k` unchanged; one row rose, `unordered_held_256` 153.7 to 156.6: the
//! loop is inlined into it in both builds, and its code there runs 8 more an item, for a reason not
//! found (the loop was two copies, one with the prefetch).
//!
//! # Layers
//!
//! The crate's modules are in layers, each importing only from its own and those below it
//! (`cargo xtask layers` checks it, and that no crate's modules import in a circle):
//!
//! 1. the root's `sync` (the atomics and cells, loom's under `--cfg pinfold_loom`), `unwind`,
//!    `key`, `index` (indexing by the indexes the arena keeps) and `coop`;
//! 2. `wake/`: `atomic_waker`, `ready_set` (the bitset), `wake_table` (the entries and the
//!    wakers' vtables), `hub` (the parent of a growable arena's groups) and `noted`;
//! 3. `poll`: the loop (`Rounds`, and the `PollStorage` trait through which it reaches a storage
//!    kind), what a poll came to ([`Step`](crate::Step)) and the intrusive queues through the
//!    slots' marks, in one file: a reader follows a round without leaving it;
//! 4. `storage/`: `store` (one block of slots and its wake table, and
//!    [`Arena`](crate::Arena), one store and its rounds), `growable` (a stack of stores:
//!    `Groups` and [`GrowableArena`](crate::GrowableArena)), `sizing`, `join_arena` and, in
//!    `storage/mod.rs`, the [`Storage`](crate::Storage) trait;
//! 5. `set/`: `keyed_set` ([`KeyedSet`](crate::KeyedSet)), what the sets and merges of the
//!    other crates are.
//!
//! The loop is written once, in `poll.rs`: `Rounds` owns the queues, the round number, the
//! budget and the owner's `BUSY`, and reaches each kind's storage through one trait of lookups
//! (`PollStorage`: a slot by id polled with its own waker, its mark, the wake table and the
//! parent's word, a `ParentWord`), implemented by a store (`storage/store.rs`), a growable
//! arena's groups (`storage/growable.rs`) and an armed join arena's values
//! (`storage/join_arena.rs`). Each arena's `engine` hands out its `Rounds` and its
//! `PollStorage`; the sets and merges (`set/keyed_set.rs`) call the loop on them directly, and
//! the provided methods of [`Storage`](crate::Storage) (`start_round`, `poll_next`,
//! `poll_next_some`, `poll_with_budget`) do the same for the other primitives. The queues reach
//! the slots' marks through the `Marks` trait (a mark lives in its slot), which the stores
//! implement; the loop imports nothing from the storage above it.
//!
//! # Walks
//!
//! One output, from the user's call down to the value's `poll` and back, each file named once,
//! in the order the call first enters it (it enters some more than once: `poll.rs` calls into
//! the store for each value it polls). Not counted: `index.rs` (indexing by the indexes the
//! arena keeps), `key.rs` (a key made from a slot and its generation), `storage/block.rs` (the
//! slots' allocation, reached through the store's `Deref` to its slots) and the crate's token
//! (`sealed::Token::new`, in `storage/mod.rs`), leaves entered on the way by every walk. A call
//! across files is one whose callee is written in another file than its caller (a closure
//! counts where it is written, a function passed to a combinator of `core`, as to
//! `Option::is_some_and`, as called by the file that passes it), the leaves' left out; in a
//! release build, the default features, with queues empty before the call, an output with no
//! `Drop` (one with a `Drop` is held by `unwind::QuietDrop` through the value's: one file and
//! two calls more) and a value whose waker was woken by value (gone when the value leaves).
//! Paths are under `crates/`.
//!
//! - **A bounded set** (`FuturesUnorderedBounded::poll_next`; a value woken from another
//!   thread, polled first in its round, done: 7 files, 30 calls across them, `store.rs` entered
//!   10 times, `poll.rs` and `wake_table.rs` 6 each):
//!   `unordered/src/bounded.rs` (the `Stream` impl, to the keyed set) →
//!   `arena/src/set/keyed_set.rs` (`KeyedSet::poll_next`, `poll_next_keyed`) →
//!   `arena/src/coop.rs` (`poll_output`: tokio's budget, without `tokio-coop` a call) → back in
//!   `keyed_set.rs` (`Futures::poll_arena`, which takes the loop's parts from the arena) →
//!   `arena/src/storage/store.rs` (`Arena::engine`) → `arena/src/poll.rs`
//!   (`Rounds::next_output`: `start_round`, whose `collect` asks `PollStorage::parent_word` and
//!   calls `PollStorage::drain`; `poll`; `poll_queued`, which pops with `Queue::pop_for_poll`)
//!   → back in `store.rs` (`PollStorage::parent_word`, through `arena/src/wake/wake_table.rs`
//!   (`WakeTable::parent_word`) to `arena/src/wake/ready_set.rs` (`ParentWord`); `drain`,
//!   through `WakeTable::drain` to `ready_set::drain`, filing each woken slot with
//!   `poll::file`; then `PollStorage::poll_slot`: `poll_at` (with `ready_set::take_unchecked`
//!   after a round's first poll), `poll_value`, `value_and_waker`, with `wake_table.rs`'s
//!   `borrowed_waker_unchecked`, and `watch::start` before the poll, `Watch::end` after it) →
//!   the value's `poll`, through `Step::of_future` in the set's closure (`keyed_set.rs`,
//!   `poll.rs`) → back in `poll.rs` (`settle`: a value that woke itself goes to the next
//!   round's queue), which calls `PollStorage::remove` (`store.rs` `remove_done`: the slot
//!   freed, and its entry unbound: `WakeTable::unbind`) → back with the output.
//! - **A growable set** (`FuturesUnordered::poll_next`, as above, one group, whose release
//!   policy the output leaves as it was: 10 files, 38 calls across them): as the bounded set
//!   from `unordered/src/growable.rs`, with `arena/src/storage/growable.rs` in place of
//!   `Arena::engine` and between `poll.rs` and the store: `Groups` implements `PollStorage`, a
//!   slot's id names its group (`split`), whose store is drained and polled; its wakes come
//!   through `arena/src/wake/hub.rs` (the hub's `ParentWord`), and a value that leaves is
//!   counted in `Groups::leaving`, the top group released if `arena/src/storage/sizing.rs`
//!   allows.
//! - **A merge of busy streams** (`MergeBounded::poll_next` of two streams or more, an item
//!   through `poll_first`: 7 files, 17 calls across them): `merge/src/bounded.rs` →
//!   `keyed_set.rs` (`Streams::poll_arena`) → `coop.rs` → `keyed_set.rs` → `store.rs`
//!   (`Arena::engine`) →
//!   `poll.rs` (`Rounds::next_output_some`, `poll_first`: the top word through
//!   `PollStorage::parent_word`, in `wake_table.rs`, and `ParentWord::nothing_woken`, in
//!   `ready_set.rs`) → `store.rs` (`PollStorage::poll_slot`, `poll_at`) → `wake_table.rs` →
//!   the stream's `poll_next`, through `Step::of_stream` → back in `poll_first`
//!   (`Queue::rotate`) → back with the item.
//! - **`join_all`** of futures ready at once (4 files): `join/src/join_all.rs` (`JoinAll`'s
//!   `poll`) → `join/src/join.rs` (`drive`, `poll_every_input`) →
//!   `arena/src/storage/join_arena.rs` (`fill_in_place`) → `join/src/input.rs` (each
//!   `Input::running` polled by `join.rs` `poll_input`, its output written over it) → back
//!   with the `Vec` (`Filled::All`). Once armed
//!   (some input was pending): `join.rs` → `join_arena.rs` (`start_round`, `poll_with_budget`) →
//!   `poll.rs` (the same loop) → `join_arena.rs` (`ArmedSlots`: a value by index and its
//!   waker, through `wake_table.rs`) → `ready_set.rs` → back.
//! - **The pool's acquire** (`pool/src/acquire.rs` `Acquire::poll`): the fast path →
//!   `pool/src/free_buffers.rs` (`FreeBuffers::take`: the thread's stock) →
//!   `pool/src/stocks.rs` (`Stock::enter`, `pop`, `leave`) → back with a `Buf`
//!   (`pool/src/buf.rs`). Otherwise `poll_slow` → `pool/src/shared.rs` (`Inner::refill`:
//!   `FreeBuffers::take_batch` from `pool/src/free_list.rs`, `stock_rest`; then, under the
//!   lock, `Inner::take_or_wait` → `FreeBuffers::take_or_wait`) → `pool/src/waiters.rs`
//!   (`Waiters::enqueue`; on a later poll `revisit`; on drop `leave`). `try_acquire`
//!   (`pool/src/pool.rs`) is `Inner::try_take`: `take`, `refill`, then `gather`.
//! - **The pool's release** (`Buf`'s drop, `pool/src/buf.rs`) → `shared.rs` (`Inner::release`)
//!   → `free_buffers.rs` (`FreeBuffers::give`: the thread's stock if it has room, `Given`) →
//!   `stocks.rs` (`Stock::enter`, `push`; `InStock::leave` once the count is the stock's) →
//!   back. Otherwise `Inner::released`: the buffers nobody waits for back to the state's count
//!   (`unref`), or, when someone waits, `release_one` (or `release_chain` for a batch) →
//!   `waiters.rs` (`Waiters::serve_oldest`, under the lock) → the waker woken after the lock is
//!   dropped.
//!
//! # Growable arenas
//!
//! A [`GrowableArena`](crate::GrowableArena) is a stack of stores (groups) whose parent is a bit
//! in one hub: the task registers once, with the hub, and learns from the hub which groups have
//! woken slots. The hub's word has its own `BUSY` bit, with the same meaning. The groups share
//! one poll loop and one queue, so a growable arena polls as one arena of its capacity does: a
//! slot's id in the queue is its group's number above its index in the group (a group holds at
//! most 2^26 slots), and a group's woken slots are filed into queues linked through that
//! group's own marks, then appended to the arena's. A group about to be released has its slots
//! taken out of the queues first. Groups are made
//! with generations past those of every group released before (one floor for all: a key names
//! its group by number, as a slot id does, and a group added while the arena grows back takes
//! the number of a released one), so keys stay unique; the floor starts at the arena's own first
//! generation, taken with its first group. A key's group is found with a shift.
//!
//! # Join arenas
//!
//! A [`JoinArena`](crate::JoinArena) holds a join's values in one `Vec` and has no slots to
//! free or reuse: entry `i` is value `i` for good, so it needs neither generations nor retired
//! entries. Its wake table is made only when the owner arms it, with one owner-only word per
//! value at the end of the same block (the round that last polled the value, and its queue
//! link), so arming costs one allocation. Its rounds are the same as an arena's, with one
//! addition: a value that returns `Pending` holding no clone of its own waker (the entry's
//! count of owned wakers is zero) and that did not wake itself can only be waiting for a waker
//! it was given before the arena was armed; it is queued for every later round, without
//! waking the task, until it keeps its own waker. The count is read with `Acquire` before the
//! bit, so a waker dropped meanwhile has left its bit visible. At the end, the values'
//! storage becomes the output `Vec` when the layouts allow, each value handed over and dropped
//! in place in order, each output written over values already dropped.
//!
//! # Panics
//!
//! A value's poll runs inside `catch_unwind` (in an `Arena`; a `JoinArena` lets the panic through
//! to its owner, a join, which drops every value): on a panic the value is dropped in place, its
//! slot freed, and the panic resumed. Removing a value does the bookkeeping before the drop, so a
//! panicking `Drop` leaves the arena consistent too. The task's waker is user code as well: its
//! `clone` during a registration, the `drop` of the waker it replaces, and its `wake` run with the
//! parent cell back in a consistent state (a registration that unwinds hands the cell back, and
//! with `std` the round still wakes the task if values wait to be polled), and a
//! value's self-wake never calls it while the owner polls (`BUSY`), so a panic in it is never
//! mistaken for the value's.
