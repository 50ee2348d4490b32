//! Futures may borrow locals declared after the set: the set has no `Drop` impl generic over
//! its futures, so the borrow checker does not make the locals outlive the set (the cases are
//! `pinfold_testkit::contract::borrowing`, written out for this set by a macro).

use pinfold_bounded::FuturesUnorderedBounded;

pinfold_testkit::borrowing_tests!(new: FuturesUnorderedBounded::new, futures: 3);
