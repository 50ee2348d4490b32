//! A task waker that panics in `clone`, `wake`, `wake_by_ref` or `drop`: the panic reaches
//! the code that ran it, and the set loses no wake, drops no future and leaks nothing (the
//! contract is `pinfold_testkit::contract::task_waker_panics`).

use pinfold_unordered::{FuturesUnordered, Key};

pinfold_testkit::set_under_test!(Unordered: FuturesUnordered::with_capacity, Key);
pinfold_testkit::contract_tests!(Unordered: task_waker_panics);

/// The same contract on the bounded set.
mod bounded {
    use pinfold_unordered::{FuturesUnorderedBounded, Key};

    pinfold_testkit::set_under_test!(Bounded: FuturesUnorderedBounded::new, Key);
    pinfold_testkit::contract_tests!(Bounded: task_waker_panics);
}
