//! A push into a full bounded merge panics at the caller's line: the merge's `push` and `insert`
//! carry `#[track_caller]`, as the keyed set's methods they forward to do. (One test: the panic
//! hook is the binary's.)

use std::panic::AssertUnwindSafe;
use std::vec::IntoIter;

use futures_util::stream::{self, Iter};

use pinfold_merge::MergeBounded;
use pinfold_testkit::panic_site::panic_site;

/// A stream of one item.
fn one() -> Iter<IntoIter<u32>> {
    stream::iter(vec![1])
}

#[test]
fn full_push_and_insert_panic_at_the_callers_line() {
    let mut merged: MergeBounded<Iter<IntoIter<u32>>> = MergeBounded::new(0);
    let line = line!() + 1;
    let site = panic_site(AssertUnwindSafe(|| merged.push(one())));
    assert_eq!(site, format!("{}:{line}", file!()));
    let line = line!() + 1;
    let site = panic_site(AssertUnwindSafe(|| merged.insert(one())));
    assert_eq!(site, format!("{}:{line}", file!()));
}
