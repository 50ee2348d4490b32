//! Commands run side by side in lanes (one per core, for tools that keep one core busy each:
//! Miri, valgrind, loom's longest models), each command's output kept in a log and shown once
//! every lane has ended, so the outputs do not interleave.

use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::invocation::Invocation;
use crate::outcome::{Failure, Seconds};

/// One command of a lane, and the log its output goes to.
pub(crate) struct Job {
    pub(crate) name: String,
    pub(crate) invocation: Invocation,
    pub(crate) log: PathBuf,
}

impl Job {
    /// The job `name`, its output logged in `dir/name.log`.
    pub(crate) fn logged_in(dir: &Path, name: &str, invocation: Invocation) -> Self {
        Job {
            name: name.to_string(),
            invocation,
            log: dir.join(format!("{name}.log")),
        }
    }
}

/// A job that ran (those after a failed one in its lane do not start).
pub(crate) struct Ended {
    name: String,
    log: PathBuf,
    took: Seconds,
    result: Result<(), Failure>,
}

/// Runs `lanes` ([`run`]) and reports each job that ran ([`report`]) and how long the lanes
/// took, as `tool: ...` lines; returns the jobs that ran and the failures, if any.
pub(crate) fn run_and_report(
    tool: &str,
    lanes: Vec<Vec<Job>>,
) -> (Vec<Ended>, Result<(), Failure>) {
    let started = Instant::now();
    let ended = run(lanes);
    let result = report(tool, &ended);
    println!("{tool}: every lane ended in {}", Seconds(started.elapsed()));
    (ended, result)
}

/// Runs each lane's jobs one after another, the lanes side by side with two cores or more (one
/// after another with one); a lane stops at its first failing job. Returns the jobs that ran, in
/// lane order.
fn run(lanes: Vec<Vec<Job>>) -> Vec<Ended> {
    let side_by_side = std::thread::available_parallelism().is_ok_and(|cores| cores.get() >= 2);
    if !side_by_side {
        return run_lane(lanes.into_iter().flatten().collect());
    }
    std::thread::scope(|scope| {
        let handles: Vec<_> = lanes
            .into_iter()
            .map(|lane| scope.spawn(move || run_lane(lane)))
            .collect();
        handles
            .into_iter()
            .flat_map(|handle| handle.join().expect("a lane's thread panicked"))
            .collect()
    })
}

impl Ended {
    /// The log the job's output went to.
    pub(crate) fn log(&self) -> &Path {
        &self.log
    }
}

fn run_lane(jobs: Vec<Job>) -> Vec<Ended> {
    let mut ended = Vec::new();
    for job in jobs {
        let started = Instant::now();
        let result = job.invocation.run_logged(&job.log);
        let failed = result.is_err();
        ended.push(Ended {
            name: job.name,
            log: job.log,
            took: Seconds(started.elapsed()),
            result,
        });
        if failed {
            break;
        }
    }
    ended
}

/// Prints each ended job's log and how it ended, as `tool: ...` lines; the failures, if any.
fn report(tool: &str, ended: &[Ended]) -> Result<(), Failure> {
    let mut failures = Vec::new();
    for job in ended {
        println!("{tool}: {}", job.name);
        match std::fs::read_to_string(&job.log) {
            Ok(text) => print!("{text}"),
            Err(error) => println!("{tool}: {}: {error}", job.log.display()),
        }
        match &job.result {
            Ok(()) => println!("{tool}: {} passed in {}", job.name, job.took),
            Err(failure) => {
                println!("{tool}: {} FAILED after {}", job.name, job.took);
                failures.push(failure.clone());
            }
        }
    }
    if failures.is_empty() {
        Ok(())
    } else {
        Err(failures.join("\n"))
    }
}
