//! The suite's criterion configuration, and [`Group`]: a criterion group that counts each
//! implementation's allocations before timing it.

use std::time::Duration;

use criterion::measurement::{Measurement, WallTime};
use criterion::{Bencher, BenchmarkGroup, Criterion, SamplingMode};

use crate::alloc::{Allocs, measure_warm};
use crate::results::{criterion_dir, record_allocs};

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
pub fn criterion<M: Measurement>(measurement: M) -> Criterion<M> {
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
pub struct Group<'a, M: Measurement = WallTime> {
    name: String,
    inner: BenchmarkGroup<'a, M>,
}

impl<M: Measurement> std::fmt::Debug for Group<'_, M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Group")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl<'a, M: Measurement> Group<'a, M> {
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
            inner,
        }
    }

    /// The group's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Counts one run of `run` (after an uncounted one, see
    /// [`measure_warm`](crate::measure_warm)), then times it with `Bencher::iter`: everything `run` does is
    /// timed, so it must not build a runtime.
    pub fn bench<R>(&mut self, id: &str, mut run: impl FnMut() -> R) {
        let mut counted = false;
        let name = self.name.clone();
        self.inner.bench_function(id, |b| {
            if !counted {
                counted = true;
                let (allocs, _) = measure_warm(&mut run);
                record_allocs(&name, id, &allocs, None);
            }
            b.iter(&mut run);
        });
    }

    /// The general form: `count` runs the workload once, untimed, and gives what it counted
    /// (and, for a workload that keeps its set, the bytes still held at the end); `routine`
    /// then does the timing with whichever `Bencher` method fits.
    pub fn bench_with(
        &mut self,
        id: &str,
        count: impl FnOnce() -> (Allocs, Option<u64>),
        mut routine: impl FnMut(&mut Bencher<'_, M>),
    ) {
        let mut count = Some(count);
        let name = self.name.clone();
        self.inner.bench_function(id, |b| {
            if let Some(count) = count.take() {
                let (allocs, retained) = count();
                record_allocs(&name, id, &allocs, retained);
            }
            routine(b);
        });
    }

    /// Ends the group.
    pub fn finish(self) {
        self.inner.finish();
    }
}
