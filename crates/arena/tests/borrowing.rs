//! Values may borrow locals declared after the arena: neither arena, nor a join arena, has a
//! `Drop` impl generic over its values, so the borrow checker does not make the locals outlive
//! it. Each test is
//! mostly a compile check; a `Drop` impl generic over `T` fails it with "`local` does not live
//! long enough".

use std::future::Future;
use std::task::{Context, Poll, Waker};

use pinfold_arena::{Arena, GrowableArena, JoinArena, Step, Storage};

/// Polls the futures of `$arena` (an `Arena` or a `GrowableArena`, which share no trait) until
/// it is empty; their outputs, sorted.
macro_rules! run_to_completion {
    ($arena:expr) => {{
        let mut cx = Context::from_waker(Waker::noop());
        let mut outputs = Vec::new();
        loop {
            match $arena.poll_next(&mut cx, |_, fut, cx| Step::of_future(fut.poll(cx))) {
                Poll::Ready(Some((_, out))) => outputs.push(out),
                Poll::Ready(None) => break,
                Poll::Pending => panic!("a future that waits for nothing is pending"),
            }
        }
        outputs.sort_unstable();
        outputs
    }};
}

#[test]
fn futures_borrowing_a_later_local_run_in_an_arena() {
    let mut arena = Arena::new(3);
    let local = String::from("pinfold");
    // Async blocks, not an `async fn`: the borrow checker cannot see into the opaque future of
    // an `async fn`, so it would make `local` outlive even a `Vec` of them.
    let text = local.as_str();
    let scaled = |factor: usize| async move { text.len() * factor };
    for factor in 1..=3 {
        assert!(arena.insert(scaled(factor)).is_ok());
    }
    assert_eq!(run_to_completion!(arena), [7, 14, 21]);
}

#[test]
fn futures_borrowing_a_later_local_run_in_a_growable_arena() {
    let n = 40;
    let mut arena = GrowableArena::new();
    let local = String::from("pinfold");
    // Async blocks, not an `async fn`: the borrow checker cannot see into the opaque future of
    // an `async fn`, so it would make `local` outlive even a `Vec` of them.
    let text = local.as_str();
    let scaled = |factor: usize| async move { text.len() * factor };
    for factor in 1..=n {
        arena.insert(scaled(factor));
    }
    assert_eq!(
        run_to_completion!(arena),
        (1..=n).map(|factor| 7 * factor).collect::<Vec<_>>()
    );
}

#[test]
fn values_borrowing_a_later_local_drop_with_the_arenas() {
    let mut arena = Arena::new(2);
    let mut growable = GrowableArena::new();
    let local = String::from("pinfold");
    assert!(arena.insert(local.as_str()).is_ok());
    let key = growable.insert(local.as_str());
    assert_eq!(growable.get(key).copied(), Some("pinfold"));
    assert_eq!(
        arena.iter().map(|(_, text)| *text).collect::<Vec<_>>(),
        ["pinfold"]
    );
    // `local` is dropped first, then the arenas and the values that borrow it.
}

#[test]
fn values_borrowing_a_later_local_drop_with_a_join_arena() {
    // Declared before the local, so dropped after it.
    let joined: JoinArena<&str>;
    let mut taken: JoinArena<&str>;
    let local = String::from("pinfold");
    joined = JoinArena::new([local.as_str(), &local[3..]]);
    taken = JoinArena::new([local.as_str()]);
    assert_eq!(*joined.get(1), "fold");
    assert_eq!(taken.take_vec_with(|text| text.len()), [7]);
    // `local` is dropped first, then the join arenas and the values that borrow it.
}
