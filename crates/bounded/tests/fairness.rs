//! Fairness: one `poll_next` polls each future at most once, and yields to the executor
//! (waking its task) instead of spinning on futures that wake themselves, without starving any
//! (the contract is `pinfold_testkit::contract::fairness`).

use pinfold_bounded::{FuturesUnorderedBounded, Key};

pinfold_testkit::set_under_test!(Bounded: FuturesUnorderedBounded::new, Key);
pinfold_testkit::contract_tests!(Bounded: fairness);
