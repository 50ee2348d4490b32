//! Keys: each output comes under the key its value was inserted under; a value replaced or
//! removed is dropped at once and its output never comes; and a waker of a value that left
//! does not poll the value that took its slot.

mod support;

use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::Poll;
use std::time::Duration;

use futures_channel::oneshot;
use futures_util::{StreamExt, future};
use support::{
    MapUnderTest, Probe, XorShift, both, counting_waker, drain, panic_message, poll_once,
    poll_with, probes, settle,
};

both!(
    outputs_carry_the_key_they_were_inserted_under,
    insert_over_a_taken_key_drops_the_old_value_at_once_and_only_the_new_output_comes,
    remove_drops_the_value_at_once_and_its_output_never_comes,
    a_stale_waker_of_a_removed_value_does_not_poll_the_value_in_its_slot,
    a_stale_waker_of_a_replaced_value_does_not_poll_the_value_in_its_slot,
    a_duplicate_key_gives_only_the_later_values_output,
    a_ready_value_replaced_by_a_pending_one_gives_nothing_until_that_one_finishes,
    a_key_whose_drop_panics_in_insert_still_replaces_the_old_value,
    a_key_whose_drop_panics_in_replace_still_replaces_and_drops_the_old_value,
    a_key_whose_drop_panics_in_remove_entry_leaves_the_map_without_the_value,
    removed_keys_give_nothing_and_the_others_finish_in_deadline_order,
    a_replacing_insert_puts_its_key_in_place_of_the_old_one,
    remove_entry_after_a_replacing_insert_gives_the_new_key,
    a_replacing_insert_whose_old_value_panics_in_drop_puts_its_key_in_place_of_the_old_one,
);

/// Many probes under string keys, finished one by one in a shuffled order: each output comes
/// as soon as its probe finishes, under the key it was inserted under.
fn outputs_carry_the_key_they_were_inserted_under<M: MapUnderTest>() {
    let n = if cfg!(miri) { 12 } else { 300 };
    let key = |id: usize| format!("key {id}");
    let mut map = M::new();
    let (probes, states) = probes(n);
    for (id, probe) in probes.into_iter().enumerate() {
        assert!(!M::insert(&mut map, key(id), probe), "a new key was taken");
    }
    assert_eq!(M::len(&map), n);
    assert!(settle(&mut map).is_empty());
    for id in XorShift::new(5).permutation(n) {
        states[id].finish();
        assert_eq!(settle(&mut map), [(key(id), id)]);
    }
    assert!(M::is_empty(&map));
    assert_eq!(poll_once(&mut map), Poll::Ready(None));
    assert!(states.iter().all(|state| state.drops() == 1));
}

fn insert_over_a_taken_key_drops_the_old_value_at_once_and_only_the_new_output_comes<
    M: MapUnderTest,
>() {
    let mut map = M::new();
    let (first, first_state) = Probe::new(1);
    assert!(!M::insert(&mut map, "k", first));
    assert!(
        settle(&mut map).is_empty(),
        "the first probe was not polled"
    );

    // Replaced after its first poll, then the replacing one before its first.
    let (second, second_state) = Probe::new(2);
    assert!(M::insert(&mut map, "k", second), "insert over a taken key");
    assert_eq!(first_state.drops(), 1, "the replaced value was not dropped");
    let (third, third_state) = Probe::new(3);
    assert!(M::insert(&mut map, "k", third));
    assert_eq!(
        second_state.drops(),
        1,
        "the replaced value was not dropped"
    );
    assert_eq!(M::len(&map), 1);

    // Had the replaced probes stayed, their outputs would be ready now.
    first_state.open();
    second_state.open();
    assert!(settle(&mut map).is_empty(), "an output of a replaced value");
    assert_eq!(second_state.polls(), 0, "a replaced value was polled");
    third_state.finish();
    assert_eq!(drain(&mut map), [("k", 3)]);
    assert_eq!(third_state.drops(), 1);
}

fn remove_drops_the_value_at_once_and_its_output_never_comes<M: MapUnderTest>() {
    let keys = ["a", "b", "c", "d"];
    let mut map = M::new();
    let (probes, states) = probes(keys.len());
    for (key, probe) in keys.into_iter().zip(probes) {
        assert!(!M::insert(&mut map, key, probe));
    }
    // "d" goes before its first poll, "b" after it.
    assert!(M::remove(&mut map, "d"));
    assert!(settle(&mut map).is_empty());
    assert!(M::remove(&mut map, "b"));
    assert_eq!(
        (states[1].drops(), states[3].drops()),
        (1, 1),
        "remove did not drop the value at once"
    );
    assert_eq!(
        states[3].polls(),
        0,
        "a value removed before its first poll"
    );
    assert_eq!(M::len(&map), 2);
    assert!(!M::contains_key(&map, "b"));
    assert!(!M::remove(&mut map, "b"), "removed twice");
    assert!(!M::remove(&mut map, "e"), "removed a key never inserted");
    assert_eq!(M::len(&map), 2);

    // Had "b" stayed, its output would be ready now.
    states[1].open();
    states[0].finish();
    states[2].finish();
    let mut outputs = drain(&mut map);
    outputs.sort_unstable();
    assert_eq!(outputs, [("a", 0), ("c", 2)]);
}

fn a_stale_waker_of_a_removed_value_does_not_poll_the_value_in_its_slot<M: MapUnderTest>() {
    stale_waker_does_not_poll_the_value_in_its_slot::<M>(false);
}

fn a_stale_waker_of_a_replaced_value_does_not_poll_the_value_in_its_slot<M: MapUnderTest>() {
    stale_waker_does_not_poll_the_value_in_its_slot::<M>(true);
}

/// A map of one slot: the value under key 0 is polled (its probe keeps the waker), then
/// removed, or replaced (the replacing value takes its slot: the old one goes first), and a
/// value under key 2 comes in. Waking the departed value's waker polls nothing: the map is
/// `Pending` with no output, and no value's poll count moves; their own wakers still work.
fn stale_waker_does_not_poll_the_value_in_its_slot<M: MapUnderTest>(replace: bool) {
    let mut map = M::with_capacity(1);
    let (old, old_state) = Probe::new(0);
    M::insert(&mut map, 0, old);
    assert!(settle(&mut map).is_empty());
    let stale = old_state.waker();
    let (replacing, replacing_state) = Probe::new(1);
    if replace {
        assert!(M::insert(&mut map, 0, replacing));
    } else {
        assert!(M::remove(&mut map, &0));
    }
    assert_eq!(old_state.drops(), 1);
    let (new, new_state) = Probe::new(2);
    assert!(!M::insert(&mut map, 2, new));
    assert!(settle(&mut map).is_empty());
    let occupant = if replace {
        &replacing_state
    } else {
        &new_state
    };
    assert_eq!(
        occupant.address(),
        old_state.address(),
        "setup: the departed value's slot was not reused"
    );
    let polls = (new_state.polls(), replacing_state.polls());

    stale.wake_by_ref();
    stale.wake();
    let (task, _) = counting_waker();
    for _ in 0..3 {
        assert_eq!(poll_with(&mut map, &task), Poll::Pending);
    }
    assert_eq!(
        (new_state.polls(), replacing_state.polls()),
        polls,
        "a stale waker polled a value"
    );

    new_state.finish();
    let mut expected = vec![(2, 2)];
    if replace {
        replacing_state.finish();
        expected.insert(0, (0, 1));
    }
    let mut outputs = settle(&mut map);
    outputs.sort_unstable();
    assert_eq!(outputs, expected);
}

/// Ported from tokio-util (`tests/task_join_map.rs`, `duplicate_keys`).
fn a_duplicate_key_gives_only_the_later_values_output<M: MapUnderTest>() {
    let mut map = M::new();
    M::insert(&mut map, 1, future::ready(1));
    M::insert(&mut map, 1, future::ready(2));
    assert_eq!(M::len(&map), 1);
    assert_eq!(drain(&mut map), [(1, 2)]);
}

/// Ported from tokio-util (`tests/task_join_map.rs`, `duplicate_keys2`): a ready value
/// replaced by one waiting on a channel gives no output (no phantom one from the replaced
/// value) until the channel's send.
fn a_ready_value_replaced_by_a_pending_one_gives_nothing_until_that_one_finishes<
    M: MapUnderTest,
>() {
    type Boxed = Pin<Box<dyn Future<Output = u32>>>;
    let (sender, receiver) = oneshot::channel::<()>();
    let mut map = M::new();
    M::insert(&mut map, 1, Box::pin(async { 1_u32 }) as Boxed);
    M::insert(
        &mut map,
        1,
        Box::pin(async {
            receiver.await.unwrap();
            2_u32
        }) as Boxed,
    );
    assert_eq!(M::len(&map), 1);
    let (task, wakes) = counting_waker();
    assert_eq!(poll_with(&mut map, &task), Poll::Pending);
    sender.send(()).unwrap();
    assert_eq!(wakes.count(), 1);
    assert_eq!(drain(&mut map), [(1, 2)]);
}

/// A key type whose drop panics once, when armed; all its values are equal.
#[derive(Debug, Clone)]
struct DropPanics(Arc<AtomicBool>);

impl PartialEq for DropPanics {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for DropPanics {}

impl std::hash::Hash for DropPanics {
    fn hash<H: std::hash::Hasher>(&self, _: &mut H) {}
}

impl Drop for DropPanics {
    fn drop(&mut self) {
        if self.0.swap(false, Ordering::SeqCst) {
            panic!("drop called for key");
        }
    }
}

/// Ported from tokio-util (`tests/task_join_map.rs`, `duplicate_keys_drop`): an insert over a
/// taken key during which a key's drop panics still drops the old value (its channel's sender
/// sees the receiver gone), and the map holds the new value alone.
fn a_key_whose_drop_panics_in_insert_still_replaces_the_old_value<M: MapUnderTest>() {
    let armed = Arc::new(AtomicBool::new(false));
    let (sender, receiver) = oneshot::channel::<u32>();
    let mut map = M::new();
    M::insert(
        &mut map,
        DropPanics(armed.clone()),
        future::Either::Left(receiver),
    );
    armed.store(true, Ordering::SeqCst);
    let replaced = catch_unwind(AssertUnwindSafe(|| {
        M::insert(
            &mut map,
            DropPanics(armed.clone()),
            future::Either::Right(future::ready(Ok(2))),
        )
    }));
    assert_eq!(
        panic_message(&*replaced.expect_err("no key was dropped")),
        "drop called for key"
    );
    assert!(sender.is_canceled(), "the replaced value was not dropped");
    assert_eq!(M::len(&map), 1);
    let outputs: Vec<u32> = drain(&mut map)
        .into_iter()
        .map(|(_, out)| out.unwrap())
        .collect();
    assert_eq!(outputs, [2]);
}

/// `replace` over a taken key during which a key's drop panics: the new value is in the map
/// alone, and the old one, which was being given back, is dropped as the panic unwinds.
fn a_key_whose_drop_panics_in_replace_still_replaces_and_drops_the_old_value<M: MapUnderTest>() {
    let armed = Arc::new(AtomicBool::new(false));
    let (old_sender, old) = oneshot::channel::<u32>();
    let (new_sender, new) = oneshot::channel::<u32>();
    let mut map = M::new();
    M::insert(&mut map, DropPanics(armed.clone()), old);
    armed.store(true, Ordering::SeqCst);
    let replaced = catch_unwind(AssertUnwindSafe(|| {
        M::replace(&mut map, DropPanics(armed.clone()), new)
    }));
    assert_eq!(
        panic_message(&*replaced.expect_err("no key was dropped")),
        "drop called for key"
    );
    assert!(old_sender.is_canceled(), "the old value was not dropped");
    assert_eq!(M::len(&map), 1);
    new_sender.send(2).unwrap();
    let outputs: Vec<u32> = drain(&mut map)
        .into_iter()
        .map(|(_, out)| out.unwrap())
        .collect();
    assert_eq!(outputs, [2]);
}

/// `remove_entry` during which the drop of the slot's copy of the key panics: the value is
/// gone from the map, dropped as the panic unwinds, and the map goes on.
fn a_key_whose_drop_panics_in_remove_entry_leaves_the_map_without_the_value<M: MapUnderTest>() {
    let armed = Arc::new(AtomicBool::new(false));
    let (sender, receiver) = oneshot::channel::<u32>();
    let mut map = M::new();
    M::insert(&mut map, DropPanics(armed.clone()), receiver);
    armed.store(true, Ordering::SeqCst);
    let removed = catch_unwind(AssertUnwindSafe(|| {
        M::remove_entry(&mut map, &DropPanics(Arc::new(AtomicBool::new(false))))
    }));
    assert_eq!(
        panic_message(&*removed.expect_err("no key was dropped")),
        "drop called for key"
    );
    assert!(sender.is_canceled(), "the value was not dropped");
    assert!(M::is_empty(&map));
    assert_eq!(poll_once(&mut map), Poll::Ready(None));
    M::insert(&mut map, DropPanics(armed.clone()), oneshot::channel().1);
    assert_eq!(M::len(&map), 1);
}

/// Sleeps `secs` seconds of tokio's clock, then gives `secs`.
async fn sleeper(secs: u64) -> u64 {
    tokio::time::sleep(Duration::from_secs(secs)).await;
    secs
}

/// Ported from tokio-util (`tests/task_join_map.rs`, `abort_by_key`): with tokio's clock
/// paused, removing the odd keys of 16 sleepers leaves the even ones, whose outputs come in
/// the order of their deadlines, each under its key.
fn removed_keys_give_nothing_and_the_others_finish_in_deadline_order<M: MapUnderTest>() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    let outputs = runtime.block_on(async {
        let mut map = M::new();
        for secs in 0..16 {
            M::insert(&mut map, secs, sleeper(secs));
        }
        for secs in (1..16).step_by(2) {
            assert!(M::remove(&mut map, &secs));
        }
        let mut outputs = Vec::new();
        while let Some((key, secs)) = map.next().await {
            assert_eq!(key, secs);
            assert_eq!(
                M::contains_key(&map, &key),
                !M::KEY_LEAVES_WITH_OUTPUT,
                "key {key} after its output"
            );
            outputs.push(secs);
        }
        outputs
    });
    assert_eq!(outputs, (0..16).step_by(2).collect::<Vec<_>>());
}

/// A key equal to (and hashing and ordered as) any other of the same `id`, told apart by
/// `tag`.
#[derive(Debug, Clone)]
struct Tagged {
    id: u32,
    tag: &'static str,
}

impl Tagged {
    fn new(id: u32, tag: &'static str) -> Self {
        Self { id, tag }
    }
}

impl PartialEq for Tagged {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id
    }
}

impl Eq for Tagged {}

impl std::hash::Hash for Tagged {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.id.hash(state);
    }
}

impl PartialOrd for Tagged {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Tagged {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.id.cmp(&other.id)
    }
}

/// An insert over a taken key puts its own key in the map, as tokio-stream does: `keys`,
/// `iter`, `Debug` and the output all give the new key, none the old one.
fn a_replacing_insert_puts_its_key_in_place_of_the_old_one<M: MapUnderTest>() {
    let mut map = M::new();
    M::insert(&mut map, Tagged::new(1, "old"), future::ready(1_u32));
    assert!(M::insert(&mut map, Tagged::new(1, "new"), future::ready(2)));
    let (_, keys) = M::keys(&map);
    assert_eq!(keys.iter().map(|key| key.tag).collect::<Vec<_>>(), ["new"]);
    let (_, entries) = M::iter(&map);
    assert_eq!(
        entries.iter().map(|(key, _)| key.tag).collect::<Vec<_>>(),
        ["new"]
    );
    let debug = M::debug(&map);
    assert!(
        debug.contains("\"new\"") && !debug.contains("\"old\""),
        "{debug}"
    );
    let outputs: Vec<(&str, u32)> = drain(&mut map)
        .into_iter()
        .map(|(key, out)| (key.tag, out))
        .collect();
    assert_eq!(outputs, [("new", 2)]);
}

/// `remove_entry` after an insert over a taken key gives back the key of that insert.
fn remove_entry_after_a_replacing_insert_gives_the_new_key<M: MapUnderTest>() {
    let mut map = M::new();
    M::insert(&mut map, Tagged::new(1, "old"), future::ready(1_u32));
    M::insert(&mut map, Tagged::new(1, "new"), future::ready(2));
    let (key, _) = M::remove_entry(&mut map, &Tagged::new(1, "lookup")).unwrap();
    assert_eq!(key.tag, "new");
    assert!(M::is_empty(&map));
}

/// A future that never finishes and whose drop panics.
struct PanicsInDrop;

impl Future for PanicsInDrop {
    type Output = u32;

    fn poll(self: Pin<&mut Self>, _: &mut std::task::Context<'_>) -> Poll<u32> {
        Poll::Pending
    }
}

impl Drop for PanicsInDrop {
    fn drop(&mut self) {
        panic!("drop called for value");
    }
}

/// An insert over a taken key whose old value panics as it is dropped puts the new value in
/// the map all the same, under the new key.
fn a_replacing_insert_whose_old_value_panics_in_drop_puts_its_key_in_place_of_the_old_one<
    M: MapUnderTest,
>() {
    let mut map = M::new();
    M::insert(
        &mut map,
        Tagged::new(1, "old"),
        future::Either::Left(PanicsInDrop),
    );
    let replaced = catch_unwind(AssertUnwindSafe(|| {
        M::insert(
            &mut map,
            Tagged::new(1, "new"),
            future::Either::Right(future::ready(2)),
        )
    }));
    assert_eq!(
        panic_message(&*replaced.expect_err("the old value's drop did not panic")),
        "drop called for value"
    );
    let (_, keys) = M::keys(&map);
    assert_eq!(keys.iter().map(|key| key.tag).collect::<Vec<_>>(), ["new"]);
    let outputs: Vec<(&str, u32)> = drain(&mut map)
        .into_iter()
        .map(|(key, out)| (key.tag, out))
        .collect();
    assert_eq!(outputs, [("new", 2)]);
}
