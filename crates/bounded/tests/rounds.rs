//! Rounds of `poll_next`: a future woken during a call, not yet polled in it, is polled in it;
//! none is polled twice in a call; `clear` forgets the stream's end (the contract is
//! `pinfold_testkit::contract::rounds`).

use pinfold_bounded::{FuturesUnorderedBounded, Key};
use pinfold_testkit::contract::rounds;

pinfold_testkit::set_under_test!(Bounded: FuturesUnorderedBounded::new, Key);

#[test]
fn three_self_waking_futures_give_an_output_by_the_second_call() {
    rounds::three_self_waking_futures_give_an_output_by_the_second_call::<Bounded>();
}

#[test]
fn a_future_woken_during_a_call_is_polled_in_it() {
    rounds::a_future_woken_during_a_call_is_polled_in_it::<Bounded>();
}

#[test]
fn a_future_polled_in_a_call_is_not_polled_again_in_it() {
    rounds::a_future_polled_in_a_call_is_not_polled_again_in_it::<Bounded>();
}

#[test]
fn clear_resets_is_terminated() {
    rounds::clear_resets_is_terminated::<Bounded>();
}
