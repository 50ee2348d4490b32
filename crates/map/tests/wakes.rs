//! Wakes: a value that returned `Pending` is polled again only once woken, and no wake is lost
//! when values are finished, or streams fed, from other threads, under a parking executor or
//! on tokio's multi-thread runtime: every output comes once, under its key.

mod support;

use std::collections::VecDeque;
use std::task::Poll;
use std::thread;

use futures_channel::{mpsc, oneshot};
use futures_util::StreamExt;
use pinfold_map::StreamMap;
use pinfold_testkit::future::block_on;
use support::{
    MapUnderTest, XorShift, assert_each_stream_whole_and_in_order, both, counting_waker, poll_with,
    probes,
};

both!(
    a_pending_value_is_not_polled_until_woken,
    outputs_sent_from_std_threads_all_come_under_a_parking_executor,
    #[cfg_attr(miri, ignore)] // tokio's multi-thread runtime is too slow under Miri
    outputs_sent_from_tokio_tasks_all_come_on_a_multi_thread_runtime,
);

/// Three probes: one poll each, then none until one is woken, and only that one is polled.
fn a_pending_value_is_not_polled_until_woken<M: MapUnderTest>() {
    let mut map = M::new();
    let (probes, states) = probes(3);
    for (id, probe) in probes.into_iter().enumerate() {
        M::insert(&mut map, id, probe);
    }
    let polls = || states.iter().map(|state| state.polls()).collect::<Vec<_>>();
    let (task, wakes) = counting_waker();
    for _ in 0..5 {
        assert_eq!(poll_with(&mut map, &task), Poll::Pending);
    }
    assert_eq!(
        polls(),
        [1, 1, 1],
        "a pending value was polled without a wake"
    );
    assert_eq!(wakes.count(), 0, "the task was woken with nothing to do");

    states[1].waker().wake();
    assert_eq!(wakes.count(), 1, "a value's wake did not wake the task");
    assert_eq!(poll_with(&mut map, &task), Poll::Pending);
    assert_eq!(polls(), [1, 2, 1]);
    states[2].finish();
    assert_eq!(poll_with(&mut map, &task), Poll::Ready(Some((2, 2))));
    assert_eq!(polls(), [1, 2, 2]);
}

/// What round `round` of key `key` sends.
type Sent = (usize, usize);
/// The receivers of each key, in round order.
type Receivers = Vec<VecDeque<oneshot::Receiver<Sent>>>;
/// The senders, each with the `(key, round)` it sends.
type Senders = Vec<(Sent, oneshot::Sender<Sent>)>;

/// The channels of a run in which each of `keys` keys holds `rounds` futures in turn (the
/// next inserted when the last one's output comes): the receivers of each key, in round
/// order, and every `(key, round)` with its sender, shuffled.
fn rounds(keys: usize, rounds: usize, seed: u64) -> (Receivers, Senders) {
    let mut receivers = Vec::new();
    let mut senders = Vec::new();
    for key in 0..keys {
        let mut queue = VecDeque::new();
        for round in 0..rounds {
            let (sender, receiver) = oneshot::channel();
            queue.push_back(receiver);
            senders.push(((key, round), sender));
        }
        receivers.push(queue);
    }
    XorShift::new(seed).shuffle(&mut senders);
    (receivers, senders)
}

/// Awaits the outputs of a map holding the first receiver of each key, inserting a key's
/// next receiver when its last one's output comes: each output must come under its key, in
/// its round; returns how many came.
async fn consume<M: MapUnderTest>(mut receivers: Receivers) -> usize {
    let mut map = M::new();
    for (key, queue) in receivers.iter_mut().enumerate() {
        M::insert(&mut map, key, queue.pop_front().unwrap());
    }
    let mut next_round = vec![0; receivers.len()];
    let mut count = 0;
    while let Some((key, sent)) = map.next().await {
        assert_eq!(
            sent,
            Ok((key, next_round[key])),
            "an output under key {key}"
        );
        next_round[key] += 1;
        count += 1;
        if let Some(next) = receivers[key].pop_front() {
            // A stream has yet to end: the next one replaces it.
            let replaced = M::insert(&mut map, key, next);
            assert_eq!(replaced, !M::KEY_LEAVES_WITH_OUTPUT);
        }
    }
    count
}

/// `items` dealt round-robin into `hands` hands.
fn deal<T>(items: Vec<T>, hands: usize) -> Vec<Vec<T>> {
    let mut dealt: Vec<Vec<T>> = (0..hands).map(|_| Vec::new()).collect();
    for (i, item) in items.into_iter().enumerate() {
        dealt[i % hands].push(item);
    }
    dealt
}

/// Std threads share the shuffled senders and send, now and then yielding, while the main
/// thread awaits the outputs with an executor that parks until woken (a lost wake hangs).
fn outputs_sent_from_std_threads_all_come_under_a_parking_executor<M: MapUnderTest>() {
    let (keys, rounds_per_key, threads) = if cfg!(miri) { (6, 3, 2) } else { (100, 10, 4) };
    let (receivers, senders) = rounds(keys, rounds_per_key, 17);
    let producers: Vec<_> = deal(senders, threads)
        .into_iter()
        .map(|mine| {
            thread::spawn(move || {
                for (i, (sent, sender)) in mine.into_iter().enumerate() {
                    sender.send(sent).unwrap();
                    if i % 4 == 0 {
                        thread::yield_now();
                    }
                }
            })
        })
        .collect();
    assert_eq!(block_on(consume::<M>(receivers)), keys * rounds_per_key);
    for producer in producers {
        producer.join().unwrap();
    }
}

/// Producer tasks on the workers of a multi-thread runtime send while a consumer task awaits
/// the outputs, so the wakes come from other workers and the consumer may move between them.
fn outputs_sent_from_tokio_tasks_all_come_on_a_multi_thread_runtime<M: MapUnderTest>()
where
    M::Map<usize, oneshot::Receiver<Sent>>: Send,
{
    let (keys, rounds_per_key, producers) = (200, 10, 16);
    let runtime = multi_thread_runtime();
    for seed in 1..=5 {
        let (receivers, senders) = rounds(keys, rounds_per_key, seed);
        let count = runtime.block_on(async move {
            let consumer = tokio::spawn(consume::<M>(receivers));
            for mine in deal(senders, producers) {
                tokio::spawn(async move {
                    for (i, (sent, sender)) in mine.into_iter().enumerate() {
                        sender.send(sent).unwrap();
                        if i % 3 == 0 {
                            tokio::task::yield_now().await;
                        }
                    }
                });
            }
            consumer.await.unwrap()
        });
        assert_eq!(count, keys * rounds_per_key);
    }
}

fn multi_thread_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .unwrap()
}

/// A `StreamMap` of `streams` channels under keys `0..streams`, and their senders.
fn channels(
    streams: usize,
) -> (
    StreamMap<usize, mpsc::UnboundedReceiver<usize>>,
    Vec<mpsc::UnboundedSender<usize>>,
) {
    let mut map = StreamMap::with_capacity(streams);
    let senders = (0..streams)
        .map(|key| {
            let (sender, receiver) = mpsc::unbounded();
            map.insert(key, receiver);
            sender
        })
        .collect();
    (map, senders)
}

/// Each std thread feeds its own share of the channels, a few items at a time to a channel
/// picked at random, and drops each once it sent all its items; the main thread collects the
/// map with an executor that parks until woken.
#[test]
fn items_sent_from_std_threads_come_in_order_under_their_keys() {
    let (streams, per_stream, threads) = if cfg!(miri) { (6, 3, 2) } else { (64, 20, 4) };
    let (map, senders) = channels(streams);
    let senders: Vec<_> = senders.into_iter().map(|sender| (sender, 0)).collect();
    let producers: Vec<_> = deal(senders, threads)
        .into_iter()
        .zip(1..)
        .map(|(mut share, seed)| {
            thread::spawn(move || {
                let mut rng = XorShift::new(seed);
                while !share.is_empty() {
                    let pick = rng.below(share.len());
                    let (sender, sent) = &mut share[pick];
                    for _ in 0..=rng.below(3) {
                        if *sent < per_stream {
                            sender.unbounded_send(*sent).unwrap();
                            *sent += 1;
                        }
                    }
                    if *sent == per_stream {
                        share.swap_remove(pick);
                    }
                }
            })
        })
        .collect();
    let items = block_on(map.collect::<Vec<_>>());
    for producer in producers {
        producer.join().unwrap();
    }
    assert_each_stream_whole_and_in_order(&items, &vec![per_stream; streams]);
}

/// One producer task per channel on a multi-thread runtime, while a consumer task collects
/// the map.
#[test]
#[cfg_attr(miri, ignore)] // tokio's multi-thread runtime is too slow under Miri
fn items_sent_from_tokio_tasks_come_in_order_under_their_keys() {
    let (streams, per_stream) = (200, 10);
    let runtime = multi_thread_runtime();
    for _ in 0..5 {
        let (map, senders) = channels(streams);
        let items = runtime.block_on(async move {
            let consumer = tokio::spawn(map.collect::<Vec<_>>());
            for (key, sender) in senders.into_iter().enumerate() {
                tokio::spawn(async move {
                    for seq in 0..per_stream {
                        sender.unbounded_send(seq).unwrap();
                        if (key + seq) % 3 == 0 {
                            tokio::task::yield_now().await;
                        }
                    }
                });
            }
            consumer.await.unwrap()
        });
        assert_each_stream_whole_and_in_order(&items, &vec![per_stream; streams]);
    }
}
