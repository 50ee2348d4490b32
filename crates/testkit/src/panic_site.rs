//! Where a panic says it happened: the file and line of its `Location`, which a
//! `#[track_caller]` method reports as its caller's.

use std::panic::{self, UnwindSafe};
use std::sync::{Arc, Mutex};

/// Runs `f`, which must panic, and returns the `file:line` its panic reports. The panic hook is
/// replaced while `f` runs, so a test binary that calls this holds one test that panics.
///
/// # Panics
/// If `f` returns without panicking.
pub fn panic_site<R>(f: impl FnOnce() -> R + UnwindSafe) -> String {
    let seen = Arc::new(Mutex::new(None));
    let hook_seen = Arc::clone(&seen);
    let previous = panic::take_hook();
    panic::set_hook(Box::new(move |info| {
        let site = info
            .location()
            .map(|at| format!("{}:{}", at.file(), at.line()));
        *hook_seen.lock().unwrap() = site;
    }));
    let result = panic::catch_unwind(f);
    panic::set_hook(previous);
    assert!(result.is_err(), "expected a panic");
    let site = seen.lock().unwrap().take();
    site.expect("the panic gave its location")
}
