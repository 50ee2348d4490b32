//! `FuturesUnorderedBounded` receiving its futures' outputs from other threads.
//!
//! Three futures, each the receiving end of a one-shot channel (a value and the receiver's
//! waker behind a loom mutex); one worker sends into the first two, one after the other, the
//! other into the third, while the owner polls the set as a `Stream`. Each future registers the
//! set's per-slot waker it is polled with, so the wake goes through the future's own channel,
//! then the set's ready bitset, then the parent task.
//!
//! Asserts: every value comes out, once, with no lost wake; then `Ready(None)`, and the set
//! reports itself terminated; each future is polled at most twice (the channel wakes once).
#![cfg(pinfold_loom)]

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use futures_core::{FusedStream, Stream};
use loom::sync::atomic::{AtomicUsize, Ordering};
use loom::sync::{Arc, Mutex};
use loom_tests::{Parent, Workers, check, drive};
use pinfold_unordered::FuturesUnorderedBounded;

/// A one-shot channel: a value (0 while none was sent) and the receiver's waker.
#[derive(Debug)]
struct Channel {
    value: AtomicUsize,
    waker: Mutex<Option<Waker>>,
    polls: AtomicUsize,
}

/// The receiving end, a future of the value sent.
#[derive(Debug)]
struct Receiver(Arc<Channel>);

/// The sending end.
#[derive(Debug)]
struct Sender(Arc<Channel>);

fn channel() -> (Sender, Receiver) {
    let channel = Arc::new(Channel {
        value: AtomicUsize::new(0),
        waker: Mutex::new(None),
        polls: AtomicUsize::new(0),
    });
    (Sender(Arc::clone(&channel)), Receiver(channel))
}

impl Sender {
    fn send(self, value: usize) {
        // Relaxed: the mutex below orders it before the receiver's next look.
        self.0.value.store(value, Ordering::Relaxed);
        let waker = self.0.waker.lock().unwrap().take();
        if let Some(waker) = waker {
            waker.wake();
        }
    }
}

impl Future for Receiver {
    type Output = usize;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<usize> {
        self.0.polls.fetch_add(1, Ordering::Relaxed);
        *self.0.waker.lock().unwrap() = Some(cx.waker().clone());
        match self.0.value.load(Ordering::Relaxed) {
            0 => Poll::Pending,
            value => Poll::Ready(value),
        }
    }
}

#[test]
fn outputs_sent_from_other_threads_all_come_out() {
    check("bounded_cross_thread_outputs", || {
        let mut set = FuturesUnorderedBounded::new(3);
        let mut senders = Vec::new();
        let mut channels = Vec::new();
        for _ in 0..3 {
            let (sender, receiver) = channel();
            channels.push(Arc::clone(&sender.0));
            senders.push(sender);
            set.push(receiver);
        }
        assert!(set.is_full());

        let mut workers = Workers::new();
        let third = senders.pop().unwrap();
        let second = senders.pop().unwrap();
        let first = senders.pop().unwrap();
        workers.spawn(move || {
            first.send(10);
            second.send(20);
        });
        workers.spawn(move || third.send(30));

        let task = Parent::new();
        let mut outputs = drive(&[&task], &workers, 3, |cx| Pin::new(&mut set).poll_next(cx));
        outputs.sort_unstable();
        assert_eq!(outputs, [10, 20, 30]);
        assert!(set.is_empty());
        let waker = task.waker();
        assert_eq!(
            Pin::new(&mut set).poll_next(&mut Context::from_waker(&waker)),
            Poll::Ready(None)
        );
        assert!(set.is_terminated());
        workers.join();
        for channel in &channels {
            let polls = channel.polls.load(Ordering::Relaxed);
            assert!(
                (1..=2).contains(&polls),
                "a future was polled {polls} times"
            );
        }
    });
}
