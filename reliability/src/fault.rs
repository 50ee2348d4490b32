//! Injected faults: the payload a faulty value panics with, a panic hook that keeps those
//! panics quiet (they are expected by the hundred) while every other panic prints as usual,
//! and the accounting of the fault tests: which injected panics were raised during an
//! operation, and whether the one that reached its caller (if any) is one of them.

use std::any::Any;
use std::cell::Cell;
use std::panic::{self, AssertUnwindSafe};
use std::sync::Once;

use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

use crate::ctl::Out;

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

/// What a caught panic carries.
pub type Payload = Box<dyn Any + Send>;

/// Runs `f`, catching a panic: its payload.
pub fn catch<R>(f: impl FnOnce() -> R) -> Result<R, Payload> {
    panic::catch_unwind(AssertUnwindSafe(f))
}

/// Checks what reached the caller of one operation against the injected panics raised during
/// it (`fired`, in order, less those the test raised itself dropping outputs): a panic reached
/// it if and only if one was raised, and it is the first raised. Once a value panicked, the
/// primitive goes on to drop it (and, in `clear` or its drop, the others), and the later
/// panics of those drops are dropped.
pub fn check_panic(
    what: &str,
    caught: Option<&Payload>,
    fired: &[FaultPanic],
) -> Result<(), TestCaseError> {
    match caught {
        Some(payload) => {
            let fault = as_fault(&**payload).map_err(|message| {
                TestCaseError::fail(format!(
                    "{what}: a panic that is not an injected one reached the caller: {message}"
                ))
            })?;
            prop_assert!(
                fired.first() == Some(&fault),
                "{what}: the panic {fault:?} reached the caller, not the first of the panics \
                 raised, {fired:?}"
            );
        }
        None => prop_assert!(
            fired.is_empty(),
            "{what}: injected panics {fired:?} were swallowed"
        ),
    }
    Ok(())
}

/// Drops outputs one by one, catching the injected panics of their `Drop`; returns those.
pub fn drop_outputs(
    outputs: impl IntoIterator<Item = Out>,
) -> Result<Vec<FaultPanic>, TestCaseError> {
    let mut raised = Vec::new();
    for out in outputs {
        let id = out.id();
        if let Err(payload) = catch(move || drop(out)) {
            let fault = as_fault(&*payload).map_err(TestCaseError::fail)?;
            prop_assert_eq!(
                fault,
                FaultPanic {
                    id,
                    site: Site::OutputDrop
                }
            );
            raised.push(fault);
        }
    }
    Ok(raised)
}

/// `fired` less one occurrence of each of `expected`.
pub fn less(mut fired: Vec<FaultPanic>, expected: &[FaultPanic]) -> Vec<FaultPanic> {
    for fault in expected {
        if let Some(i) = fired.iter().position(|f| f == fault) {
            fired.remove(i);
        }
    }
    fired
}
