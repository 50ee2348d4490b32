//! Moving the futures out of the set (`into_iter`, for `F: Unpin`) and changing them in place
//! (`iter_mut`): every future comes out once, the length is exact at each step, each future is
//! dropped exactly once (given out, left in an iterator dropped part-way, or finished before),
//! and `into_iter` allocates nothing (the contract is `pinfold_testkit::contract::into_iter`,
//! run here over each set with its sizes, a growable set's spanning several groups; the cases
//! of released groups are the growable set's own).

use std::task::Waker;

use pinfold_testkit::alloc::CountingAlloc;
use pinfold_testkit::contract::into_iter::{
    self, assert_each_dropped_once_and_freed, ids_checking_len, polled_set, sorted,
};
use pinfold_testkit::probe::Probe;
use pinfold_testkit::rng::XorShift;
use pinfold_testkit::stream::{finish_in_batches, settle};
use pinfold_unordered::{FuturesUnordered, Key};

// It counts the allocations of the thread that makes them, so the other tests of this file,
// running beside `into_iter_allocates_nothing`, do not disturb its count.
#[global_allocator]
static ALLOCATOR: CountingAlloc = CountingAlloc;

pinfold_testkit::set_under_test!(Unordered: FuturesUnordered::with_capacity, Key);
pinfold_testkit::contract_tests!(Unordered: into_iter);

#[test]
fn into_iter_gives_every_future_of_a_set_of_several_groups_once() {
    let n = if cfg!(miri) { 200 } else { 1_000 };
    // Groups of 32, 32, 64, 128 (and 64, 80, 100, 125, 156, 195, 244).
    let capacity = if cfg!(miri) { 256 } else { 1_220 };
    into_iter::into_iter_gives_every_pending_future_once_with_an_exact_len::<Unordered>(
        n, capacity,
    );
}

#[test]
fn into_iter_gives_futures_that_were_never_polled() {
    into_iter::into_iter_gives_futures_that_were_never_polled::<Unordered>(70);
}

#[test]
fn into_iter_of_an_empty_set_gives_nothing() {
    // Emptied by its outputs, its first group kept.
    into_iter::into_iter_of_an_empty_set_gives_nothing::<Unordered>([0, 64], (0, 40));
}

#[test]
fn dropping_into_iter_part_way_drops_the_rest_once() {
    // Groups of 32, 32 and 64: stop inside a group, at its edges, and in the last one.
    let stops: &[usize] = if cfg!(miri) {
        &[0, 31, 33, 65, 100]
    } else {
        &[0, 1, 31, 32, 33, 64, 65, 99, 100]
    };
    into_iter::dropping_into_iter_part_way_drops_the_rest_once::<Unordered>(100, stops);
}

#[test]
fn dropping_into_iter_part_way_drops_the_rest_when_one_drop_panics() {
    // Groups of 32, 32 and 64; the future whose drop panics is in the second one.
    into_iter::dropping_into_iter_part_way_drops_the_rest_when_one_drop_panics::<Unordered>(
        100, 50,
    );
}

#[test]
fn a_partly_polled_set_of_several_groups_drops_each_future_once_and_leaks_nothing() {
    let n = if cfg!(miri) { 200 } else { 1_000 };
    let mut rng = XorShift::new(0x1e7);
    // A random third finish, from every group, 50 at a time; half of the others are woken.
    let order = rng.permutation(n);
    let (finished, rest) = order.split_at(n / 3);
    let woken: Vec<usize> = rest.iter().copied().step_by(2).collect();
    into_iter::a_partly_polled_set_drops_each_future_once_and_leaks_nothing::<Unordered>(
        n, finished, &woken, 50,
    );
}

#[test]
fn into_iter_after_groups_were_released_gives_the_futures_left() {
    let n = if cfg!(miri) { 150 } else { 1_000 };
    let keep = 20;
    let (mut set, states) = polled_set::<Unordered>(n);
    let peak = set.capacity();

    // The oldest `keep` stay (in the first group); the rest finish, and the empty groups above
    // are released.
    let later: Vec<usize> = (keep..n).collect();
    assert_eq!(
        sorted(finish_in_batches(&mut set, &states, &later, 100)),
        later
    );
    assert_eq!(set.len(), keep);
    assert!(
        set.capacity() < peak,
        "no group was released: {} slots of {peak} left",
        set.capacity()
    );
    let wakers: Vec<Waker> = states.iter().map(|state| state.waker()).collect();

    let mut iter = set.into_iter();
    let ids = ids_checking_len(&mut iter, keep);
    assert_eq!(sorted(ids), (0..keep).collect::<Vec<_>>());
    drop(iter);
    assert_each_dropped_once_and_freed(&states);
    for waker in wakers {
        waker.wake();
    }
}

#[test]
fn into_iter_after_groups_were_released_and_refilled() {
    // Released groups come back when the set grows again; into_iter sees old and new futures.
    let n = if cfg!(miri) { 100 } else { 600 };
    let (mut set, mut states) = polled_set::<Unordered>(n);
    let later: Vec<usize> = (10..n).collect();
    finish_in_batches(&mut set, &states, &later, 100);
    let shrunk = set.capacity();
    for id in n..2 * n {
        let (probe, state) = Probe::new(id);
        set.push(Box::pin(probe));
        states.push(state);
    }
    assert!(set.capacity() > shrunk, "no group was added");
    assert!(settle(&mut set).is_empty());

    let mut iter = set.into_iter();
    let ids = ids_checking_len(&mut iter, 10 + n);
    let expected: Vec<usize> = (0..10).chain(n..2 * n).collect();
    assert_eq!(sorted(ids), expected);
    drop(iter);
    assert_each_dropped_once_and_freed(&states);
}

#[test]
fn into_iter_after_a_future_panicked_gives_the_others() {
    into_iter::into_iter_after_a_future_panicked_gives_the_others::<Unordered>(40, 35);
}

#[test]
fn into_iter_allocates_nothing() {
    // Polled futures in several groups, finished 50 at a time.
    let n = if cfg!(miri) { 200 } else { 1_000 };
    into_iter::into_iter_allocates_nothing::<Unordered>(n, 50);
}

#[test]
fn iter_mut_visits_every_future_of_several_groups_once_with_an_exact_len() {
    let n = if cfg!(miri) { 200 } else { 1_000 };
    into_iter::iter_mut_visits_every_future_once_with_an_exact_len::<Unordered>(n);
}

#[test]
fn changes_made_through_iter_mut_are_seen_by_later_polls() {
    let n = if cfg!(miri) { 100 } else { 300 };
    into_iter::changes_made_through_iter_mut_are_seen_by_later_polls::<Unordered>(n);
}

/// The same contract on the bounded set, with its sizes.
mod bounded {
    use pinfold_testkit::contract::into_iter;
    use pinfold_unordered::{FuturesUnorderedBounded, Key};

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
        into_iter::dropping_into_iter_part_way_drops_the_rest_once::<Bounded>(
            n,
            &[0, 1, 5, n - 1, n],
        );
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
}
