//! A [`FuturesUnorderedBounded`] as a connection limiter: its capacity is the most connections
//! served at once, fixed when it is made, and its storage is allocated once then.
//!
//! Each accepted connection is pushed with `try_push`. When the set is full, `try_push` hands
//! the connection's future back instead of dropping it; the server keeps it aside, stops
//! accepting, and pushes it as soon as a connection in flight finishes. Connections arrive and
//! are served on tokio's paused clock, so the times printed are virtual and the same on every
//! run: `cargo run -p pinfold --example connection_limiter`.

use std::pin::pin;
use std::time::Duration;

use futures_util::{Stream, StreamExt, stream};
use pinfold::FuturesUnorderedBounded;
use tokio::time::{Instant, sleep};

/// The most connections served at once.
const LIMIT: usize = 3;
/// How long each connection takes to serve, in milliseconds; one arrives every 50 ms.
const SERVE_MS: [u64; 8] = [400, 150, 300, 100, 250, 120, 200, 80];

/// The connections as they arrive: their numbers.
fn incoming() -> impl Stream<Item = usize> {
    stream::unfold(0, |id| async move {
        if id == SERVE_MS.len() {
            return None;
        }
        sleep(Duration::from_millis(50)).await;
        Some((id, id + 1))
    })
}

/// Serves connection `id`; gives its number back when done.
async fn serve(id: usize) -> usize {
    sleep(Duration::from_millis(SERVE_MS[id])).await;
    id
}

// Virtual time: tokio's clock is paused, so the sleeps take no real time.
#[tokio::main(flavor = "current_thread", start_paused = true)]
async fn main() {
    let start = Instant::now();
    let at = || format!("{:>5} ms", start.elapsed().as_millis());
    let mut in_flight = FuturesUnorderedBounded::new(LIMIT);
    let mut incoming = pin!(incoming());
    // A connection accepted while the set was full, its future handed back by `try_push`.
    let mut waiting = None;
    let mut served = 0;

    println!(
        "serving {} connections, at most {LIMIT} at once",
        SERVE_MS.len()
    );
    loop {
        tokio::select! {
            Some(id) = in_flight.next(), if !in_flight.is_empty() => {
                served += 1;
                println!("{} connection {id} done ({} in flight)", at(), in_flight.len());
                if let Some((id, connection)) = waiting.take() {
                    // A slot was just freed: this push cannot fail.
                    in_flight.push(connection);
                    println!("{} connection {id} admitted ({} in flight)", at(), in_flight.len());
                }
            }
            arrived = incoming.next(), if waiting.is_none() => match arrived {
                Some(id) => match in_flight.try_push(serve(id)) {
                    Ok(()) => {
                        println!("{} connection {id} accepted ({} in flight)", at(), in_flight.len());
                    }
                    Err(connection) => {
                        println!("{} connection {id} waits: {LIMIT} in flight, the limit", at());
                        waiting = Some((id, connection));
                    }
                },
                None => break,
            },
        }
        assert!(in_flight.len() <= LIMIT);
    }
    while let Some(id) = in_flight.next().await {
        served += 1;
        println!(
            "{} connection {id} done ({} in flight)",
            at(),
            in_flight.len()
        );
    }
    assert_eq!(served, SERVE_MS.len());
    println!("{} all {served} connections served", at());
}
