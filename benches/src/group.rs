//! The suite's criterion configuration, and [`Group`]: a criterion group that counts each
//! implementation's allocations before timing it.

use std::time::Duration;

use std::hint::black_box;

use criterion::measurement::{Measurement, WallTime};
use criterion::{Bencher, BenchmarkGroup, Criterion, SamplingMode};

use crate::alloc::{Allocs, measure_warm};
use crate::instructions::{Regions, count_if_selected, selected};
use crate::results::{criterion_dir, record_allocs};
use crate::xorshift::Xorshift;

/// Whether `PINFOLD_BENCH_QUICK=1` (what `cargo xtask bench` sets unless given `--full`): every
/// group then takes 10 samples (criterion's minimum), with at most 0.1 s of warm-up and 0.4 s
/// of measurement per implementation, so the suite runs in about two and a half minutes on two
/// cores (the build aside). The eight benchmarks whose 10 iterations take longer than that (the
/// 65,536 real-clock sleeps, futures-util's ordered sets of 100,000 sleeps) still run their 10
/// iterations: a quarter of the time.
pub fn quick() -> bool {
    std::env::var_os("PINFOLD_BENCH_QUICK").is_some_and(|v| v == "1")
}

/// The suite's criterion: measuring with `measurement`, writing to
/// [`criterion_dir`](crate::criterion_dir), without plots (the table is the report), and with
/// fewer bootstrap resamples than criterion's default (the median is what the table shows;
/// its point estimate does not depend on them).
///
/// A timed run that `cargo xtask bench` did not start removes the stamp of an earlier one here
/// ([`forget_outdated_stamp`](crate::forget_outdated_stamp)).
pub fn criterion<M: Measurement>(measurement: M) -> Criterion<M> {
    crate::forget_outdated_stamp();
    Criterion::default()
        .with_measurement(measurement)
        .output_directory(&criterion_dir())
        .without_plots()
        .nresamples(if quick() { 5_000 } else { 20_000 })
}

/// How long a group samples each implementation. `PINFOLD_BENCH_QUICK=1` caps it (see
/// [`quick`]).
#[derive(Debug, Clone, Copy)]
pub struct Tuning {
    /// Samples per implementation (criterion's minimum is 10).
    pub sample_size: usize,
    /// Warm-up time per implementation.
    pub warm_up: Duration,
    /// Target measurement time per implementation (criterion exceeds it if `sample_size`
    /// iterations take longer).
    pub measurement: Duration,
    /// Flat sampling (every sample the same iteration count), for iterations of milliseconds
    /// or more, where criterion's linear sampling would run far too many.
    pub flat: bool,
}

impl Tuning {
    /// Microsecond-scale iterations.
    pub const FAST: Tuning = Tuning {
        sample_size: 40,
        warm_up: Duration::from_millis(1000),
        measurement: Duration::from_secs(3),
        flat: false,
    };

    /// Iterations of a few milliseconds.
    pub const MEDIUM: Tuning = Tuning {
        sample_size: 20,
        warm_up: Duration::from_millis(1000),
        measurement: Duration::from_secs(4),
        flat: true,
    };

    /// Iterations of a hundred milliseconds or more.
    pub const SLOW: Tuning = Tuning {
        sample_size: 10,
        warm_up: Duration::from_millis(500),
        measurement: Duration::from_secs(4),
        flat: true,
    };

    fn effective(self) -> Tuning {
        if quick() {
            Tuning {
                sample_size: 10,
                warm_up: self.warm_up.min(Duration::from_millis(100)),
                measurement: self.measurement.min(Duration::from_millis(400)),
                flat: self.flat,
            }
        } else {
            self
        }
    }
}

/// A criterion group whose every implementation is counted, once and untimed, before it is
/// timed: the allocations go to `allocs.tsv` under the group's name and the implementation's
/// id. The count runs only for benchmarks criterion actually runs (it honours filters), and
/// also in test mode (`cargo test --benches`), so it cannot rot.
///
/// The implementations are timed when the group [finishes](Group::finish), in an order drawn
/// afresh for each run (from `PINFOLD_BENCH_SEED` if set, else from the clock): no
/// implementation always runs first after the rows before it, on their heap and caches.
///
/// In the instruction-counting mode (`PINFOLD_INSTRUCTIONS`, see
/// [`count_if_selected`](crate::count_if_selected)) a group times nothing: the one benchmark
/// selected is counted and the process ends.
pub struct Group<'a, 'r, M: Measurement = WallTime> {
    name: String,
    /// What a run of the group's workload handles (its row's
    /// [`items`](crate::Workload::items)), for the counting mode.
    items: u64,
    inner: BenchmarkGroup<'a, M>,
    /// The implementations to time at [`finish`](Group::finish): id and routine.
    pending: Vec<(String, Routine<'r, M>)>,
}

type Routine<'r, M> = Box<dyn FnMut(&mut Bencher<'_, M>) + 'r>;
type Count<'r> = Box<dyn FnOnce() -> (Allocs, Option<u64>) + 'r>;

impl<M: Measurement> std::fmt::Debug for Group<'_, '_, M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Group")
            .field("name", &self.name)
            .field("pending", &self.pending.len())
            .finish_non_exhaustive()
    }
}

impl<'a, 'r, M: Measurement + 'static> Group<'a, 'r, M> {
    /// A group named `name` (the workload), sampled as `tuning` says; pins `malloc`'s
    /// thresholds first ([`pin_malloc_thresholds`](crate::pin_malloc_thresholds)).
    pub fn new(criterion: &'a mut Criterion<M>, name: &str, tuning: Tuning) -> Self {
        crate::pin_malloc_thresholds();
        let tuning = tuning.effective();
        let mut inner = criterion.benchmark_group(name);
        inner
            .sample_size(tuning.sample_size)
            .warm_up_time(tuning.warm_up)
            .measurement_time(tuning.measurement);
        if tuning.flat {
            inner.sampling_mode(SamplingMode::Flat);
        }
        Self {
            name: name.to_string(),
            items: crate::workload(name).map_or(1, |workload| workload.items),
            inner,
            pending: Vec::new(),
        }
    }

    /// The group's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Counts one run of `run` (after an uncounted one, see
    /// [`measure_warm`](crate::measure_warm)), then times it with `Bencher::iter`: everything
    /// `run` does is timed, so it must not build a runtime.
    pub fn bench<R>(&mut self, id: &str, run: impl FnMut() -> R + 'r) {
        self.iterate(id, None, run);
    }

    /// As [`bench`](Self::bench), with the allocations `count` gives (from one untimed run
    /// it makes; and, for a workload that keeps its set, the bytes still held at the end) in
    /// place of a count of `run`.
    pub fn bench_with<R>(
        &mut self,
        id: &str,
        count: impl FnOnce() -> (Allocs, Option<u64>) + 'r,
        run: impl FnMut() -> R + 'r,
    ) {
        self.iterate(id, Some(Box::new(count)), run);
    }

    fn iterate<R>(&mut self, id: &str, count: Option<Count<'r>>, mut run: impl FnMut() -> R + 'r) {
        count_if_selected(&self.name, id, self.items, Regions::Whole, || {
            drop(black_box(run()));
        });
        if selected().is_some() {
            return;
        }
        let mut count = Some(count);
        let (name, owned_id) = (self.name.clone(), id.to_string());
        self.queue(id, move |b| {
            if let Some(count) = count.take() {
                let (allocs, retained) = match count {
                    Some(count) => count(),
                    None => (measure_warm(&mut run).0, None),
                };
                record_allocs(&name, &owned_id, &allocs, retained);
            }
            b.iter(&mut run);
        });
    }

    fn queue(&mut self, id: &str, routine: impl FnMut(&mut Bencher<'_, M>) + 'r) {
        self.pending.push((id.to_string(), Box::new(routine)));
    }

    /// Times the implementations, in an order drawn for this run, and ends the group.
    pub fn finish(mut self) {
        let mut pending = std::mem::take(&mut self.pending);
        shuffle(&mut pending, &mut run_order_rng());
        for (id, mut routine) in pending {
            self.inner.bench_function(id.as_str(), |b| routine(b));
        }
        self.inner.finish();
    }
}

impl<'r, M: Measurement<Value = Duration> + 'static> Group<'_, 'r, M> {
    /// A benchmark timed by rounds: `round` runs one and gives the time of its timed part
    /// (what it marks with [`timed`](crate::timed); its setup and checks are not timed).
    /// Counted once for its allocations first (after an uncounted round), as
    /// [`bench`](Self::bench).
    pub fn bench_rounds(&mut self, id: &str, mut round: impl FnMut() -> Duration + 'r) {
        count_if_selected(&self.name, id, self.items, Regions::Marked, || {
            round();
        });
        if selected().is_some() {
            return;
        }
        let mut counted = false;
        let (name, owned_id) = (self.name.clone(), id.to_string());
        self.queue(id, move |b| {
            if !counted {
                counted = true;
                let (allocs, _) = measure_warm(&mut round);
                record_allocs(&name, &owned_id, &allocs, None);
            }
            b.iter_custom(|iters| (0..iters).map(|_| round()).sum());
        });
    }
}

/// The generator of the run's order: seeded by `PINFOLD_BENCH_SEED` if set (to repeat a
/// run's order), else by the clock; one per process, advanced by every group.
fn run_order_rng() -> std::sync::MutexGuard<'static, Xorshift> {
    static RNG: std::sync::OnceLock<std::sync::Mutex<Xorshift>> = std::sync::OnceLock::new();
    RNG.get_or_init(|| {
        let seed = std::env::var("PINFOLD_BENCH_SEED")
            .ok()
            .and_then(|seed| seed.parse().ok())
            .unwrap_or_else(|| {
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(1, |since| since.as_nanos() as u64)
            });
        std::sync::Mutex::new(Xorshift::new(seed))
    })
    .lock()
    .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Fisher-Yates.
fn shuffle<T>(items: &mut [T], rng: &mut Xorshift) {
    for i in (1..items.len()).rev() {
        let j = rng.up_to(i as u64) as usize;
        items.swap(i, j);
    }
}
