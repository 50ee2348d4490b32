//! The instruction-counting mode of the bench binaries, which `cargo xtask instructions` runs
//! under valgrind's callgrind.
//!
//! With `PINFOLD_INSTRUCTIONS=<group>/<id>` set, a bench binary skips criterion: the one
//! benchmark named runs once uncounted (as before timing: lazy initialisation is nobody's
//! cost), then [`PINFOLD_INSTRUCTIONS_RUNS`](RUNS_VARIABLE) times (1 unless set) with its
//! measured regions inside [`measured`], and the process exits after printing
//! `pinfold-instructions: runs=R items=N` on standard error. Every other benchmark of the
//! binary is skipped. Callgrind, started with `--collect-atstart=no` and
//! `--toggle-collect=pinfold_benches::instructions::measured`, then counts exactly the
//! instructions of the measured regions: xtask divides its total by `R × N`.
//!
//! The measured regions are the timed ones: the whole workload of a benchmark timed with
//! `Bencher::iter`, and what a custom round times with [`timed`] (the merge's drain after its
//! setup, a waker thread's fire loop, a crew thread's job). Callgrind toggles collection per
//! thread, so a region on every thread of a multi-thread round is counted, each on its own
//! thread; a region must never be entered from inside another one on the same thread (the
//! toggle would turn collection off).

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The variable that selects the benchmark to count: `group/id`.
pub const SELECT_VARIABLE: &str = "PINFOLD_INSTRUCTIONS";
/// The variable that sets how many counted runs follow the uncounted one.
pub const RUNS_VARIABLE: &str = "PINFOLD_INSTRUCTIONS_RUNS";
/// The prefix of the line the counting mode prints before it exits.
pub const REPORT_PREFIX: &str = "pinfold-instructions:";
/// The function callgrind toggles collection on, as valgrind names it.
pub const MEASURED_FUNCTION: &str = "pinfold_benches::instructions::measured";

/// Whether the counted runs are under way: [`timed`] regions go through [`measured`] only
/// then, so the uncounted run before them is not counted.
static COUNTING: AtomicBool = AtomicBool::new(false);

/// The benchmark this process counts, `group/id`, if it runs in the counting mode.
pub fn selected() -> Option<String> {
    std::env::var(SELECT_VARIABLE)
        .ok()
        .filter(|name| !name.is_empty())
}

fn runs() -> u64 {
    match std::env::var(RUNS_VARIABLE) {
        Ok(text) => text
            .parse()
            .ok()
            .filter(|&runs| runs > 0)
            .unwrap_or_else(|| panic!("{RUNS_VARIABLE}={text}: not a whole number above 0")),
        Err(_) => 1,
    }
}

/// The region callgrind counts: calls `region`. Kept out of line and not generic, so that
/// valgrind sees one function of this name.
#[inline(never)]
pub fn measured(region: &mut dyn FnMut()) {
    region();
}

/// Runs `region`, timing it; inside [`measured`] while the counting mode's counted runs are
/// under way. Every region a custom round times goes through here, on whichever thread runs
/// it.
pub fn timed<R>(region: impl FnOnce() -> R) -> (Duration, R) {
    let began = Instant::now();
    let out = if COUNTING.load(Ordering::Acquire) {
        let mut region = Some(region);
        let mut out = None;
        measured(&mut || out = region.take().map(|region| region()));
        out.expect("measured runs its region once")
    } else {
        region()
    };
    (began.elapsed(), out)
}

/// How a benchmark's counted runs mark what they count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Regions {
    /// The whole run is the region (a benchmark timed with `Bencher::iter`).
    Whole,
    /// The run marks its own regions with [`timed`] (a custom round).
    Marked,
}

/// Counts `run` if this process counts `group/id`, and then exits: once uncounted, then the
/// counted runs, then the report line. `items` is what the row divides by (items, polls or
/// operations of one run). Does nothing for any other benchmark.
pub fn count_if_selected(
    group: &str,
    id: &str,
    items: u64,
    regions: Regions,
    mut run: impl FnMut(),
) {
    let Some(selected) = selected() else {
        return;
    };
    if selected != format!("{group}/{id}") {
        return;
    }
    run();
    let runs = runs();
    COUNTING.store(true, Ordering::Release);
    for _ in 0..runs {
        match regions {
            Regions::Whole => measured(&mut run),
            Regions::Marked => run(),
        }
    }
    COUNTING.store(false, Ordering::Release);
    eprintln!("{REPORT_PREFIX} runs={runs} items={items}");
    std::process::exit(0);
}
