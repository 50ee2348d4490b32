//! A panic hook for tests that panic while a panic unwinds (two panicking `Drop`s, or a
//! panicking `Drop` of an output as a poll's panic unwinds): for such a panic std's own hook
//! writes a whole backtrace, whatever `RUST_BACKTRACE` says, and making one takes Miri about 15
//! seconds and a ThreadSanitizer build about 5.

use std::panic;
use std::sync::Once;

/// Unless `RUST_BACKTRACE` asks for backtraces (is set, and not to `0`), replaces the panic
/// hook, once per test binary, by one that writes each panic's message and place but no
/// backtrace. A test that makes a panic while
/// another unwinds calls it first (not while panicking: the hook cannot change then).
pub fn no_forced_backtraces() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        if std::env::var_os("RUST_BACKTRACE").is_none_or(|value| value == "0") {
            panic::set_hook(Box::new(|info| eprintln!("{info}")));
        }
    });
}
