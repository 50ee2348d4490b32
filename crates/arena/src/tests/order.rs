//! The queue's order: a woken value is polled ahead of values queued again after their
//! outputs and of values woken after it, so none starves.

use std::pin::Pin;
use std::task::{Context, Poll};

use pinfold_testkit::waker::counting_waker;

use crate::{Arena, GrowableArena, Key, Step, Storage};
use alloc::vec::Vec;

/// A value for the starvation tests: `Repoll`ed on every poll when `always`, else pending
/// until woken (then it counts the poll).
#[derive(Debug)]
struct Source {
    always: bool,
    polls: usize,
}

impl Source {
    fn new(always: bool) -> Self {
        Self { always, polls: 0 }
    }
}

fn poll_source(source: Pin<&mut Source>) -> Step<bool> {
    let source = source.get_mut();
    source.polls += 1;
    if source.always {
        Step::Repoll(true)
    } else if source.polls == 1 {
        Step::Pending
    } else {
        Step::Keep(false)
    }
}

#[test]
fn a_value_polled_again_after_each_output_does_not_hide_a_woken_one() {
    // What a merge risks: an always-ready stream is queued again after every item, so
    // the round's queue never runs empty; wakes must still be collected, and the woken value
    // polled in the very next call.
    let (parent_waker, _) = counting_waker();
    let mut cx = Context::from_waker(&parent_waker);

    let mut arena = Arena::new(2);
    arena.insert(Source::new(true)).unwrap();
    let quiet = arena.insert(Source::new(false)).unwrap();
    let mut outputs = Vec::new();
    for _ in 0..3 {
        if let Poll::Ready(Some((_, out))) = arena.poll_next(&mut cx, |_, v, _| poll_source(v)) {
            outputs.push(out);
        }
    }
    assert_eq!(
        arena.get(quiet).unwrap().polls,
        1,
        "polled once, then waits for a wake"
    );
    arena.waker(quiet).unwrap().wake();
    let next = arena.poll_next(&mut cx, |_, v, _| poll_source(v));
    assert_eq!(
        next,
        Poll::Ready(Some((quiet, false))),
        "the woken value comes first"
    );

    let mut growable = GrowableArena::new();
    growable.insert(Source::new(true));
    let quiet = growable.insert(Source::new(false));
    for _ in 0..3 {
        let _ = growable.poll_next(&mut cx, |_, v, _| poll_source(v));
    }
    assert_eq!(growable.get(quiet).unwrap().polls, 1);
    growable.waker(quiet).unwrap().wake();
    let next = growable.poll_next(&mut cx, |_, v, _| poll_source(v));
    assert_eq!(
        next,
        Poll::Ready(Some((quiet, false))),
        "the woken value comes first"
    );
}

/// Wakes a value of either kind of arena by its key, through an owned waker.
trait Wake {
    fn wake(&self, key: Key);
}

impl<T> Wake for Arena<T> {
    fn wake(&self, key: Key) {
        self.waker(key).unwrap().wake();
    }
}

impl<T> Wake for GrowableArena<T> {
    fn wake(&self, key: Key) {
        self.waker(key).unwrap().wake();
    }
}

/// [`poll_source`] as a merge's stream: its outputs are items.
fn poll_stream(source: Pin<&mut Source>) -> Step<Option<bool>> {
    match poll_source(source) {
        Step::Repoll(item) => Step::Repoll(Some(item)),
        Step::Keep(item) => Step::Keep(Some(item)),
        Step::Pending => Step::Pending,
        _ => unreachable!("a source only repolls, keeps or waits"),
    }
}

/// A merge's call (`poll_next_some`) of `arena`, holding three streams that give an item at
/// every poll and a quiet one, polls the quiet stream before any of the others gives a second
/// item after its wake: those streams go to the tail of the queue after each item, without a
/// round of their own, so the queue never runs empty; the wake is collected at the next call's
/// start, behind the streams queued then, each of which has one more turn at most.
fn a_woken_stream_goes_ahead_of_streams_queued_again<S: Storage<Source> + Wake>(mut arena: S) {
    let (parent_waker, _) = counting_waker();
    let mut cx = Context::from_waker(&parent_waker);
    let busy: Vec<Key> = (0..3)
        .map(|_| arena.insert(Source::new(true)).unwrap())
        .collect();
    let quiet = arena.insert(Source::new(false)).unwrap();
    for _ in 0..8 {
        let next = arena.poll_next_some(&mut cx, |_, v, _| poll_stream(v));
        assert!(matches!(next, Poll::Ready(Some((_, true)))));
    }
    assert_eq!(
        arena.get(quiet).unwrap().polls,
        1,
        "polled once, then waits"
    );
    arena.wake(quiet);
    let mut items = Vec::new();
    loop {
        let Poll::Ready(Some((key, _))) = arena.poll_next_some(&mut cx, |_, v, _| poll_stream(v))
        else {
            panic!("a merge of always-ready streams always has an item");
        };
        if key == quiet {
            break;
        }
        assert!(
            !items.contains(&key),
            "an always-ready stream had a second turn before the woken one: {items:?} then {key:?}"
        );
        items.push(key);
    }
    assert!(items.iter().all(|key| busy.contains(key)));
}

#[test]
fn a_woken_stream_goes_ahead_of_streams_queued_again_after_their_items() {
    a_woken_stream_goes_ahead_of_streams_queued_again(Arena::new(4));
    a_woken_stream_goes_ahead_of_streams_queued_again(GrowableArena::new());
}

/// In `arena`, a value woken before the last call but not reached by it (the call ended at an
/// earlier value's output) is polled in the next call, ahead of values woken since: values
/// woken one a call cannot pass it over for ever.
fn a_woken_value_is_not_passed_over_by_later_wakes<S: Storage<u32> + Wake>(mut arena: S) {
    let (parent_waker, _) = counting_waker();
    let mut cx = Context::from_waker(&parent_waker);
    let keys: Vec<Key> = (0..6u32).map(|v| arena.insert(v).unwrap()).collect();
    let mut next = |arena: &mut S| arena.poll_next(&mut cx, |_, v, _| Step::Keep(*v));
    for _ in 0..6 {
        assert!(matches!(next(&mut arena), Poll::Ready(Some(_))));
    }
    assert_eq!(
        next(&mut arena),
        Poll::Pending,
        "every value waits for a wake"
    );
    arena.wake(keys[0]);
    arena.wake(keys[1]);
    assert_eq!(next(&mut arena), Poll::Ready(Some((keys[0], 0))));
    let mut outputs = Vec::new();
    for &key in &keys[2..] {
        arena.wake(key);
        let Poll::Ready(Some((_, out))) = next(&mut arena) else {
            panic!("a woken value gives its output");
        };
        outputs.push(out);
    }
    assert_eq!(
        outputs,
        [1, 2, 3, 4],
        "each value in the order of its wake, the one left by the last call first"
    );
}

#[test]
fn a_woken_value_is_not_passed_over_by_values_woken_after_it() {
    a_woken_value_is_not_passed_over_by_later_wakes(Arena::new(6));
    a_woken_value_is_not_passed_over_by_later_wakes(GrowableArena::new());
}
