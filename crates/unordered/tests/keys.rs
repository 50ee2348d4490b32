//! Keys: `insert` names a future, `poll_next_keyed` names the future of each output, `remove`
//! drops a future at once, and stale keys and stale wakers touch nothing (the contract is
//! `pinfold_testkit::contract::keys`). `with_capacity(1)` makes a first group of one slot, so
//! a future inserted after another finished takes its slot.

use pinfold_unordered::{FuturesUnordered, Key};

pinfold_testkit::set_under_test!(Unordered: FuturesUnordered::with_capacity, Key);
pinfold_testkit::contract_tests!(Unordered: keys);

/// Keys are numbered across the groups, and a group added while the set grows back may cover
/// the numbers of several groups released before: a key of any of them is refused.
#[test]
fn a_key_of_a_released_group_is_refused_after_the_set_grows_back_over_it() {
    use std::future::{Pending, pending};

    let mut set: FuturesUnordered<Pending<()>> = FuturesUnordered::new();
    let mut below: Vec<Key> = (0..64).map(|_| set.insert(pending())).collect();
    // Group 2 appears; its first slot is numbered 64 and ages by two stays.
    let mut aged = set.insert(pending());
    for _ in 0..2 {
        assert!(set.remove(aged));
        aged = set.insert(pending());
    }
    assert!(set.remove(aged));
    for key in below.drain(..) {
        assert!(set.remove(key));
    }
    assert!(set.is_empty());
    let capacity = set.capacity();
    below.extend((0..64).map(|_| set.insert(pending())));
    let regrown = set.insert(pending());
    assert!(
        set.capacity() > capacity,
        "the set grew back past its first group"
    );
    assert_ne!(regrown, aged);
    assert!(!set.contains_key(aged), "a departed key is refused");
    assert!(set.get(aged).is_none());
    assert!(!set.remove(aged), "a departed key removes nothing");
    assert!(set.contains_key(regrown), "the new future is still there");
    assert_eq!(set.len(), 65);
}
