//! A `Limit` given to a second buffer panics at the caller's line (the `limit` or
//! `window_limit` call), not inside the crate. One test in this file, as it sets the process's
//! panic hook.

use std::panic::AssertUnwindSafe;

use futures_util::StreamExt;
use futures_util::stream;
use pinfold_buffer::{BufferExt, Limit, TryBufferExt};
use pinfold_testkit::panic_site::panic_site;

fn source() -> impl futures_core::Stream<Item = std::future::Ready<u32>> {
    stream::iter(0..4u32).map(std::future::ready)
}

fn fallible() -> impl futures_core::Stream<Item = Result<std::future::Ready<Result<u32, ()>>, ()>> {
    stream::iter(0..4u32).map(|n| Ok(std::future::ready(Ok(n))))
}

#[test]
fn a_limit_given_twice_panics_at_the_second_call() {
    let here = |site: String| site.starts_with(&format!("{}:", file!()));
    let limit = Limit::new(2);
    let _first = source().unordered_buffer(4).limit(limit.clone());

    let site = panic_site(AssertUnwindSafe(|| {
        source().unordered_buffer(4).limit(limit.clone())
    }));
    assert!(here(site.clone()), "unordered_buffer().limit: {site}");
    let site = panic_site(AssertUnwindSafe(|| {
        source().ordered_buffer(4).limit(limit.clone())
    }));
    assert!(here(site.clone()), "ordered_buffer().limit: {site}");
    let site = panic_site(AssertUnwindSafe(|| {
        source().ordered_buffer(4).window_limit(limit.clone())
    }));
    assert!(here(site.clone()), "ordered_buffer().window_limit: {site}");
    let site = panic_site(AssertUnwindSafe(|| {
        fallible().try_unordered_buffer(4).limit(limit.clone())
    }));
    assert!(here(site.clone()), "try_unordered_buffer().limit: {site}");
    let site = panic_site(AssertUnwindSafe(|| {
        fallible().try_ordered_buffer(4).window_limit(limit.clone())
    }));
    assert!(
        here(site.clone()),
        "try_ordered_buffer().window_limit: {site}"
    );
}
