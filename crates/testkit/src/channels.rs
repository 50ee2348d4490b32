//! Oneshot channels completed from other threads: wakes that come from outside the task that
//! polls the receivers, from several threads at once.

use std::thread::{self, JoinHandle};

use futures_channel::oneshot::{Receiver, Sender, channel};

/// A channel's sender, and the id to send through it.
pub type IdSender = (usize, Sender<usize>);

/// `n` oneshot channels: the receivers, in id order, and each sender with the id to send.
pub fn id_channels(n: usize) -> (Vec<Receiver<usize>>, Vec<IdSender>) {
    (0..n)
        .map(|id| {
            let (tx, rx) = channel();
            (rx, (id, tx))
        })
        .unzip()
}

/// Sends each id of `senders` through its sender from `threads` std threads, dealt out in
/// turn (the `k`-th sender to thread `k % threads`, which sends its own in that order,
/// yielding after each send if `yield_between`); the threads, to join.
///
/// # Panics
/// A thread panics if a receiver was dropped.
pub fn send_from_threads(
    senders: Vec<IdSender>,
    threads: usize,
    yield_between: bool,
) -> Vec<JoinHandle<()>> {
    let mut batches: Vec<Vec<_>> = (0..threads).map(|_| Vec::new()).collect();
    for (k, sender) in senders.into_iter().enumerate() {
        batches[k % threads].push(sender);
    }
    batches
        .into_iter()
        .map(|batch| {
            thread::spawn(move || {
                for (id, tx) in batch {
                    tx.send(id).unwrap();
                    if yield_between {
                        thread::yield_now();
                    }
                }
            })
        })
        .collect()
}
