//! A bounded ordered set asked for more room than it can have panics at the caller's line:
//! `FuturesOrderedBounded::new` carries `#[track_caller]` down to the arena's check. (One
//! test: the panic hook is the binary's.)

use std::future::Ready;

use pinfold_buffer::FuturesOrderedBounded;
use pinfold_testkit::panic_site::panic_site;

#[test]
fn a_capacity_past_the_limit_panics_at_the_callers_line() {
    let line = line!() + 1;
    let site = panic_site(|| FuturesOrderedBounded::<Ready<u32>>::new(usize::MAX));
    assert_eq!(site, format!("{}:{line}", file!()));
}
