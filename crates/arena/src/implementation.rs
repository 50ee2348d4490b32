//! How the arena works: the design, for readers of the code.
//!
//! # Two allocations
//!
//! An [`Arena<T>`](crate::Arena) owns a boxed slice of slots and one reference to a *wake
//! table*. The slots are touched only by the owner (through `&mut Arena`), so they need no
//! synchronisation: each holds an `Option<T>`, a link in the free list, and a link in the poll
//! queue. The boxed slice is never reallocated, and a value is only dropped in place, which is
//! what makes handing out `Pin<&mut T>` sound.
//!
//! The wake table is a single block shared with the wakers:
//!
//! ```text
//! [ Header: refs | parent | sizes ][ Entry 0 | Entry 1 | ... ][ ready bitset words ... ]
//! ```
//!
//! A slot's waker is a `RawWaker` whose data pointer is the address of its entry; the entry
//! stores the slot's index, from which the header is found by pointer arithmetic. Cloning a
//! waker adds a reference to the table, dropping it releases one, and the table is freed when
//! the arena and every waker are gone: so a waker may outlive the arena, and waking it then only
//! sets a bit nobody reads. The arena lends *borrowed* wakers to the values it polls (no
//! reference counting unless the value clones it).
//!
//! # The ready set
//!
//! A hierarchical atomic bitset: one bit per slot, a summary bit per word, and so on up to a
//! single top word (two levels up to 4,096 slots, three up to 262,144). A wake does
//! `fetch_or` on its slot's word and climbs only if that word was empty; so a burst of wakes
//! costs one atomic each, and only the wake that made the whole set non-empty notifies the
//! parent. That is the coalescing: many wakes of one slot set one bit, and many slots woken in
//! a burst wake the parent task once.
//!
//! The owner drains top-down with `swap(0)`, clearing each parent bit before the word it
//! summarises. A wake racing the drain either lands in a word not yet swapped (and is taken
//! with it) or finds its word empty and climbs to a top word already cleared, and notifies the
//! parent. The parent registers its waker *before* draining, so that notification reaches it.
//! The loom models in `loom-tests/` check this protocol.
//!
//! # The poll queue and fairness
//!
//! Drained slots go into an owner-side FIFO queue, an intrusive list through the slots, with a
//! `queued` flag so a slot is in it at most once. A newly inserted value is appended to the
//! queue directly, with no atomic operation at all. A poll call takes slots from the queue and
//! polls them with their wakers. It collects new wakes into the queue only while it has taken
//! nothing from the queue yet: after that, a slot woken again could be one it polled already,
//! so instead it wakes its own task and returns `Pending` (it yields). With the budget rule
//! (yield after polling as many values as the arena held, or after two values woke themselves)
//! a value that always wakes itself can starve neither the executor nor the other values.
//!
//! # Several arenas, one parent
//!
//! An arena's parent is either its own [`AtomicWaker`]-style cell (the task polling it) or a
//! bit in a [`Hub`](crate::Hub) shared with other arenas: a set that grows by adding arenas
//! registers its task once, with the hub, and learns from the hub which arenas have woken
//! slots.
//!
//! # Panics
//!
//! A value's poll runs inside `catch_unwind`: on a panic the value is dropped in place, its
//! slot freed, and the panic resumed. Removing a value does the bookkeeping before the drop, so
//! a panicking `Drop` leaves the arena consistent too.
//!
//! [`AtomicWaker`]: https://docs.rs/futures/latest/futures/task/struct.AtomicWaker.html
