//! The buffer pool and its batching writer against a model, with a panic at every call into
//! the task's wakers in turn (`PROPTEST_CASES` programs, default 96, of up to 60 operations):
//! see [`pool_model`](pinfold_reliability::pool_model) for what is checked.

use std::time::Duration;

use pinfold_reliability::fault::quiet_fault_panics;
use pinfold_reliability::pool_model::{Op, Which, program, sweep};
use pinfold_reliability::program::Pick;
use pinfold_reliability::sizes::proptest_cases;
use pinfold_reliability::watchdog::Watchdog;
use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: proptest_cases(96),
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(
            "proptest-regressions/pool_model.txt",
        ))),
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn pool_and_writer_survive_a_panic_at_every_waker_call(
        (buffers, writer_buffers, program) in program(60),
    ) {
        quiet_fault_panics();
        let _watchdog = Watchdog::arm("pool_model", Duration::from_secs(600));
        sweep(buffers, writer_buffers, &program).map_err(TestCaseError::fail)?;
    }
}

/// Two waiters on one buffer, the second polled with the other waker, a release on another
/// thread and a cancel of the one it was handed to: every waker call of the pool's hand-off.
#[test]
fn a_hand_off_survives_a_panic_at_every_waker_call() {
    quiet_fault_panics();
    let program = [
        Op::Acquire {
            waker: Which::First,
        },
        Op::Acquire {
            waker: Which::First,
        },
        Op::Acquire {
            waker: Which::Second,
        },
        Op::Poll {
            waiter: Pick::at(1, 2),
            waker: Which::First,
        },
        Op::Release {
            buf: Pick(0),
            on_thread: true,
        },
        Op::Cancel {
            waiter: Pick::at(0, 2),
        },
        Op::Poll {
            waiter: Pick(0),
            waker: Which::Second,
        },
    ];
    let swept = sweep(1, 1, &program).unwrap_or_else(|m| panic!("{m}"));
    assert!(swept.calls >= 5, "{swept:?}");
}

/// A writer waiting for the only buffer of its pool, which the flusher's packets hold: every
/// waker call of the writer's wait, commit and flush.
#[test]
fn a_writer_waiting_for_a_buffer_survives_a_panic_at_every_waker_call() {
    quiet_fault_panics();
    let write = |len| Op::Write {
        handle: Pick(0),
        len,
        waker: Which::First,
    };
    let program = [
        Op::NextBatch {
            waker: Which::Second,
        },
        write(20),
        write(20),
        write(20),
        Op::NextBatch {
            waker: Which::First,
        },
        Op::DropDelivered { on_thread: false },
        Op::NextBatch {
            waker: Which::First,
        },
        write(20),
        Op::Flush { handle: Pick(0) },
        Op::NextBatch {
            waker: Which::First,
        },
        Op::DropDelivered { on_thread: true },
        Op::DropWriter { handle: Pick(0) },
        Op::NextBatch {
            waker: Which::First,
        },
    ];
    let swept = sweep(1, 1, &program).unwrap_or_else(|m| panic!("{m}"));
    assert!(swept.calls >= 3, "{swept:?}");
}
