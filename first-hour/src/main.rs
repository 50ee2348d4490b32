//! A new user's first hour: a futures-util program moved to pinfold, then the features its
//! docs show, each call written as a user writes it (method calls, `futures::StreamExt` in
//! scope, the facade's paths only).

use std::cell::Cell;
use std::time::Duration;

use futures::{StreamExt, stream};
use pinfold::*;

async fn fetch(id: u32) -> u32 {
    tokio::time::sleep(Duration::from_millis(u64::from(id % 3))).await;
    id * 2
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    // The import swap: `FuturesUnordered` from pinfold, `next` from `StreamExt`.
    let mut set: FuturesUnordered<_> = (0..8).map(fetch).collect();
    let mut sum = 0;
    while let Some(n) = set.next().await {
        sum += n;
    }
    assert_eq!(sum, 56);
    assert!(set.is_empty());

    // `concurrent_for_each` beside `StreamExt`'s `map` (and its own `for_each_concurrent`).
    let handled = Cell::new(0);
    stream::iter(0..20u32)
        .map(|n| n + 1)
        .concurrent_for_each(4, |n| {
            let handled = &handled;
            async move {
                let doubled = fetch(n).await;
                handled.set(handled.get() + doubled);
            }
        })
        .await;
    assert_eq!(handled.get(), 420);
    let futures_own = Cell::new(0);
    stream::iter(0..4u32)
        .for_each_concurrent(2, |n| {
            futures_own.set(futures_own.get() + n);
            async {}
        })
        .await;
    assert_eq!(futures_own.get(), 6);

    // A set driven while its consumer works.
    let set: FuturesUnordered<_> = (0..8).map(fetch).collect();
    let stored = Cell::new(0);
    set.driven(2)
        .for_each_driven(|n| {
            let stored = &stored;
            async move {
                tokio::time::sleep(Duration::from_millis(1)).await;
                stored.set(stored.get() + n);
            }
        })
        .await;
    assert_eq!(stored.get(), 56);

    // An adaptive limit steering a buffer.
    let adaptive = Adaptive::new(16);
    let responses: Vec<u32> = stream::iter(0..50u32)
        .map(|n| adaptive.measure(fetch(n)))
        .unordered_buffer(16)
        .limit(adaptive.limit())
        .collect()
        .await;
    assert_eq!(responses.len(), 50);
    assert!((1..=16).contains(&adaptive.get()));

    // Keys: removing by key, and a key of another set refused.
    let mut set = FuturesUnordered::new();
    let first = set.insert(fetch(1));
    let second = set.insert(fetch(2));
    assert!(set.remove(first));
    assert!(
        !set.remove(first),
        "a key is refused once its future is gone"
    );
    let mut other = FuturesUnordered::new();
    other.insert(fetch(3));
    other.insert(fetch(4)); // the same slot and count as `second` in `set`
    assert!(!other.remove(second), "a key of another set is refused");
    assert!(!other.contains_key(second));
    assert_eq!(other.len(), 2);
    assert_eq!(set.next().await, Some(4));
    let mut others: Vec<u32> = other.collect().await;
    others.sort();
    assert_eq!(others, [6, 8]);

    println!("first hour: every step ran as written");
}
