//! Rounds of `poll_next`: a future woken during a call, not yet polled in it, is polled in it;
//! none is polled twice in a call; `clear` forgets the stream's end (the contract is
//! `pinfold_testkit::contract::rounds`).

use pinfold_unordered::{FuturesUnordered, Key};

pinfold_testkit::set_under_test!(Unordered: FuturesUnordered::with_capacity, Key);
pinfold_testkit::contract_tests!(Unordered: rounds);

/// The same contract on the bounded set.
mod bounded {
    use pinfold_unordered::{FuturesUnorderedBounded, Key};

    pinfold_testkit::set_under_test!(Bounded: FuturesUnorderedBounded::new, Key);
    pinfold_testkit::contract_tests!(Bounded: rounds);
}
