//! Under tokio, a large set of tokio futures costs polls linear in its size: once the task's
//! coop budget is spent, tokio's futures return `Pending` and defer their wake, and a round
//! stops after `MAX_VAIN_REPOLLS` such polls instead of polling every woken future in vain.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use futures_util::StreamExt;
use pinfold_arena::MAX_VAIN_REPOLLS;
use pinfold_testkit::rng::XorShift;
use pinfold_unordered::FuturesUnordered;

/// `n` tokio sleeps of random length, each counting its polls in `polls`, drained on a
/// paused current-thread runtime; gives the total of their polls.
fn polls_to_drain(n: usize) -> usize {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    let polls = Arc::new(AtomicUsize::new(0));
    let mut rng = XorShift::new(0x5EED);
    let mut set = FuturesUnordered::new();
    let _runtime = runtime.enter();
    for id in 0..n {
        let sleep = tokio::time::sleep(Duration::from_millis(rng.below(8) as u64));
        let polls = polls.clone();
        let mut sleep = Box::pin(sleep);
        set.push(std::future::poll_fn(move |cx| {
            polls.fetch_add(1, Ordering::Relaxed);
            sleep.as_mut().poll(cx).map(|()| id)
        }));
    }
    let done = runtime.block_on(set.count());
    assert_eq!(done, n);
    polls.load(Ordering::Relaxed)
}

#[test]
#[cfg_attr(miri, ignore)] // tokio's timer wheel under Miri is slow; the bound is not Miri's concern
fn sleeps_are_polled_a_bounded_number_of_times_each() {
    let n = 20_000;
    let polls = polls_to_drain(n);
    // Each sleep: its first poll (which may find the coop budget spent: a vain poll), polls in
    // vain until the budget lets it register, and the poll that finds it elapsed. Every task
    // poll spends at most `MAX_VAIN_REPOLLS` (32) vain polls beside the 128 units of its
    // budget, so about 3 polls a sleep (60,808 measured). Without the cap, every woken sleep
    // is polled in vain on every task poll: 377,253 polls, 19 a sleep.
    assert_eq!(MAX_VAIN_REPOLLS, 32, "the bound below is for this cap");
    let bound = 4 * n;
    assert!(
        polls <= bound,
        "{polls} polls for {n} sleeps (bound {bound})"
    );
}
