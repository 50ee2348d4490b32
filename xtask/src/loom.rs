//! `cargo xtask loom`: the loom models of the wake protocol.

use crate::invocation::Invocation;
use crate::lanes::{self, Job};
use crate::outcome::{Failure, Outcome};
use crate::test_binaries::test_binaries;
use crate::usage::{self, CommandUsage};
use crate::workspace::Workspace;

pub(crate) const USAGE: CommandUsage = CommandUsage {
    synopsis: "loom [--preemptions N] [FILTER]",
    about: "run the loom models (the test binaries of cargo test\n\
            --release -p loom-tests, in two lanes side by side with two\n\
            cores) with LOOM_MAX_PREEMPTIONS=N (default 2) in target/loom",
};

/// The model that takes longest (about two minutes on a Zen 4 at the default bound, as long as
/// all the others together): it runs in a lane of its own.
const LONGEST_MODEL: &str = "pool_writer_reserve_races_reopen";

/// Loom's preemption bound when `--preemptions` is not given (see STYLE.md, Tests).
pub(crate) const DEFAULT_PREEMPTIONS: u32 = 2;

pub(crate) struct LoomOptions {
    pub(crate) preemptions: u32,
    pub(crate) filter: Option<String>,
}

impl LoomOptions {
    pub(crate) fn parse(args: &[String]) -> Result<Self, Failure> {
        let mut options = LoomOptions {
            preemptions: DEFAULT_PREEMPTIONS,
            filter: None,
        };
        let mut args = args.iter();
        while let Some(arg) = args.next() {
            let value = if arg == "--preemptions" {
                Some(
                    args.next()
                        .ok_or("`--preemptions` needs a number, e.g. `--preemptions 3`")?
                        .as_str(),
                )
            } else {
                arg.strip_prefix("--preemptions=")
            };
            if let Some(value) = value {
                options.preemptions = value
                    .parse()
                    .map_err(|_| format!("`--preemptions` needs a number, got `{value}`"))?;
            } else if arg.starts_with('-') {
                return Err(format!("loom: unknown option `{arg}`\n\n{}", usage::text()));
            } else if let Some(previous) = &options.filter {
                return Err(format!(
                    "loom: takes one FILTER, got `{previous}` and `{arg}`"
                ));
            } else {
                options.filter = Some(arg.clone());
            }
        }
        Ok(options)
    }
}

pub(crate) fn loom(workspace: &Workspace, options: &LoomOptions) -> Result<Outcome, Failure> {
    if !workspace.has("loom-tests/Cargo.toml") {
        return Ok(Outcome::Skipped(
            "loom: skipped, no loom-tests crate yet".to_string(),
        ));
    }
    let rustflags = "--cfg pinfold_loom -C debug-assertions";
    let preemptions = options.preemptions.to_string();
    let binaries = test_binaries(
        workspace
            .cargo(&[
                "test",
                "--release",
                "-p",
                "loom-tests",
                "--no-run",
                "--message-format=json-render-diagnostics",
            ])
            .env("RUSTFLAGS", rustflags)
            .env("CARGO_TARGET_DIR", workspace.target_dir("loom")),
    )?;
    let package_dir = workspace.root.join("loom-tests");
    let logs = workspace.target_dir("loom").join("logs");
    std::fs::create_dir_all(&logs).map_err(|error| format!("{}: {error}", logs.display()))?;
    // Each model runs on one thread: the longest in a lane of its own, the others in the second.
    let mut lanes: Vec<Vec<Job>> = vec![Vec::new(), Vec::new()];
    for (name, binary) in &binaries {
        let mut args = Vec::new();
        if let Some(filter) = &options.filter {
            args.push(filter.as_str());
        }
        let binary = binary.to_string_lossy();
        // The tests run in the package directory, as under `cargo test`.
        let invocation = Invocation::new(&package_dir, binary.as_ref(), &args)
            .env("LOOM_MAX_PREEMPTIONS", &preemptions);
        lanes[usize::from(name != LONGEST_MODEL)].push(Job::logged_in(&logs, name, invocation));
    }
    let (ended, result) = lanes::run_and_report("loom", lanes);
    result?;
    // A filter that no model's name contains runs none: that is no pass.
    if let Some(filter) = &options.filter {
        let logs = ended
            .iter()
            .map(|job| {
                std::fs::read_to_string(job.log())
                    .map_err(|error| format!("{}: {error}", job.log().display()))
            })
            .collect::<Result<Vec<_>, Failure>>()?;
        if tests_run(logs.iter().map(String::as_str)) == 0 {
            return Err(format!(
                "loom: no model's name contains `{filter}`: none ran"
            ));
        }
    }
    Ok(Outcome::Passed)
}

/// How many tests the test binaries whose outputs are `logs` ran: the sum of libtest's
/// `running N tests` lines.
fn tests_run<'a>(logs: impl IntoIterator<Item = &'a str>) -> usize {
    logs.into_iter()
        .flat_map(str::lines)
        .filter_map(|line| {
            let (count, noun) = line.strip_prefix("running ")?.split_once(' ')?;
            matches!(noun, "test" | "tests")
                .then(|| count.parse::<usize>().ok())
                .flatten()
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tests_run_counts_what_libtest_says_it_runs() {
        let ran_two = "$ /t/deps/a-1\n\nrunning 2 tests\ntest x ... ok\ntest y ... ok\n\n\
                       test result: ok. 2 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out\n";
        let ran_one = "\nrunning 1 test\ntest z ... ok\n";
        let filtered = "\nrunning 0 tests\n\ntest result: ok. 0 passed; 0 failed; 0 ignored; \
                        0 measured; 1 filtered out\n";
        assert_eq!(tests_run([ran_two, ran_one, filtered]), 3);
        assert_eq!(
            tests_run([filtered, filtered]),
            0,
            "a filter that matches no model"
        );
        assert_eq!(tests_run([]), 0);
    }
}
