//! A task waker that panics in `clone`, `wake`, `wake_by_ref` or `drop`: the panic reaches
//! the code that ran it, and the set loses no wake, drops no future and leaks nothing (the
//! contract is `pinfold_testkit::contract::task_waker_panics`).

use pinfold_testkit::contract::task_waker_panics;
use pinfold_unordered::{FuturesUnordered, Key};

pinfold_testkit::set_under_test!(Unordered: FuturesUnordered::with_capacity, Key);

#[test]
fn a_panic_in_clone_while_registering_loses_no_wake() {
    task_waker_panics::a_panic_in_clone_while_registering_loses_no_wake::<Unordered>();
}

#[test]
fn a_panic_in_drop_of_the_replaced_waker_loses_no_wake() {
    task_waker_panics::a_panic_in_drop_of_the_replaced_waker_loses_no_wake::<Unordered>();
}

#[test]
fn a_panic_in_the_task_wakers_wake_reaches_the_waking_thread() {
    task_waker_panics::a_panic_in_the_task_wakers_wake_reaches_the_waking_thread::<Unordered>();
}

#[test]
fn a_panic_in_the_task_wakers_wake_by_ref_drops_no_future() {
    task_waker_panics::a_panic_in_the_task_wakers_wake_by_ref_drops_no_future::<Unordered>();
}

#[test]
fn a_task_waker_panic_in_a_self_waking_round_blames_no_future() {
    task_waker_panics::a_task_waker_panic_in_a_self_waking_round_blames_no_future::<Unordered>();
}
