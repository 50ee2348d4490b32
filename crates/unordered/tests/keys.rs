//! Keys: `insert` names a future, `poll_next_keyed` names the future of each output, `remove`
//! drops a future at once, and stale keys and stale wakers touch nothing (the contract is
//! `pinfold_testkit::contract::keys`). `with_capacity(1)` makes a first group of one slot, so
//! a future inserted after another finished takes its slot.

use pinfold_unordered::{FuturesUnordered, Key};

pinfold_testkit::set_under_test!(Unordered: FuturesUnordered::with_capacity, Key);
pinfold_testkit::contract_tests!(Unordered: keys);
