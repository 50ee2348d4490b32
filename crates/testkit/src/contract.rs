//! Contracts that every keyed set of futures keeps (`pinfold_bounded::FuturesUnorderedBounded`,
//! `pinfold_unordered::FuturesUnordered`), written once and run over each.
//!
//! A contract is a generic function over a [`SetUnderTest`], the set type a test file names
//! with [`set_under_test!`](crate::set_under_test). The test files hold one `#[test]` per case,
//! calling the contract with their set:
//!
//! ```ignore
//! use pinfold_bounded::{FuturesUnorderedBounded, Key};
//! use pinfold_testkit::contract::keys;
//!
//! pinfold_testkit::set_under_test!(Bounded: FuturesUnorderedBounded::new, Key);
//!
//! #[test]
//! fn poll_next_keyed_gives_the_key_insert_returned() {
//!     keys::poll_next_keyed_gives_the_key_insert_returned::<Bounded>();
//! }
//! ```
//!
//! - [`keys`]: `insert`, `remove`, `get`, stale keys and stale wakers.
//! - [`rounds`]: what one `poll_next` polls, when outputs come, when the stream ends.
//! - [`task_waker_panics`]: a task waker that panics in `clone`, `wake`, `wake_by_ref` or `drop`.

pub mod keys;
pub mod rounds;
pub mod task_waker_panics;

use std::fmt::Debug;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use futures_core::{FusedStream, Stream};

use crate::waker::counting_waker;

/// A keyed set of futures, named by a marker type of the test file (the orphan rule keeps a
/// test file from implementing this trait on the set itself). Each function forwards to the
/// set's method of the same name; [`set_under_test!`](crate::set_under_test) writes them.
pub trait SetUnderTest {
    /// The key `insert` returns.
    type Key: Copy + Eq + Debug;
    /// The set, holding futures of type `F`.
    type Set<F: Future>: Stream<Item = F::Output> + FusedStream + Unpin;

    /// A set with room for `capacity` futures without growing (a bounded set holds no more).
    fn with_capacity<F: Future>(capacity: usize) -> Self::Set<F>;
    /// Adds `fut`; its key.
    fn insert<F: Future>(set: &mut Self::Set<F>, fut: F) -> Self::Key;
    /// Drops the future of `key` now; whether there was one.
    fn remove<F: Future>(set: &mut Self::Set<F>, key: Self::Key) -> bool;
    /// Whether the set holds a future under `key`.
    fn contains_key<F: Future>(set: &Self::Set<F>, key: Self::Key) -> bool;
    /// The future under `key`.
    fn get<F: Future>(set: &Self::Set<F>, key: Self::Key) -> Option<&F>;
    /// The future under `key`, pinned.
    fn get_pin_mut<F: Future>(set: &mut Self::Set<F>, key: Self::Key) -> Option<Pin<&mut F>>;
    /// `poll_next`, with the key of the future that gave the output.
    fn poll_next_keyed<F: Future>(
        set: &mut Self::Set<F>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<(Self::Key, F::Output)>>;
    /// How many futures the set holds.
    fn len<F: Future>(set: &Self::Set<F>) -> usize;
    /// Drops every future.
    fn clear<F: Future>(set: &mut Self::Set<F>);
}

/// Declares `struct $marker` and implements [`SetUnderTest`] for it by forwarding to the set
/// type `$set`, made by `$set::$new(capacity)`, whose keys are `$key`.
///
/// ```ignore
/// pinfold_testkit::set_under_test!(Unordered: FuturesUnordered::with_capacity, Key);
/// ```
#[macro_export]
macro_rules! set_under_test {
    ($marker:ident: $set:ident::$new:ident, $key:ty) => {
        /// The set type the contracts run on in this file.
        #[derive(Debug)]
        struct $marker;

        impl $crate::contract::SetUnderTest for $marker {
            type Key = $key;
            type Set<F: ::core::future::Future> = $set<F>;

            fn with_capacity<F: ::core::future::Future>(capacity: usize) -> $set<F> {
                $set::$new(capacity)
            }

            fn insert<F: ::core::future::Future>(set: &mut $set<F>, fut: F) -> $key {
                set.insert(fut)
            }

            fn remove<F: ::core::future::Future>(set: &mut $set<F>, key: $key) -> bool {
                set.remove(key)
            }

            fn contains_key<F: ::core::future::Future>(set: &$set<F>, key: $key) -> bool {
                set.contains_key(key)
            }

            fn get<F: ::core::future::Future>(
                set: &$set<F>,
                key: $key,
            ) -> ::core::option::Option<&F> {
                set.get(key)
            }

            fn get_pin_mut<F: ::core::future::Future>(
                set: &mut $set<F>,
                key: $key,
            ) -> ::core::option::Option<::core::pin::Pin<&mut F>> {
                set.get_pin_mut(key)
            }

            fn poll_next_keyed<F: ::core::future::Future>(
                set: &mut $set<F>,
                cx: &mut ::core::task::Context<'_>,
            ) -> ::core::task::Poll<::core::option::Option<($key, F::Output)>> {
                set.poll_next_keyed(cx)
            }

            fn len<F: ::core::future::Future>(set: &$set<F>) -> usize {
                set.len()
            }

            fn clear<F: ::core::future::Future>(set: &mut $set<F>) {
                set.clear()
            }
        }
    };
}

/// One `poll_next_keyed` of `set` with a waker that does nothing.
pub fn poll_keyed<S: SetUnderTest, F: Future>(
    set: &mut S::Set<F>,
) -> Poll<Option<(S::Key, F::Output)>> {
    S::poll_next_keyed(set, &mut Context::from_waker(Waker::noop()))
}

/// Polls `set` to its end with `poll_next_keyed` and a counting waker, the way an executor
/// would: after `Pending`, it polls again only if the waker was woken. Panics if the set is
/// `Pending` without a wake (it would hang).
pub fn drain_keyed<S: SetUnderTest, F: Future>(set: &mut S::Set<F>) -> Vec<(S::Key, F::Output)> {
    let (waker, wakes) = counting_waker();
    let mut cx = Context::from_waker(&waker);
    let mut outputs = Vec::new();
    loop {
        let before = wakes.count();
        match S::poll_next_keyed(set, &mut cx) {
            Poll::Ready(Some(output)) => outputs.push(output),
            Poll::Ready(None) => return outputs,
            Poll::Pending => assert!(
                wakes.count() > before,
                "Pending with no wake after {} outputs: the set would hang",
                outputs.len()
            ),
        }
    }
}

/// The message of a panic caught by `catch_unwind` or a thread's `join`.
pub fn panic_message(panic: &(dyn std::any::Any + Send)) -> &str {
    panic
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("<not a string>")
}
