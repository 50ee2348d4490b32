//! Wakes: a stream that returned `Pending` is polled again only once woken, and no wake is lost
//! when streams are fed from other threads, under a parking executor or on tokio's
//! multi-thread runtime; each stream's items still come whole and in order.

mod support;

use std::task::Poll;
use std::thread;

use futures_channel::mpsc;
use futures_util::StreamExt;
use pinfold_testkit::future::block_on;
use support::{
    MergeUnderTest, Tracked, XorShift, assert_each_stream_whole_and_in_order, both, counting_waker,
    poll_with,
};

both!(
    a_pending_stream_is_not_polled_until_woken,
    items_sent_from_std_threads_all_come_under_a_parking_executor,
    #[cfg_attr(miri, ignore)] // tokio's multi-thread runtime is too slow under Miri
    items_sent_from_tokio_tasks_all_come_on_a_multi_thread_runtime,
);

/// The channels of these tests, carrying `(stream, seq)` items.
type Sender = mpsc::UnboundedSender<(usize, usize)>;
type Receiver = mpsc::UnboundedReceiver<(usize, usize)>;

/// Three channels, counting their polls: one poll each, then none until a send wakes one of
/// them, and only that one is polled.
fn a_pending_stream_is_not_polled_until_woken<M: MergeUnderTest>() {
    let mut merged = M::new(3);
    let mut senders = Vec::new();
    let mut counts = Vec::new();
    for id in 0..3 {
        let (sender, receiver) = mpsc::unbounded::<usize>();
        let (stream, count) = Tracked::new(id, receiver);
        M::insert(&mut merged, stream);
        senders.push(sender);
        counts.push(count);
    }
    let polls = || counts.iter().map(|count| count.polls()).collect::<Vec<_>>();
    let (task, wakes) = counting_waker();
    for _ in 0..5 {
        assert!(poll_with(&mut merged, &task).is_pending());
    }
    assert_eq!(
        polls(),
        [1, 1, 1],
        "a pending stream was polled without a wake"
    );
    assert_eq!(wakes.count(), 0, "the task was woken with nothing to do");

    senders[1].unbounded_send(7).unwrap();
    assert!(wakes.count() >= 1, "a stream's wake did not wake the task");
    assert_eq!(poll_with(&mut merged, &task), Poll::Ready(Some(7)));
    assert_eq!(polls(), [1, 2, 1]);
    // Having given an item, it is polled once more without a wake (it may have another),
    // then waits for its waker again.
    for _ in 0..3 {
        assert!(poll_with(&mut merged, &task).is_pending());
    }
    assert_eq!(polls(), [1, 3, 1]);
}

/// A merge of `streams` channels, the senders with their stream's number.
fn channels<M: MergeUnderTest>(streams: usize) -> (M::Merge<Receiver>, Vec<(usize, Sender)>) {
    let mut merged = M::new(streams);
    let senders = (0..streams)
        .map(|id| {
            let (sender, receiver) = mpsc::unbounded();
            M::insert(&mut merged, receiver);
            (id, sender)
        })
        .collect();
    (merged, senders)
}

/// Std threads, each holding some of the channels, send their items interleaved at random and
/// close the channels one by one, while the main thread drains the merge with an executor that
/// parks until woken (a lost wake hangs).
fn items_sent_from_std_threads_all_come_under_a_parking_executor<M: MergeUnderTest>() {
    let (rounds, streams, per_stream, threads) = if cfg!(miri) {
        (1, 6, 3, 2)
    } else {
        (20, 64, 20, 4)
    };
    for round in 0..rounds {
        let (merged, senders) = channels::<M>(streams);
        let mut dealt: Vec<Vec<_>> = (0..threads).map(|_| Vec::new()).collect();
        for (i, sender) in senders.into_iter().enumerate() {
            dealt[i % threads].push((sender, 0));
        }
        let producers: Vec<_> = dealt
            .into_iter()
            .enumerate()
            .map(|(thread, mut mine)| {
                thread::spawn(move || {
                    let mut rng = XorShift::new((round * threads + thread + 1) as u64);
                    while !mine.is_empty() {
                        let pick = rng.below(mine.len());
                        let ((id, sender), sent) = &mut mine[pick];
                        sender.unbounded_send((*id, *sent)).unwrap();
                        *sent += 1;
                        if *sent == per_stream {
                            // Closes the channel: its stream ends.
                            mine.swap_remove(pick);
                        }
                        if rng.below(4) == 0 {
                            thread::yield_now();
                        }
                    }
                })
            })
            .collect();
        let items: Vec<(usize, usize)> = block_on(merged.collect());
        for producer in producers {
            producer.join().unwrap();
        }
        assert_each_stream_whole_and_in_order(&items, &vec![per_stream; streams]);
    }
}

/// Producer tasks on the workers of a multi-thread runtime feed the channels while a consumer
/// task awaits the merge's items with `StreamExt::next`.
fn items_sent_from_tokio_tasks_all_come_on_a_multi_thread_runtime<M: MergeUnderTest>()
where
    M::Merge<Receiver>: Send,
{
    let (rounds, streams, per_stream) = (10, 200, 10);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .unwrap();
    for round in 0..rounds {
        let (mut merged, senders) = channels::<M>(streams);
        let items = runtime.block_on(async move {
            // The consumer is a task of its own, so the wakes come from other workers and it
            // may itself move between them.
            let consumer = tokio::spawn(async move {
                let mut items = Vec::new();
                while let Some(item) = merged.next().await {
                    items.push(item);
                }
                items
            });
            for (id, sender) in senders {
                tokio::spawn(async move {
                    for seq in 0..per_stream {
                        sender.unbounded_send((id, seq)).unwrap();
                        if (id + seq + round) % 3 == 0 {
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
