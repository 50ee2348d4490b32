//! Futures may borrow locals declared after the set: a set with no `Drop` impl generic over its
//! futures does not make the borrow checker keep those locals alive as long as the set. Each
//! case is mostly a compile check; a `Drop` impl generic over `F` fails it with "`local` does
//! not live long enough".
//!
//! The check holds only of a set type the borrow checker can see: behind a [`SetUnderTest`]
//! (an associated type) it must assume a `Drop` that uses the futures, so these cases cannot
//! be generic functions. [`borrowing_tests!`](crate::borrowing_tests) writes them out for the
//! set type a test file names.
//!
//! [`SetUnderTest`]: super::SetUnderTest

/// Declares the borrowing cases (see [`contract::borrowing`](crate::contract::borrowing)) as
/// `#[test]`s of the test file, over the sets made by `$new` (a function from the number of
/// futures a case puts in the set to an empty set), `$n` futures in the cases that run several:
/// `borrowing_tests!(new: FuturesUnorderedBounded::new, futures: 3)`.
#[macro_export]
macro_rules! borrowing_tests {
    (new: $new:expr, futures: $n:expr) => {
        #[test]
        fn a_future_borrowing_a_later_local_runs() {
            let mut set = ($new)(2);
            let local = 5;
            set.push(async { local * 2 });
            assert_eq!($crate::stream::drain(&mut set), [10]);
        }

        #[test]
        fn futures_borrowing_a_later_local_run_to_completion() {
            let n: usize = $n;
            let mut set = ($new)(n);
            let local = ::std::string::String::from("pinfold");
            // Async blocks, not an `async fn`: the borrow checker cannot see into the opaque
            // future of an `async fn`, so it would make `local` outlive even a `Vec` of them.
            let text = local.as_str();
            let scaled = |factor: usize| async move { text.len() * factor };
            for factor in 1..=n {
                set.insert(scaled(factor));
            }
            let mut outputs: ::std::vec::Vec<usize> = $crate::stream::drain(&mut set);
            outputs.sort_unstable();
            assert_eq!(
                outputs,
                (1..=n)
                    .map(|factor| 7 * factor)
                    .collect::<::std::vec::Vec<_>>()
            );
        }

        #[test]
        fn unfinished_futures_borrowing_a_later_local_drop_with_the_set() {
            let mut set = ($new)(2);
            let local = ::std::string::String::from("pinfold");
            set.push(async {
                ::std::future::pending::<()>().await;
                local.len()
            });
            assert!($crate::stream::poll_once(&mut set).is_pending());
            // `local` is dropped first, then the set and the future that borrows it.
        }

        /// A future that keeps a `&mut` into itself while it waits (`read(&mut buf).await`)
        /// is left alone by the set's bookkeeping between its polls (Miri checks the borrow
        /// survives).
        #[test]
        fn a_future_borrowing_itself_while_it_waits_finishes() {
            use $crate::future::{Gate, borrows_itself};
            let count: usize = $n;
            let gates: ::std::vec::Vec<Gate> = (0..count).map(|_| Gate::new()).collect();
            let mut set = ($new)(count);
            for (n, gate) in gates.iter().enumerate() {
                set.push(borrows_itself(gate.clone(), n as u8));
            }
            assert!($crate::stream::poll_once(&mut set).is_pending());
            let mut outputs = ::std::vec::Vec::new();
            for gate in gates.iter().rev() {
                gate.open();
                outputs.extend($crate::stream::settle(&mut set));
            }
            assert_eq!(
                outputs,
                (0..count as u8).rev().collect::<::std::vec::Vec<_>>()
            );
        }
    };
}
