//! Keys: `insert` names a future, `poll_next_keyed` names the future of each output, `remove`
//! drops a future at once, and stale keys and stale wakers touch nothing (the contract is
//! `pinfold_testkit::contract::keys`); a full set refuses `insert` and `try_insert`.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::task::Poll;

use pinfold_bounded::{FuturesUnorderedBounded, Key};
use pinfold_testkit::contract::{panic_message, poll_keyed};
use pinfold_testkit::probe::probes;

pinfold_testkit::set_under_test!(Bounded: FuturesUnorderedBounded::new, Key);
pinfold_testkit::contract_tests!(Bounded: keys);

#[test]
fn insert_into_a_full_set_panics_with_its_capacity() {
    let (futures, states) = probes(3);
    let mut futures = futures.into_iter();
    let mut set = FuturesUnorderedBounded::new(2);
    set.insert(futures.next().unwrap());
    set.insert(futures.next().unwrap());
    let extra = futures.next().unwrap();
    let refused = catch_unwind(AssertUnwindSafe(|| set.insert(extra)));
    let panic = refused.expect_err("insert into a full set did not panic");
    assert_eq!(
        panic_message(&*panic),
        "FuturesUnorderedBounded is full (capacity 2)"
    );
    assert_eq!(set.len(), 2);
    assert_eq!(states[2].drops(), 1, "the refused future was leaked");
    assert!(states[..2].iter().all(|state| state.drops() == 0));
}

#[test]
fn try_insert_into_a_full_set_gives_the_future_back() {
    let (futures, states) = probes(2);
    let mut futures = futures.into_iter();
    let mut set = FuturesUnorderedBounded::new(1);
    let first = set.insert(futures.next().unwrap());
    let Err(back) = set.try_insert(futures.next().unwrap()) else {
        panic!("a full set took a future");
    };
    assert_eq!(back.id(), 1);
    assert_eq!(states[1].drops(), 0);
    assert_eq!(set.len(), 1);

    // Once there is room, the same future goes in.
    states[0].open();
    assert_eq!(
        poll_keyed::<Bounded, _>(&mut set),
        Poll::Ready(Some((first, 0)))
    );
    let Ok(second) = set.try_insert(back) else {
        panic!("a set with room refused a future");
    };
    assert!(set.contains_key(second));
    states[1].open();
    assert_eq!(
        poll_keyed::<Bounded, _>(&mut set),
        Poll::Ready(Some((second, 1)))
    );
}
