//! A panic hook for tests that panic while a panic unwinds (two panicking `Drop`s, or a
//! panicking `Drop` of an output as a poll's panic unwinds): for such a panic std's own hook
//! writes a whole backtrace, whatever `RUST_BACKTRACE` says, and Miri takes about 15 seconds
//! to make one.

use std::panic;
use std::sync::Once;

/// Under Miri, replaces the panic hook, once per test binary, by one that writes each panic's
/// message and place but no backtrace; elsewhere, does nothing. A test that makes a panic
/// while another unwinds calls it first (not while panicking: the hook cannot change then).
pub fn no_backtraces_under_miri() {
    if !cfg!(miri) {
        return;
    }
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| panic::set_hook(Box::new(|info| eprintln!("{info}"))));
}
