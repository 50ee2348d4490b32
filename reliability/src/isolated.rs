//! Cases that may abort the process, run in a child process: a primitive that drops a value
//! while a panic unwinds, without catching that value's own panic, aborts the process (a
//! `Drop` that panics during unwinding cannot unwind), and an abort would end the whole test
//! binary instead of failing one test.
//!
//! [`in_child_process`] runs the test binary again with only the calling test selected and an
//! environment variable naming the case; the child runs that case and nothing else, and the
//! parent fails the case unless the child ran it and exited normally. Under Miri, which cannot
//! start a process, the case runs in the test's own process.

use std::env;
use std::process::Command;

/// The environment variable that names the case a child process runs: `test/case`.
pub const CHILD_CASE: &str = "PINFOLD_CHILD_CASE";

/// Runs `body`, case `case` of test `test`, in a child process, and fails unless it passed
/// there without aborting.
///
/// `test` is the test's name as the test harness knows it: its path in the test file, such
/// as `regressions::name`, or just the name of a test at the file's top. The test calls this
/// for each of its cases, with the same `test` and a different `case`: in the parent, each
/// call starts a child; in a child, only the call of the case it was started for runs `body`.
///
/// # Errors
/// `body`'s error (in the child, or under Miri), or (in the parent) how the child ended and
/// the end of what it printed.
pub fn in_child_process(
    test: &str,
    case: &str,
    body: impl FnOnce() -> Result<(), String>,
) -> Result<(), String> {
    let key = format!("{test}/{case}");
    match env::var(CHILD_CASE) {
        Ok(chosen) if chosen == key => body(),
        // A child started for another case of the test.
        Ok(_) => Ok(()),
        Err(_) if cfg!(miri) => body(),
        Err(_) => run_child(test, &key),
    }
}

/// Runs this test binary's test `test` in a child process with [`CHILD_CASE`] set to `key`.
fn run_child(test: &str, key: &str) -> Result<(), String> {
    let exe = env::current_exe().map_err(|e| format!("{key}: no test binary to run: {e}"))?;
    let output = Command::new(exe)
        .args([test, "--exact", "--nocapture", "--test-threads", "1"])
        .env(CHILD_CASE, key)
        .env("RUST_BACKTRACE", "0")
        .output()
        .map_err(|e| format!("{key}: the child process did not start: {e}"))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    if output.status.success() && stdout.contains("1 passed") {
        return Ok(());
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    let printed: Vec<&str> = stdout.lines().chain(stderr.lines()).collect();
    let tail = printed[printed.len().saturating_sub(12)..].join("\n    ");
    let ended = if output.status.success() {
        "did not run the test".to_owned()
    } else {
        format!("ended with {}", output.status)
    };
    Err(format!(
        "{key}: the child process {ended}; it printed:\n    {tail}"
    ))
}
