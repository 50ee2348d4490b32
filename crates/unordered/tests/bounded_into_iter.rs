//! Moving the futures out of the set (`into_iter`, for `F: Unpin`) and changing them in place
//! (`iter_mut`): every future comes out once, the length is exact at each step, each future is
//! dropped exactly once (given out, left in an iterator dropped part-way, or finished before),
//! and `into_iter` allocates nothing (the contract is `pinfold_testkit::contract::into_iter`,
//! run here with a bounded set's sizes).

use pinfold_testkit::alloc::CountingAlloc;
use pinfold_testkit::contract::into_iter;
use pinfold_unordered::{FuturesUnorderedBounded, Key};

// It counts the allocations of the thread that makes them, so the other tests of this file,
// running beside `into_iter_allocates_nothing`, do not disturb its count.
#[global_allocator]
static ALLOCATOR: CountingAlloc = CountingAlloc;

pinfold_testkit::set_under_test!(Bounded: FuturesUnorderedBounded::new, Key);
pinfold_testkit::contract_tests!(Bounded: into_iter);

#[test]
fn into_iter_gives_every_pending_future_once_with_an_exact_len() {
    let n = if cfg!(miri) { 24 } else { 256 };
    into_iter::into_iter_gives_every_pending_future_once_with_an_exact_len::<Bounded>(n, n);
}

#[test]
fn into_iter_gives_futures_that_were_never_polled() {
    into_iter::into_iter_gives_futures_that_were_never_polled::<Bounded>(5);
}

#[test]
fn into_iter_of_an_empty_set_gives_nothing() {
    // Emptied: three slots, two futures.
    into_iter::into_iter_of_an_empty_set_gives_nothing::<Bounded>([8, 0], (3, 2));
}

#[test]
fn dropping_into_iter_part_way_drops_the_rest_once() {
    let n = 12;
    into_iter::dropping_into_iter_part_way_drops_the_rest_once::<Bounded>(n, &[0, 1, 5, n - 1, n]);
}

#[test]
fn dropping_into_iter_part_way_drops_the_rest_when_one_drop_panics() {
    into_iter::dropping_into_iter_part_way_drops_the_rest_when_one_drop_panics::<Bounded>(6, 4);
}

#[test]
fn a_partly_polled_set_drops_each_future_once_and_leaks_nothing() {
    let n = if cfg!(miri) { 30 } else { 300 };
    // A third finish at once; another third are woken.
    let finished: Vec<usize> = (0..n).step_by(3).collect();
    let woken: Vec<usize> = (1..n).step_by(3).collect();
    into_iter::a_partly_polled_set_drops_each_future_once_and_leaks_nothing::<Bounded>(
        n,
        &finished,
        &woken,
        finished.len(),
    );
}

#[test]
fn into_iter_after_a_future_panicked_gives_the_others() {
    into_iter::into_iter_after_a_future_panicked_gives_the_others::<Bounded>(4, 2);
}

#[test]
fn into_iter_allocates_nothing() {
    let n = if cfg!(miri) { 32 } else { 1_024 };
    // Those finished finish at once.
    into_iter::into_iter_allocates_nothing::<Bounded>(n, n);
}

#[test]
fn iter_mut_visits_every_future_once_with_an_exact_len() {
    let n = if cfg!(miri) { 24 } else { 256 };
    into_iter::iter_mut_visits_every_future_once_with_an_exact_len::<Bounded>(n);
}

#[test]
fn changes_made_through_iter_mut_are_seen_by_later_polls() {
    let n = if cfg!(miri) { 16 } else { 100 };
    into_iter::changes_made_through_iter_mut_are_seen_by_later_polls::<Bounded>(n);
}
