//! Injected faults: the payload a faulty value panics with, and a panic hook that keeps those
//! panics quiet (they are expected by the hundred) while every other panic prints as usual.

use std::any::Any;
use std::cell::Cell;
use std::panic;
use std::sync::Once;

/// Where an injected panic was raised.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Site {
    /// In the future's `poll`.
    Poll,
    /// In the future's `Drop`.
    Drop,
    /// In the `Drop` of the future's output.
    OutputDrop,
}

/// The payload of every injected panic (raised with [`std::panic::panic_any`]), so that a test
/// can tell it from a panic of the code under test (an assertion, a borrow error).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FaultPanic {
    /// The id of the value that panicked.
    pub id: u32,
    /// Where it panicked.
    pub site: Site,
}

thread_local! {
    /// Set while [`expecting_panics`] runs on this thread.
    static EXPECTING: Cell<bool> = const { Cell::new(false) };
}

/// Installs, once per process, a panic hook that prints nothing for a [`FaultPanic`], nor for
/// any panic inside [`expecting_panics`], and defers to the previous hook for every other panic.
pub fn quiet_fault_panics() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            let expected = EXPECTING.with(Cell::get);
            if !expected && info.payload().downcast_ref::<FaultPanic>().is_none() {
                previous(info);
            }
        }));
    });
}

/// Runs `f`, in which a panic is expected (the test catches it and checks its message): the
/// hook of [`quiet_fault_panics`] does not print it.
pub fn expecting_panics<R>(f: impl FnOnce() -> R) -> R {
    struct Reset(bool);
    impl Drop for Reset {
        fn drop(&mut self) {
            EXPECTING.with(|expecting| expecting.set(self.0));
        }
    }
    let _reset = Reset(EXPECTING.with(|expecting| expecting.replace(true)));
    f()
}

/// The injected fault a caught panic carries, or a description of the foreign panic it is.
pub fn as_fault(payload: &(dyn Any + Send)) -> Result<FaultPanic, String> {
    if let Some(fault) = payload.downcast_ref::<FaultPanic>() {
        return Ok(*fault);
    }
    Err(panic_message(payload).to_owned())
}

/// The message of a panic payload (`&str` or `String`), or a placeholder.
pub fn panic_message(payload: &(dyn Any + Send)) -> &str {
    payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("<a panic payload that is not a string>")
}
