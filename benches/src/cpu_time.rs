//! A criterion [`Measurement`] of the CPU time the whole process spent, on every thread.

use std::time::Duration;

use criterion::Throughput;
use criterion::measurement::{Measurement, ValueFormatter};

/// Measures the process's CPU time (`clock_gettime(CLOCK_PROCESS_CPUTIME_ID)`): user plus
/// system time of all its threads, and none of the time it spent asleep. Use it where wall
/// time is mostly waiting on a timer, to see what the waiting cost.
#[derive(Debug, Default, Clone, Copy)]
pub struct CpuTime;

/// The CPU time this process has used so far, on all its threads.
pub fn process_cpu_time() -> Duration {
    clock(libc::CLOCK_PROCESS_CPUTIME_ID)
}

/// The CPU time the calling thread has used so far.
pub fn thread_cpu_time() -> Duration {
    clock(libc::CLOCK_THREAD_CPUTIME_ID)
}

fn clock(id: libc::clockid_t) -> Duration {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `now` is a valid, writable timespec, and the process and thread CPU-time clocks
    // exist on every Linux and macOS kernel.
    let rc = unsafe { libc::clock_gettime(id, &mut now) };
    assert_eq!(rc, 0, "clock_gettime({id}) failed");
    Duration::new(now.tv_sec as u64, now.tv_nsec as u32)
}

impl Measurement for CpuTime {
    type Intermediate = Duration;
    type Value = Duration;

    fn start(&self) -> Duration {
        process_cpu_time()
    }

    fn end(&self, started: Duration) -> Duration {
        process_cpu_time().saturating_sub(started)
    }

    fn add(&self, a: &Duration, b: &Duration) -> Duration {
        *a + *b
    }

    fn zero(&self) -> Duration {
        Duration::ZERO
    }

    fn to_f64(&self, value: &Duration) -> f64 {
        value.as_nanos() as f64
    }

    fn formatter(&self) -> &dyn ValueFormatter {
        &CpuTimeFormatter
    }
}

/// Formats nanoseconds of CPU time as criterion formats wall time.
struct CpuTimeFormatter;

impl ValueFormatter for CpuTimeFormatter {
    fn scale_values(&self, typical_ns: f64, values: &mut [f64]) -> &'static str {
        let (factor, unit) = if typical_ns < 1e3 {
            (1.0, "ns")
        } else if typical_ns < 1e6 {
            (1e-3, "µs")
        } else if typical_ns < 1e9 {
            (1e-6, "ms")
        } else {
            (1e-9, "s")
        };
        for value in values {
            *value *= factor;
        }
        unit
    }

    fn scale_throughputs(
        &self,
        _typical_ns: f64,
        throughput: &Throughput,
        values: &mut [f64],
    ) -> &'static str {
        let per_iteration = match *throughput {
            Throughput::Bytes(n) | Throughput::BytesDecimal(n) | Throughput::Elements(n) => n,
            Throughput::Bits(n) => n,
            Throughput::ElementsAndBytes { elements, .. } => elements,
        } as f64;
        for value in values {
            *value = per_iteration * 1e9 / *value;
        }
        "/s (CPU)"
    }

    fn scale_for_machines(&self, _values: &mut [f64]) -> &'static str {
        "ns"
    }
}
