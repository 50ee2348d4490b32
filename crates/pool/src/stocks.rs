//! The threads' stocks of free buffers: a fixed number of short lists per pool, each owned by
//! one thread at a time, which acquires from and releases into it with plain loads and stores
//! (no locked instruction), so that threads running side by side touch only their own.
//!
//! A stock is reached by others only while the pool's flags are set ([`WAITING`]: a task is
//! about to wait, or a [`try_acquire`](crate::BufferPool::try_acquire) looks everywhere;
//! [`DRAINED`]: the stocks stay swept while the pool is short of buffers; [`CLOSED`]: the last
//! handle is gone). Its owner brackets each operation with its `busy`
//! flag: it stores `busy`, passes a [light barrier](barrier::light), loads the flags, and
//! touches the stock only if none is set. The one who sets a flag (with the waiter lock held,
//! or as the last handle) passes a [heavy barrier](barrier::heavy) after it, then for each
//! stock waits while its owner is busy and takes what it holds. The two barriers order each
//! side's store before its load, so either the owner sees the flag (and leaves its stock
//! alone), or the sweeper sees the owner busy (and waits for it to finish); a stock is never
//! used by two at once, and no buffer stays in one while a task waits.
//!
//! Which stock a thread owns is [`slot`]: with `std`, a thread claims a free one at its first
//! use of any pool, for every pool, and gives it back when it exits (its stocks stay, for the
//! next owner or a sweep). Threads beyond the number of stocks, and every thread without
//! `std` (no thread-locals, so no owner), use the pool's shared list only.
//!
//! A child forked from a process has only the thread that called `fork`: the stocks of the
//! parent's other threads have no owner there, and one whose owner was busy at the fork stays
//! busy for good. On unix, a `pthread_atfork` handler marks them [`orphaned`] in the child
//! before its `fork` returns: they are never owned again there, and a sweep takes the buffers
//! of those that are not busy (as of a thread that exited) and passes over those that are,
//! instead of waiting (their buffers are lost to the child, as are those the threads held).

use crate::block::Metas;
use crate::free_list::{Chain, NIL};
use crate::sync::{AtomicBool, AtomicU32, AtomicU64, Ordering, spin_loop};

/// How many stocks a pool has, and so how many threads own one at a time.
#[cfg(not(all(pinfold_loom, feature = "loom")))]
pub(crate) const STOCKS: usize = 32;
/// Two under loom: with the main thread and two workers, the models see threads that own a
/// stock and a thread that uses the shared list.
#[cfg(all(pinfold_loom, feature = "loom"))]
pub(crate) const STOCKS: usize = 2;

/// The most buffers moved between a stock and the shared list at once.
pub(crate) const MAX_BATCH: u32 = 16;

/// A pool's flag: tasks wait (or a sweep is under way). Stocks are empty and untouched by
/// their owners while it is set. Set and cleared with the shared list's
/// [`TO_WAITERS`](crate::free_list::TO_WAITERS) bit, which sends what is given back to the
/// waiters.
pub(crate) const WAITING: u32 = 1;
/// A pool's flag: the stocks were swept and are unused (their owners take from and give to
/// the shared list) while the pool is short of buffers, so that waiting again pays no
/// barrier; cleared once the shared list has gone a while without being found empty (see
/// `free_buffers`).
pub(crate) const DRAINED: u32 = 4;
/// A pool's flag: no handle is left. Stocks are empty for good; a release gives up its
/// buffer's count instead.
pub(crate) const CLOSED: u32 = 2;

/// How many buffers a pool of `count` moves between a stock and the shared list at once: a
/// share of the pool small enough that the stocks together hold at most half of it at their
/// high-water mark (twice a batch each).
pub(crate) fn batch(count: u32) -> u32 {
    (count / (4 * STOCKS as u32)).clamp(1, MAX_BATCH)
}

/// One thread's free buffers in one pool: a list linked through the buffers' metas, and the
/// owner's `busy` flag, on a cache line of their own.
pub(crate) struct Stock {
    /// Set by the owner while it uses the stock.
    busy: AtomicBool,
    /// The first buffer (low 32 bits, [`NIL`] if none) and how many (high 32 bits). Written
    /// by the owner while busy and no flag is set, or by a sweep while a flag is set and the
    /// owner is not busy: never by two at once, so plain loads and stores.
    list: AtomicU64,
}

const EMPTY: u64 = NIL as u64;

fn first(list: u64) -> u32 {
    list as u32
}

fn len(list: u64) -> u32 {
    (list >> 32) as u32
}

fn list(first: u32, len: u32) -> u64 {
    (len as u64) << 32 | first as u64
}

impl Stock {
    pub(crate) fn new() -> Self {
        Self {
            busy: AtomicBool::new(false),
            list: AtomicU64::new(EMPTY),
        }
    }

    /// The owner starts an operation: `true` if no flag is set, and the stock is its own until
    /// [`leave`](Self::leave); `false` (and not busy) if one is.
    #[inline]
    pub(crate) fn enter(&self, flags: &AtomicU32) -> bool {
        self.busy.store(true, Ordering::Relaxed);
        barrier::light();
        // Acquire pairs with the Release store that cleared the flags after a sweep: what the
        // sweep wrote to this stock happens before the owner uses it again.
        if flags.load(Ordering::Acquire) == 0 {
            return true;
        }
        self.leave();
        false
    }

    /// The owner ends an operation. Nothing of the pool is touched after it: a sweep by the
    /// last handle's drop may free the pool once it sees the owner not busy.
    #[inline]
    pub(crate) fn leave(&self) {
        // Release pairs with the Acquire load of a sweep: the owner's use of the stock (and of
        // the buffers it put there) happens before the sweep takes them.
        self.busy.store(false, Ordering::Release);
    }

    /// Pops a buffer. The owner, between `enter` and `leave`.
    #[inline]
    pub(crate) fn pop(&self, metas: Metas<'_>) -> Option<u32> {
        let now = self.list.load(Ordering::Relaxed);
        let index = first(now);
        // `None` at `NIL`: the stock is empty.
        let next = metas.try_get(index)?.next.load(Ordering::Relaxed);
        self.list.store(list(next, len(now) - 1), Ordering::Relaxed);
        Some(index)
    }

    /// Pushes buffer `index`, unless the stock holds `high` already (`false`). The owner,
    /// between `enter` and `leave`.
    #[inline]
    pub(crate) fn push(&self, metas: Metas<'_>, index: u32, high: u32) -> bool {
        let now = self.list.load(Ordering::Relaxed);
        if len(now) >= high {
            return false;
        }
        metas.get(index).next.store(first(now), Ordering::Relaxed);
        self.list
            .store(list(index, len(now) + 1), Ordering::Relaxed);
        true
    }

    /// Takes up to `max` (at least 1) buffers from the top, as a chain. The owner between
    /// `enter` and `leave`, or a sweep.
    pub(crate) fn take(&self, metas: Metas<'_>, max: u32) -> Option<Chain> {
        let now = self.list.load(Ordering::Relaxed);
        let head = first(now);
        if head == NIL {
            return None;
        }
        let (mut last, mut taken) = (head, 1);
        while taken < max.min(len(now)) {
            last = metas.get(last).next.load(Ordering::Relaxed);
            taken += 1;
        }
        let rest = if taken == len(now) {
            NIL
        } else {
            metas.get(last).next.load(Ordering::Relaxed)
        };
        self.list
            .store(list(rest, len(now) - taken), Ordering::Relaxed);
        Some(Chain::new(head, last, taken))
    }

    /// Puts `chain` on top. The owner, between `enter` and `leave`.
    pub(crate) fn put(&self, metas: Metas<'_>, chain: Chain) {
        let now = self.list.load(Ordering::Relaxed);
        metas
            .get(chain.last)
            .next
            .store(first(now), Ordering::Relaxed);
        self.list
            .store(list(chain.first, len(now) + chain.len), Ordering::Relaxed);
    }

    /// Takes every buffer, once the owner is not busy. Only after a flag was set and the heavy
    /// barrier passed (so the owner's next `enter` sees the flag): the owner is inside at most
    /// the few instructions of one operation (no user code runs there), which this waits out.
    /// `None` for an [abandoned](Self::abandoned) stock, whose owner will never come out.
    pub(crate) fn sweep(&self, metas: Metas<'_>, slot: usize) -> Option<Chain> {
        // Acquire as in `leave`.
        let mut spins = 0_u32;
        while self.busy.load(Ordering::Acquire) {
            if orphaned(slot) {
                return None;
            }
            spins += 1;
            backoff(spins);
        }
        self.take(metas, u32::MAX)
    }

    /// Whether this stock, number `slot`, is abandoned: [`orphaned`] and busy, so its owner
    /// was inside an operation when a thread of another one forked this process. Nobody
    /// touches it again, and its buffers are not to be found.
    pub(crate) fn abandoned(&self, slot: usize) -> bool {
        // Relaxed: an orphaned stock's `busy` changed last before this process began.
        orphaned(slot) && self.busy.load(Ordering::Relaxed)
    }

    /// How many buffers the stock holds: a snapshot, exact when nobody uses it meanwhile.
    pub(crate) fn len(&self) -> u32 {
        len(self.list.load(Ordering::Relaxed))
    }
}

/// Waits a little for a busy owner: spins at first, then lets other threads run (the owner
/// may have been preempted inside its operation).
fn backoff(spins: u32) {
    #[cfg(all(feature = "std", not(all(pinfold_loom, feature = "loom"))))]
    if spins > 64 {
        std::thread::yield_now();
        return;
    }
    let _ = spins;
    spin_loop();
}

/// The calling thread's stock, `0..STOCKS`, if it owns one: with `std`, claimed at the first
/// call (the first free one, for good: a thread that finds none uses the shared list from then
/// on) and given back when the thread exits.
#[cfg(all(feature = "std", not(all(pinfold_loom, feature = "loom"))))]
#[inline]
pub(crate) fn slot() -> Option<usize> {
    owner::slot()
}

/// Without `std` there are no thread-locals, so no thread owns a stock.
#[cfg(all(not(feature = "std"), not(all(pinfold_loom, feature = "loom"))))]
#[inline]
pub(crate) fn slot() -> Option<usize> {
    None
}

/// Whether stock `slot` is orphaned: owned, when a thread of another one forked this process,
/// by a thread the child does not have (see [`owner`]). For good: nobody in this process will
/// own it.
#[cfg(all(feature = "std", not(all(pinfold_loom, feature = "loom"))))]
#[inline]
pub(crate) fn orphaned(slot: usize) -> bool {
    owner::orphaned(slot)
}

/// Without `std` no thread owns a stock, and under loom no process forks.
#[cfg(not(all(feature = "std", not(all(pinfold_loom, feature = "loom")))))]
#[inline]
pub(crate) fn orphaned(_slot: usize) -> bool {
    false
}

/// The calling thread's stock under loom: handed out in turn from a counter that starts over
/// with each execution, so every execution maps threads alike; threads past [`STOCKS`] own
/// none.
#[cfg(all(pinfold_loom, feature = "loom"))]
pub(crate) fn slot() -> Option<usize> {
    use loom::sync::atomic::AtomicUsize;

    loom::lazy_static! {
        static ref NEXT: AtomicUsize = AtomicUsize::new(0);
    }
    loom::thread_local! {
        static SLOT: usize = NEXT.fetch_add(1, Ordering::Relaxed);
    }
    SLOT.with(|slot| (*slot < STOCKS).then_some(*slot))
}

#[cfg(all(feature = "std", not(all(pinfold_loom, feature = "loom"))))]
mod owner {
    use core::cell::Cell;
    use core::sync::atomic::{AtomicBool, Ordering};

    use super::STOCKS;

    /// Which stocks threads own, process-wide (a thread's stock is the same index in every
    /// pool).
    static CLAIMED: [AtomicBool; STOCKS] = [const { AtomicBool::new(false) }; STOCKS];

    /// Which stocks were owned, when a thread of another one forked this process, by a thread
    /// this process does not have: set in the child by [`forked`], before it runs anything
    /// else, and never cleared. They stay [`CLAIMED`], so that no thread owns them again: a
    /// sweep could not tell a new owner's `busy` (to wait out) from the one the old owner left
    /// set for good (to pass over).
    static ORPHANED: [AtomicBool; STOCKS] = [const { AtomicBool::new(false) }; STOCKS];

    /// Not claimed yet.
    const UNCLAIMED: u8 = u8::MAX;
    /// None: every stock was owned at the first call, or the thread is exiting.
    const NONE: u8 = u8::MAX - 1;

    std::thread_local! {
        /// The thread's stock, [`UNCLAIMED`] or [`NONE`]. No destructor, so it can be read
        /// while the thread's other thread-locals are destroyed (a buffer dropped by one).
        static SLOT: Cell<u8> = const { Cell::new(UNCLAIMED) };
        /// Gives the thread's stock back when the thread exits.
        static GIVE_BACK: GiveBack = const { GiveBack };
    }

    struct GiveBack;

    impl Drop for GiveBack {
        fn drop(&mut self) {
            let slot = SLOT.with(|slot| slot.replace(NONE));
            if usize::from(slot) < STOCKS {
                // Release pairs with the Acquire of the next claim: this thread's use of its
                // stocks happens before the next owner's.
                CLAIMED[usize::from(slot)].store(false, Ordering::Release);
            }
        }
    }

    #[inline]
    pub(super) fn slot() -> Option<usize> {
        let slot = SLOT.with(Cell::get);
        if usize::from(slot) < STOCKS {
            Some(usize::from(slot))
        } else if slot == UNCLAIMED {
            claim()
        } else {
            None
        }
    }

    /// Whether stock `slot` is orphaned (see [`ORPHANED`]).
    #[inline]
    pub(super) fn orphaned(slot: usize) -> bool {
        // Relaxed: set before this process had a second thread, which it started after.
        ORPHANED[slot].load(Ordering::Relaxed)
    }

    #[cold]
    #[inline(never)]
    fn claim() -> Option<usize> {
        SLOT.with(|slot| slot.set(NONE));
        // No owner without the heavy barrier (a kernel that refuses `membarrier`): its light
        // one orders nothing then.
        if !super::barrier::ready() {
            return None;
        }
        // No owner unless a forked child will know the stocks of the threads it lacks.
        if !fork::watched() {
            return None;
        }
        // Registers the destructor that gives the stock back; a thread already exiting gets
        // none.
        GIVE_BACK.try_with(|_| {}).ok()?;
        let index = CLAIMED.iter().position(|claimed| {
            // Acquire as in `GiveBack::drop`.
            claimed
                .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
        })?;
        SLOT.with(|slot| slot.set(index as u8));
        Some(index)
    }

    /// In a forked child, before it runs anything else (a `pthread_atfork` handler, on the one
    /// thread it has, the one that called `fork`): every stock claimed by another thread is
    /// [orphaned](ORPHANED). Touches only atomics and a thread-local without destructor, as a
    /// handler of a multi-threaded process's fork may.
    #[cfg_attr(not(all(unix, not(miri))), allow(dead_code))]
    extern "C" fn forked() {
        let own = SLOT.try_with(Cell::get).unwrap_or(NONE);
        for (slot, claimed) in CLAIMED.iter().enumerate() {
            // Relaxed: the child has one thread, and the threads it starts start after this.
            if slot != usize::from(own) && claimed.load(Ordering::Relaxed) {
                ORPHANED[slot].store(true, Ordering::Relaxed);
            }
        }
    }

    /// Registers [`forked`] with `pthread_atfork`, once per process (a child inherits it).
    #[cfg(all(unix, not(miri)))]
    mod fork {
        use core::sync::atomic::{AtomicU8, Ordering};

        /// 0: not asked yet; 1: registered; 2: refused.
        static STATE: AtomicU8 = AtomicU8::new(0);

        /// Whether [`forked`](super::forked) runs in every child forked from now on (registers
        /// it at the first call). Until it does, no thread owns a stock.
        pub(super) fn watched() -> bool {
            // Acquire pairs with the Release store below: the registration happens before a
            // claim that finds it done, and so before any fork that finds the stock claimed.
            match STATE.load(Ordering::Acquire) {
                1 => true,
                2 => false,
                _ => {
                    // Two threads that come here at once both register: the handler then runs
                    // twice in a child, and does the same each time.
                    // SAFETY: `forked` is an `extern "C" fn()` that lives as long as the
                    // process and neither unwinds nor needs anything of the caller's.
                    let registered =
                        unsafe { libc::pthread_atfork(None, None, Some(super::forked)) } == 0;
                    // Release as above.
                    STATE.store(if registered { 1 } else { 2 }, Ordering::Release);
                    registered
                }
            }
        }
    }

    /// Without `fork` (or under Miri, which runs none), nothing to watch.
    #[cfg(not(all(unix, not(miri))))]
    mod fork {
        pub(super) fn watched() -> bool {
            true
        }
    }
}

/// The two barriers of the stocks' protocol. Each orders its thread's store before its load
/// (a StoreLoad barrier); the light one is paid by every stock operation, the heavy one once
/// per sweep.
///
/// On Linux with `std`, the light barrier is a compiler fence only, and the heavy one is the
/// `membarrier` system call (`MEMBARRIER_CMD_PRIVATE_EXPEDITED`), which runs a full barrier on
/// every CPU running a thread of the process (a thread not running passed one when it was
/// switched out): an owner's store and load, with no barrier between them on its CPU, are
/// ordered around the sweeper's. It is registered before the first thread owns a stock; if
/// the kernel refuses, no thread ever owns one (every thread uses the shared list). Elsewhere
/// (other systems, Miri, loom) both are `fence(SeqCst)`, which orders the same stores and loads
/// at the price of a full barrier in every stock operation.
#[cfg(all(
    target_os = "linux",
    feature = "std",
    not(miri),
    not(all(pinfold_loom, feature = "loom"))
))]
pub(crate) use asymmetric as barrier;
#[cfg(not(all(
    target_os = "linux",
    feature = "std",
    not(miri),
    not(all(pinfold_loom, feature = "loom"))
)))]
pub(crate) use symmetric as barrier;

/// The barriers on Linux with `std`: a compiler fence, and `membarrier`.
#[cfg(all(
    target_os = "linux",
    feature = "std",
    not(miri),
    not(all(pinfold_loom, feature = "loom"))
))]
pub(crate) mod asymmetric {
    use core::sync::atomic::{AtomicU8, Ordering, compiler_fence};

    const PRIVATE_EXPEDITED: libc::c_int = 1 << 3;
    const REGISTER_PRIVATE_EXPEDITED: libc::c_int = 1 << 4;

    /// 0: not asked yet; 1: registered; 2: refused.
    static STATE: AtomicU8 = AtomicU8::new(0);

    fn membarrier(command: libc::c_int) -> bool {
        // SAFETY: `membarrier(cmd, flags, cpu_id)` reads no memory of the caller; an unknown
        // command or a refused one returns -1 and changes nothing.
        unsafe { libc::syscall(libc::SYS_membarrier, command, 0 as libc::c_uint, 0) == 0 }
    }

    /// Whether threads may own stocks: whether the process is registered for
    /// `PRIVATE_EXPEDITED` (registers it at the first call).
    pub(crate) fn ready() -> bool {
        // Relaxed: the answer is the kernel's; registering twice is harmless.
        match STATE.load(Ordering::Relaxed) {
            1 => true,
            2 => false,
            _ => {
                let registered = membarrier(REGISTER_PRIVATE_EXPEDITED);
                STATE.store(if registered { 1 } else { 2 }, Ordering::Relaxed);
                registered
            }
        }
    }

    /// An owner's barrier, between its `busy` store and its load of the flags.
    #[inline]
    pub(crate) fn light() {
        compiler_fence(Ordering::SeqCst);
    }

    /// A sweeper's barrier, between its store of a flag and its loads of the owners' `busy`.
    pub(crate) fn heavy() {
        // Registered already if any thread owns a stock (asking again is harmless); if the
        // kernel refused, no thread owns one and there is nothing to order.
        if ready() && !membarrier(PRIVATE_EXPEDITED) {
            // Registered, so it cannot fail; if it did, the owners' compiler fences would
            // order nothing, and going on could hand one buffer to two owners.
            pinfold_sync::abort();
        }
    }
}

/// The barriers elsewhere: `fence(SeqCst)` on both sides.
#[cfg(not(all(
    target_os = "linux",
    feature = "std",
    not(miri),
    not(all(pinfold_loom, feature = "loom"))
)))]
pub(crate) mod symmetric {
    use crate::sync::{Ordering, fence};

    /// Whether threads may own stocks: always.
    #[cfg(all(feature = "std", not(all(pinfold_loom, feature = "loom"))))]
    pub(crate) fn ready() -> bool {
        true
    }

    /// An owner's barrier, between its `busy` store and its load of the flags.
    #[inline]
    pub(crate) fn light() {
        fence(Ordering::SeqCst);
    }

    /// A sweeper's barrier, between its store of a flag and its loads of the owners' `busy`.
    pub(crate) fn heavy() {
        fence(Ordering::SeqCst);
    }
}

#[cfg(all(test, not(all(pinfold_loom, feature = "loom"))))]
mod tests {
    use super::*;

    #[test]
    fn a_list_word_holds_its_first_buffer_and_length() {
        let word = list(7, 3);
        assert_eq!((first(word), len(word)), (7, 3));
        assert_eq!((first(EMPTY), len(EMPTY)), (NIL, 0));
    }

    /// Threads alive at once each own a stock of their own, the same at every call: a stock's
    /// protocol orders its one owner against sweeps, never against a second owner.
    #[cfg(feature = "std")]
    #[test]
    fn threads_alive_at_once_own_a_stock_each() {
        use std::sync::{Arc, Barrier};

        const THREADS: usize = 4;
        let all_claimed = Arc::new(Barrier::new(THREADS));
        let threads: std::vec::Vec<_> = (0..THREADS)
            .map(|_| {
                let all_claimed = Arc::clone(&all_claimed);
                std::thread::spawn(move || {
                    let first = slot();
                    let again = slot();
                    all_claimed.wait();
                    assert_eq!(first, again, "a thread's stock is the same at every call");
                    first
                })
            })
            .collect();
        let mut owned: std::vec::Vec<usize> = threads
            .into_iter()
            .map(|thread| {
                thread
                    .join()
                    .unwrap()
                    .expect("a thread owns a stock while stocks are free")
            })
            .collect();
        owned.sort_unstable();
        owned.dedup();
        assert_eq!(owned.len(), THREADS, "two threads own one stock");
    }

    /// More threads than stocks, one after another, each own one: a thread's stock is given
    /// back when it exits, so a program that starts threads for ever keeps its stocks.
    #[cfg(feature = "std")]
    #[test]
    fn a_threads_stock_is_given_back_when_it_exits() {
        for _ in 0..2 * STOCKS {
            let owned = std::thread::spawn(slot).join().unwrap();
            assert!(owned.is_some(), "an exited thread's stock is owned again");
        }
    }
}
