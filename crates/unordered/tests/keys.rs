//! Keys: `insert` names a future, `poll_next_keyed` names the future of each output, `remove`
//! drops a future at once, and stale keys and stale wakers touch nothing (the contract is
//! `pinfold_testkit::contract::keys`). `with_capacity(1)` makes a first group of one slot, so
//! a future inserted after another finished takes its slot.

use pinfold_testkit::contract::keys;
use pinfold_unordered::{FuturesUnordered, Key};

pinfold_testkit::set_under_test!(Unordered: FuturesUnordered::with_capacity, Key);

#[test]
fn remove_drops_the_future_at_once_and_its_output_never_comes() {
    keys::remove_drops_the_future_at_once_and_its_output_never_comes::<Unordered>();
}

#[test]
fn remove_before_the_first_poll_drops_the_future_unpolled() {
    keys::remove_before_the_first_poll_drops_the_future_unpolled::<Unordered>();
}

#[test]
fn key_of_a_finished_future_is_refused_also_after_its_slot_is_reused() {
    keys::key_of_a_finished_future_is_refused_also_after_its_slot_is_reused::<Unordered>();
}

#[test]
fn key_of_a_removed_future_is_refused_also_after_its_slot_is_reused() {
    keys::key_of_a_removed_future_is_refused_also_after_its_slot_is_reused::<Unordered>();
}

#[test]
fn poll_next_keyed_gives_the_key_insert_returned() {
    keys::poll_next_keyed_gives_the_key_insert_returned::<Unordered>();
}

#[test]
fn stale_waker_does_not_poll_the_slots_next_occupant() {
    keys::stale_waker_does_not_poll_the_slots_next_occupant::<Unordered>();
}

#[test]
fn stale_waker_in_a_full_group_polls_nothing() {
    keys::stale_waker_in_a_full_set_polls_nothing::<Unordered>();
}
