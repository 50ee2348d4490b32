//! Contracts that every keyed set of futures keeps (`pinfold_unordered::FuturesUnorderedBounded`,
//! `pinfold_unordered::FuturesUnordered`), written once and run over each.
//!
//! A contract is a generic function over a [`SetUnderTest`], the set type a test file names
//! with [`set_under_test!`](crate::set_under_test). The test files run the cases with their
//! set: [`contract_tests!`](crate::contract_tests) declares a `#[test]` for each case that
//! takes no arguments, and a case that takes sizes gets a `#[test]` of its own:
//!
//! ```ignore
//! use pinfold_unordered::{FuturesUnorderedBounded, Key};
//! use pinfold_testkit::contract::into_iter;
//!
//! pinfold_testkit::set_under_test!(Bounded: FuturesUnorderedBounded::new, Key);
//! pinfold_testkit::contract_tests!(Bounded: into_iter);
//!
//! #[test]
//! fn into_iter_gives_futures_that_were_never_polled() {
//!     into_iter::into_iter_gives_futures_that_were_never_polled::<Bounded>(5);
//! }
//! ```
//!
//! - [`keys`]: `insert`, `remove`, `get`, stale keys, keys of other sets and stale wakers.
//! - [`rounds`]: what one `poll_next` polls, when outputs come, when the stream ends.
//! - [`task_waker_panics`]: a task waker that panics in `clone`, `wake`, `wake_by_ref` or `drop`.
//! - [`into_iter`]: moving the futures out (`into_iter`) and changing them in place
//!   (`iter_mut`).
//! - [`basics`]: the set as a container and a stream: termination, outputs, length,
//!   iteration, dropping, futures that never move.
//! - [`borrowing`]: futures that borrow locals declared after the set (a macro, not generic
//!   functions: the borrow checker must see the set type).
//! - [`fairness`]: one `poll_next` polls each future at most once and yields rather than spin
//!   on futures that wake themselves, starving none.
//!
//! Cases that take sizes run with each set type's own (a growable set's spanning several
//! groups), so that each keeps the sizes, and the smaller ones under Miri, it had.

pub mod basics;
pub mod borrowing;
pub mod fairness;
pub mod into_iter;
pub mod keys;
pub mod rounds;
pub mod task_waker_panics;

use std::fmt::Debug;
use std::future::Future;
use std::iter::FusedIterator;
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
    /// The set, holding futures of type `F`. `collect` makes it as a user would for that many
    /// futures: a bounded set of exactly their number, a growable set grown group by group.
    type Set<F: Future>: Stream<Item = F::Output> + FusedStream + Unpin + FromIterator<F>;
    /// What `into_iter` gives: the futures moved out of the set.
    type IntoIter<F: Future + Unpin>: ExactSizeIterator<Item = F> + FusedIterator;

    /// A set with room for `capacity` futures without growing (a bounded set holds no more;
    /// `with_capacity(0)` of a growable set allocates nothing and grows as `collect` does).
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
    /// How many futures the set has room for without allocating.
    fn capacity<F: Future>(set: &Self::Set<F>) -> usize;
    /// Drops every future.
    fn clear<F: Future>(set: &mut Self::Set<F>);
    /// The futures, in no particular order.
    fn iter<'a, F: Future + 'a>(set: &'a Self::Set<F>) -> impl ExactSizeIterator<Item = &'a F>;
    /// The futures, pinned, in no particular order.
    fn iter_pin_mut<'a, F: Future + 'a>(
        set: &'a mut Self::Set<F>,
    ) -> impl ExactSizeIterator<Item = Pin<&'a mut F>>;
    /// The futures, mutably (`F: Unpin`), in no particular order.
    fn iter_mut<'a, F: Future + Unpin + 'a>(
        set: &'a mut Self::Set<F>,
    ) -> impl ExactSizeIterator<Item = &'a mut F>;
    /// Moves the futures out of the set (`F: Unpin`).
    fn into_iter<F: Future + Unpin>(set: Self::Set<F>) -> Self::IntoIter<F>;
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
            type IntoIter<F: ::core::future::Future + ::core::marker::Unpin> =
                <$set<F> as ::core::iter::IntoIterator>::IntoIter;

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

            fn capacity<F: ::core::future::Future>(set: &$set<F>) -> usize {
                set.capacity()
            }

            fn clear<F: ::core::future::Future>(set: &mut $set<F>) {
                set.clear()
            }

            fn iter<'a, F: ::core::future::Future + 'a>(
                set: &'a $set<F>,
            ) -> impl ::core::iter::ExactSizeIterator<Item = &'a F> {
                set.iter()
            }

            fn iter_pin_mut<'a, F: ::core::future::Future + 'a>(
                set: &'a mut $set<F>,
            ) -> impl ::core::iter::ExactSizeIterator<Item = ::core::pin::Pin<&'a mut F>> {
                set.iter_pin_mut()
            }

            fn iter_mut<'a, F: ::core::future::Future + ::core::marker::Unpin + 'a>(
                set: &'a mut $set<F>,
            ) -> impl ::core::iter::ExactSizeIterator<Item = &'a mut F> {
                set.iter_mut()
            }

            fn into_iter<F: ::core::future::Future + ::core::marker::Unpin>(
                set: $set<F>,
            ) -> <$set<F> as ::core::iter::IntoIterator>::IntoIter {
                ::core::iter::IntoIterator::into_iter(set)
            }
        }
    };
}

/// Declares a `#[test]` for each case of contract module `$module` that takes no arguments,
/// named as the case, calling it with the set type `$marker` (declared by
/// [`set_under_test!`](crate::set_under_test)): `contract_tests!(Bounded: rounds)`. The list
/// of cases of each module is here, once; a case added to a module goes into its list.
#[macro_export]
macro_rules! contract_tests {
    ($marker:ident: keys) => {
        $crate::contract_tests!(@cases $marker, keys, [
            remove_drops_the_future_at_once_and_its_output_never_comes,
            remove_before_the_first_poll_drops_the_future_unpolled,
            key_of_a_finished_future_is_refused_also_after_its_slot_is_reused,
            key_of_a_removed_future_is_refused_also_after_its_slot_is_reused,
            poll_next_keyed_gives_the_key_insert_returned,
            stale_waker_does_not_poll_the_slots_next_occupant,
            stale_waker_in_a_full_set_polls_nothing,
            a_key_of_another_set_is_refused_and_its_future_stays,
            a_key_of_a_dropped_set_is_refused_by_a_new_one,
        ]);
    };
    ($marker:ident: rounds) => {
        $crate::contract_tests!(@cases $marker, rounds, [
            three_self_waking_futures_give_an_output_by_the_second_call,
            a_future_woken_during_a_call_is_polled_in_it,
            a_future_polled_in_a_call_is_not_polled_again_in_it,
            clear_resets_is_terminated,
            a_woken_future_is_not_passed_over_by_futures_pushed_after_its_wake,
            a_future_woken_twice_before_its_poll_is_polled_once,
            a_future_left_queued_is_not_passed_over_by_one_woken_later,
        ]);
    };
    ($marker:ident: task_waker_panics) => {
        $crate::contract_tests!(@cases $marker, task_waker_panics, [
            a_panic_in_clone_while_registering_loses_no_wake,
            a_panic_in_drop_of_the_replaced_waker_loses_no_wake,
            a_panic_in_the_task_wakers_wake_reaches_the_waking_thread,
            a_panic_in_the_task_wakers_wake_by_ref_drops_no_future,
            a_task_waker_panic_in_a_self_waking_round_blames_no_future,
            a_panic_in_the_task_wakers_wake_at_a_yield_leaves_later_wakes_reaching_the_task,
        ]);
    };
    ($marker:ident: into_iter) => {
        $crate::contract_tests!(@cases $marker, into_iter, [
            into_iter_is_exact_size_fused_send_and_sync,
            into_iter_runs_while_another_thread_wakes_the_futures,
            iter_mut_cancel,
            iter_mut_len,
            into_iter_cancel,
            into_iter_len,
            into_iter_partial,
        ]);
    };
    ($marker:ident: basics) => {
        $crate::contract_tests!(@cases $marker, basics, [
            push_after_termination_clears_is_terminated,
            set_is_a_fused_stream_of_outputs,
            futures_never_move_after_push,
        ]);
    };
    ($marker:ident: fairness) => {
        $crate::contract_tests!(@cases $marker, fairness, [
            one_poll_polls_each_future_at_most_once_and_yields_when_all_wake_themselves,
            self_waking_futures_are_each_polled_once_every_call,
            one_poll_starts_every_pushed_future,
            a_woken_future_is_polled_at_most_once_per_call,
            self_waking_futures_do_not_starve_the_others,
            self_waking_futures_all_finish,
            futures_waking_each_other_are_polled_at_most_once_per_call,
        ]);
    };
    (@cases $marker:ident, $module:ident, [$($(#[$attr:meta])* $case:ident),* $(,)?]) => {
        $(
            $(#[$attr])*
            #[test]
            fn $case() {
                $crate::contract::$module::$case::<$marker>();
            }
        )*
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
