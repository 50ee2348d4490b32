//! Rounds: what one call polls, and what each `Step` (`Keep`, `Repoll`, `Settled`, a stream's
//! item or end) leaves for the calls after it.

use std::future::poll_fn;
use std::pin::Pin;
use std::task::{Context, Poll};

use pinfold_testkit::waker::counting_waker;

use super::{next, next_growable};
use crate::{Arena, GrowableArena, Key, Step, Storage};
use alloc::vec::Vec;

#[test]
fn a_round_polls_each_value_once_though_every_one_gives_an_item() {
    // Three streams that are always ready: each item queues its stream again, and one budget
    // still polls each once, then yields.
    use futures_util::StreamExt;

    let mut arena = Arena::new(3);
    for id in 0..3u8 {
        assert!(arena.insert(futures_util::stream::repeat(id)).is_ok());
    }
    let (waker, wakes) = counting_waker();
    let mut cx = Context::from_waker(&waker);
    let mut budget = arena.start_round();
    let mut poll = |_: Key, stream: Pin<&mut _>, cx: &mut Context<'_>| {
        let stream: Pin<&mut futures_util::stream::Repeat<u8>> = stream;
        Step::of_stream(stream.get_mut().poll_next_unpin(cx))
    };
    let mut ids = Vec::new();
    for _ in 0..3 {
        match arena.poll_with_budget(&mut cx, &mut budget, &mut poll) {
            Poll::Ready(Some((_, Some(id)))) => ids.push(id),
            other => panic!("an item of each stream, yet {other:?}"),
        }
    }
    ids.sort_unstable();
    assert_eq!(ids, [0, 1, 2]);
    assert!(
        arena
            .poll_with_budget(&mut cx, &mut budget, &mut poll)
            .is_pending(),
        "the budget of three polls is spent"
    );
    assert_eq!(wakes.count(), 1, "a yield wakes the task to poll again");
}

#[test]
fn keep_and_repoll_leave_the_value_in_place() {
    let mut arena = Arena::new(2);
    let a = arena.insert(1u32).unwrap();
    let (parent_waker, parent) = counting_waker();
    let mut cx = Context::from_waker(&parent_waker);

    // One round: `Repoll` gives the output and leaves the value for the next round, not this.
    let mut budget = arena.start_round();
    let first = arena.poll_with_budget(&mut cx, &mut budget, &mut |k, v, _| Step::Repoll((k, *v)));
    assert_eq!(first, Poll::Ready(Some((a, (a, 1)))));
    assert!(
        arena.has_deferred(),
        "Repoll queues the value for the next round"
    );
    let again = arena.poll_with_budget(&mut cx, &mut budget, &mut |_, _, _| -> Step<()> {
        unreachable!("polled twice in one round")
    });
    assert_eq!(again, Poll::Pending);
    assert_eq!(
        parent.count(),
        1,
        "a value waits for the next round: the task is woken"
    );

    // The next round polls it without a wake; `Keep` leaves it until its waker fires.
    let kept = arena.poll_next(&mut cx, |k, v, _| Step::Keep((k, *v)));
    assert_eq!(kept, Poll::Ready(Some((a, (a, 1)))));
    assert!(
        !arena.has_ready() && !arena.has_deferred(),
        "Keep does not queue it"
    );
    assert_eq!(arena.get(a), Some(&1));
    let idle = arena.poll_next(&mut cx, |_, _, _| -> Step<()> {
        unreachable!("a kept value was polled without a wake")
    });
    assert_eq!(idle, Poll::Pending);
    arena.waker(a).unwrap().wake();
    let woken = arena.poll_next(&mut cx, |k, v, _| Step::Keep((k, *v)));
    assert_eq!(woken, Poll::Ready(Some((a, (a, 1)))));
    assert_eq!(arena.len(), 1);
}

#[test]
fn a_settled_value_stays_unpolled_until_woken_and_the_round_goes_on() {
    let mut arena = Arena::new(3);
    let keys: Vec<Key> = (0..3u32).map(|v| arena.insert(v).unwrap()).collect();
    let (parent_waker, parent) = counting_waker();
    let mut cx = Context::from_waker(&parent_waker);
    let mut polled = Vec::new();
    // Values 0 and 1 settle (no output); value 2 gives one: all three in one call.
    let out = arena.poll_next(&mut cx, |k, v, _| {
        polled.push(k);
        if *v == 2 {
            Step::Keep(*v)
        } else {
            Step::Settled
        }
    });
    assert_eq!(out, Poll::Ready(Some((keys[2], 2))));
    assert_eq!(polled, keys);
    let idle = arena.poll_next(&mut cx, |_, _, _| -> Step<()> {
        unreachable!("a settled value was polled without a wake")
    });
    assert_eq!(idle, Poll::Pending);
    assert_eq!(parent.count(), 0, "settling does not wake the task");
    assert_eq!(arena.len(), 3, "a settled value stays");
    arena.waker(keys[0]).unwrap().wake();
    let woken = arena.poll_next(&mut cx, |k, _, _| Step::Keep(k));
    assert_eq!(woken, Poll::Ready(Some((keys[0], keys[0]))));
}

#[test]
fn streams_are_polled_again_after_each_item_and_dropped_when_they_end() {
    /// A stream of `0..end` that is pending before every item, waking itself.
    #[derive(Debug)]
    struct Count {
        next: u32,
        end: u32,
        ready: bool,
    }
    impl Count {
        fn poll_item(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<u32>> {
            if self.next == self.end {
                return Poll::Ready(None);
            }
            if !std::mem::replace(&mut self.ready, false) {
                self.ready = true;
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
            self.next += 1;
            Poll::Ready(Some(self.next - 1))
        }
    }
    let mut arena = Arena::new(3);
    let keys: Vec<Key> = [2, 0, 3]
        .into_iter()
        .map(|end| {
            let stream = Count {
                next: 0,
                end,
                ready: false,
            };
            arena.insert(stream).unwrap()
        })
        .collect();
    let (parent_waker, _) = counting_waker();
    let mut cx = Context::from_waker(&parent_waker);
    let mut items = Vec::new();
    for _ in 0..100 {
        let polled = arena.poll_next(&mut cx, |_, stream, cx| {
            Step::of_stream(stream.poll_item(cx))
        });
        match polled {
            Poll::Ready(Some((key, Some(item)))) => items.push((key, item)),
            Poll::Ready(Some((key, None))) => assert!(!arena.contains_key(key)),
            Poll::Ready(None) => break,
            Poll::Pending => {}
        }
    }
    assert!(arena.is_empty(), "every stream ended and was dropped");
    items.sort_unstable();
    let expected = [
        (keys[0], 0),
        (keys[0], 1),
        (keys[2], 0),
        (keys[2], 1),
        (keys[2], 2),
    ];
    assert_eq!(items, expected);
}

/// A future that holds a `&mut` to its own local across a `Pending` (as `read(&mut buf).await`
/// does), then writes through it: the arena's bookkeeping between its polls (queues, wakes,
/// other values coming and going) must not take that reference's permission away (Miri checks
/// it, under both aliasing models).
async fn self_referential(wake_first: bool) -> u8 {
    let mut buf = [0u8; 16];
    let r = &mut buf;
    let mut yielded = false;
    poll_fn(|cx| {
        if yielded {
            Poll::Ready(())
        } else {
            yielded = true;
            if wake_first {
                cx.waker().wake_by_ref();
            }
            Poll::Pending
        }
    })
    .await;
    r[3] = 7;
    r[3] + buf[3]
}

#[test]
fn a_future_borrowing_itself_across_pending_keeps_its_borrow() {
    let (waker, _) = counting_waker();
    let mut arena = Arena::new(4);
    arena.insert(self_referential(true)).ok().unwrap();
    arena.insert(self_referential(false)).ok().unwrap();
    let quiet = arena.insert(self_referential(false)).ok().unwrap();
    let mut outputs = Vec::new();
    for _ in 0..4 {
        if let Poll::Ready(Some(out)) = next(&mut arena, &waker) {
            outputs.push(out);
        }
        // Values come and go meanwhile.
        let extra = arena.insert(self_referential(false)).ok().unwrap();
        assert!(arena.remove(extra));
    }
    arena.waker(quiet).unwrap().wake();
    while let Poll::Ready(Some(out)) = next(&mut arena, &waker) {
        outputs.push(out);
    }
    assert_eq!(
        outputs,
        [14, 14],
        "the self-waking one and the woken one finished"
    );
    assert_eq!(arena.len(), 1);

    let mut growable = GrowableArena::new();
    growable.insert(self_referential(true));
    let quiet = growable.insert(self_referential(false));
    let mut outputs = Vec::new();
    for _ in 0..4 {
        if let Poll::Ready(Some((_, out))) = next_growable(&mut growable, &waker) {
            outputs.push(out);
        }
    }
    growable.waker(quiet).unwrap().wake();
    while let Poll::Ready(Some((_, out))) = next_growable(&mut growable, &waker) {
        outputs.push(out);
    }
    assert_eq!(outputs, [14, 14]);
}

#[test]
#[expect(
    deprecated,
    reason = "the old name is kept for code written against it"
)]
fn budget_is_the_old_name_of_start_round() {
    // A round started under the old name is a round: it polls each value once, then yields.
    let mut arena = Arena::new(2);
    let _ = arena.insert(1u32).unwrap();
    let _ = arena.insert(2u32).unwrap();
    let (waker, wakes) = counting_waker();
    let mut cx = Context::from_waker(&waker);
    let mut budget = arena.budget();
    let mut poll = |_: Key, value: Pin<&mut u32>, _: &mut Context<'_>| Step::Repoll(*value);
    let mut outputs = Vec::new();
    while let Poll::Ready(Some((_, n))) = arena.poll_with_budget(&mut cx, &mut budget, &mut poll) {
        outputs.push(n);
    }
    outputs.sort_unstable();
    assert_eq!(outputs, [1, 2]);
    assert_eq!(wakes.count(), 1, "the spent budget yields");
}
