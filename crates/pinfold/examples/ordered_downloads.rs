//! An ordered download queue with one slow download, run through futures-util's
//! `buffered(4)` and through pinfold's `ordered_buffer(4)`, with and without a `window`.
//!
//! Both keep the queue's order. `buffered` keeps it by holding finished downloads in its 4
//! slots, so while the slow one runs, the slots behind it fill up with finished work and no
//! new download starts. `ordered_buffer` keeps starting downloads while the slow one holds up
//! the head; `window(8)` bounds how many downloads are running or finished-but-held, so the
//! memory stays bounded too.
//!
//! Latency is simulated on tokio's paused clock, so the times printed are virtual and the
//! same on every run: `cargo run -p pinfold --example ordered_downloads`.

use std::cell::Cell;
use std::future::Future;
use std::pin::pin;
use std::rc::Rc;
use std::time::Duration;

use futures_util::{Stream, StreamExt, stream};
use pinfold::BufferExt;
use tokio::time::{Instant, sleep};

/// How many downloads the queue holds.
const DOWNLOADS: u32 = 16;
/// How many downloads may run at once.
const CONCURRENCY: usize = 4;
/// The download that is slow.
const SLOW: u32 = 1;

/// How long download `id` takes.
fn latency(id: u32) -> Duration {
    Duration::from_millis(if id == SLOW { 800 } else { 100 })
}

/// The downloads finished and not yet handed on (the memory an ordered queue needs), and the
/// most there ever were at once.
#[derive(Default)]
struct Held {
    now: Cell<usize>,
    most: Cell<usize>,
}

/// Downloads `id`: takes [`latency`]`(id)` of (virtual) time, gives the file's name.
async fn download(id: u32, held: Rc<Held>) -> String {
    sleep(latency(id)).await;
    held.now.set(held.now.get() + 1);
    held.most.set(held.most.get().max(held.now.get()));
    format!("file-{id:02}")
}

/// The download queue, as a stream of download futures.
fn queue(held: Rc<Held>) -> impl Stream<Item = impl Future<Output = String>> {
    stream::iter(0..DOWNLOADS).map(move |id| download(id, held.clone()))
}

/// Drains `files`, checks they come in queue order, and prints how long it took, how many
/// downloads ran at once on average, and the most finished downloads held at once.
async fn report(name: &str, held: &Held, files: impl Stream<Item = String>) {
    let start = Instant::now();
    let mut files = pin!(files);
    let mut next = 0;
    while let Some(file) = files.next().await {
        assert_eq!(file, format!("file-{next:02}"), "out of order");
        next += 1;
        held.now.set(held.now.get() - 1);
    }
    assert_eq!(next, DOWNLOADS);
    let elapsed = start.elapsed();
    let busy: Duration = (0..DOWNLOADS).map(latency).sum();
    println!(
        "{name:<36} {:>5} ms  {:>11.1}  {:>4}",
        elapsed.as_millis(),
        busy.as_secs_f64() / elapsed.as_secs_f64(),
        held.most.get(),
    );
}

// Virtual time: tokio's clock is paused, so the sleeps take no real time.
#[tokio::main(flavor = "current_thread", start_paused = true)]
async fn main() {
    println!(
        "{DOWNLOADS} downloads in order, {CONCURRENCY} at a time; download {SLOW} takes {} ms, \
         the others {} ms\n",
        latency(SLOW).as_millis(),
        latency(0).as_millis(),
    );
    println!(
        "{:<36} {:>8}  {:>11}  {:>4}",
        "", "all done", "avg running", "held"
    );

    let held = Rc::new(Held::default());
    let files = queue(held.clone()).buffered(CONCURRENCY);
    report("futures-util buffered(4)", &held, files).await;

    let held = Rc::new(Held::default());
    let files = queue(held.clone()).ordered_buffer(CONCURRENCY);
    report("pinfold ordered_buffer(4)", &held, files).await;

    let held = Rc::new(Held::default());
    let files = queue(held.clone()).ordered_buffer(CONCURRENCY).window(8);
    report("pinfold ordered_buffer(4).window(8)", &held, files).await;

    println!(
        "\n(avg running: downloads running at once, on average; held: the most finished \
         downloads waiting to be handed on at once)"
    );
}
