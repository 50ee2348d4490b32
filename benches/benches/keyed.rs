//! Keyed sets: insert a future, get its key, remove it by the key before it finishes.
//! pinfold's `FuturesUnorderedBounded` and growable `FuturesUnordered` (`insert` gives a
//! `Key`, `remove(key)` drops the future in place) against futures-concurrency's `FutureGroup`
//! (`insert` gives a key, `remove(key)`) and futures-util's `FuturesUnordered` with each future
//! wrapped in `Abortable` (removal is `AbortHandle::abort`, after which the set yields
//! `Err(Aborted)` for it): what users have for cancelling one future of a set (DESIGN.md's
//! "insert / remove by key churn" target). Under futures-executor's `block_on`.

use criterion::measurement::WallTime;
use criterion::{Criterion, criterion_group, criterion_main};
use futures_util::future::{AbortHandle, Abortable};
use pinfold_benches::{
    ChurnTally, FUTURES_CONCURRENCY, FUTURES_UTIL, Group, PINFOLD, PINFOLD_GROWABLE, Tuning,
    criterion, keyed_churn_block_on,
};

#[global_allocator]
static ALLOC: pinfold_benches::CountingAlloc = pinfold_benches::CountingAlloc::new();

type Bounded<F> = pinfold_unordered::FuturesUnorderedBounded<F>;
type Growable<F> = pinfold_unordered::FuturesUnordered<F>;
type FutureGroup<F> = futures_concurrency::future::FutureGroup<F>;
type Util<F> = futures_util::stream::FuturesUnordered<F>;

/// Futures inserted in all, half of them removed.
const TOTAL: usize = 100_000;
/// Futures in the set at once.
const CAPACITY: usize = 1_024;

/// A set of 1,024 futures kept full through 100,000 inserts, every other inserted future
/// removed by its key before it finishes, under futures-executor's `block_on`
/// ([`keyed_churn_block_on`]). Every future is pending on its first poll, where it wakes
/// itself; the even ones (kept) finish on their second poll, the odd ones (doomed) then stay
/// pending for good without waking, so they can only leave by their key. Each kept output
/// makes the driver remove the oldest doomed future (inserted about 512 outputs earlier, so
/// polled and waiting), then insert a kept and a doomed one: 50,000 outputs, 50,000 removals,
/// 100,000 inserts, 200,000 polls. Checked: exactly the 50,000 kept outputs come out, and
/// every removal finds its future still in the set.
///
/// pinfold's bounded set has capacity 1,024 ([`PINFOLD`]); its growable `FuturesUnordered`
/// ([`PINFOLD_GROWABLE`], a second row of the table), `FutureGroup` and futures-util's set
/// start empty and grow. futures-util's removal only marks the future aborted: it stays in the
/// set until the set polls it (woken by the abort) and yields `Err(Aborted)`, which the driver
/// discards.
fn keyed_churn_100k(c: &mut Criterion) {
    let expected = ChurnTally::expected(TOTAL, false);
    let mut group = Group::new(c, "keyed_churn_100k", Tuning::MEDIUM);
    group.bench(PINFOLD, || {
        let mut set = Bounded::new(CAPACITY);
        let tally = keyed_churn_block_on(
            &mut set,
            TOTAL,
            CAPACITY,
            |s, f| s.insert(f),
            |s, key| s.remove(key),
            Some,
        );
        assert_eq!(tally, expected);
    });
    group.bench(PINFOLD_GROWABLE, || {
        let mut set = Growable::new();
        let tally = keyed_churn_block_on(
            &mut set,
            TOTAL,
            CAPACITY,
            |s, f| s.insert(f),
            |s, key| s.remove(key),
            Some,
        );
        assert_eq!(tally, expected);
    });
    group.bench(FUTURES_CONCURRENCY, || {
        let mut set = FutureGroup::new();
        let tally = keyed_churn_block_on(
            &mut set,
            TOTAL,
            CAPACITY,
            |s, f| s.insert(f),
            |s, key| s.remove(key),
            Some,
        );
        assert_eq!(tally, expected);
    });
    let aborted = ChurnTally::expected(TOTAL, true);
    group.bench(FUTURES_UTIL, || {
        let mut set = Util::new();
        let tally = keyed_churn_block_on(
            &mut set,
            TOTAL,
            CAPACITY,
            |s, f| {
                let (handle, registration) = AbortHandle::new_pair();
                s.push(Abortable::new(f, registration));
                handle
            },
            |_, handle: AbortHandle| {
                handle.abort();
                true
            },
            Result::ok,
        );
        assert_eq!(tally, aborted);
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = criterion(WallTime);
    targets = keyed_churn_100k
}
criterion_main!(benches);
