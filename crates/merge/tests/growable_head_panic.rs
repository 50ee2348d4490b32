//! A growable merge whose stream at the head of its queue, alone in the top group, panics in
//! the merge's first poll of a call: the group is released as the panic leaves, and the task
//! is woken for the stream still queued behind it.

use std::cell::Cell;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};

use futures_core::Stream;
use pinfold_merge::Merge;
use pinfold_testkit::waker::counting_waker;

/// What a stream does at its next poll.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Next {
    Item,
    Pending,
    Panic,
}

/// A stream whose polls follow the shared plan's entry for its id.
struct Planned {
    id: usize,
    plan: Rc<Cell<[Next; 3]>>,
}

impl Stream for Planned {
    type Item = usize;

    fn poll_next(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<usize>> {
        match self.plan.get()[self.id] {
            Next::Item => Poll::Ready(Some(self.id)),
            Next::Pending => Poll::Pending,
            Next::Panic => panic!("stream {} panics", self.id),
        }
    }
}

#[test]
fn a_growable_merges_head_stream_that_empties_the_top_group_by_panicking_leaves_the_task_woken_for_the_stream_behind_it()
 {
    use Next::{Item, Panic, Pending};
    let plan = Rc::new(Cell::new([Item, Pending, Pending]));
    let mut merged = Merge::with_capacity(2);
    let [x, y, s] = [0, 1, 2].map(|id| {
        merged.insert(Planned {
            id,
            plan: plan.clone(),
        })
    });
    assert_eq!(merged.capacity(), 34, "two groups: x and y, then s alone");
    let (task, wakes) = counting_waker();
    let mut cx = Context::from_waker(&task);
    // `x` gives an item; then `y` stays pending and `s` gives one; then `x` again, polled at
    // the head of the queue, rotating behind `s`.
    assert_eq!(merged.poll_next_keyed(&mut cx), Poll::Ready(Some((x, 0))));
    plan.set([Item, Pending, Item]);
    assert_eq!(merged.poll_next_keyed(&mut cx), Poll::Ready(Some((s, 2))));
    assert_eq!(merged.poll_next_keyed(&mut cx), Poll::Ready(Some((x, 0))));
    assert!(merged.remove(y));
    // `s`, at the head, panics: the top group is left empty, and `x` still waits to be polled.
    plan.set([Item, Pending, Panic]);
    let before = wakes.count();
    let panicked = catch_unwind(AssertUnwindSafe(|| merged.poll_next_keyed(&mut cx)));
    assert!(panicked.is_err());
    assert!(!merged.contains_key(s));
    assert_eq!(
        (merged.len(), merged.capacity()),
        (1, 2),
        "the top group is released"
    );
    assert!(
        wakes.count() > before,
        "the task is woken: x waits to be polled"
    );
    assert_eq!(merged.poll_next_keyed(&mut cx), Poll::Ready(Some((x, 0))));
}
