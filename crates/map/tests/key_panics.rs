//! The user's key code panicking: a key whose `Clone`, `Hash` or `Eq` panics while the map
//! hands out an output leaves the map consistent (its index and its values agree), and handing
//! out an output never hashes or compares a key.

mod support;

use std::cmp::Ordering as Order;
use std::hash::{Hash, Hasher};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::Poll;

use futures_util::future;
use support::{MapUnderTest, Tracked, both, drain, panic_message, poll_once};

both!(
    a_key_whose_clone_panics_while_its_output_is_handed_out_leaves_with_its_value,
    outputs_are_handed_out_without_hashing_or_comparing_a_key,
    the_index_never_hashes_the_keys_it_holds_when_it_grows_or_rehashes,
);

/// Which of a [`TouchyKey`]'s operations panic (every call, while set).
#[derive(Debug, Default)]
struct Touchy {
    clone: AtomicBool,
    hash: AtomicBool,
    eq: AtomicBool,
}

/// A key whose `Clone`, `Hash` and `Eq` panic while their switch in [`Touchy`] is on.
#[derive(Debug)]
struct TouchyKey {
    id: u32,
    touchy: Arc<Touchy>,
}

impl TouchyKey {
    fn new(id: u32, touchy: &Arc<Touchy>) -> Self {
        Self {
            id,
            touchy: touchy.clone(),
        }
    }
}

impl Clone for TouchyKey {
    fn clone(&self) -> Self {
        assert!(
            !self.touchy.clone.load(Ordering::SeqCst),
            "clone called for key"
        );
        Self::new(self.id, &self.touchy)
    }
}

impl Hash for TouchyKey {
    fn hash<H: Hasher>(&self, state: &mut H) {
        assert!(
            !self.touchy.hash.load(Ordering::SeqCst),
            "hash called for key"
        );
        self.id.hash(state);
    }
}

impl PartialEq for TouchyKey {
    fn eq(&self, other: &Self) -> bool {
        assert!(!self.touchy.eq.load(Ordering::SeqCst), "eq called for key");
        self.id == other.id
    }
}

impl Eq for TouchyKey {}

impl PartialOrd for TouchyKey {
    fn partial_cmp(&self, other: &Self) -> Option<Order> {
        Some(self.cmp(other))
    }
}

impl Ord for TouchyKey {
    fn cmp(&self, other: &Self) -> Order {
        self.id.cmp(&other.id)
    }
}

/// A ready value under key 1 whose clone panics from its first poll on. A map that clones the
/// key to hand out the output (a stream's item) drops the value and forgets its key, the panic
/// reaching the caller; one that does not (a future's output) hands the output out. Either
/// way the map is then empty by every measure, and the value was dropped once.
fn a_key_whose_clone_panics_while_its_output_is_handed_out_leaves_with_its_value<
    M: MapUnderTest,
>() {
    let touchy = Arc::<Touchy>::default();
    let (value, counts) = Tracked::new(1, future::ready(7));
    let mut map = M::new();
    M::insert(&mut map, TouchyKey::new(1, &touchy), value);
    touchy.clone.store(true, Ordering::SeqCst);
    match catch_unwind(AssertUnwindSafe(|| poll_once(&mut map))) {
        Err(panic) => assert_eq!(panic_message(&*panic), "clone called for key"),
        Ok(polled) => {
            let Poll::Ready(Some((key, 7))) = polled else {
                panic!("no output: {polled:?}");
            };
            assert_eq!(key.id, 1);
            assert!(
                M::KEY_LEAVES_WITH_OUTPUT,
                "the key was not cloned for the item"
            );
            // The clone of the output's key is made; it goes on to drop normally.
            touchy.clone.store(false, Ordering::SeqCst);
        }
    }
    touchy.clone.store(false, Ordering::SeqCst);
    assert_eq!(drain(&mut map).len(), 0);
    let key = TouchyKey::new(1, &touchy);
    assert!(
        !M::contains_key(&map, &key),
        "the departed value's key is still indexed"
    );
    assert!(M::get(&map, &key).is_none());
    assert_eq!(M::len(&map), 0);
    assert_eq!(M::keys(&map), (0, vec![]));
    assert!(!M::remove(&mut map, &key));
    assert_eq!(counts.drops(), 1);
}

/// Values under keys 0..n, every key's `Hash` and `Eq` panicking once the values were polled:
/// every output still comes, under its key, and the map is empty after them.
fn outputs_are_handed_out_without_hashing_or_comparing_a_key<M: MapUnderTest>() {
    let n = if cfg!(miri) { 4 } else { 40 };
    let touchy = Arc::<Touchy>::default();
    let mut map = M::new();
    let mut counts = Vec::new();
    for id in 0..n {
        let (value, count) = Tracked::new(id as usize, future::ready(id));
        M::insert(&mut map, TouchyKey::new(id, &touchy), value);
        counts.push(count);
    }
    touchy.hash.store(true, Ordering::SeqCst);
    touchy.eq.store(true, Ordering::SeqCst);
    let outputs = catch_unwind(AssertUnwindSafe(|| drain(&mut map)));
    touchy.hash.store(false, Ordering::SeqCst);
    touchy.eq.store(false, Ordering::SeqCst);
    let mut outputs: Vec<(u32, u32)> = outputs
        .unwrap_or_else(|panic| panic!("{}", panic_message(&*panic)))
        .into_iter()
        .map(|(key, out)| (key.id, out))
        .collect();
    outputs.sort_unstable();
    let expected: Vec<(u32, u32)> = (0..n).map(|id| (id, id)).collect();
    assert_eq!(outputs, expected);
    assert_eq!(M::len(&map), 0);
    assert_eq!(M::keys(&map), (0, vec![]));
    assert!(!M::contains_key(&map, &TouchyKey::new(0, &touchy)));
    assert!(counts.iter().all(|count| count.drops() == 1));
}

/// Keys 0..8 whose `Hash` panics once they are in, then keys given afresh (whose `Hash` works)
/// inserted in bursts and removed again, over and over, so that the index grows and rehashes
/// the tombstones of its removed keys away: no key it holds is hashed again, so nothing
/// panics, and the first keys' values stay, each under its key.
fn the_index_never_hashes_the_keys_it_holds_when_it_grows_or_rehashes<M: MapUnderTest>() {
    let (rounds, burst) = if cfg!(miri) { (4, 20) } else { (40, 100) };
    let held = Arc::<Touchy>::default();
    let fresh = Arc::<Touchy>::default();
    let mut map = M::new();
    for id in 0..8 {
        M::insert(&mut map, TouchyKey::new(id, &held), future::pending::<()>());
    }
    held.hash.store(true, Ordering::SeqCst);
    for round in 0..rounds {
        // Bursts of growing size: the index grows, then holds many tombstones.
        let ids = 100..100 + burst * (round % 3 + 1);
        let churned = catch_unwind(AssertUnwindSafe(|| {
            for id in ids.clone() {
                M::insert(&mut map, TouchyKey::new(id, &fresh), future::pending());
            }
            for id in ids.clone() {
                assert!(M::remove(&mut map, &TouchyKey::new(id, &fresh)));
            }
        }));
        if let Err(panic) = churned {
            held.hash.store(false, Ordering::SeqCst);
            let keys = M::keys(&map);
            panic!(
                "round {round}: {}; len {}, keys {}",
                panic_message(&*panic),
                M::len(&map),
                keys.0
            );
        }
    }
    held.hash.store(false, Ordering::SeqCst);
    assert_eq!(M::len(&map), 8);
    let ids: Vec<u32> = M::keys(&map).1.iter().map(|key| key.id).collect();
    assert_eq!(ids, (0..8).collect::<Vec<_>>());
    for id in 0..8 {
        assert!(M::contains_key(&map, &TouchyKey::new(id, &fresh)));
    }
}
