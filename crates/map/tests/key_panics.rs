//! The user's key code panicking: a key whose `Clone`, `Hash` or `Eq` panics while the map
//! hands out an output leaves the map consistent (its index and its values agree), and handing
//! out an output never hashes or compares a key; keys and values whose `Drop`s all panic are
//! dropped all the same, the first panic reaching the caller, and never abort the process.

mod support;

use std::borrow::Borrow;
use std::cmp::Ordering as Order;
use std::future::Future;
use std::hash::{Hash, Hasher};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::task::{Context, Poll};

use futures_util::future;
use support::{MapUnderTest, Tracked, both, drain, panic_message, poll_once};

both!(
    a_key_whose_clone_panics_while_its_output_is_handed_out_leaves_with_its_value,
    outputs_are_handed_out_without_hashing_or_comparing_a_key,
    the_index_never_hashes_the_keys_it_holds_when_it_grows_or_rehashes,
    remove_drops_a_value_and_its_key_whose_drops_all_panic_and_the_first_panic_goes_on,
    clear_drops_values_and_keys_whose_drops_all_panic_and_the_first_panic_goes_on,
    dropping_the_map_drops_values_and_keys_whose_drops_all_panic,
    a_replacing_insert_drops_a_value_and_key_whose_drops_all_panic_and_puts_the_new_value_in,
    a_finishing_value_and_its_key_whose_drops_all_panic_leave_and_the_first_panic_goes_on,
    replace_drops_what_it_gives_back_when_the_drops_of_the_keys_panic,
    remove_entry_drops_what_it_gives_back_when_the_drops_of_the_keys_panic,
    an_insert_whose_key_panics_drops_the_value_whose_drop_panics_and_changes_nothing,
);

/// Which of a [`TouchyKey`]'s operations panic (every call, while set), and how many of the
/// keys were dropped.
#[derive(Debug, Default)]
struct Touchy {
    clone: AtomicBool,
    hash: AtomicBool,
    eq: AtomicBool,
    drop: AtomicBool,
    drops: AtomicUsize,
}

/// A key whose `Clone`, `Hash`, `Eq` and `Drop` panic while their switch in [`Touchy`] is on;
/// looked up by its id.
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

impl Borrow<u32> for TouchyKey {
    fn borrow(&self) -> &u32 {
        &self.id
    }
}

impl Drop for TouchyKey {
    fn drop(&mut self) {
        self.touchy.drops.fetch_add(1, Ordering::SeqCst);
        if self.touchy.drop.load(Ordering::SeqCst) {
            panic!("drop called for key {}", self.id);
        }
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

/// The switches and counts shared by the keys it makes and [`LoudValue`]s: while a switch is
/// on, every `Drop` of that kind panics.
#[derive(Debug, Default)]
struct Loud {
    keys: Arc<Touchy>,
    values_panic: AtomicBool,
    value_drops: AtomicUsize,
}

impl Loud {
    /// Turns both switches on or off.
    fn arm(&self, on: bool) {
        self.keys.drop.store(on, Ordering::SeqCst);
        self.values_panic.store(on, Ordering::SeqCst);
    }

    /// Runs `call` with every `Drop` of the keys and values panicking, and checks that one of
    /// their panics came out of it; the drops of keys and of values it made.
    fn armed<R>(&self, call: impl FnOnce() -> R) -> (usize, usize) {
        let (keys, values) = (self.key_drops(), self.value_drops());
        self.arm(true);
        let result = catch_unwind(AssertUnwindSafe(call));
        self.arm(false);
        loud_panic(result);
        (self.key_drops() - keys, self.value_drops() - values)
    }

    fn key_drops(&self) -> usize {
        self.keys.drops.load(Ordering::SeqCst)
    }

    /// A value giving `output` (pending if `None`) whose `Drop` panics while the values'
    /// switch is on.
    fn value(self: &Arc<Self>, output: Option<u32>) -> LoudValue {
        LoudValue {
            output,
            loud: self.clone(),
        }
    }

    /// A key `id` whose `Drop` panics while the keys' switch is on.
    fn key(&self, id: u32) -> TouchyKey {
        TouchyKey::new(id, &self.keys)
    }

    fn value_drops(&self) -> usize {
        self.value_drops.load(Ordering::SeqCst)
    }
}

/// A future that gives `output` at once if it is `Some`, else never finishes; its `Drop`
/// panics while its [`Loud`] says so.
#[derive(Debug)]
struct LoudValue {
    output: Option<u32>,
    loud: Arc<Loud>,
}

impl Future for LoudValue {
    type Output = u32;

    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<u32> {
        self.output.map_or(Poll::Pending, Poll::Ready)
    }
}

impl Drop for LoudValue {
    fn drop(&mut self) {
        self.loud.value_drops.fetch_add(1, Ordering::SeqCst);
        if self.loud.values_panic.load(Ordering::SeqCst) {
            panic!("drop called for value");
        }
    }
}

/// A map of pending [`LoudValue`]s under keys `0..n`, and what they share.
fn loud_map<M: MapUnderTest>(n: u32) -> (M::Map<TouchyKey, LoudValue>, Arc<Loud>) {
    let loud = Arc::<Loud>::default();
    let mut map = M::new();
    for id in 0..n {
        let key = loud.key(id);
        let value = loud.value(None);
        M::insert(&mut map, key, value);
    }
    (map, loud)
}

/// Drains `map`: its outputs, each beside its key's id.
fn outputs_by_id<M: MapUnderTest>(map: &mut M::Map<TouchyKey, LoudValue>) -> Vec<(u32, u32)> {
    drain(map)
        .into_iter()
        .map(|(key, out)| (key.id, out))
        .collect()
}

/// Checks that `result` holds a panic, one of a [`Loud`] `Drop`'s.
fn loud_panic<T>(result: std::thread::Result<T>) {
    let panic = result.err().expect("no drop panicked");
    let message = panic_message(&*panic);
    assert!(message.starts_with("drop called for"), "{message}");
}

/// `remove` of a value whose `Drop` panics, and both copies of whose key (the index's and the
/// slot's) panic in their `Drop`: the first panic goes on, the others are dropped, and the
/// value and its key are gone.
fn remove_drops_a_value_and_its_key_whose_drops_all_panic_and_the_first_panic_goes_on<
    M: MapUnderTest,
>() {
    pinfold_testkit::panic_hook::no_forced_backtraces();
    let (mut map, loud) = loud_map::<M>(2);
    assert_eq!(loud.armed(|| M::remove(&mut map, &0)), (2, 1));
    assert_eq!(M::len(&map), 1);
    assert!(!M::contains_key(&map, &0));
    assert!(M::contains_key(&map, &1));
}

/// `clear` of values and keys whose `Drop`s all panic: every value and both copies of every
/// key are dropped, the first panic goes on, and the map is empty.
fn clear_drops_values_and_keys_whose_drops_all_panic_and_the_first_panic_goes_on<
    M: MapUnderTest,
>() {
    pinfold_testkit::panic_hook::no_forced_backtraces();
    let (mut map, loud) = loud_map::<M>(4);
    assert_eq!(loud.armed(|| M::clear(&mut map)), (8, 4));
    assert!(M::is_empty(&map));
    assert_eq!(M::keys(&map).0, 0);
    assert_eq!(poll_once(&mut map), Poll::Ready(None));
}

/// Dropping a map of values and keys whose `Drop`s all panic: every value and both copies of
/// every key are dropped, and the first panic goes on.
fn dropping_the_map_drops_values_and_keys_whose_drops_all_panic<M: MapUnderTest>() {
    pinfold_testkit::panic_hook::no_forced_backtraces();
    let (map, loud) = loud_map::<M>(4);
    assert_eq!(loud.armed(|| drop(map)), (8, 4));
}

/// An insert over a taken key whose value and both key copies panic in their `Drop`: they are
/// dropped, the first panic goes on, and the new value is in the map and gives its output.
fn a_replacing_insert_drops_a_value_and_key_whose_drops_all_panic_and_puts_the_new_value_in<
    M: MapUnderTest,
>() {
    pinfold_testkit::panic_hook::no_forced_backtraces();
    let (mut map, loud) = loud_map::<M>(1);
    let key = loud.key(0);
    let value = loud.value(Some(9));
    // The old value and its key's two copies; the new key's copies are in the map.
    assert_eq!(loud.armed(|| M::insert(&mut map, key, value)), (2, 1));
    assert_eq!(M::len(&map), 1);
    assert_eq!(outputs_by_id::<M>(&mut map), [(0, 9)]);
}

/// A value that finishes, whose `Drop` panics as it leaves, under a key whose copies panic in
/// their `Drop`: the value, its key and its output are gone, the first panic goes on, and the
/// map is empty.
fn a_finishing_value_and_its_key_whose_drops_all_panic_leave_and_the_first_panic_goes_on<
    M: MapUnderTest,
>() {
    pinfold_testkit::panic_hook::no_forced_backtraces();
    let loud = Arc::<Loud>::default();
    let mut map = M::new();
    let key = loud.key(0);
    let value = loud.value(Some(9));
    M::insert(&mut map, key, value);
    loud.arm(true);
    let polled = catch_unwind(AssertUnwindSafe(|| {
        // A stream gives its item (under a clone of the key, dropped here quietly) first.
        while let Poll::Ready(Some((key, _))) = poll_once(&mut map) {
            loud.keys.drop.store(false, Ordering::SeqCst);
            drop(key);
            loud.keys.drop.store(true, Ordering::SeqCst);
        }
    }));
    loud.arm(false);
    loud_panic(polled);
    assert_eq!(loud.value_drops(), 1);
    assert!(M::is_empty(&map));
    assert_eq!(M::keys(&map).0, 0);
    assert!(!M::contains_key(&map, &0));
    assert_eq!(poll_once(&mut map), Poll::Ready(None));
}

/// `replace` over a taken key whose copies panic in their `Drop`: the replaced value, which was
/// being given back, is dropped as the first panic goes on, even though its own `Drop` panics
/// too, and the new value is in the map.
fn replace_drops_what_it_gives_back_when_the_drops_of_the_keys_panic<M: MapUnderTest>() {
    pinfold_testkit::panic_hook::no_forced_backtraces();
    let (mut map, loud) = loud_map::<M>(1);
    let key = loud.key(0);
    let value = loud.value(Some(9));
    let values = loud.value_drops();
    loud.arm(true);
    let replaced = catch_unwind(AssertUnwindSafe(|| M::replace(&mut map, key, value)));
    loud.arm(false);
    loud_panic(replaced);
    assert_eq!(loud.value_drops() - values, 1);
    assert_eq!(M::len(&map), 1);
    assert_eq!(outputs_by_id::<M>(&mut map), [(0, 9)]);
}

/// `remove_entry` of a value under a key whose copies panic in their `Drop`: the key and the
/// value, which were being given back, are dropped as the first panic goes on, even though
/// their own `Drop`s panic too, and the map is without them.
fn remove_entry_drops_what_it_gives_back_when_the_drops_of_the_keys_panic<M: MapUnderTest>() {
    pinfold_testkit::panic_hook::no_forced_backtraces();
    let (mut map, loud) = loud_map::<M>(2);
    assert_eq!(loud.armed(|| M::remove_entry(&mut map, &0)), (2, 1));
    assert_eq!(M::len(&map), 1);
    assert!(!M::contains_key(&map, &0));
}

/// An insert whose key's `Hash`, `Clone` or `Eq` panics, of a value whose `Drop` panics too: the
/// key's panic goes on, the value is dropped once as it unwinds (its own panic dropped), and
/// the map is as it was.
fn an_insert_whose_key_panics_drops_the_value_whose_drop_panics_and_changes_nothing<
    M: MapUnderTest,
>() {
    pinfold_testkit::panic_hook::no_forced_backtraces();
    let touchy = Arc::<Touchy>::default();
    let loud = Arc::<Loud>::default();
    let mut map = M::new();
    let value = || loud.value(Some(1));
    M::insert(&mut map, TouchyKey::new(0, &touchy), value());
    let switches = [&touchy.hash, &touchy.clone, &touchy.eq];
    for (turn, switch) in switches.into_iter().enumerate() {
        let (key, value) = (TouchyKey::new(turn as u32 % 2, &touchy), value());
        switch.store(true, Ordering::SeqCst);
        loud.values_panic.store(true, Ordering::SeqCst);
        let inserted = catch_unwind(AssertUnwindSafe(|| M::insert(&mut map, key, value)));
        loud.values_panic.store(false, Ordering::SeqCst);
        switch.store(false, Ordering::SeqCst);
        let panic = inserted.expect_err("the key's code panics");
        assert!(panic_message(&*panic).ends_with("called for key"));
        assert_eq!(loud.value_drops(), turn + 1, "the value is dropped once");
        assert_eq!(M::len(&map), 1, "the map is as it was");
    }
}
