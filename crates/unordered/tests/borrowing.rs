//! Futures may borrow locals declared after the set: the set has no `Drop` impl generic over
//! its futures, so the borrow checker does not make the locals outlive the set (the cases are
//! `pinfold_testkit::contract::borrowing`, written out for this set by a macro). 40 futures:
//! more than the first group holds, so that the set grows while borrowing and the futures
//! that borrow themselves wait in two groups.

use pinfold_unordered::FuturesUnordered;

pinfold_testkit::borrowing_tests!(new: |_| FuturesUnordered::new(), futures: 40);

/// The same contract on the bounded set.
mod bounded {
    use pinfold_unordered::FuturesUnorderedBounded;

    pinfold_testkit::borrowing_tests!(new: FuturesUnorderedBounded::new, futures: 3);
}
