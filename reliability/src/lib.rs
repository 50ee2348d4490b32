//! The harness of the reliability tests: fixtures, drivers, fault wrappers and strategies; the
//! cases live in `tests/`.
//!
//! The suite drives every pinfold primitive with random programs of operations and compares it
//! with `futures-util` (`tests/differential.rs`), hammers it with wakes from many threads
//! (`tests/stress.rs`), and feeds it futures that panic and parent wakers that re-enter it
//! (`tests/faults.rs`). What those tests share, and the drivers, fault wrappers and strategies
//! they run, live here; the test files hold the cases:
//!
//! - [`ctl`]: [`Ctl`](ctl::Ctl), a future the test completes, wakes and inspects through a
//!   [`CtlHandle`](ctl::CtlHandle); its output [`Out`](ctl::Out) counts its drops; a
//!   [`World`](ctl::World) keeps every handle of one run, so that "each value dropped exactly
//!   once" can be checked at the end.
//! - [`exec`]: [`Exec`](exec::Exec), a one-task executor that polls only when its waker fired,
//!   so a lost wake shows up as a missing output instead of being papered over by polling.
//! - [`source`]: [`Source`](source::Source), a stream of futures the test feeds by hand.
//! - [`wake_threads`]: [`WakeThreads`](wake_threads::WakeThreads), a pool of threads to run a
//!   wake on ("wake slot i from thread t"), each call joined before the next operation.
//! - [`program`]: [`Pick`](program::Pick) and [`Via`](program::Via), the operands of the
//!   random programs, and [`JoinOp`](program::JoinOp), an operation of a program for a join,
//!   with their strategies.
//! - [`subject`]: [`Subject`](subject::Subject), each set or stream buffer (pinfold's and
//!   `futures-util`'s) as a program drives it.
//! - [`lockstep`]: the differential driver of the sets and buffers: a program run against
//!   pinfold and `futures-util` side by side ([`Lockstep`](lockstep::Lockstep)), with what
//!   must hold after every operation, and the programs' strategy.
//! - [`join_lockstep`]: the differential driver of `join_all` and `try_join_all`.
//! - [`keyed_model`]: the keyed model of the sets and merges (random programs checked against
//!   live keys, owed outputs and departed keys after every step), the same programs with a
//!   panic at every call into user code in turn ([`sweep_faults`](keyed_model::sweep_faults)),
//!   or two in one call ([`sweep_two_faults`](keyed_model::sweep_two_faults)), and the ordered
//!   sets against a model of their order.
//! - [`fault`]: the panic payload of an injected fault, a panic hook that keeps those quiet,
//!   and the accounting of which injected panics were raised and which reached the caller.
//! - [`faulty`]: the fault driver of the sets and buffers ([`Faulty`](faulty::Faulty)): a
//!   program of futures that panic at random points, and the programs' strategies.
//! - [`faulty_join`]: the fault driver of `join_all` and `try_join_all`.
//! - [`isolated`]: [`in_child_process`](isolated::in_child_process), which runs a case that
//!   may abort the process (two panics, one while the other unwinds) in a child process, so
//!   that an abort fails that case instead of ending the test binary.
//! - [`join_sweep`]: `join_all` and `try_join_all` of a mix of inputs with a panic at every
//!   call into user code in turn, each run checked against the joins' documented contract
//!   ([`panic_at_every_call_of_join_all`](join_sweep::panic_at_every_call_of_join_all)), or
//!   with two, a future's poll and a call after it
//!   ([`two_panics_in_a_call_of_join_all`](join_sweep::two_panics_in_a_call_of_join_all)), and
//!   the inputs' strategy.
//! - [`driven_model`]: the driven model: `Driven` over every set of futures, merge and map,
//!   made as a user makes it, through random programs of pushes between calls, drives, takes,
//!   empties and refills, values finished from outside and consumers waiting on a value,
//!   checked after every step against what each value owes
//!   ([`run`](driven_model::run)), and the programs' strategy.
//! - [`map_model`]: the keyed model of `FutureMap` and `StreamMap` ([`Driver`](map_model::Driver)),
//!   with a key and a value type whose user code can panic at its k-th call (and, after a
//!   value's poll, at a second site in the same call), and the programs' strategy.
//! - [`order_model`]: the order model: when each value of every primitive is polled, checked
//!   at every poll against a reference of due values and their epochs (no value polled
//!   unless due, none twice in a call, none passed over by values due from a later batch), with
//!   the budget and the task's wakes, after one fault or two in a call, and the programs'
//!   strategies.
//! - [`pool_model`]: the buffer pool and its batching writer against a model of where every
//!   buffer is and what every message became, with a panic at every call into the task's
//!   wakers in turn ([`sweep`](pool_model::sweep)).
//! - [`reentrance`]: parent wakers that poll or drop the primitive from inside `wake`, and
//!   every primitive behind one type ([`Primitive`](reentrance::Primitive)).
//! - [`beacon`]: [`Beacon`](beacon::Beacon), a future ready once woken a given number of
//!   times, and the waker threads that drive the beacons at a [`Pace`](beacon::Pace).
//! - [`stress`]: [`stress`](stress::stress), the runner of a primitive consuming beacons on a
//!   multi-thread runtime while the waker threads wake them.
//! - [`churn`]: small primitives made and dropped while other threads wake their wakers.
//! - [`watchdog`]: [`Watchdog`](watchdog::Watchdog), which aborts the process when a test
//!   runs past its time limit: a hang fails, it never passes.
//! - [`sizes`]: test sizes and time limits, overridable by environment variables for deeper
//!   runs (`PROPTEST_CASES`, `PINFOLD_STRESS_WAKES`, `PINFOLD_TIMEOUT_SCALE`, ...).
//!
//! How to run the deeper configurations, and `cargo xtask valgrind`, is in the README.

pub mod beacon;
pub mod churn;
pub mod ctl;
pub mod driven_model;
pub mod exec;
pub mod fault;
pub mod faulty;
pub mod faulty_join;
pub mod isolated;
pub mod join_lockstep;
pub mod join_sweep;
pub mod keyed_model;
pub mod lockstep;
pub mod map_model;
pub mod order_model;
pub mod pool_model;
pub mod program;
pub mod reentrance;
pub mod sizes;
pub mod source;
pub mod stress;
pub mod subject;
pub mod wake_threads;
pub mod watchdog;
