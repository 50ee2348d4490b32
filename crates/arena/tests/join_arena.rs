//! `JoinArena`: values polled with the caller's context until armed, then only when woken; and
//! their storage turned into the output `Vec`, in place when the layouts allow, losing and
//! double-dropping nothing when `take` or a value's `Drop` panics part-way.

use std::cell::RefCell;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll, Waker};

use pinfold_arena::{Filled, JoinArena, Step};
use pinfold_testkit::alloc::{CountingAlloc, measure, measure_bytes};
use pinfold_testkit::probe::probes;
use pinfold_testkit::waker::counting_waker;

#[global_allocator]
static ALLOCATOR: CountingAlloc = CountingAlloc;

/// Counts its drops in a shared log, by id; panics in `Drop` if `panic_on_drop`.
struct Tracked {
    id: usize,
    log: Arc<Vec<AtomicUsize>>,
    panic_on_drop: bool,
}

impl Drop for Tracked {
    fn drop(&mut self) {
        self.log[self.id].fetch_add(1, Ordering::SeqCst);
        if self.panic_on_drop {
            panic!("value {} panics in drop", self.id);
        }
    }
}

fn log(n: usize) -> Arc<Vec<AtomicUsize>> {
    Arc::new((0..n).map(|_| AtomicUsize::new(0)).collect())
}

fn assert_each_dropped_once(log: &[AtomicUsize], what: &str) {
    for (id, drops) in log.iter().enumerate() {
        assert_eq!(drops.load(Ordering::SeqCst), 1, "{what} {id}");
    }
}

/// `n` tracked values logging to `values`, value `panic_at` (if any) panicking in `Drop`.
fn tracked(
    n: usize,
    values: &Arc<Vec<AtomicUsize>>,
    panic_at: Option<usize>,
) -> JoinArena<Tracked> {
    JoinArena::new((0..n).map(|id| Tracked {
        id,
        log: values.clone(),
        panic_on_drop: Some(id) == panic_at,
    }))
}

#[test]
fn outputs_reuse_the_storage_when_they_fit() {
    let n = 100;
    let mut arena = JoinArena::new((0..n as u64).map(|i| [i, i * 2]));
    // `u64` outputs, half the size of the `[u64; 2]` values: twice the room, in place.
    let (outputs, allocations) = measure(|| arena.take_vec_with(|pair| pair[0] + pair[1]));
    assert_eq!(allocations, 0);
    assert_eq!(outputs, (0..n as u64).map(|i| 3 * i).collect::<Vec<_>>());
    assert_eq!(outputs.capacity(), 2 * n);
    assert!(arena.is_empty());
}

#[test]
fn outputs_that_do_not_fit_get_a_vec_of_their_own() {
    // Larger than the values: a fresh, exact `Vec`.
    let mut arena = JoinArena::new(0..10u32);
    let (outputs, allocations) = measure(|| arena.take_vec_with(|v| u64::from(*v)));
    assert_eq!(allocations, 1);
    assert_eq!(outputs, (0..10u64).collect::<Vec<_>>());
    // Much smaller than large values: no hoarding of the spare room either.
    let mut arena = JoinArena::new((0..100u64).map(|i| [i; 8]));
    let (outputs, allocations) = measure(|| arena.take_vec_with(|v| v[0]));
    assert_eq!(allocations, 1);
    assert_eq!(outputs.capacity(), 100);
}

#[test]
fn outputs_with_drops_are_moved_over_exactly_once() {
    for n in [0, 1, 7, 64] {
        let values = log(n);
        let outputs_log = log(n);
        let mut arena = tracked(n, &values, None);
        let outputs = arena.take_vec_with(|value| Tracked {
            id: value.id,
            log: outputs_log.clone(),
            panic_on_drop: false,
        });
        assert_each_dropped_once(&values, "value");
        assert_eq!(
            outputs.iter().map(|o| o.id).collect::<Vec<_>>(),
            (0..n).collect::<Vec<_>>()
        );
        drop(outputs);
        assert_each_dropped_once(&outputs_log, "output");
    }
}

/// Turns 10 tracked values into tracked outputs (in place: same layout), `take` panicking at
/// value `take_panics_at` or value `drop_panics_at` panicking in its `Drop`; checks that the
/// call panicked, that every value was dropped exactly once and the storage freed, and returns
/// how many times each output was dropped.
fn take_vec_panicking(take_panics_at: Option<usize>, drop_panics_at: Option<usize>) -> Vec<usize> {
    let values = log(10);
    let outputs_log = log(10);
    // The panic hook keeps what it allocates to print a backtrace: a silent one, meanwhile
    // (one test at a time, so that the hook put back is the one taken).
    static HOOK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one_at_a_time = HOOK
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let ((), bytes) = measure_bytes(|| {
        let mut arena = tracked(10, &values, drop_panics_at);
        let result = catch_unwind(AssertUnwindSafe(|| {
            arena.take_vec_with(|value| {
                assert_ne!(Some(value.id), take_panics_at, "take panics");
                Tracked {
                    id: value.id,
                    log: outputs_log.clone(),
                    panic_on_drop: false,
                }
            })
        }));
        assert!(result.is_err());
        drop((arena, result));
    });
    std::panic::set_hook(hook);
    assert_eq!(bytes.change, 0, "the storage is freed after the panic");
    assert_each_dropped_once(&values, "value");
    outputs_log
        .iter()
        .map(|drops| drops.load(Ordering::SeqCst))
        .collect()
}

#[test]
fn a_panic_in_take_loses_and_double_drops_nothing() {
    for panic_at in [0, 3, 9] {
        // The outputs made before the panic are dropped; no other was made.
        let expected: Vec<usize> = (0..10).map(|id| usize::from(id < panic_at)).collect();
        assert_eq!(take_vec_panicking(Some(panic_at), None), expected);
    }
}

#[test]
fn a_panic_in_a_values_drop_loses_and_double_drops_nothing() {
    for panic_at in [0, 5, 9] {
        // Outputs made before the panic, and the one of the panicking value, are dropped.
        let expected: Vec<usize> = (0..10).map(|id| usize::from(id <= panic_at)).collect();
        assert_eq!(take_vec_panicking(None, Some(panic_at)), expected);
    }
}

/// A future pending until its flag is set, counting its polls; it keeps the waker of its
/// latest poll if `keeps_waker`.
struct Gate {
    id: usize,
    open: Arc<AtomicUsize>,
    polls: usize,
    keeps_waker: bool,
    waker: Option<Waker>,
}

impl Future for Gate {
    type Output = usize;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<usize> {
        self.polls += 1;
        if self.keeps_waker {
            self.waker = Some(cx.waker().clone());
        }
        if self.open.load(Ordering::SeqCst) == 1 {
            Poll::Ready(self.polls)
        } else {
            Poll::Pending
        }
    }
}

#[test]
fn once_armed_only_woken_values_are_polled() {
    let (futures, states) = probes(6);
    let mut arena = JoinArena::new(futures);
    let (task, wakes) = counting_waker();
    let mut cx = Context::from_waker(&task);
    // Unarmed: the caller polls with its own context.
    for index in 0..arena.len() {
        assert!(arena.get_pin_mut(index).poll(&mut cx).is_pending());
    }
    assert!(states.iter().all(|s| s.polls() == 1));
    // Armed with values 1 and 4 queued: the next round polls just those.
    arena.arm(|probe| [1, 4].contains(&probe.id()));
    let mut poll =
        |_, fut: Pin<&mut _>, cx: &mut Context<'_>| Step::of_future(Future::poll(fut, cx));
    let mut budget = arena.start_round();
    assert!(
        arena
            .poll_with_budget(&mut cx, &mut budget, &mut poll)
            .is_pending()
    );
    let polls: Vec<usize> = states.iter().map(|s| s.polls()).collect();
    assert_eq!(polls, [1, 2, 1, 1, 2, 1]);
    // Value 4 finishes: its own waker wakes the task, and only it is polled.
    let before = wakes.count();
    states[4].finish();
    assert_eq!(wakes.count(), before + 1);
    let mut budget = arena.start_round();
    match arena.poll_with_budget(&mut cx, &mut budget, &mut poll) {
        Poll::Ready(Some((_, output))) => assert_eq!(output, 4),
        other => panic!("expected value 4's output, got {other:?}"),
    }
    assert!(
        arena
            .poll_with_budget(&mut cx, &mut budget, &mut poll)
            .is_pending()
    );
    let polls: Vec<usize> = states.iter().map(|s| s.polls()).collect();
    assert_eq!(polls, [1, 2, 1, 1, 3, 1]);
    // The storage goes; a stale waker of it wakes nothing that is gone.
    let stale = states[1].waker();
    drop(arena);
    stale.wake();
}

#[test]
fn a_settled_value_lets_the_round_go_on_and_waits_for_its_waker() {
    let (futures, _states) = probes(4);
    let mut arena = JoinArena::new(futures);
    let (task, wakes) = counting_waker();
    let mut cx = Context::from_waker(&task);
    arena.arm(|_| true);
    // Every value settles without keeping a waker but value 2 (a `Pending` value that keeps
    // none is polled again by every round; a settled one is done until woken).
    let polls = RefCell::new(vec![0; 4]);
    let kept = RefCell::new(None);
    let mut settle = |_, probe: Pin<&mut pinfold_testkit::probe::Probe>, cx: &mut Context<'_>| {
        polls.borrow_mut()[probe.id()] += 1;
        if probe.id() == 2 {
            *kept.borrow_mut() = Some(cx.waker().clone());
        }
        Step::<()>::Settled
    };
    // One round, then what each value's poll count is after it.
    let mut round = |arena: &mut JoinArena<_>| {
        let mut budget = arena.start_round();
        let polled = arena.poll_with_budget(&mut cx, &mut budget, &mut settle);
        assert_eq!(polled, Poll::Pending, "a settled value hands nothing on");
        polls.borrow().clone()
    };
    assert_eq!(
        round(&mut arena),
        [1, 1, 1, 1],
        "the round went on past each settled value"
    );
    assert_eq!(
        wakes.count(),
        0,
        "settling is neither a self-wake nor a vain poll"
    );
    assert_eq!(
        round(&mut arena),
        [1, 1, 1, 1],
        "not polled again without a wake"
    );
    kept.borrow_mut()
        .take()
        .expect("value 2 kept its waker")
        .wake();
    assert_eq!(
        round(&mut arena),
        [1, 1, 2, 1],
        "only the woken value is polled"
    );
}

#[test]
fn a_value_woken_during_its_own_poll_waits_for_the_next_round() {
    let open = Arc::new(AtomicUsize::new(0));
    let mut arena = JoinArena::new((0..3).map(|id| Gate {
        id,
        open: open.clone(),
        polls: 0,
        keeps_waker: true,
        waker: None,
    }));
    arena.arm(|_| true);
    let mut cx = Context::from_waker(Waker::noop());
    let self_waking = RefCell::new(0);
    let mut poll = |_, fut: Pin<&mut Gate>, cx: &mut Context<'_>| {
        if fut.id == 0 {
            *self_waking.borrow_mut() += 1;
            cx.waker().wake_by_ref();
        }
        Step::of_future(fut.poll(cx))
    };
    let mut budget = arena.start_round();
    assert!(
        arena
            .poll_with_budget(&mut cx, &mut budget, &mut poll)
            .is_pending()
    );
    // Each value polled once in the round, value 0 too, although it woke itself.
    assert_eq!(*self_waking.borrow(), 1);
    assert_eq!(
        (0..3).map(|i| arena.get(i).polls).collect::<Vec<_>>(),
        [1, 1, 1]
    );
    // The next round polls value 0 again, and only it.
    let mut budget = arena.start_round();
    assert!(
        arena
            .poll_with_budget(&mut cx, &mut budget, &mut poll)
            .is_pending()
    );
    assert_eq!(
        (0..3).map(|i| arena.get(i).polls).collect::<Vec<_>>(),
        [2, 1, 1]
    );
}

#[test]
fn values_may_borrow_a_local_declared_after_the_arena() {
    let mut arena;
    let local = String::from("borrowed");
    arena = JoinArena::new([local.as_str(), local.as_str()]);
    assert_eq!(arena.take_vec_with(|s| s.len()), [8, 8]);
}

#[test]
fn a_value_that_keeps_no_waker_is_polled_by_every_round_without_waking_the_task() {
    let open = Arc::new(AtomicUsize::new(0));
    let mut arena = JoinArena::new((0..2).map(|id| Gate {
        id,
        open: open.clone(),
        polls: 0,
        keeps_waker: id == 0,
        waker: None,
    }));
    arena.arm(|_| true);
    let (task, wakes) = counting_waker();
    let mut cx = Context::from_waker(&task);
    for round in 1..=3 {
        assert!(round_is_pending(&mut arena, &mut cx));
        // Value 0 keeps its waker: polled once, then only when woken. Value 1 keeps none: it
        // can only be waiting for a waker from before the arena was armed, so every round
        // polls it; and no round wakes the task for it (no busy loop).
        assert_eq!((arena.get(0).polls, arena.get(1).polls), (1, round));
        assert_eq!(wakes.count(), 0);
    }
    open.store(1, Ordering::SeqCst);
    let mut budget = arena.start_round();
    let mut poll = |_, fut: Pin<&mut Gate>, cx: &mut Context<'_>| Step::of_future(fut.poll(cx));
    match arena.poll_with_budget(&mut cx, &mut budget, &mut poll) {
        Poll::Ready(Some((_, polls))) => assert_eq!(polls, 4),
        other => panic!("expected value 1's output, got {other:?}"),
    }
}

/// Rounds need the wake table that `arm` makes: starting one before is a bug of the owner's,
/// reported by name, not an index or unwrap panic.
#[test]
#[should_panic(expected = "JoinArena polled before it was armed")]
fn a_round_before_arm_panics_with_a_message() {
    let mut arena = JoinArena::new([1u32, 2, 3]);
    let _ = arena.start_round();
}

/// Making a join arena writes its values and nothing else: no wake table, and no allocation
/// but the values' own.
#[test]
fn a_join_arena_allocates_its_values_alone_until_armed() {
    let (arena, allocs) = measure(|| JoinArena::new([1u64, 2, 3]));
    assert_eq!(allocs, 1);
    assert!(!arena.is_armed());
    assert_eq!(
        format!("{arena:?}"),
        "JoinArena { len: 3, armed: false, .. }"
    );
}

/// A value of [`fill_in_place`](JoinArena::fill_in_place)'s tests: still a value, or an output put
/// back in its place.
enum Cell {
    Value(Tracked),
    Kept(Tracked),
}

/// An output of `fill_in_place`'s tests: as large as a [`Cell`], so that outputs fit the
/// values' storage whatever their number.
struct Output {
    tracked: Tracked,
    _pad: u64,
}

const _: () = assert!(size_of::<Output>() == size_of::<Cell>());

fn keep(output: Output) -> Cell {
    Cell::Kept(output.tracked)
}

impl Cell {
    fn kept_id(&self) -> Option<usize> {
        match self {
            Cell::Kept(output) => Some(output.id),
            Cell::Value(_) => None,
        }
    }
}

/// `n` tracked values in cells logging to `values`, value `panic_at` (if any) panicking in
/// `Drop`.
fn cells(n: usize, values: &Arc<Vec<AtomicUsize>>, panic_at: Option<usize>) -> JoinArena<Cell> {
    JoinArena::new((0..n).map(|id| {
        Cell::Value(Tracked {
            id,
            log: values.clone(),
            panic_on_drop: Some(id) == panic_at,
        })
    }))
}

/// The output of a cell for `fill_in_place`: value `stop_at` stops the pass, value `panic_at`
/// panics; every visit is counted.
fn visit_cell(
    outputs: &Arc<Vec<AtomicUsize>>,
    visits: &RefCell<Vec<usize>>,
    stop_at: Option<usize>,
    panic_at: Option<usize>,
) -> impl FnMut(Pin<&mut Cell>) -> Result<Output, &'static str> {
    move |cell| {
        let Cell::Value(value) = &*cell else {
            panic!("a kept output visited");
        };
        visits.borrow_mut().push(value.id);
        assert_ne!(Some(value.id), panic_at, "visit panics");
        if Some(value.id) == stop_at {
            return Err("stop");
        }
        Ok(Output {
            tracked: Tracked {
                id: value.id,
                log: outputs.clone(),
                panic_on_drop: false,
            },
            _pad: 0,
        })
    }
}

#[test]
fn filling_in_place_turns_every_value_into_its_output_in_one_pass() {
    for n in [0, 1, 7, 64] {
        let values = log(n);
        let outputs_log = log(n);
        let visits = RefCell::new(Vec::with_capacity(n));
        let mut arena = cells(n, &values, None);
        let (filled, allocations) =
            measure(|| arena.fill_in_place(visit_cell(&outputs_log, &visits, None, None), keep));
        let Filled::All(outputs) = filled else {
            panic!("expected every output");
        };
        // In the values' storage: no allocation; each value visited once, dropped once.
        assert_eq!(allocations, 0);
        assert_eq!(*visits.borrow(), (0..n).collect::<Vec<_>>());
        assert_each_dropped_once(&values, "value");
        assert!(arena.is_empty());
        assert_eq!(
            outputs.iter().map(|o| o.tracked.id).collect::<Vec<_>>(),
            (0..n).collect::<Vec<_>>()
        );
        drop(outputs);
        assert_each_dropped_once(&outputs_log, "output");
    }
}

#[test]
fn a_stopped_pass_puts_the_outputs_back_and_leaves_the_rest_unvisited() {
    for stop_at in [0, 1, 5, 9] {
        let values = log(10);
        let outputs_log = log(10);
        let visits = RefCell::new(Vec::new());
        let mut arena = cells(10, &values, None);
        let filled =
            arena.fill_in_place(visit_cell(&outputs_log, &visits, Some(stop_at), None), keep);
        assert!(
            matches!(filled, Filled::Stopped { at, reason: "stop" } if at == stop_at),
            "stopped at {stop_at}"
        );
        assert_eq!(*visits.borrow(), (0..=stop_at).collect::<Vec<_>>());
        // Values before the stop are their outputs now, the others untouched.
        let kept: Vec<Option<usize>> = (0..10).map(|i| arena.get(i).kept_id()).collect();
        let expected: Vec<Option<usize>> = (0..10).map(|i| (i < stop_at).then_some(i)).collect();
        assert_eq!(kept, expected);
        drop(arena);
        assert_each_dropped_once(&values, "value");
        let output_drops: Vec<usize> = outputs_log
            .iter()
            .map(|d| d.load(Ordering::SeqCst))
            .collect();
        let expected: Vec<usize> = (0..10).map(|i| usize::from(i < stop_at)).collect();
        assert_eq!(output_drops, expected);
    }
}

#[test]
fn outputs_that_do_not_fit_are_not_filled_in_place() {
    // Larger than the values: nothing visited.
    let mut arena = JoinArena::new(0..10u32);
    let filled = arena.fill_in_place(|v| Ok::<u64, ()>(u64::from(*v)), |o| o as u32);
    assert!(matches!(filled, Filled::Unfit));
    assert_eq!(arena.len(), 10);
    assert_eq!(arena.take_vec_with(|v| *v), (0..10).collect::<Vec<u32>>());
    // Zero-sized outputs never take over storage.
    let mut arena = JoinArena::new(0..3u8);
    assert!(matches!(
        arena.fill_in_place(|_| Ok::<(), ()>(()), |()| 0),
        Filled::Unfit
    ));
}

/// A pass over 10 cells panicking in `visit` at `visit_panics_at` or in value `drop_panics_at`'s
/// `Drop`: the panic goes on, the outputs taken are back in their values' places, and after
/// the arena's drop every value and every output made was dropped exactly once. Returns which
/// values held their outputs after the panic.
fn fill_panicking(visit_panics_at: Option<usize>, drop_panics_at: Option<usize>) -> Vec<bool> {
    let values = log(10);
    let outputs_log = log(10);
    let visits = RefCell::new(Vec::new());
    let mut arena = cells(10, &values, drop_panics_at);
    let result = catch_unwind(AssertUnwindSafe(|| {
        arena.fill_in_place(
            visit_cell(&outputs_log, &visits, None, visit_panics_at),
            keep,
        )
    }));
    assert!(result.is_err());
    let kept: Vec<bool> = (0..10).map(|i| arena.get(i).kept_id() == Some(i)).collect();
    drop(arena);
    assert_each_dropped_once(&values, "value");
    let made = kept.iter().filter(|k| **k).count();
    for (id, drops) in outputs_log.iter().enumerate() {
        assert_eq!(
            drops.load(Ordering::SeqCst),
            usize::from(id < made),
            "output {id}"
        );
    }
    kept
}

#[test]
fn a_panic_in_visit_puts_the_outputs_back() {
    for panic_at in [0, 3, 9] {
        let expected: Vec<bool> = (0..10).map(|id| id < panic_at).collect();
        assert_eq!(fill_panicking(Some(panic_at), None), expected);
    }
}

#[test]
fn a_panic_in_a_values_drop_puts_its_output_in_its_place() {
    for panic_at in [0, 5, 9] {
        // The value whose drop panicked holds its own output, as do those before it.
        let expected: Vec<bool> = (0..10).map(|id| id <= panic_at).collect();
        assert_eq!(fill_panicking(None, Some(panic_at)), expected);
    }
}

#[test]
fn a_panic_of_the_task_wakers_drop_after_an_armed_fill_drops_every_output_once() {
    use pinfold_testkit::contract::panic_message;
    use pinfold_testkit::panicking_waker::{DROP_PANIC, WakerOps, panicking_waker};

    let n = 6;
    let values = log(n);
    let outputs_log = log(n);
    let visits = RefCell::new(Vec::new());
    let mut arena = cells(n, &values, None);
    // Armed, and a round that finds every value pending registers (a clone of) the task's
    // waker in the wake table: the table's drop drops that waker.
    let (task, switches) = panicking_waker();
    let mut cx = Context::from_waker(&task);
    arena.arm(|_| true);
    let mut budget = arena.start_round();
    let mut pending = |_, _: Pin<&mut Cell>, _: &mut Context<'_>| Step::<()>::Pending;
    assert!(
        arena
            .poll_with_budget(&mut cx, &mut budget, &mut pending)
            .is_pending()
    );
    assert_eq!(switches.live(), 2, "the round did not register the task");
    switches.panic_once(WakerOps::DROP);
    let panic = catch_unwind(AssertUnwindSafe(|| {
        drop(arena.fill_in_place(visit_cell(&outputs_log, &visits, None, None), keep));
    }))
    .expect_err("the task waker's drop did not panic");
    assert_eq!(panic_message(&*panic), DROP_PANIC);
    drop(arena);
    assert_each_dropped_once(&values, "value");
    assert_each_dropped_once(&outputs_log, "output");
    assert_eq!(switches.live(), 1, "a clone of the task's waker was leaked");
}

#[test]
fn a_join_arena_counts_its_values() {
    let empty = JoinArena::new(std::iter::empty::<u8>());
    assert_eq!((empty.len(), empty.is_empty()), (0, true));
    let three = JoinArena::new([1u8, 2, 3]);
    assert_eq!((three.len(), three.is_empty()), (3, false));
}

/// Values that wake themselves while polled, more than `MAX_VAIN_REPOLLS`: each round polls
/// each once (a self-wake is no strike) and wakes the task once, to yield; the wakes during
/// the round notify nobody.
#[test]
fn self_wakes_during_a_round_wake_the_task_once() {
    use pinfold_arena::MAX_VAIN_REPOLLS;
    use pinfold_testkit::probe::Spinner;

    let (spinners, counters): (Vec<_>, Vec<_>) = (0..MAX_VAIN_REPOLLS + 8)
        .map(|id| Spinner::new(id, 3))
        .unzip();
    let mut arena = JoinArena::new(spinners);
    arena.arm(|_| true);
    let (task, wakes) = counting_waker();
    let mut cx = Context::from_waker(&task);
    for round in 1..=3 {
        assert!(round_is_pending(&mut arena, &mut cx));
        assert_eq!(wakes.count(), round, "round {round}");
        assert!(
            counters
                .iter()
                .all(|polls| polls.load(Ordering::SeqCst) == round),
            "round {round}: a self-waking value was not polled once"
        );
    }
}

/// Whether one round of the armed arena's values, polled with `cx`, gave no output.
fn round_is_pending<F: Future>(arena: &mut JoinArena<F>, cx: &mut Context<'_>) -> bool {
    let mut budget = arena.start_round();
    let mut poll = |_, fut: Pin<&mut F>, cx: &mut Context<'_>| Step::of_future(fut.poll(cx));
    arena
        .poll_with_budget(cx, &mut budget, &mut poll)
        .is_pending()
}
