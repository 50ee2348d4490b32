//! How big the tests are and how long they may take: modest defaults that keep `cargo xtask ci`
//! within its budget on two cores in debug builds, and environment variables for deeper runs.
//!
//! | variable | default | what |
//! |---|---|---|
//! | `PROPTEST_CASES` | 256 (differential, join_sweep), 128 (faults, map_model), 64 (map_faults), 16 (driven_model) | cases of each property test |
//! | `PINFOLD_PROGRAM_OPS` | 120 | the longest program of operations a case runs |
//! | `PINFOLD_STRESS_WAKES` | 1,000,000 | wakes of each flood stress test (`--ignored`: 10,000,000) |
//! | `PINFOLD_PING_PONG_WAKES` | 1,000,000 | wakes of each ping-pong stress test (`--ignored`: 10,000,000) |
//! | `PINFOLD_CHURN_SETS` | 20,000 | small sets made and dropped by the churn test (`--ignored`: 1,000,000) |
//! | `PINFOLD_TIMEOUT_SCALE` | 1 | multiplies every time limit (under valgrind: 50) |

use std::env;
use std::time::Duration;

/// The value of environment variable `name` parsed as a number, or `default` if it is unset.
///
/// # Panics
/// If the variable is set but is not a number: a typo must not silently run the default.
pub fn env_number<T: std::str::FromStr>(name: &str, default: T) -> T {
    match env::var(name) {
        Ok(value) => value
            .trim()
            .replace('_', "")
            .parse()
            .unwrap_or_else(|_| panic!("{name}={value:?} is not a number")),
        Err(_) => default,
    }
}

/// Cases of a property test: `PROPTEST_CASES` if set, else `default`.
pub fn proptest_cases(default: u32) -> u32 {
    env_number("PROPTEST_CASES", default)
}

/// The longest program of operations a property-test case runs: `PINFOLD_PROGRAM_OPS`, else 120.
pub fn program_ops() -> usize {
    env_number("PINFOLD_PROGRAM_OPS", 120)
}

/// Wakes of a stress test that floods the primitive: `PINFOLD_STRESS_WAKES` if set, else
/// `default`.
pub fn stress_wakes(default: u64) -> u64 {
    env_number("PINFOLD_STRESS_WAKES", default)
}

/// Wakes of a ping-pong stress test (each wake waits for the poll that answers the previous
/// one): `PINFOLD_PING_PONG_WAKES` if set, else `default`.
pub fn ping_pong_wakes(default: u64) -> u64 {
    env_number("PINFOLD_PING_PONG_WAKES", default)
}

/// Small sets the churn test makes and drops: `PINFOLD_CHURN_SETS` if set, else `default`.
pub fn churn_sets(default: usize) -> usize {
    env_number("PINFOLD_CHURN_SETS", default)
}

/// `limit` multiplied by `PINFOLD_TIMEOUT_SCALE` (default 1; valgrind runs set it higher).
pub fn time_limit(limit: Duration) -> Duration {
    limit.mul_f64(env_number("PINFOLD_TIMEOUT_SCALE", 1.0))
}

/// The cases of a model's property test: `default`, or 2 under Miri (`PROPTEST_CASES` over
/// both).
pub fn model_cases(default: u32) -> u32 {
    proptest_cases(if cfg!(miri) { 2 } else { default })
}

/// The longest program a model's case runs: `full` ([`program_ops`] or a share of it), or 8
/// under Miri (`PINFOLD_PROGRAM_OPS` there).
pub fn model_ops(full: usize) -> usize {
    if cfg!(miri) {
        env_number("PINFOLD_PROGRAM_OPS", 8)
    } else {
        full
    }
}

/// A property test's configuration for a model: `cases` cases, no failure file (the shrunk
/// programs worth keeping are written out as tests).
pub fn model_config(cases: u32) -> proptest::test_runner::Config {
    proptest::test_runner::Config {
        cases,
        failure_persistence: None,
        ..proptest::test_runner::Config::default()
    }
}
