//! A set asked for more room than it can have panics at the caller's line, as a push into a
//! full one does: `FuturesUnorderedBounded::new`, `FuturesUnordered::with_capacity` and
//! `FuturesUnordered::reserve` carry `#[track_caller]` down to the arena's check. (One test:
//! the panic hook is the binary's.)

use std::future::Ready;
use std::panic::AssertUnwindSafe;

use pinfold_testkit::panic_site::panic_site;
use pinfold_unordered::{FuturesUnordered, FuturesUnorderedBounded};

#[test]
fn capacities_past_the_limit_panic_at_the_callers_line() {
    let line = line!() + 1;
    let site = panic_site(|| FuturesUnorderedBounded::<Ready<u32>>::new(usize::MAX));
    assert_eq!(
        site,
        format!("{}:{line}", file!()),
        "FuturesUnorderedBounded::new"
    );
    let line = line!() + 1;
    let site = panic_site(|| FuturesUnordered::<Ready<u32>>::with_capacity(usize::MAX));
    assert_eq!(
        site,
        format!("{}:{line}", file!()),
        "FuturesUnordered::with_capacity"
    );
    let mut set = FuturesUnordered::<Ready<u32>>::new();
    let line = line!() + 1;
    let site = panic_site(AssertUnwindSafe(|| set.reserve(usize::MAX)));
    assert_eq!(
        site,
        format!("{}:{line}", file!()),
        "FuturesUnordered::reserve"
    );
}
