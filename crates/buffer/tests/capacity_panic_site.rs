//! A bounded ordered set, or a buffer adapter, asked for more room than it can have panics at
//! the caller's line: `FuturesOrderedBounded::new` and the adapters carry `#[track_caller]`
//! down to the arena's check. (One test: the panic hook is the binary's.)

use std::future::Ready;

use futures_util::stream::{self, Iter};
use pinfold_buffer::{BufferExt, FobStreamExt, FuturesOrderedBounded, TryBufferExt};
use pinfold_testkit::panic_site::panic_site;

/// A source of futures: what they are does not matter, no adapter here polls one.
fn futures() -> Iter<std::vec::IntoIter<Ready<u32>>> {
    stream::iter(Vec::new())
}

/// A fallible future.
type Fallible = Ready<Result<u32, ()>>;

/// A source of fallible futures, for the `try_` adapters.
fn results() -> Iter<std::vec::IntoIter<Result<Fallible, ()>>> {
    stream::iter(Vec::new())
}

#[test]
fn a_capacity_past_the_limit_panics_at_the_callers_line() {
    let line = line!() + 1;
    let site = panic_site(|| FuturesOrderedBounded::<Ready<u32>>::new(usize::MAX));
    assert_eq!(
        site,
        format!("{}:{line}", file!()),
        "FuturesOrderedBounded::new"
    );
    let line = line!() + 1;
    let site = panic_site(|| futures().ordered_buffer(usize::MAX));
    assert_eq!(site, format!("{}:{line}", file!()), "ordered_buffer");
    let line = line!() + 1;
    let site = panic_site(|| futures().unordered_buffer(usize::MAX));
    assert_eq!(site, format!("{}:{line}", file!()), "unordered_buffer");
    let line = line!() + 1;
    let site = panic_site(|| futures().fast_ordered_buffer(usize::MAX));
    assert_eq!(site, format!("{}:{line}", file!()), "fast_ordered_buffer");
    let line = line!() + 1;
    let site = panic_site(|| results().try_ordered_buffer(usize::MAX));
    assert_eq!(site, format!("{}:{line}", file!()), "try_ordered_buffer");
    let line = line!() + 1;
    let site = panic_site(|| results().try_unordered_buffer(usize::MAX));
    assert_eq!(site, format!("{}:{line}", file!()), "try_unordered_buffer");
}
