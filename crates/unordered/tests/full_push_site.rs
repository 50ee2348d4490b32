//! A push into a full bounded set panics at the caller's line: the set's `push` and `insert`
//! carry `#[track_caller]`, as the keyed set's methods they forward to do. (One test: the panic
//! hook is the binary's.)

use std::future::{Ready, ready};
use std::panic::AssertUnwindSafe;

use pinfold_testkit::panic_site::panic_site;
use pinfold_unordered::FuturesUnorderedBounded;

#[test]
fn full_push_and_insert_panic_at_the_callers_line() {
    let mut set: FuturesUnorderedBounded<Ready<u32>> = FuturesUnorderedBounded::new(0);
    let line = line!() + 1;
    let site = panic_site(AssertUnwindSafe(|| set.push(ready(1))));
    assert_eq!(site, format!("{}:{line}", file!()));
    let line = line!() + 1;
    let site = panic_site(AssertUnwindSafe(|| set.insert(ready(2))));
    assert_eq!(site, format!("{}:{line}", file!()));
    // A refused value with a `Drop` takes another way to the panic.
    let mut set: FuturesUnorderedBounded<Ready<String>> = FuturesUnorderedBounded::new(0);
    let line = line!() + 1;
    let site = panic_site(AssertUnwindSafe(|| set.push(ready(String::from("x")))));
    assert_eq!(site, format!("{}:{line}", file!()));
}
