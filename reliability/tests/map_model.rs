//! The keyed model of `FutureMap` and `StreamMap` (`PROPTEST_CASES` cases, default 128; under
//! Miri 3 short ones): random programs of inserts (over taken keys, and in bursts past the
//! arena's group sizes), removes, remove-and-reinsert, completions woken from this thread or
//! a waker thread, partial and full drains, `clear` and drops of the map. After every step the
//! map agrees with the model (`len`, `keys()`, `iter()`, `get`, `contains_key`,
//! `get_pin_mut`), departed keys are refused, every output comes under the key of the value
//! that made it, in its stream's order, and every value that left was dropped exactly once;
//! once the map is dropped, so was every value and key.
//!
//! The driver and the strategies are the crate's ([`map_model`](pinfold_reliability::map_model)).

use pinfold_reliability::map_model::{Fault, program, run};
use pinfold_reliability::program::WAKE_THREADS;
use pinfold_reliability::sizes::proptest_cases;
use pinfold_reliability::wake_threads::WakeThreads;
use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: if cfg!(miri) { 3 } else { proptest_cases(128) },
        // Relative to the package root, where `cargo test` runs the tests; Miri's isolation
        // has no file system.
        failure_persistence: if cfg!(miri) {
            None
        } else {
            Some(Box::new(FileFailurePersistence::Direct(
                "proptest-regressions/map_model.txt",
            )))
        },
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn the_maps_agree_with_a_keyed_model(
        (kind, ops) in program(if cfg!(miri) { 10 } else { 80 })
    ) {
        run(kind, &ops, Fault::Never, WakeThreads::new(WAKE_THREADS))?;
    }
}
