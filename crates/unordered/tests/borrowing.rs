//! Futures may borrow locals declared after the set: the set has no `Drop` impl generic over
//! its futures, so the borrow checker does not make the locals outlive the set. Each test is
//! mostly a compile check; a `Drop` impl generic over `F` fails it with "`local` does not live
//! long enough".

use futures_util::StreamExt;
use pinfold_testkit::future::block_on;
use pinfold_testkit::stream::{drain, poll_once};
use pinfold_unordered::FuturesUnordered;

#[test]
fn a_future_borrowing_a_later_local_runs() {
    let mut set = FuturesUnordered::new();
    let local = 5;
    set.push(async { local * 2 });
    assert_eq!(drain(&mut set), [10]);
}

#[test]
fn futures_borrowing_a_later_local_run_to_completion() {
    // More than the first group holds, so that the set grows while borrowing.
    let n = 40;
    let mut set = FuturesUnordered::new();
    let local = String::from("pinfold");
    // Async blocks, not an `async fn`: the borrow checker cannot see into the opaque future of
    // an `async fn`, so it would make `local` outlive even a `Vec` of them.
    let text = local.as_str();
    let scaled = |factor: usize| async move { text.len() * factor };
    for factor in 1..=n {
        set.insert(scaled(factor));
    }
    let mut outputs: Vec<usize> = block_on(set.by_ref().collect());
    outputs.sort_unstable();
    assert_eq!(
        outputs,
        (1..=n).map(|factor| 7 * factor).collect::<Vec<_>>()
    );
}

#[test]
fn unfinished_futures_borrowing_a_later_local_drop_with_the_set() {
    let mut set = FuturesUnordered::new();
    let local = String::from("pinfold");
    set.push(async {
        std::future::pending::<()>().await;
        local.len()
    });
    assert!(poll_once(&mut set).is_pending());
    // `local` is dropped first, then the set and the future that borrows it.
}

/// A future that keeps a `&mut` into itself while it waits (`read(&mut buf).await`) is left
/// alone by the set's bookkeeping between its polls, across groups (Miri checks the borrow
/// survives).
#[test]
fn a_future_borrowing_itself_while_it_waits_finishes() {
    use pinfold_testkit::future::{Gate, borrows_itself};
    let count = 40; // two groups
    let gates: Vec<Gate> = (0..count).map(|_| Gate::new()).collect();
    let mut set = FuturesUnordered::new();
    for (n, gate) in gates.iter().enumerate() {
        set.push(borrows_itself(gate.clone(), n as u8));
    }
    assert!(pinfold_testkit::stream::poll_once(&mut set).is_pending());
    let mut outputs = Vec::new();
    for gate in gates.iter().rev() {
        gate.open();
        outputs.extend(pinfold_testkit::stream::settle(&mut set));
    }
    assert_eq!(outputs, (0..count as u8).rev().collect::<Vec<_>>());
}
