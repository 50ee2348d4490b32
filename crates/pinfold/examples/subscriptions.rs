//! Subscriptions kept in a [`StreamMap`] keyed by topic: one stream of items, each tagged with
//! the topic it came from.
//!
//! Shows a subscription added while the map runs, a subscription whose stream ends taking its
//! key out of the map by itself, and unsubscribing by key (`remove`), which drops the stream
//! at once: none of its items come after that. The feeds tick on tokio's paused clock, so the
//! times printed are virtual and the same on every run:
//! `cargo run -p pinfold --example subscriptions`.

use std::collections::BTreeSet;
use std::time::Duration;

use futures_util::{Stream, StreamExt, stream};
use pinfold::StreamMap;
use tokio::time::{Instant, sleep};

/// A feed that gives an update every `every`, `count` updates in all, then ends.
fn feed(every: Duration, count: u32) -> impl Stream<Item = String> {
    stream::unfold(0, move |n| async move {
        if n == count {
            return None;
        }
        sleep(every).await;
        Some((format!("update {n}"), n + 1))
    })
}

/// Prints the topics that left the map by themselves since `subscribed` was last brought up to
/// date, and brings it up to date.
fn report_ended<S>(subscribed: &mut BTreeSet<&'static str>, map: &StreamMap<&'static str, S>) {
    let ended: Vec<_> = subscribed
        .iter()
        .copied()
        .filter(|topic| !map.contains_key(topic))
        .collect();
    for topic in ended {
        subscribed.remove(topic);
        println!("         '{topic}' ended and left the map; subscribed: {subscribed:?}");
    }
}

// Virtual time: tokio's clock is paused, so the sleeps take no real time.
#[tokio::main(flavor = "current_thread", start_paused = true)]
async fn main() {
    let ms = Duration::from_millis;
    let start = Instant::now();
    let mut subscriptions = StreamMap::new();
    let mut subscribed = BTreeSet::new();
    for (topic, every, count) in [
        ("prices", ms(100), u32::MAX),
        ("news", ms(250), 2),
        ("weather", ms(400), 3),
    ] {
        subscriptions.insert(topic, feed(every, count));
        subscribed.insert(topic);
    }
    println!("subscribed: {subscribed:?}");

    while let Some((topic, update)) = subscriptions.next().await {
        println!("{:>5} ms [{topic}] {update}", start.elapsed().as_millis());
        report_ended(&mut subscribed, &subscriptions);

        if topic == "prices" && update == "update 2" {
            subscriptions.insert("sports", feed(ms(150), 2));
            subscribed.insert("sports");
            println!("         subscribed to 'sports'; subscribed: {subscribed:?}");
        }
        if topic == "prices" && update == "update 7" {
            // Unsubscribing drops the stream now: no update of it comes after this one.
            assert!(subscriptions.remove("prices"));
            subscribed.remove("prices");
            println!("         unsubscribed from 'prices'; subscribed: {subscribed:?}");
        }
    }
    report_ended(&mut subscribed, &subscriptions);
    assert!(subscriptions.is_empty() && subscribed.is_empty());
    println!(
        "{:>5} ms no subscription left: the map's stream has ended",
        start.elapsed().as_millis()
    );
}
