//! `clear` forgets what was queued: a future that woke itself before the set was cleared
//! does not make the next call wake the task, which has nothing due.

use std::future::Future;
use std::pin::Pin;
use std::task::Poll;

use pinfold_arena::Storage;
use pinfold_testkit::panicking_waker::panicking_waker;
use pinfold_testkit::probe::{Probe, Spinner};
use pinfold_testkit::stream::poll_with;
use pinfold_unordered::{FuturesUnordered, FuturesUnorderedBounded, UnorderedSet};

type Job = Pin<Box<dyn Future<Output = usize> + Send>>;

fn pending(id: usize) -> Job {
    Box::pin(Probe::new(id).0)
}

fn cleared_set_wakes_nobody_for_the_values_it_dropped<A: Storage<Job>>(
    mut set: impl core::ops::DerefMut<Target = UnorderedSet<Job, A>>,
) {
    let (task, switches) = panicking_waker();
    set.push(pending(0));
    set.push(Box::pin(Spinner::forever(1).0));
    set.push(pending(2));
    assert_eq!(poll_with(&mut *set, &task), Poll::Pending);
    assert_eq!(
        switches.wakes(),
        1,
        "the spinner woke itself: the task is woken"
    );

    set.clear();
    set.push(pending(3));
    let wakes = switches.wakes();
    assert_eq!(poll_with(&mut *set, &task), Poll::Pending);
    assert_eq!(
        switches.wakes(),
        wakes,
        "nothing is due after the clear: the task is not woken"
    );
    assert_eq!(set.len(), 1);
}

#[test]
fn a_cleared_bounded_set_wakes_nobody_for_the_values_it_dropped() {
    cleared_set_wakes_nobody_for_the_values_it_dropped(FuturesUnorderedBounded::new(4));
}

#[test]
fn a_cleared_growable_set_wakes_nobody_for_the_values_it_dropped() {
    cleared_set_wakes_nobody_for_the_values_it_dropped(FuturesUnordered::new());
}
