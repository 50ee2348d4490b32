//! How a command or CI step ended, and how that is printed.

use std::fmt;
use std::time::Duration;

/// The reason a task stopped; printed as `xtask: error: <message>`.
pub(crate) type Failure = String;

/// How a step ended when it did not fail.
pub(crate) enum Outcome {
    Passed,
    Skipped(String),
}

/// A duration printed as `12.3s` or `4m 05.6s`.
pub(crate) struct Seconds(pub(crate) Duration);

impl fmt::Display for Seconds {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let secs = self.0.as_secs_f64();
        if secs < 60.0 {
            write!(f, "{secs:.1}s")
        } else {
            write!(f, "{}m {:04.1}s", (secs / 60.0).floor(), secs % 60.0)
        }
    }
}

/// Prints `reason` between two rules of `!`, so a skip cannot be taken for a pass.
pub(crate) fn print_skip_banner(reason: &str) {
    let rule = "!".repeat(78);
    println!("{rule}\n{reason}\n{rule}");
}
