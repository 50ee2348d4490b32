//! Dropping a join: before it finished, while two of its futures panic in `Drop`, the first
//! panic reaches the caller, no abort, and every future was dropped once; and its futures may
//! borrow what is declared after it.

use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};

use pinfold_join::{join_all, try_join_all};
use pinfold_testkit::contract::panic_message;

/// Pending for good; counts its drops, and panics in `Drop` if `panics`.
struct Stuck {
    panics: bool,
    drops: Arc<AtomicUsize>,
}

impl Future for Stuck {
    type Output = Result<u32, ()>;

    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Self::Output> {
        Poll::Pending
    }
}

impl Drop for Stuck {
    fn drop(&mut self) {
        self.drops.fetch_add(1, Ordering::SeqCst);
        if self.panics {
            panic!("panic in drop");
        }
    }
}

/// `n` futures, those at `panicking` panicking in `Drop`, and their drop counts.
fn stuck(n: usize, panicking: &[usize]) -> (Vec<Stuck>, Vec<Arc<AtomicUsize>>) {
    (0..n)
        .map(|i| {
            let drops = Arc::new(AtomicUsize::new(0));
            let future = Stuck {
                panics: panicking.contains(&i),
                drops: drops.clone(),
            };
            (future, drops)
        })
        .unzip()
}

fn assert_dropped_once_with_the_panic(
    dropped: std::thread::Result<()>,
    drops: &[Arc<AtomicUsize>],
) {
    let panic = dropped.expect_err("a panic of a future's Drop reaches the caller");
    assert_eq!(panic_message(&*panic), "panic in drop");
    for (i, count) in drops.iter().enumerate() {
        assert_eq!(count.load(Ordering::SeqCst), 1, "future {i}");
    }
}

/// Polls `join` once (every future stays pending), then drops it: the first panic of a
/// `Drop` reaches the caller, and every future was dropped once.
fn dropped_pending<J: Future>(join: J, drops: &[Arc<AtomicUsize>]) {
    let mut join = Box::pin(join);
    let mut cx = Context::from_waker(std::task::Waker::noop());
    assert!(join.as_mut().poll(&mut cx).is_pending());
    assert_dropped_once_with_the_panic(catch_unwind(AssertUnwindSafe(|| drop(join))), drops);
}

#[test]
fn a_join_all_dropped_with_two_panicking_drops_drops_every_future() {
    pinfold_testkit::panic_hook::no_forced_backtraces();
    // Below and above the size at which a join changes how it polls.
    for n in [5, 40] {
        let (futures, drops) = stuck(n, &[1, n - 2]);
        dropped_pending(join_all(futures), &drops);
    }
}

#[test]
fn a_try_join_all_dropped_with_two_panicking_drops_drops_every_future() {
    pinfold_testkit::panic_hook::no_forced_backtraces();
    for n in [5, 40] {
        let (futures, drops) = stuck(n, &[0, n - 1]);
        dropped_pending(try_join_all(futures), &drops);
    }
}

/// The futures may borrow a local declared after the join: dropping every value despite
/// panics needs no `Drop` impl generic over them, so the borrow checker does not make the
/// local outlive the join.
#[test]
fn a_join_s_futures_may_borrow_what_is_declared_after_it() {
    let mut join;
    let values = [1u32, 2, 3];
    join = Box::pin(join_all(
        values.iter().map(|value| async move { *value * 2 }),
    ));
    let mut cx = Context::from_waker(std::task::Waker::noop());
    assert_eq!(join.as_mut().poll(&mut cx), Poll::Ready(vec![2, 4, 6]));
}
