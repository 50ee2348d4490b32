//! A map asked for more room than it can have panics at the caller's line:
//! `FutureMap::with_capacity` and `StreamMap::with_capacity_and_hasher` carry `#[track_caller]`
//! down to the arena's check. (One test: the panic hook is the binary's.)

use std::collections::hash_map::RandomState;
use std::future::Ready;

use futures_util::stream::Iter;
use pinfold_map::{FutureMap, StreamMap};
use pinfold_testkit::panic_site::panic_site;

#[test]
fn capacities_past_the_limit_panic_at_the_callers_line() {
    let line = line!() + 1;
    let site = panic_site(|| FutureMap::<u32, Ready<u32>>::with_capacity(usize::MAX));
    assert_eq!(
        site,
        format!("{}:{line}", file!()),
        "FutureMap::with_capacity"
    );
    let hasher = RandomState::new();
    let line = line!() + 1;
    let site = panic_site(|| {
        StreamMap::<u32, Iter<std::vec::IntoIter<u32>>, _>::with_capacity_and_hasher(
            usize::MAX,
            hasher,
        )
    });
    assert_eq!(
        site,
        format!("{}:{}", file!(), line + 1),
        "StreamMap::with_capacity_and_hasher"
    );
}
