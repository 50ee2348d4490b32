//! The ordered sets, `FuturesOrderedBounded` and `FuturesOrdered`: outputs in push order
//! (`push_front` ahead of every future still in the set), every future polled when woken
//! whatever the head does, the full bounded set refusing, termination and `clear`, panics,
//! fairness, wakes from other threads, and the cases of futures-rs's and futures-buffered's
//! ordered sets. Each behaviour is a generic case run over both types by `tests_for_each!`.

mod support;

use std::cell::Cell;
use std::collections::VecDeque;
use std::fmt;
use std::future::{Future, Ready, ready};
use std::marker::{PhantomData, PhantomPinned};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, MutexGuard};
use std::task::{Context, Poll};
use std::thread;
use std::time::Duration;

use futures_channel::oneshot::{self, Canceled, Receiver};
use futures_core::{FusedStream, Stream};
use futures_util::{FutureExt, StreamExt, future};
use pinfold_buffer::{FuturesOrdered, FuturesOrderedBounded};
use pinfold_testkit::channels::{id_channels, send_from_threads};
use pinfold_testkit::contract::panic_message;
use pinfold_testkit::future::block_on;
use pinfold_testkit::panicking_waker::{WAKE_BY_REF_PANIC, WAKE_PANIC, WakerOps, panicking_waker};
use pinfold_testkit::probe::{Probe, ProbeState, Spinner, probes};
use pinfold_testkit::rng::XorShift;
use pinfold_testkit::stream::take_ready;
use pinfold_testkit::tracked::{Counts, TRACKED_PANIC, Tracked};
use support::{
    Counted, Gate, GateState, Gauge, counting_waker, drain, poll_once, poll_with, random, settle,
};

/// An ordered set type, named by a marker type so that one generic case runs over each. Each
/// function forwards to the set's method of the same name.
trait OrderedSet {
    /// The type's name, as its `Debug` output starts.
    const NAME: &'static str;
    /// The set, holding futures of type `F`.
    type Set<F: Future>: Stream<Item = F::Output>
        + FusedStream
        + Unpin
        + fmt::Debug
        + FromIterator<F>;

    /// An empty set that can run at least `running` futures at once (a bounded set exactly
    /// that many).
    fn with_room<F: Future>(running: usize) -> Self::Set<F>;
    fn push_back<F: Future>(set: &mut Self::Set<F>, fut: F);
    fn push_front<F: Future>(set: &mut Self::Set<F>, fut: F);
    fn len<F: Future>(set: &Self::Set<F>) -> usize;
    fn is_empty<F: Future>(set: &Self::Set<F>) -> bool;
    fn clear<F: Future>(set: &mut Self::Set<F>);
}

/// `FuturesOrderedBounded`.
struct Bounded;

impl OrderedSet for Bounded {
    const NAME: &'static str = "FuturesOrderedBounded";
    type Set<F: Future> = FuturesOrderedBounded<F>;

    fn with_room<F: Future>(running: usize) -> FuturesOrderedBounded<F> {
        FuturesOrderedBounded::new(running)
    }

    fn push_back<F: Future>(set: &mut FuturesOrderedBounded<F>, fut: F) {
        set.push_back(fut);
    }

    fn push_front<F: Future>(set: &mut FuturesOrderedBounded<F>, fut: F) {
        set.push_front(fut);
    }

    fn len<F: Future>(set: &FuturesOrderedBounded<F>) -> usize {
        set.len()
    }

    fn is_empty<F: Future>(set: &FuturesOrderedBounded<F>) -> bool {
        set.is_empty()
    }

    fn clear<F: Future>(set: &mut FuturesOrderedBounded<F>) {
        set.clear();
    }
}

/// `FuturesOrdered`.
struct Growable;

impl OrderedSet for Growable {
    const NAME: &'static str = "FuturesOrdered";
    type Set<F: Future> = FuturesOrdered<F>;

    fn with_room<F: Future>(_running: usize) -> FuturesOrdered<F> {
        FuturesOrdered::new()
    }

    fn push_back<F: Future>(set: &mut FuturesOrdered<F>, fut: F) {
        set.push_back(fut);
    }

    fn push_front<F: Future>(set: &mut FuturesOrdered<F>, fut: F) {
        set.push_front(fut);
    }

    fn len<F: Future>(set: &FuturesOrdered<F>) -> usize {
        set.len()
    }

    fn is_empty<F: Future>(set: &FuturesOrdered<F>) -> bool {
        set.is_empty()
    }

    fn clear<F: Future>(set: &mut FuturesOrdered<F>) {
        set.clear();
    }
}

pinfold_testkit::tests_for_each!([bounded: super::Bounded, growable: super::Growable] {
    // Order.
    #[cfg_attr(miri, ignore)] // tokio's timer does not run under Miri
    outputs_follow_a_deque_model_under_random_sleeps,
    outputs_keep_push_order_when_probes_finish_in_random_order,
    mixed_pushes_and_random_finishes_follow_a_deque_model,
    push_front_goes_before_every_future_in_the_set,
    // A slow head.
    a_head_that_never_finishes_does_not_stop_later_futures,
    held_outputs_pile_up_behind_a_stuck_head_and_come_out_in_order,
    // Termination and clear.
    new_set_is_empty_and_not_terminated,
    empty_set_yields_none_then_is_terminated,
    push_after_termination_clears_is_terminated,
    clear_resets_is_terminated,
    set_is_not_terminated_while_outputs_are_held,
    clear_drops_every_future_and_held_output_once,
    panicking_drop_in_clear_leaves_the_set_empty_and_usable,
    // Panics.
    a_future_that_panics_is_skipped_and_later_outputs_keep_order,
    a_head_that_panics_when_woken_lets_the_held_outputs_out,
    a_set_whose_futures_all_panicked_ends,
    a_future_whose_drop_panics_after_it_finished_loses_only_its_place,
    // Fairness and wakes.
    each_future_is_polled_at_most_once_per_poll_next,
    a_self_waking_head_finishes_among_futures_that_never_do,
    a_task_waker_panic_blames_no_future,
    wakes_from_std_threads_are_never_lost,
    #[cfg_attr(miri, ignore)] // tokio does not run under Miri
    wakes_from_tokio_workers_are_never_lost,
    // Container.
    len_and_size_hint_count_running_and_held_futures,
    debug_names_the_type_without_needing_debug_futures,
    // Ported from futures-rs.
    channels_completed_out_of_order_give_their_values_in_push_order,
    a_joined_second_future_waits_for_its_last_channel,
    collect_holds_the_futures_in_iterator_order,
    a_head_that_never_finishes_keeps_the_set_pending,
    push_front_after_outputs_comes_before_the_rest,
    push_back_after_outputs_comes_after_the_rest,
    futures_pushed_only_to_the_front_come_in_reverse_order,
    // Ported from futures-buffered.
    ready_futures_pushed_back_come_in_push_order,
    ready_futures_pushed_front_come_in_reverse_order,
    from_iter_counts_every_future,
});

// ---------------------------------------------------------------------------------------------
// What the cases share.

/// A set with room for `n` running futures, holding `n` probes pushed to the back (outputs
/// `0..n`), and their states.
fn probe_set<S: OrderedSet>(n: usize) -> (S::Set<Probe>, Vec<Arc<ProbeState>>) {
    let mut set = S::with_room(n);
    let (futures, states) = probes(n);
    for probe in futures {
        S::push_back(&mut set, probe);
    }
    (set, states)
}

/// Asserts that `set` holds `len` futures, by `len`, `is_empty` and `size_hint`.
#[track_caller]
fn assert_len<S: OrderedSet, F: Future>(set: &S::Set<F>, len: usize) {
    assert_eq!(S::len(set), len, "len");
    assert_eq!(S::is_empty(set), len == 0, "is_empty");
    assert_eq!(set.size_hint(), (len, Some(len)), "size_hint");
}

/// One `poll_next` of `set` with a waker that does nothing; a panic comes back as its message.
fn catch_poll<St: Stream + Unpin>(set: &mut St) -> Result<Poll<Option<St::Item>>, String> {
    catch_unwind(AssertUnwindSafe(|| poll_once(set)))
        .map_err(|panic| panic_message(&*panic).to_owned())
}

/// Gates in `Tracked` futures, with what the test watches of them, by id.
struct TrackedGates {
    futures: Vec<Tracked<Gate>>,
    counts: Vec<Arc<Counts>>,
    states: Vec<Arc<GateState>>,
}

/// `n` closed gates with ids `0..n`, each in a `Tracked` that panics in the poll `panics`
/// gives for its id (`(id, poll)` pairs).
fn tracked_gates(n: usize, panics: &[(usize, usize)]) -> TrackedGates {
    let mut gates = TrackedGates {
        futures: Vec::with_capacity(n),
        counts: Vec::with_capacity(n),
        states: Vec::with_capacity(n),
    };
    for id in 0..n {
        let (gate, state) = Gate::new(id);
        let (mut tracked, count) = Tracked::new(id, gate);
        if let Some(&(_, poll)) = panics.iter().find(|&&(which, _)| which == id) {
            tracked = tracked.panicking_at(poll);
        }
        gates.futures.push(tracked);
        gates.counts.push(count);
        gates.states.push(state);
    }
    gates
}

/// The message of a [`PanicsOnDrop`]'s panic.
const DROP_PANIC: &str = "the future panics in its drop";

/// A future that gives its output at its first poll (or never, if made `pending`), counts its
/// drops, and panics in `Drop`, unless the thread is unwinding already (a failed assertion
/// dropping the set must not abort the test binary).
struct PanicsOnDrop<T> {
    output: Option<T>,
    pending: bool,
    drops: Arc<AtomicUsize>,
}

impl<T> PanicsOnDrop<T> {
    fn new(output: T, pending: bool) -> (Self, Arc<AtomicUsize>) {
        let drops = Arc::new(AtomicUsize::new(0));
        let fut = Self {
            output: Some(output),
            pending,
            drops: drops.clone(),
        };
        (fut, drops)
    }
}

impl<T: Unpin> Future for PanicsOnDrop<T> {
    type Output = T;

    fn poll(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<T> {
        if self.pending {
            return Poll::Pending;
        }
        Poll::Ready(self.output.take().expect("polled after Ready"))
    }
}

impl<T> Drop for PanicsOnDrop<T> {
    fn drop(&mut self) {
        self.drops.fetch_add(1, Ordering::SeqCst);
        if !thread::panicking() {
            panic!("{DROP_PANIC}");
        }
    }
}

/// A boxed future of outputs `T`, so that probes and other futures share one set.
type Boxed<T> = Pin<Box<dyn Future<Output = T>>>;

// ---------------------------------------------------------------------------------------------
// Order.

async fn sleep_then(id: usize, millis: u64) -> usize {
    tokio::time::sleep(Duration::from_millis(millis)).await;
    id
}

/// Futures that sleep for random times (tokio's paused clock, so every run is the same), each
/// pushed to the back or, one in four, to the front, come out in the order a `VecDeque` given
/// the same pushes holds them; and they all sleep at once: the run takes the longest sleep.
fn outputs_follow_a_deque_model_under_random_sleeps<S: OrderedSet>() {
    let n = 300;
    let delays = random(n, 50, 0x5eed);
    let mut rng = XorShift::new(17);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    runtime.block_on(async {
        let mut set = S::with_room(n);
        let mut model = VecDeque::with_capacity(n);
        for (id, &millis) in delays.iter().enumerate() {
            if rng.below(4) == 0 {
                S::push_front(&mut set, sleep_then(id, millis));
                model.push_front(id);
            } else {
                S::push_back(&mut set, sleep_then(id, millis));
                model.push_back(id);
            }
        }
        let start = tokio::time::Instant::now();
        let outputs: Vec<usize> = set.by_ref().collect().await;
        assert_eq!(outputs, Vec::from(model));
        let longest = *delays.iter().max().unwrap();
        assert_eq!(start.elapsed(), Duration::from_millis(longest));
        assert!(set.is_terminated());
    });
}

/// Probes finished one at a time in a random order: after each, exactly the outputs whose
/// every predecessor has finished come out, in push order, and `len` counts the rest.
fn outputs_keep_push_order_when_probes_finish_in_random_order<S: OrderedSet>() {
    let n = if cfg!(miri) { 16 } else { 300 };
    for seed in [3, 5, 7] {
        let (mut set, states) = probe_set::<S>(n);
        assert!(poll_once(&mut set).is_pending());
        let mut finished = vec![false; n];
        let mut next = 0;
        for id in XorShift::new(seed).permutation(n) {
            states[id].finish();
            finished[id] = true;
            let mut due = Vec::new();
            while next < n && finished[next] {
                due.push(next);
                next += 1;
            }
            assert_eq!(
                take_ready(&mut set),
                due,
                "seed {seed}, after probe {id} finished"
            );
            assert_len::<S, _>(&set, n - next);
        }
        assert_eq!(poll_once(&mut set), Poll::Ready(None));
        for (id, state) in states.iter().enumerate() {
            assert_eq!(state.polls(), 2, "probe {id}");
            assert_eq!(state.drops(), 1, "probe {id}");
        }
    }
}

/// A random run of `push_back`, `push_front`, gates opened (some before their first poll) and
/// single polls, checked against a `VecDeque` given the same pushes: each poll gives the
/// model's front if that gate is open, `Pending` if it is not, `None` if the model is empty.
fn mixed_pushes_and_random_finishes_follow_a_deque_model<S: OrderedSet>() {
    let steps = if cfg!(miri) { 80 } else { 3_000 };
    for seed in [1, 2, 3] {
        let mut rng = XorShift::new(seed);
        let mut set = S::with_room(steps);
        let mut model: VecDeque<usize> = VecDeque::new();
        let mut states: Vec<Arc<GateState>> = Vec::new();
        let mut open: Vec<bool> = Vec::new();
        for step in 0..steps {
            match rng.below(4) {
                choice @ (0 | 1) => {
                    let id = states.len();
                    let (gate, state) = Gate::new(id);
                    states.push(state);
                    open.push(false);
                    if choice == 0 {
                        S::push_back(&mut set, gate);
                        model.push_back(id);
                    } else {
                        S::push_front(&mut set, gate);
                        model.push_front(id);
                    }
                }
                2 if !model.is_empty() => {
                    let id = model[rng.below(model.len())];
                    states[id].open();
                    open[id] = true;
                }
                _ => {
                    let expected = match model.front() {
                        None => Poll::Ready(None),
                        Some(&id) if open[id] => Poll::Ready(model.pop_front()),
                        Some(_) => Poll::Pending,
                    };
                    assert_eq!(poll_once(&mut set), expected, "seed {seed}, step {step}");
                }
            }
            assert_len::<S, _>(&set, model.len());
        }
        for &id in &model {
            states[id].open();
        }
        assert_eq!(drain(&mut set), Vec::from(model), "seed {seed}, the rest");
        assert!(states.iter().all(|state| state.drops() == 1));
    }
}

/// `push_front` puts a future ahead of every future still in the set: the running ones and
/// those whose output is held.
fn push_front_goes_before_every_future_in_the_set<S: OrderedSet>() {
    let mut set = S::with_room(5);
    let (futures, states) = probes(5);
    let mut futures = futures.into_iter();
    for _ in 0..3 {
        S::push_back(&mut set, futures.next().unwrap());
    }
    assert!(poll_once(&mut set).is_pending());
    states[1].finish();
    assert_eq!(settle(&mut set), [], "1 is held behind 0");

    // Ahead of 0 (running), 1 (held) and 2 (running).
    S::push_front(&mut set, futures.next().unwrap());
    assert!(poll_once(&mut set).is_pending());
    states[3].finish();
    assert_eq!(poll_once(&mut set), Poll::Ready(Some(3)));
    assert!(poll_once(&mut set).is_pending());
    states[0].finish();
    assert_eq!(take_ready(&mut set), [0, 1]);

    // Ahead of 2, which finishes first.
    S::push_front(&mut set, futures.next().unwrap());
    assert!(poll_once(&mut set).is_pending());
    states[2].finish();
    assert_eq!(settle(&mut set), [], "2 is held behind 4");
    states[4].finish();
    assert_eq!(drain(&mut set), [4, 2]);
}

// ---------------------------------------------------------------------------------------------
// A slow head.

/// The head never finishes: every later future is still polled when woken, finishes and is
/// dropped, its output held; `len` counts the held outputs. Once the head finishes, all come
/// out in order.
fn a_head_that_never_finishes_does_not_stop_later_futures<S: OrderedSet>() {
    let n = 8;
    let (mut set, states) = probe_set::<S>(n);
    assert!(poll_once(&mut set).is_pending());
    for state in states.iter().skip(1).rev() {
        state.finish();
    }
    assert_eq!(settle(&mut set), [], "an output came before the head's");
    for (id, state) in states.iter().enumerate().skip(1) {
        assert_eq!(state.polls(), 2, "probe {id} was not polled when woken");
        assert_eq!(state.drops(), 1, "probe {id} finished but was not dropped");
    }
    assert_eq!((states[0].polls(), states[0].drops()), (1, 0));
    assert_len::<S, _>(&set, n);
    assert!(!set.is_terminated());

    states[0].finish();
    for id in 0..n {
        assert_eq!(poll_once(&mut set), Poll::Ready(Some(id)));
        assert_len::<S, _>(&set, n - id - 1);
    }
    assert_eq!(poll_once(&mut set), Poll::Ready(None));
}

/// Behind a stuck head, with room for two running futures, one future after another is
/// pushed and finishes: held outputs take no running room, they pile up far past the room
/// (the ring grows), and come out in order once the head finishes.
fn held_outputs_pile_up_behind_a_stuck_head_and_come_out_in_order<S: OrderedSet>() {
    let behind = if cfg!(miri) { 20 } else { 300 };
    let mut set = S::with_room(2);
    let (head, head_state) = Probe::new(0);
    S::push_back(&mut set, head);
    assert!(poll_once(&mut set).is_pending());
    for id in 1..=behind {
        let (probe, state) = Probe::new(id);
        S::push_back(&mut set, probe);
        assert!(poll_once(&mut set).is_pending());
        state.finish();
        assert_eq!(
            settle(&mut set),
            [],
            "probe {id}'s output came before the head's"
        );
        assert_eq!(state.drops(), 1);
        assert_len::<S, _>(&set, id + 1);
    }
    head_state.finish();
    assert_eq!(drain(&mut set), (0..=behind).collect::<Vec<_>>());
    assert_len::<S, _>(&set, 0);
}

// ---------------------------------------------------------------------------------------------
// Termination and clear, as for the unordered sets.

fn new_set_is_empty_and_not_terminated<S: OrderedSet>() {
    let set = S::with_room::<Ready<u8>>(4);
    assert_len::<S, _>(&set, 0);
    assert!(!set.is_terminated());
}

fn empty_set_yields_none_then_is_terminated<S: OrderedSet>() {
    let mut set = S::with_room::<Ready<u8>>(4);
    assert_eq!(poll_once(&mut set), Poll::Ready(None));
    assert!(set.is_terminated());
    assert_eq!(poll_once(&mut set), Poll::Ready(None));
    assert!(set.is_terminated());
}

/// A push to either end makes a terminated set live again; it ends again once drained.
fn push_after_termination_clears_is_terminated<S: OrderedSet>() {
    let mut set = S::with_room(2);
    assert_eq!(poll_once(&mut set), Poll::Ready(None));
    assert!(set.is_terminated());

    S::push_back(&mut set, ready(7));
    assert!(!set.is_terminated());
    assert_eq!(poll_once(&mut set), Poll::Ready(Some(7)));
    assert!(!set.is_terminated(), "terminated before yielding None");
    assert_eq!(poll_once(&mut set), Poll::Ready(None));
    assert!(set.is_terminated());

    S::push_front(&mut set, ready(8));
    assert!(!set.is_terminated());
    assert_eq!(poll_once(&mut set), Poll::Ready(Some(8)));
    assert_eq!(poll_once(&mut set), Poll::Ready(None));
    assert!(set.is_terminated());
}

/// `clear` makes a terminated set non-terminated again. The case of the unordered sets'
/// contract (`pinfold_testkit::contract::rounds::clear_resets_is_terminated`), itself ported
/// from futures-rs (`futures/tests/stream_futures_unordered.rs`, `clear`).
fn clear_resets_is_terminated<S: OrderedSet>() {
    let mut set = S::with_room(2);
    S::push_back(&mut set, ready(1));
    assert_eq!(poll_once(&mut set), Poll::Ready(Some(1)));
    assert_eq!(poll_once(&mut set), Poll::Ready(None));
    assert!(set.is_terminated());
    S::clear(&mut set);
    assert!(!set.is_terminated(), "clear left the set terminated");

    S::push_back(&mut set, ready(2));
    assert_eq!(poll_once(&mut set), Poll::Ready(Some(2)));
    assert_eq!(poll_once(&mut set), Poll::Ready(None));
    assert!(set.is_terminated());
}

/// Held outputs are not the end: with the head running and the outputs behind it held, the
/// set is not terminated; it is once they are out and `None` came.
fn set_is_not_terminated_while_outputs_are_held<S: OrderedSet>() {
    let (mut set, states) = probe_set::<S>(3);
    assert!(poll_once(&mut set).is_pending());
    states[2].finish();
    states[1].finish();
    assert_eq!(settle(&mut set), []);
    assert!(!set.is_terminated());
    states[0].finish();
    assert_eq!(take_ready(&mut set), [0, 1, 2]);
    assert!(set.is_terminated());
}

/// `clear` drops every running future and every held output exactly once, leaves the set
/// empty and not terminated, and the set is usable after: wakers of the cleared futures do
/// nothing, and new futures come out in order.
fn clear_drops_every_future_and_held_output_once<S: OrderedSet>() {
    let n = 6;
    let gauge = Gauge::default();
    let mut set = S::with_room(n);
    let mut states = Vec::new();
    for id in 0..n {
        let (probe, state) = Probe::with_output(id, Counted::new(id, &gauge));
        S::push_back(&mut set, probe);
        states.push(state);
    }
    assert!(poll_once(&mut set).is_pending());
    states[0].finish();
    let first = poll_once(&mut set);
    assert!(matches!(&first, Poll::Ready(Some(out)) if out.id == 0));
    drop(first);
    states[2].finish();
    states[4].finish();
    assert!(settle(&mut set).is_empty());
    assert_len::<S, _>(&set, n - 1);
    assert_eq!(gauge.now(), n - 1, "outputs alive: 3 in probes, 2 held");
    let stale: Vec<_> = states.iter().map(|state| state.waker()).collect();

    S::clear(&mut set);
    assert_len::<S, _>(&set, 0);
    assert!(!set.is_terminated());
    for (id, state) in states.iter().enumerate() {
        assert_eq!(state.drops(), 1, "probe {id}");
    }
    assert_eq!(gauge.now(), 0, "a held output was not dropped by clear");
    for waker in &stale {
        waker.wake_by_ref();
    }
    assert!(matches!(poll_once(&mut set), Poll::Ready(None)));

    let mut fresh = Vec::new();
    for id in n..2 * n {
        let (probe, state) = Probe::with_output(id, Counted::new(id, &gauge));
        state.open();
        S::push_back(&mut set, probe);
        fresh.push(state);
    }
    let ids: Vec<usize> = drain(&mut set).iter().map(|out| out.id).collect();
    assert_eq!(ids, (n..2 * n).collect::<Vec<_>>());
    assert_eq!(gauge.now(), 0);
    assert_eq!(gauge.total(), 2 * n, "an output was made twice");
    assert!(states.iter().chain(&fresh).all(|state| state.drops() == 1));
    drop(stale);
}

/// A future whose `Drop` panics in `clear`: the panic reaches the caller, every other future
/// and the held output are dropped all the same, once; the set is empty, not terminated, and
/// usable.
fn panicking_drop_in_clear_leaves_the_set_empty_and_usable<S: OrderedSet>() {
    let mut set = S::with_room::<Boxed<usize>>(4);
    // Probes 0, 2 and 3, and at place 1 a future whose `Drop` panics.
    let (futures, states) = probes(4);
    let (bomb, bomb_drops) = PanicsOnDrop::new(1, true);
    let mut bomb = Some(bomb);
    for probe in futures {
        if probe.id() == 1 {
            S::push_back(&mut set, Box::pin(bomb.take().unwrap()));
        } else {
            S::push_back(&mut set, Box::pin(probe));
        }
    }
    assert!(poll_once(&mut set).is_pending());
    states[3].finish();
    assert_eq!(settle(&mut set), [], "3 is held");
    assert_len::<S, _>(&set, 4);
    let stale = states[0].waker();

    let cleared = catch_unwind(AssertUnwindSafe(|| S::clear(&mut set)));
    let panic = cleared.expect_err("the Drop panic did not reach the caller of clear");
    assert_eq!(panic_message(&*panic), DROP_PANIC);
    assert_eq!(bomb_drops.load(Ordering::SeqCst), 1);
    for id in [0, 2, 3] {
        assert_eq!(states[id].drops(), 1, "probe {id}");
    }
    assert_len::<S, _>(&set, 0);
    assert!(!set.is_terminated());

    stale.wake();
    assert_eq!(poll_once(&mut set), Poll::Ready(None));
    assert!(set.is_terminated());
    S::push_back(&mut set, Box::pin(ready(4)));
    S::push_front(&mut set, Box::pin(ready(5)));
    assert_eq!(drain(&mut set), [5, 4]);
}

// ---------------------------------------------------------------------------------------------
// Panics.

/// A future that panics in its first poll: the panic reaches the caller, the future is
/// dropped, its place is skipped, the outputs behind it come in order, and the set takes new
/// futures, one of which, pushed to the front, panics too.
fn a_future_that_panics_is_skipped_and_later_outputs_keep_order<S: OrderedSet>() {
    let TrackedGates {
        futures,
        counts,
        states,
    } = tracked_gates(6, &[(1, 1), (4, 1)]);
    let mut futures = futures.into_iter();
    let mut set = S::with_room(4);
    for _ in 0..4 {
        S::push_back(&mut set, futures.next().unwrap());
    }
    assert_eq!(catch_poll(&mut set), Err(TRACKED_PANIC.to_owned()));
    assert_eq!(counts[1].drops(), 1, "the panicking future was not dropped");
    assert_len::<S, _>(&set, 3);
    assert_eq!(settle(&mut set), []);

    states[3].open();
    states[2].open();
    assert_eq!(settle(&mut set), [], "held behind 0");
    assert_len::<S, _>(&set, 3);
    states[0].open();
    assert_eq!(take_ready(&mut set), [0, 2, 3]);
    assert!(set.is_terminated());

    // Usable: a front push that panics, and a back push that does not.
    S::push_front(&mut set, futures.next().unwrap());
    states[5].open();
    S::push_back(&mut set, futures.next().unwrap());
    let mut outputs = Vec::new();
    let mut panics = 0;
    loop {
        match catch_poll(&mut set) {
            Ok(Poll::Ready(Some(id))) => outputs.push(id),
            Ok(Poll::Ready(None)) => break,
            Ok(Poll::Pending) => panic!("Pending with every future finished or panicked"),
            Err(message) => {
                assert_eq!(message, TRACKED_PANIC);
                panics += 1;
            }
        }
    }
    assert_eq!((outputs, panics), (vec![5], 1));
    drop(set);
    for (id, count) in counts.iter().enumerate() {
        assert_eq!(count.drops(), 1, "future {id}");
    }
}

/// The head panics when woken, while outputs behind it are held: they come out next.
fn a_head_that_panics_when_woken_lets_the_held_outputs_out<S: OrderedSet>() {
    let TrackedGates {
        futures,
        counts,
        states,
    } = tracked_gates(4, &[(0, 2)]);
    let mut set = S::with_room(4);
    for fut in futures {
        S::push_back(&mut set, fut);
    }
    assert!(poll_once(&mut set).is_pending());
    states[1].open();
    states[2].open();
    assert_eq!(settle(&mut set), []);
    states[0].open();
    assert_eq!(catch_poll(&mut set), Err(TRACKED_PANIC.to_owned()));
    assert_eq!(counts[0].drops(), 1);
    assert_len::<S, _>(&set, 3);

    assert_eq!(poll_once(&mut set), Poll::Ready(Some(1)));
    assert_eq!(poll_once(&mut set), Poll::Ready(Some(2)));
    assert!(poll_once(&mut set).is_pending());
    states[3].open();
    assert_eq!(poll_once(&mut set), Poll::Ready(Some(3)));
    assert_eq!(poll_once(&mut set), Poll::Ready(None));
    assert!(set.is_terminated());
}

/// Every future panics: once the last panic is out, the set ends.
fn a_set_whose_futures_all_panicked_ends<S: OrderedSet>() {
    let TrackedGates {
        futures, counts, ..
    } = tracked_gates(2, &[(0, 1), (1, 1)]);
    let mut set = S::with_room(2);
    for fut in futures {
        S::push_back(&mut set, fut);
    }
    assert_eq!(catch_poll(&mut set), Err(TRACKED_PANIC.to_owned()));
    assert_eq!(catch_poll(&mut set), Err(TRACKED_PANIC.to_owned()));
    assert!(counts.iter().all(|count| count.drops() == 1));
    assert_len::<S, _>(&set, 0);
    assert_eq!(catch_poll(&mut set), Ok(Poll::Ready(None)));
    assert!(set.is_terminated());
}

/// A future that finishes and whose `Drop` then panics: the panic reaches the caller, its
/// output is dropped once (not leaked, not given), its place is skipped, and the others come
/// out in order.
fn a_future_whose_drop_panics_after_it_finished_loses_only_its_place<S: OrderedSet>() {
    let gauge = Gauge::default();
    let mut set = S::with_room::<Boxed<Counted>>(3);
    let (first, first_state) = Probe::with_output(0, Counted::new(0, &gauge));
    let (bomb, bomb_drops) = PanicsOnDrop::new(Counted::new(1, &gauge), false);
    let (last, last_state) = Probe::with_output(2, Counted::new(2, &gauge));
    S::push_back(&mut set, Box::pin(first));
    S::push_back(&mut set, Box::pin(bomb));
    S::push_back(&mut set, Box::pin(last));

    assert_eq!(catch_poll(&mut set).map(|_| ()), Err(DROP_PANIC.to_owned()));
    assert_eq!(bomb_drops.load(Ordering::SeqCst), 1);
    assert_eq!(gauge.now(), 2, "the panicking future's output was leaked");
    assert_len::<S, _>(&set, 2);
    assert!(settle(&mut set).is_empty());

    last_state.finish();
    assert!(settle(&mut set).is_empty(), "2 came before 0");
    first_state.finish();
    let ids: Vec<usize> = drain(&mut set).iter().map(|out| out.id).collect();
    assert_eq!(ids, [0, 2]);
    assert_eq!((gauge.now(), gauge.total()), (0, 3));
}

// ---------------------------------------------------------------------------------------------
// Fairness and wakes.

fn snapshot(counters: &[Arc<AtomicUsize>]) -> Vec<usize> {
    counters
        .iter()
        .map(|count| count.load(Ordering::SeqCst))
        .collect()
}

/// Behind a head that wakes itself forever, futures that wake themselves a few times and then
/// finish (their outputs held, since the head never gives one): each `poll_next` polls each
/// future at most once, also after an output was held in it, polls one at least, and returns
/// `Pending` having woken its task. Every future behind the head finishes after exactly the
/// polls it needs, and the head is polled again and again.
fn each_future_is_polled_at_most_once_per_poll_next<S: OrderedSet>() {
    let n = 6;
    let mut set = S::with_room(n);
    let (head, head_polls) = Spinner::forever(0);
    S::push_back(&mut set, head);
    let mut polls = vec![head_polls];
    for id in 1..n {
        let (spinner, count) = Spinner::new(id, id % 3);
        S::push_back(&mut set, spinner);
        polls.push(count);
    }
    let (task, wakes) = counting_waker();
    for call in 0..6 * n {
        let before = snapshot(&polls);
        let woken = wakes.count();
        assert!(poll_with(&mut set, &task).is_pending(), "call {call}");
        let after = snapshot(&polls);
        for (id, (b, a)) in before.iter().zip(&after).enumerate() {
            assert!(a - b <= 1, "call {call} polled future {id} {} times", a - b);
        }
        assert_ne!(after, before, "call {call} polled nothing");
        assert!(wakes.count() > woken, "call {call}: Pending without a wake");
    }
    let polls = snapshot(&polls);
    for (id, &count) in polls.iter().enumerate().skip(1) {
        assert_eq!(count, id % 3 + 1, "future {id}'s polls");
    }
    assert!(polls[0] >= 4, "the head was polled {} times", polls[0]);
    assert_len::<S, _>(&set, n);
}

/// A head that wakes itself a few times before it finishes, among futures that wake
/// themselves forever: it is polled at most once per call, is not starved, and its output
/// comes after exactly as many polls as it needs.
fn a_self_waking_head_finishes_among_futures_that_never_do<S: OrderedSet>() {
    let n = 4;
    let spins = 5;
    let mut set = S::with_room(n);
    let (head, head_polls) = Spinner::new(0, spins);
    S::push_back(&mut set, head);
    let mut polls = vec![head_polls];
    for id in 1..n {
        let (spinner, count) = Spinner::forever(id);
        S::push_back(&mut set, spinner);
        polls.push(count);
    }
    let (task, wakes) = counting_waker();
    let mut call = 0;
    loop {
        assert!(call < 10 * n * (spins + 1), "the head starved");
        call += 1;
        let before = snapshot(&polls);
        let woken = wakes.count();
        let polled = poll_with(&mut set, &task);
        let after = snapshot(&polls);
        for (id, (b, a)) in before.iter().zip(&after).enumerate() {
            assert!(a - b <= 1, "call {call} polled future {id} {} times", a - b);
        }
        match polled {
            Poll::Ready(Some(id)) => {
                assert_eq!(id, 0);
                break;
            }
            Poll::Pending => assert!(wakes.count() > woken, "call {call}: Pending without a wake"),
            Poll::Ready(None) => panic!("the set ended with futures running"),
        }
    }
    assert_eq!(polls[0].load(Ordering::SeqCst), spins + 1);
    assert_len::<S, _>(&set, n - 1);
}

/// The task waker panics in the first wake a round makes, among futures that wake themselves
/// a few times: the panic propagates out of `poll_next`, but it is not blamed on a future (no
/// place is skipped, no future dropped before it finished); every output comes, in push
/// order, each future polled exactly as often as it needs. The case of the unordered sets'
/// contract (`pinfold_testkit::contract::task_waker_panics`,
/// `a_task_waker_panic_in_a_self_waking_round_blames_no_future`), with order.
fn a_task_waker_panic_blames_no_future<S: OrderedSet>() {
    let n = 4;
    let spins = 3;
    let mut set = S::with_room(n);
    let mut polls = Vec::new();
    for id in 0..n {
        let (spinner, count) = Spinner::new(id, spins);
        S::push_back(&mut set, spinner);
        polls.push(count);
    }
    let (task, switches) = panicking_waker();
    switches.panic_once(WakerOps::ANY_WAKE);
    let mut outputs = Vec::new();
    let mut panics = 0;
    for _ in 0..4 * (spins + 2) * n {
        match catch_unwind(AssertUnwindSafe(|| poll_with(&mut set, &task))) {
            Ok(Poll::Ready(Some(id))) => outputs.push(id),
            Ok(Poll::Ready(None)) => break,
            Ok(Poll::Pending) => {}
            Err(panic) => {
                let message = panic_message(&*panic);
                assert!(
                    message == WAKE_PANIC || message == WAKE_BY_REF_PANIC,
                    "unexpected panic: {message}"
                );
                panics += 1;
            }
        }
    }
    assert_eq!(panics, 1, "the task waker was never woken");
    assert_eq!(outputs, (0..n).collect::<Vec<_>>());
    assert_eq!(snapshot(&polls), vec![spins + 1; n]);
    assert!(set.is_terminated());
    drop(set);
    assert_eq!(switches.live(), 1, "a clone of the task waker was leaked");
}

/// Channels completed in a random order from 4 std threads, while the set is driven on this
/// thread by a `block_on` that parks: every output comes, in push order (a lost wake hangs).
fn wakes_from_std_threads_are_never_lost<S: OrderedSet>() {
    const THREADS: usize = 4;
    let (rounds, n) = if cfg!(miri) { (1, 40) } else { (5, 1_000) };
    let mut rng = XorShift::new(23);
    for round in 0..rounds {
        let mut set = S::with_room(n);
        let (receivers, mut senders) = id_channels(n);
        for rx in receivers {
            S::push_back(&mut set, rx);
        }
        rng.shuffle(&mut senders);
        let threads = send_from_threads(senders, THREADS, true);
        let outputs: Vec<usize> = block_on(set.by_ref().map(Result::unwrap).collect());
        for thread in threads {
            thread.join().unwrap();
        }
        assert_eq!(outputs, (0..n).collect::<Vec<_>>(), "round {round}");
        assert!(set.is_terminated());
    }
}

/// Channels completed by tasks on 4 tokio worker threads while this thread drives the set:
/// every output comes, in push order. The timeout only guards against a hang (a lost wake); it
/// asserts no timing.
fn wakes_from_tokio_workers_are_never_lost<S: OrderedSet>() {
    const N: usize = 1_000;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(4)
        .enable_time()
        .build()
        .unwrap();
    for round in 0..10 {
        let mut set = S::with_room(N);
        let mut senders = Vec::with_capacity(N);
        for id in 0..N {
            let (tx, rx) = tokio::sync::oneshot::channel();
            S::push_back(&mut set, rx);
            senders.push((id, tx));
        }
        let outputs = runtime.block_on(async {
            for (id, tx) in senders {
                tokio::spawn(async move {
                    for _ in 0..id % 4 {
                        tokio::task::yield_now().await;
                    }
                    tx.send(id).unwrap();
                });
            }
            let collect = set.by_ref().map(Result::unwrap).collect::<Vec<usize>>();
            tokio::time::timeout(Duration::from_secs(60), collect)
                .await
                .expect("no end for 60 s: a wake was lost")
        });
        assert_eq!(outputs, (0..N).collect::<Vec<_>>(), "round {round}");
    }
}

// ---------------------------------------------------------------------------------------------
// The set as a container.

/// `len` and `size_hint` count the futures running and the outputs held, exactly, at every
/// step.
fn len_and_size_hint_count_running_and_held_futures<S: OrderedSet>() {
    let n = 5;
    let (mut set, states) = probe_set::<S>(n);
    assert_len::<S, _>(&set, n);
    assert!(poll_once(&mut set).is_pending());
    assert_len::<S, _>(&set, n);
    let mut yielded = 0;
    for id in [4, 2, 0, 1, 3] {
        states[id].finish();
        yielded += take_ready(&mut set).len();
        assert_len::<S, _>(&set, n - yielded);
    }
    assert_eq!(yielded, n);
    S::push_back(&mut set, Probe::new(9).0);
    S::push_front(&mut set, Probe::new(8).0);
    assert_len::<S, _>(&set, 2);
}

/// `Debug` works for futures without `Debug` (an async block), is not empty, and names the
/// type.
fn debug_names_the_type_without_needing_debug_futures<S: OrderedSet>() {
    let mut set = S::with_room(2);
    S::push_back(&mut set, async { 1 });
    let text = format!("{set:?}");
    let name: String = text
        .chars()
        .take_while(char::is_ascii_alphanumeric)
        .collect();
    assert_eq!(name, S::NAME, "{text}");
    assert!(text.len() > name.len(), "{text}");
}

// ---------------------------------------------------------------------------------------------
// Ported from futures-rs, `futures/tests/stream_futures_ordered.rs` (futures-util's
// `FuturesOrdered`), with futures-channel oneshot channels completed in a chosen order.

/// Ported from futures-rs `stream_futures_ordered.rs`, `works_1`: three channels, the middle
/// one completed first, give their values in push order.
fn channels_completed_out_of_order_give_their_values_in_push_order<S: OrderedSet>() {
    let (a_tx, a_rx) = oneshot::channel::<i32>();
    let (b_tx, b_rx) = oneshot::channel::<i32>();
    let (c_tx, c_rx) = oneshot::channel::<i32>();
    let mut set: S::Set<Receiver<i32>> = [a_rx, b_rx, c_rx].into_iter().collect();

    b_tx.send(99).unwrap();
    assert!(poll_once(&mut set).is_pending());
    a_tx.send(33).unwrap();
    c_tx.send(33).unwrap();
    assert_eq!(drain(&mut set), [Ok(33), Ok(99), Ok(33)]);
}

/// A boxed channel-like future of futures-rs's ported cases.
type BoxedChannel<T> = Pin<Box<dyn Future<Output = T> + Send>>;

/// Ported from futures-rs `stream_futures_ordered.rs`, `works_2`: a channel, then a join of
/// two channels; with the first channel and half the join done, the first value comes, then
/// the set is `Pending` until the join's last channel is.
fn a_joined_second_future_waits_for_its_last_channel<S: OrderedSet>() {
    type Out = Result<i32, Canceled>;
    let (a_tx, a_rx) = oneshot::channel::<i32>();
    let (b_tx, b_rx) = oneshot::channel::<i32>();
    let (c_tx, c_rx) = oneshot::channel::<i32>();
    let joined = future::join(b_rx, c_rx).map(|(b, c): (Out, Out)| -> Out { Ok(b? + c?) });
    let mut set: S::Set<BoxedChannel<Out>> = [a_rx.boxed(), joined.boxed()].into_iter().collect();

    a_tx.send(33).unwrap();
    b_tx.send(33).unwrap();
    assert_eq!(poll_once(&mut set), Poll::Ready(Some(Ok(33))));
    assert!(poll_once(&mut set).is_pending());
    c_tx.send(33).unwrap();
    assert_eq!(poll_once(&mut set), Poll::Ready(Some(Ok(66))));
    assert_eq!(poll_once(&mut set), Poll::Ready(None));
}

/// Ported from futures-rs `stream_futures_ordered.rs`, `from_iterator` (and futures-buffered's
/// `from_iter`, for `len`): a collected set holds the futures in iterator order.
fn collect_holds_the_futures_in_iterator_order<S: OrderedSet>() {
    let mut set: S::Set<Ready<i32>> = [ready(1), ready(2), ready(3)].into_iter().collect();
    assert_len::<S, _>(&set, 3);
    assert_eq!(block_on(set.by_ref().collect::<Vec<_>>()), [1, 2, 3]);
    assert!(set.is_terminated());
}

/// Ported from futures-rs `stream_futures_ordered.rs`, `queue_never_unblocked`: a head whose
/// channel is never completed, then a select of two channels. The select finishes (its output
/// keeps the other channel's receiver) and both its channels complete, yet the set stays
/// `Pending`, without panicking, as long as the head runs. Here the head's channel is then
/// completed too, and both outputs come, in order.
fn a_head_that_never_finishes_keeps_the_set_pending<S: OrderedSet>() {
    type Out = (i32, Option<Receiver<i32>>);
    let (a_tx, a_rx) = oneshot::channel::<i32>();
    let (b_tx, b_rx) = oneshot::channel::<i32>();
    let (c_tx, c_rx) = oneshot::channel::<i32>();
    let head = a_rx.map(|a| (a.unwrap(), None));
    let select = future::select(b_rx, c_rx).map(|either| {
        let (first, other) = either.factor_first();
        (first.unwrap(), Some(other.into_inner()))
    });
    let mut set: S::Set<BoxedChannel<Out>> = [head.boxed(), select.boxed()].into_iter().collect();

    for _ in 0..10 {
        assert!(poll_once(&mut set).is_pending());
    }
    b_tx.send(2).unwrap();
    assert!(poll_once(&mut set).is_pending());
    c_tx.send(3).unwrap();
    assert!(poll_once(&mut set).is_pending());
    assert!(poll_once(&mut set).is_pending());
    assert_len::<S, _>(&set, 2);

    a_tx.send(1).unwrap();
    assert!(matches!(poll_once(&mut set), Poll::Ready(Some((1, None)))));
    let Poll::Ready(Some((2, Some(other)))) = poll_once(&mut set) else {
        panic!("the select's output did not come second");
    };
    assert_eq!(block_on(other), Ok(3));
    assert!(matches!(poll_once(&mut set), Poll::Ready(None)));
}

/// Three channels pushed to the back and completed, and two of their values taken.
fn three_sent_and_two_taken<S: OrderedSet>() -> S::Set<Receiver<i32>> {
    let mut set = S::with_room(4);
    for value in 1..=3 {
        let (tx, rx) = oneshot::channel::<i32>();
        S::push_back(&mut set, rx);
        tx.send(value).unwrap();
    }
    assert_eq!(poll_once(&mut set), Poll::Ready(Some(Ok(1))));
    assert_eq!(poll_once(&mut set), Poll::Ready(Some(Ok(2))));
    set
}

/// Ported from futures-rs `stream_futures_ordered.rs`, `test_push_front`: after two of three
/// values came, a channel pushed to the front gives its value before the third.
fn push_front_after_outputs_comes_before_the_rest<S: OrderedSet>() {
    let mut set = three_sent_and_two_taken::<S>();
    let (d_tx, d_rx) = oneshot::channel::<i32>();
    S::push_front(&mut set, d_rx);
    d_tx.send(4).unwrap();
    assert_eq!(poll_once(&mut set), Poll::Ready(Some(Ok(4))));
    assert_eq!(poll_once(&mut set), Poll::Ready(Some(Ok(3))));
    assert_eq!(poll_once(&mut set), Poll::Ready(None));
}

/// Ported from futures-rs `stream_futures_ordered.rs`, `test_push_back`: after two of three
/// values came, a channel pushed to the back gives its value after the third.
fn push_back_after_outputs_comes_after_the_rest<S: OrderedSet>() {
    let mut set = three_sent_and_two_taken::<S>();
    let (d_tx, d_rx) = oneshot::channel::<i32>();
    S::push_back(&mut set, d_rx);
    d_tx.send(4).unwrap();
    assert_eq!(poll_once(&mut set), Poll::Ready(Some(Ok(3))));
    assert_eq!(poll_once(&mut set), Poll::Ready(Some(Ok(4))));
    assert_eq!(poll_once(&mut set), Poll::Ready(None));
}

/// Ported from futures-rs `stream_futures_ordered.rs`, `test_push_front_negative`: three
/// channels pushed to the front, completed in push order, give their values in reverse.
fn futures_pushed_only_to_the_front_come_in_reverse_order<S: OrderedSet>() {
    let mut set = S::with_room(3);
    let mut senders = Vec::new();
    for _ in 0..3 {
        let (tx, rx) = oneshot::channel::<i32>();
        S::push_front(&mut set, rx);
        senders.push(tx);
    }
    for (value, tx) in (1..).zip(senders) {
        tx.send(value).unwrap();
    }
    assert_eq!(poll_once(&mut set), Poll::Ready(Some(Ok(3))));
    assert_eq!(poll_once(&mut set), Poll::Ready(Some(Ok(2))));
    assert_eq!(poll_once(&mut set), Poll::Ready(Some(Ok(1))));
    assert_eq!(poll_once(&mut set), Poll::Ready(None));
}

// ---------------------------------------------------------------------------------------------
// Ported from futures-buffered's `FuturesOrderedBounded` and `FuturesOrdered` unit tests
// (`src/futures_ordered_bounded.rs`, `src/futures_ordered.rs`).

/// Ported from futures-buffered, `ordered`: ten ready futures pushed to the back come out one
/// per poll, in push order.
fn ready_futures_pushed_back_come_in_push_order<S: OrderedSet>() {
    let mut set = S::with_room(10);
    for i in 0..10 {
        S::push_back(&mut set, ready(i));
    }
    for i in 0..10 {
        assert_eq!(poll_once(&mut set), Poll::Ready(Some(i)));
    }
    assert_eq!(poll_once(&mut set), Poll::Ready(None));
}

/// Ported from futures-buffered, `ordered_front`: ten ready futures pushed to the front come
/// out one per poll, in reverse push order.
fn ready_futures_pushed_front_come_in_reverse_order<S: OrderedSet>() {
    let mut set = S::with_room(10);
    for i in 0..10 {
        S::push_front(&mut set, ready(i));
    }
    for i in (0..10).rev() {
        assert_eq!(poll_once(&mut set), Poll::Ready(Some(i)));
    }
    assert_eq!(poll_once(&mut set), Poll::Ready(None));
}

/// Ported from futures-buffered, `from_iter`: a set from an iterator of ten counts ten, in
/// `len` and `size_hint`.
fn from_iter_counts_every_future<S: OrderedSet>() {
    let set: S::Set<Ready<()>> = (0..10).map(|_| ready(())).collect();
    assert_len::<S, _>(&set, 10);
}

// ---------------------------------------------------------------------------------------------
// The bounded set: capacity, refusal when full.

/// Ported from futures-buffered `src/futures_ordered_bounded.rs`, `from_iter` (the capacity
/// half): a collected bounded set has exactly the room for its futures.
#[test]
fn collected_bounded_set_has_the_capacity_of_its_futures() {
    let set: FuturesOrderedBounded<Ready<()>> = (0..10).map(|_| ready(())).collect();
    assert_eq!(set.capacity(), 10);
    assert!(set.is_full());

    let mut empty: FuturesOrderedBounded<Ready<u8>> = std::iter::empty().collect();
    assert_eq!(empty.capacity(), 0);
    assert_eq!(poll_once(&mut empty), Poll::Ready(None));
}

/// A full set's `try_push_back` and `try_push_front` give back the very future offered,
/// unpolled and not dropped, and change nothing; once a future is out, they are accepted.
#[test]
fn full_bounded_set_refuses_try_push_with_the_same_future() {
    let (futures, states) = probes(4);
    let mut futures = futures.into_iter();
    let mut set = FuturesOrderedBounded::new(2);
    assert_eq!(
        set.try_push_back(futures.next().unwrap())
            .map_err(|p| p.id()),
        Ok(())
    );
    assert_eq!(
        set.try_push_front(futures.next().unwrap())
            .map_err(|p| p.id()),
        Ok(())
    );
    assert!(set.is_full());
    assert!(poll_once(&mut set).is_pending());

    let refused = set.try_push_back(futures.next().unwrap());
    let back = refused.expect_err("a full set took a future");
    assert_eq!(back.id(), 2);
    let refused = set.try_push_front(back);
    let back = refused.expect_err("a full set took a future");
    assert_eq!(back.id(), 2);
    assert_eq!((states[2].polls(), states[2].drops()), (0, 0));
    assert_eq!(set.len(), 2);

    // The order is untouched: 1 was pushed to the front.
    states[0].finish();
    states[1].finish();
    assert_eq!(poll_once(&mut set), Poll::Ready(Some(1)));
    assert!(!set.is_full());
    assert_eq!(set.try_push_back(back).map_err(|p| p.id()), Ok(()));
    states[2].open();
    assert_eq!(drain(&mut set), [0, 2]);
    drop(futures);
    assert!(states.iter().all(|state| state.drops() == 1));
}

/// `push_back` and `push_front` on a full set panic, naming the capacity, and leave the set as
/// it was (the two cases below, with the set's state checked after each panic).
#[test]
fn push_on_a_full_bounded_set_panics_naming_the_capacity() {
    let mut set = FuturesOrderedBounded::new(2);
    set.push_back(ready(0));
    set.push_back(ready(1));
    let back = catch_unwind(AssertUnwindSafe(|| set.push_back(ready(2))));
    let message = panic_message(&*back.expect_err("push_back on a full set")).to_owned();
    assert!(
        message.contains("FuturesOrderedBounded is full (capacity 2)"),
        "{message}"
    );
    let front = catch_unwind(AssertUnwindSafe(|| set.push_front(ready(3))));
    let message = panic_message(&*front.expect_err("push_front on a full set")).to_owned();
    assert!(
        message.contains("FuturesOrderedBounded is full (capacity 2)"),
        "{message}"
    );
    assert_eq!(set.len(), 2);
    assert_eq!(drain(&mut set), [0, 1]);
}

/// A future that stays pending and whose `Drop` panics, also while a panic unwinds; it counts
/// its drops.
struct AlwaysPanicsOnDrop(Arc<AtomicUsize>);

impl Future for AlwaysPanicsOnDrop {
    type Output = usize;

    fn poll(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<usize> {
        Poll::Pending
    }
}

impl Drop for AlwaysPanicsOnDrop {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
        panic!("{DROP_PANIC}");
    }
}

/// A future refused by a full set is dropped once, before the push's panic: a panic of its
/// `Drop` is the one raised, and the set is as it was.
#[test]
fn a_full_push_of_a_future_whose_drop_panics_raises_that_panic_and_drops_it_once() {
    pinfold_testkit::panic_hook::no_forced_backtraces();
    let mut set: FuturesOrderedBounded<Boxed<usize>> = FuturesOrderedBounded::new(1);
    set.push_back(Box::pin(ready(0)));
    let drops = Arc::new(AtomicUsize::new(0));
    let back = catch_unwind(AssertUnwindSafe(|| {
        set.push_back(Box::pin(AlwaysPanicsOnDrop(drops.clone())));
    }));
    let front = catch_unwind(AssertUnwindSafe(|| {
        set.push_front(Box::pin(AlwaysPanicsOnDrop(drops.clone())));
    }));
    for (push, panicked) in [("push_back", back), ("push_front", front)] {
        let panic = panicked.expect_err(push);
        assert_eq!(panic_message(&*panic), DROP_PANIC, "{push}");
    }
    assert_eq!(drops.load(Ordering::SeqCst), 2);
    assert_eq!(set.len(), 1);
    assert_eq!(drain(&mut set), [0]);
}

/// Ported from futures-buffered `src/futures_ordered_bounded.rs`, `full_back` (with this set's
/// message).
#[test]
#[should_panic(expected = "FuturesOrderedBounded is full (capacity 1)")]
fn push_back_on_a_full_bounded_set_panics() {
    let mut set = FuturesOrderedBounded::new(1);
    set.push_back(ready(()));
    set.push_back(ready(()));
}

/// Ported from futures-buffered `src/futures_ordered_bounded.rs`, `full_front` (with this set's
/// message).
#[test]
#[should_panic(expected = "FuturesOrderedBounded is full (capacity 1)")]
fn push_front_on_a_full_bounded_set_panics() {
    let mut set = FuturesOrderedBounded::new(1);
    set.push_front(ready(()));
    set.push_front(ready(()));
}

/// A bounded set of capacity 0 refuses every push and ends at once.
#[test]
fn zero_capacity_bounded_set_refuses_every_push() {
    let mut set = FuturesOrderedBounded::new(0);
    assert!(set.is_full());
    assert_eq!(
        set.try_push_back(ready(1)).map_err(Ready::into_inner),
        Err(1)
    );
    assert_eq!(
        set.try_push_front(ready(2)).map_err(Ready::into_inner),
        Err(2)
    );
    assert_eq!(poll_once(&mut set), Poll::Ready(None));
    assert!(set.is_terminated());
}

/// A held output takes no running slot: with the head running and the second's output held,
/// a set of capacity 2 is not full, and takes a third future.
#[test]
fn held_outputs_take_no_slot_of_the_bounded_set() {
    let (futures, states) = probes(3);
    let mut futures = futures.into_iter();
    let mut set = FuturesOrderedBounded::new(2);
    set.push_back(futures.next().unwrap());
    set.push_back(futures.next().unwrap());
    assert!(set.is_full());
    assert!(poll_once(&mut set).is_pending());
    states[1].finish();
    assert_eq!(settle(&mut set), []);
    assert!(!set.is_full());
    assert_eq!(set.capacity(), 2);
    assert!(set.try_push_back(futures.next().unwrap()).is_ok());
    assert!(set.is_full());
    assert_eq!(set.len(), 3);
    states[0].finish();
    assert!(poll_once(&mut set).is_ready());
    states[2].finish();
    assert_eq!(drain(&mut set), [1, 2]);
}

/// `clear` keeps the bounded set's capacity.
#[test]
fn clear_keeps_the_capacity_of_the_bounded_set() {
    let mut set = FuturesOrderedBounded::new(3);
    set.push_back(ready(1));
    set.clear();
    assert_eq!(set.capacity(), 3);
    assert!(!set.is_full());
}

// ---------------------------------------------------------------------------------------------
// The growable set: `Default`, `Extend`.

#[test]
fn default_growable_set_is_empty_and_not_terminated() {
    let set = FuturesOrdered::<Ready<u8>>::default();
    assert!(set.is_empty());
    assert_eq!(set.size_hint(), (0, Some(0)));
    assert!(!set.is_terminated());
}

/// `extend` pushes to the back, in order, and makes a terminated set live again.
#[test]
fn extend_pushes_to_the_back_in_order() {
    let mut set = FuturesOrdered::new();
    set.push_back(ready(0));
    assert_eq!(poll_once(&mut set), Poll::Ready(Some(0)));
    assert_eq!(poll_once(&mut set), Poll::Ready(None));
    assert!(set.is_terminated());
    set.push_front(ready(1));
    set.extend((2..50).map(ready));
    assert!(!set.is_terminated());
    assert_eq!(set.len(), 49);
    assert_eq!(drain(&mut set), (1..50).collect::<Vec<_>>());
}

/// `push`, the name futures-util used before 0.3.26, pushes to the back.
#[test]
#[allow(deprecated)]
fn deprecated_push_pushes_to_the_back() {
    let mut growable = FuturesOrdered::new();
    growable.push_front(ready(0));
    growable.push(ready(1));
    assert_eq!(drain(&mut growable), [0, 1]);

    let mut bounded = FuturesOrderedBounded::new(2);
    bounded.push_front(ready(0));
    bounded.push(ready(1));
    assert_eq!(drain(&mut bounded), [0, 1]);
}

// ---------------------------------------------------------------------------------------------
// Auto traits, checked at compile time (as `crates/unordered/tests/auto_traits.rs` does).

fn assert_unpin<T: Unpin>() {}
fn assert_send<T: Send>() {}

/// A future type made of a marker `M`, which sets its auto traits, with output `O`, which sets
/// those of the held outputs. Never ready.
struct Marked<M, O = ()>(M, PhantomData<fn() -> O>);

impl<M, O> Future for Marked<M, O> {
    type Output = O;

    fn poll(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<O> {
        Poll::Pending
    }
}

/// `!Unpin`.
type Pinned = Marked<PhantomPinned, PhantomPinned>;
/// `Sync + !Send`, with a `Send` output.
type SyncOnly = Marked<MutexGuard<'static, u8>>;
/// `Send + !Sync`, with a `Send + !Sync` output.
type SendOnly = Marked<Cell<u8>, Cell<u8>>;

#[test]
fn sets_are_unpin_whatever_their_futures_and_outputs() {
    assert_unpin::<FuturesOrderedBounded<Pinned>>();
    assert_unpin::<FuturesOrdered<Pinned>>();
    assert_unpin::<FuturesOrderedBounded<SyncOnly>>();
    assert_unpin::<FuturesOrdered<SyncOnly>>();

    // Sets of `!Unpin` futures are polled through `Pin::new`.
    let mut bounded = FuturesOrderedBounded::new(1);
    bounded.push_back(Marked(PhantomPinned, PhantomData::<fn() -> u8>));
    assert!(
        Pin::new(&mut bounded)
            .poll_next(&mut noop_cx())
            .is_pending()
    );
    let mut growable = FuturesOrdered::new();
    growable.push_back(Marked(PhantomPinned, PhantomData::<fn() -> u8>));
    assert!(
        Pin::new(&mut growable)
            .poll_next(&mut noop_cx())
            .is_pending()
    );
}

#[test]
fn sets_are_send_when_their_futures_and_outputs_are_send() {
    assert_send::<FuturesOrderedBounded<SendOnly>>();
    assert_send::<FuturesOrdered<SendOnly>>();
    assert_send::<FuturesOrderedBounded<Marked<(PhantomPinned, Cell<u8>), String>>>();
    assert_send::<FuturesOrdered<Marked<(PhantomPinned, Cell<u8>), String>>>();

    // And a set of probes, moved to another thread, is drained there.
    let (futures, states) = probes(3);
    let set: FuturesOrdered<Probe> = futures.into_iter().collect();
    for state in &states {
        state.open();
    }
    let outputs = thread::spawn(move || {
        let mut set = set;
        drain(&mut set)
    });
    assert_eq!(outputs.join().unwrap(), [0, 1, 2]);
}

fn noop_cx() -> Context<'static> {
    Context::from_waker(std::task::Waker::noop())
}
