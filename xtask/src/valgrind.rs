//! `cargo xtask valgrind`: the reliability tests under valgrind memcheck.

use std::env;
use std::process::Command;

use crate::invocation::Invocation;
use crate::lanes::{self, Job};
use crate::outcome::{Failure, Outcome};
use crate::test_binaries::test_binaries;
use crate::usage::{self, CommandUsage};
use crate::workspace::Workspace;

pub(crate) const USAGE: CommandUsage = CommandUsage {
    synopsis: "valgrind [--deep]",
    about: "run the reliability tests (stress, faults, reentrance,\n\
            starvation, and a short differential run) under valgrind\n\
            memcheck with\n\
            --error-exitcode=1 --leak-check=full, in two lanes side by\n\
            side with two cores; sizes fit CI (about two minutes);\n\
            --deep runs ten times the wakes and\n\
            eight times the cases. A PINFOLD_* or PROPTEST_CASES\n\
            variable already set wins over both",
};

/// What `cargo xtask valgrind` prints when valgrind cannot be run: it must never read as a pass.
const VALGRIND_SKIPPED: &str =
    "valgrind: SKIPPED — valgrind is not installed (on Debian: apt-get install valgrind)";

/// Every time limit of the tests is multiplied by this under valgrind (it runs one thread at a
/// time, 10 to 50 times slower); a hang still fails, only later.
const VALGRIND_TIMEOUT_SCALE: &str = "50";

pub(crate) struct ValgrindOptions {
    pub(crate) deep: bool,
}

impl ValgrindOptions {
    pub(crate) fn parse(args: &[String]) -> Result<Self, Failure> {
        match args {
            [] => Ok(Self { deep: false }),
            [flag] if flag == "--deep" => Ok(Self { deep: true }),
            [other, ..] => Err(format!(
                "valgrind: unknown argument `{other}`\n\n{}",
                usage::text()
            )),
        }
    }
}

/// The reliability test binaries run under valgrind, and the environment of each: variables
/// that the caller has not set already. Sizes are chosen from measurements (see
/// reliability/README.md). Valgrind runs one thread at a time: the first (the longest, about
/// as long as the others together) runs in a lane of its own, the others one after another in
/// a second lane beside it. (A ping-pong wake, which waits for the poll it causes, costs about
/// 30 times a flood wake.)
fn valgrind_runs(deep: bool) -> [(&'static str, Vec<(&'static str, &'static str)>); 5] {
    let (wakes, ping_pong_wakes, sets, fault_cases, differential_cases) = if deep {
        ("10000000", "200000", "100000", "512", "256")
    } else {
        ("1000000", "20000", "2000", "64", "32")
    };
    [
        (
            "stress",
            vec![
                ("PINFOLD_STRESS_WAKES", wakes),
                ("PINFOLD_PING_PONG_WAKES", ping_pong_wakes),
                ("PINFOLD_CHURN_SETS", sets),
            ],
        ),
        ("faults", vec![("PROPTEST_CASES", fault_cases)]),
        ("reentrance", Vec::new()),
        ("starvation", Vec::new()),
        ("differential", vec![("PROPTEST_CASES", differential_cases)]),
    ]
}

/// Whether `valgrind` runs here.
pub(crate) fn available() -> bool {
    Command::new("valgrind")
        .arg("--version")
        .output()
        .is_ok_and(|output| output.status.success())
}

pub(crate) fn valgrind(
    workspace: &Workspace,
    options: &ValgrindOptions,
) -> Result<Outcome, Failure> {
    if !workspace.has("reliability/Cargo.toml") {
        return Ok(Outcome::Skipped(
            "valgrind: SKIPPED — no reliability crate yet".to_string(),
        ));
    }
    if !available() {
        return Ok(Outcome::Skipped(VALGRIND_SKIPPED.to_string()));
    }
    println!("valgrind: building the reliability tests");
    let binaries = test_binaries(workspace.cargo(&[
        "test",
        "-p",
        "pinfold-reliability",
        "--no-run",
        "--message-format=json-render-diagnostics",
    ]))?;
    let package_dir = workspace.root.join("reliability");
    let suppressions = package_dir.join("valgrind.supp");
    let suppressions = format!("--suppressions={}", suppressions.display());
    let logs = workspace.target_dir("valgrind");
    std::fs::create_dir_all(&logs).map_err(|error| format!("{}: {error}", logs.display()))?;
    // Valgrind runs one thread at a time: the stress run in one lane, the others in the second.
    let mut lanes: Vec<Vec<Job>> = vec![Vec::new(), Vec::new()];
    for (n, (test, variables)) in valgrind_runs(options.deep).into_iter().enumerate() {
        let Some((_, binary)) = binaries.iter().find(|(name, _)| name == test) else {
            return Err(format!(
                "valgrind: `cargo test -p pinfold-reliability --no-run` built no `{test}` test"
            ));
        };
        let binary = binary.to_string_lossy();
        let args = [
            "--error-exitcode=1",
            "--leak-check=full",
            suppressions.as_str(),
            binary.as_ref(),
            "--test-threads=1",
        ];
        // The tests run in the package directory, as under `cargo test`.
        let mut invocation = Invocation::new(&package_dir, "valgrind", &args);
        for (key, value) in variables
            .into_iter()
            .chain([("PINFOLD_TIMEOUT_SCALE", VALGRIND_TIMEOUT_SCALE)])
        {
            if env::var_os(key).is_none() {
                invocation = invocation.env(key, value);
            }
        }
        lanes[usize::from(n > 0)].push(Job::logged_in(&logs, test, invocation));
    }
    let (_, result) = lanes::run_and_report("valgrind", lanes);
    result?;
    Ok(Outcome::Passed)
}
