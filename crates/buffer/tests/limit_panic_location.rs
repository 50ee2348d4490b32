//! A `Limit` given to a second buffer panics at the caller's line (the `limit` or
//! `window_limit` call), not inside the crate: the message and the location a user sees name
//! their own code. One test in this file, as it sets the process's panic hook.

use std::panic::{self, AssertUnwindSafe};
use std::sync::{Arc, Mutex};

use futures_util::StreamExt;
use futures_util::stream;
use pinfold_buffer::{BufferExt, Limit, TryBufferExt};

/// Runs `f`, which must panic, and gives the panic's message and the file it names.
fn panic_of(f: impl FnOnce()) -> (String, String) {
    let seen: Arc<Mutex<Option<String>>> = Arc::default();
    let hook_seen = seen.clone();
    let previous = panic::take_hook();
    panic::set_hook(Box::new(move |info| {
        let location = info.location().expect("a panic location");
        *hook_seen.lock().unwrap() = Some(location.file().to_owned());
    }));
    let payload = panic::catch_unwind(AssertUnwindSafe(f)).expect_err("the call panics");
    panic::set_hook(previous);
    let message = payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_default();
    let file = seen.lock().unwrap().take().expect("the hook ran");
    (message, file)
}

fn source() -> impl futures_core::Stream<Item = std::future::Ready<u32>> {
    stream::iter(0..4u32).map(std::future::ready)
}

#[test]
fn a_limit_given_twice_panics_at_the_second_call() {
    let here = file!();

    let limit = Limit::new(2);
    let _first = source().unordered_buffer(4).limit(limit.clone());
    let (message, file) = panic_of(|| drop(source().unordered_buffer(4).limit(limit.clone())));
    assert_eq!(message, "Limit: a limit steers one buffer only");
    assert_eq!(file, here, "unordered_buffer().limit");

    let (_, file) = panic_of(|| drop(source().ordered_buffer(4).limit(limit.clone())));
    assert_eq!(file, here, "ordered_buffer().limit");

    let (_, file) = panic_of(|| drop(source().ordered_buffer(4).window_limit(limit.clone())));
    assert_eq!(file, here, "ordered_buffer().window_limit");

    let fallible =
        || stream::iter(0..4u32).map(|n| Ok::<_, ()>(std::future::ready(Ok::<u32, ()>(n))));
    let (_, file) = panic_of(|| drop(fallible().try_unordered_buffer(4).limit(limit.clone())));
    assert_eq!(file, here, "try_unordered_buffer().limit");

    let (_, file) = panic_of(|| drop(fallible().try_ordered_buffer(4).window_limit(limit.clone())));
    assert_eq!(file, here, "try_ordered_buffer().window_limit");
}
