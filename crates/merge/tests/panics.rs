//! Ends and panics: a stream that ends is dropped before `poll_next` returns, and a stream
//! whose `poll_next` panics is dropped, its panic reaching the caller, while the others go on.

mod support;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::task::{Context, Poll};

use futures_core::FusedStream;
use support::{
    MergeUnderTest, NumberedMerge, TRACKED_PANIC, Tracked, assert_each_stream_whole_and_in_order,
    both, counting_waker, panic_message,
};

both!(
    an_ended_stream_is_dropped_before_the_next_item_comes,
    a_panicking_stream_is_dropped_and_the_others_go_on,
);

/// Checked as each call returns: a stream that returned `Ready(None)` has been dropped and its
/// key is refused (`contains_key`, `get`, `remove`); the others are still there.
fn an_ended_stream_is_dropped_before_the_next_item_comes<M: MergeUnderTest>() {
    let lengths = [3, 0, 1, 6, 2, 0, 4];
    let NumberedMerge {
        mut merged,
        keys,
        counts,
    } = NumberedMerge::<M>::new(&lengths, None);
    let (task, wakes) = counting_waker();
    let mut items = Vec::new();
    loop {
        let before = wakes.count();
        let polled = M::poll_next_keyed(&mut merged, &mut Context::from_waker(&task));
        for (id, counts) in counts.iter().enumerate() {
            let ended = counts.ended();
            assert_eq!(
                counts.drops(),
                usize::from(ended),
                "stream {id}: ended {ended}, dropped {} times, after {} items",
                counts.drops(),
                items.len()
            );
            assert_eq!(
                M::contains_key(&merged, keys[id]),
                !ended,
                "stream {id}'s key"
            );
            assert_eq!(
                M::get(&merged, keys[id]).map(Tracked::id),
                (!ended).then_some(id)
            );
            if ended {
                assert!(
                    !M::remove(&mut merged, keys[id]),
                    "removed ended stream {id}"
                );
            }
        }
        match polled {
            Poll::Ready(Some((key, (id, seq)))) => {
                assert_eq!(key, keys[id]);
                items.push((id, seq));
            }
            Poll::Ready(None) => break,
            Poll::Pending => assert!(wakes.count() > before, "Pending with no wake"),
        }
    }
    assert_each_stream_whole_and_in_order(&items, &lengths);
    assert!(counts.iter().all(|counts| counts.ended()));
}

/// Stream 1 panics in its third poll, after two items: the panic comes out of `poll_next`,
/// the stream is dropped then and its key refused, and every item of the others still comes.
fn a_panicking_stream_is_dropped_and_the_others_go_on<M: MergeUnderTest>() {
    let lengths = [4, 4, 4];
    let NumberedMerge {
        mut merged,
        keys,
        counts,
    } = NumberedMerge::<M>::new(&lengths, Some((1, 3)));
    let (task, wakes) = counting_waker();
    let mut items = Vec::new();
    let mut panics = 0;
    loop {
        let before = wakes.count();
        let polled = catch_unwind(AssertUnwindSafe(|| {
            M::poll_next_keyed(&mut merged, &mut Context::from_waker(&task))
        }));
        match polled {
            Ok(Poll::Ready(Some((key, (id, seq))))) => {
                assert_eq!(key, keys[id]);
                items.push((id, seq));
            }
            Ok(Poll::Ready(None)) => break,
            Ok(Poll::Pending) => assert!(wakes.count() > before, "Pending with no wake"),
            Err(panic) => {
                assert_eq!(panic_message(&*panic), TRACKED_PANIC);
                panics += 1;
                assert_eq!(counts[1].drops(), 1, "the panicking stream was not dropped");
                assert!(!M::contains_key(&merged, keys[1]));
                assert!(!M::remove(&mut merged, keys[1]));
                assert_eq!(
                    M::len(&merged),
                    2,
                    "another stream went with the panicking one"
                );
            }
        }
    }
    assert_eq!(panics, 1);
    // Stream 1 gave its first two items before it panicked.
    assert_each_stream_whole_and_in_order(&items, &[4, 2, 4]);
    assert!(merged.is_terminated());
    assert!(counts.iter().all(|counts| counts.drops() == 1));
}
