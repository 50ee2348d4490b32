//! A merge asked for more room than it can have panics at the caller's line, as a push into a
//! full one does: `MergeBounded::new`, `Merge::with_capacity` and `Merge::reserve` carry
//! `#[track_caller]` down to the arena's check. (One test: the panic hook is the binary's.)

use std::panic::AssertUnwindSafe;
use std::vec::IntoIter;

use futures_util::stream::Iter;

use pinfold_merge::{Merge, MergeBounded};
use pinfold_testkit::panic_site::panic_site;

/// The streams merged: what they are does not matter, no merge here holds one.
type Numbers = Iter<IntoIter<u32>>;

#[test]
fn capacities_past_the_limit_panic_at_the_callers_line() {
    let line = line!() + 1;
    let site = panic_site(|| MergeBounded::<Numbers>::new(usize::MAX));
    assert_eq!(site, format!("{}:{line}", file!()), "MergeBounded::new");
    let line = line!() + 1;
    let site = panic_site(|| Merge::<Numbers>::with_capacity(usize::MAX));
    assert_eq!(site, format!("{}:{line}", file!()), "Merge::with_capacity");
    let mut merged = Merge::<Numbers>::new();
    let line = line!() + 1;
    let site = panic_site(AssertUnwindSafe(|| merged.reserve(usize::MAX)));
    assert_eq!(site, format!("{}:{line}", file!()), "Merge::reserve");
}
