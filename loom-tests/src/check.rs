//! Running a model, and measuring it.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

/// The preemption bound when `LOOM_MAX_PREEMPTIONS` is not set (STYLE.md: 2 by default).
const DEFAULT_PREEMPTIONS: usize = 2;

/// Runs `model` under loom: every interleaving of its threads within the preemption bound, with
/// loom's leak checks after each. Then prints, for the report, how many iterations loom ran and
/// how long they took (shown with `--nocapture`).
///
/// The bounds come from the environment as with `loom::model` (`LOOM_MAX_PREEMPTIONS`,
/// `LOOM_MAX_BRANCHES`, ...), except that a missing `LOOM_MAX_PREEMPTIONS` means 2, not
/// unbounded.
pub fn check<F>(name: &str, model: F)
where
    F: Fn() + Sync + Send + 'static,
{
    check_with_branches(name, 0, model);
}

/// [`check`], for a model whose setup takes many steps: it may take up to `branches` of them
/// (loom's `max_branches`, 1,000 by default) unless `LOOM_MAX_BRANCHES` allows more.
pub fn check_with_branches<F>(name: &str, branches: usize, model: F)
where
    F: Fn() + Sync + Send + 'static,
{
    let mut builder = loom::model::Builder::new();
    builder.max_branches = builder.max_branches.max(branches);
    let bound = *builder.preemption_bound.get_or_insert(DEFAULT_PREEMPTIONS);
    // Loom runs the closure once per iteration; a plain std counter sees every run (it is not
    // part of the model).
    let iterations = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&iterations);
    let start = Instant::now();
    builder.check(move || {
        counter.fetch_add(1, Ordering::Relaxed);
        model();
    });
    eprintln!(
        "loom model {name}: {} iterations in {:.2?} (preemption bound {bound})",
        iterations.load(Ordering::Relaxed),
        start.elapsed(),
    );
}
