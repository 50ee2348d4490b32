//! `cargo xtask mutants`: mutation testing of the crates with unsafe code, on cargo-mutants.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use std::time::Instant;

use crate::invocation::Invocation;
use crate::outcome::{Failure, Outcome, Seconds};
use crate::usage::{self, CommandUsage};
use crate::workspace::Workspace;

pub(crate) const USAGE: CommandUsage = CommandUsage {
    synopsis: "mutants [OPTIONS] [FILES]",
    about: "mutation testing of pinfold-arena and pinfold-pool with\n\
            cargo-mutants (installed on first use): each mutant of the\n\
            crates' sources (or of FILES) is built and tested with the\n\
            crate's own tests and the reliability tests that drive it,\n\
            each within a time limit; then the outcome\n\
            of each file (caught, missed, timeout, unviable). The\n\
            missed are in target/mutants/<crate>/mutants.out/missed.txt.\n\
            --in-diff REV: only the mutants in lines changed since REV\n\
            --jobs N: N mutants at a time, each in its own copy (1)\n\
            --timeout S: the limit on one mutant's tests (90 s)\n\
            --iterate: skip the mutants the last run caught",
};

/// Sources of a crate mutated together, and the tests that run against each of their mutants.
struct Mutated {
    /// Its directory under `crates/`.
    dir: &'static str,
    /// Where its outcomes go, under `target/mutants/`.
    output: &'static str,
    package: &'static str,
    /// Which of the crate's sources.
    sources: Sources,
    /// The packages whose tests run: the crate's own, those built on it (the join crate for the
    /// arena's join arena, which only the join uses; the sets, merges and maps for its keyed
    /// set), and the reliability suites that drive it.
    test_packages: &'static [&'static str],
    /// Which of their tests.
    tests: Tests,
    /// The features the tests are built with: those that compile code of the crate, so that
    /// its mutants are built and tested.
    features: &'static str,
}

#[derive(Clone, Copy)]
enum Sources {
    /// Every source of the crate but these, which have a selection of their own.
    AllBut(&'static [&'static str]),
    Only(&'static [&'static str]),
}

#[derive(Clone, Copy)]
enum Tests {
    /// Every test of the test packages.
    All,
    /// The crate's own unit and integration tests and these reliability suites: the other
    /// suites are neither built nor run.
    OwnAnd(&'static [&'static str]),
    /// These test targets of the test packages.
    Targets(&'static [&'static str]),
}

/// The arena's sources whose tests are elsewhere: `coop.rs` is read only with the `tokio-coop`
/// feature, and only the facade's `tokio_coop` test turns it on and drives it.
const OWN_SELECTION: &[&str] = &["crates/arena/src/coop.rs"];

const MUTATED: [Mutated; 3] = [
    Mutated {
        dir: "arena",
        output: "arena",
        package: "pinfold-arena",
        sources: Sources::AllBut(OWN_SELECTION),
        test_packages: &[
            "pinfold-arena",
            "pinfold-join",
            "pinfold-unordered",
            "pinfold-merge",
            "pinfold-map",
            "pinfold-reliability",
        ],
        tests: Tests::All,
        features: "pinfold-arena/std",
    },
    Mutated {
        dir: "arena",
        output: "arena-coop",
        package: "pinfold-arena",
        sources: Sources::Only(OWN_SELECTION),
        test_packages: &["pinfold"],
        tests: Tests::Targets(&["--test=tokio_coop"]),
        features: "pinfold/tokio-coop",
    },
    Mutated {
        dir: "pool",
        output: "pool",
        package: "pinfold-pool",
        sources: Sources::AllBut(&[]),
        test_packages: &["pinfold-pool", "pinfold-reliability"],
        tests: Tests::OwnAnd(&["pool_model"]),
        features: "pinfold-pool/std,pinfold-pool/bytes,pinfold-pool/tokio",
    },
];

impl Sources {
    /// Whether `file` (a path from the workspace's root) is one of them, in the crate `dir`.
    fn holds(self, dir: &str, file: &str) -> bool {
        match self {
            Sources::AllBut(others) => {
                file.starts_with(&format!("crates/{dir}/")) && !others.contains(&file)
            }
            Sources::Only(files) => files.contains(&file),
        }
    }
}

/// The limit on one mutant's tests, in seconds: the suites take about 20 s on two cores, and a
/// lost wake fails its test at the 60 s limit of the lost-wake guard; a mutant that makes a test
/// hang is stopped here (counted as `timeout`).
const TIMEOUT_SECONDS: &str = "90";

/// The tests' environment for each mutant: smaller stress runs (a mutant the flood of a
/// million wakes catches, a hundred thousand catch too, in a tenth of the time), and a lost
/// wake that fails its test after 10 s rather than 60 s, well inside the mutant's limit.
const TEST_ENV: [(&str, &str); 4] = [
    ("PINFOLD_STRESS_WAKES", "100000"),
    ("PINFOLD_PING_PONG_WAKES", "20000"),
    ("PINFOLD_CHURN_SETS", "2000"),
    ("PINFOLD_LOST_WAKE_SECS", "10"),
];

/// What each outcome file of cargo-mutants holds, in the order the summary lists them.
const OUTCOMES: [&str; 4] = ["caught", "missed", "timeout", "unviable"];

pub(crate) struct MutantsOptions {
    in_diff: Option<String>,
    jobs: String,
    timeout: String,
    iterate: bool,
    files: Vec<String>,
}

impl MutantsOptions {
    pub(crate) fn parse(args: &[String]) -> Result<Self, Failure> {
        let mut options = Self {
            in_diff: None,
            jobs: "1".to_string(),
            timeout: TIMEOUT_SECONDS.to_string(),
            iterate: false,
            files: Vec::new(),
        };
        let mut args = args.iter();
        while let Some(arg) = args.next() {
            match arg.as_str() {
                "--in-diff" => {
                    let rev = args.next().ok_or_else(|| {
                        format!("mutants: --in-diff needs a revision\n\n{}", usage::text())
                    })?;
                    options.in_diff = Some(rev.clone());
                }
                "--jobs" => options.jobs = count(args.next(), "--jobs", "a count")?,
                "--timeout" => {
                    options.timeout = count(args.next(), "--timeout", "a count of seconds")?;
                }
                "--iterate" => options.iterate = true,
                flag if flag.starts_with('-') => {
                    return Err(format!(
                        "mutants: unknown argument `{flag}`\n\n{}",
                        usage::text()
                    ));
                }
                file => options.files.push(file.to_string()),
            }
        }
        Ok(options)
    }
}

/// The value of `flag`: a whole number, one or more (`what` names it in the error).
fn count(value: Option<&String>, flag: &str, what: &str) -> Result<String, Failure> {
    value
        .filter(|value| value.parse::<u32>().is_ok_and(|value| value > 0))
        .cloned()
        .ok_or_else(|| {
            format!(
                "mutants: {flag} needs {what}, one or more\n\n{}",
                usage::text()
            )
        })
}

/// Installs cargo-mutants from the registry unless `cargo mutants` runs already.
fn ensure_cargo_mutants(workspace: &Workspace) -> Result<(), Failure> {
    if workspace.cargo(&["mutants", "--version"]).succeeds() {
        return Ok(());
    }
    println!("mutants: cargo-mutants is not installed; installing it from crates.io");
    workspace
        .cargo(&["install", "cargo-mutants", "--locked"])
        .run()
}

pub(crate) fn mutants(workspace: &Workspace, options: &MutantsOptions) -> Result<Outcome, Failure> {
    ensure_cargo_mutants(workspace)?;
    let out_root = workspace.target_dir("mutants");
    fs::create_dir_all(&out_root).map_err(|e| format!("mutants: {}: {e}", out_root.display()))?;
    let diff_file = match &options.in_diff {
        Some(rev) => Some(write_diff(workspace, rev, &out_root)?),
        None => None,
    };
    let started = Instant::now();
    let mut summary: BTreeMap<String, [usize; 4]> = BTreeMap::new();
    let diff_text = match &diff_file {
        Some(path) => Some(
            fs::read_to_string(path).map_err(|e| format!("mutants: {}: {e}", path.display()))?,
        ),
        None => None,
    };
    for Mutated {
        dir,
        output,
        package,
        sources,
        test_packages,
        tests,
        features,
    } in MUTATED
    {
        let mut files: Vec<&str> = options
            .files
            .iter()
            .map(String::as_str)
            .filter(|file| sources.holds(dir, file))
            .collect();
        if !options.files.is_empty() && files.is_empty() {
            continue;
        }
        if let Sources::Only(only) = sources {
            // A diff that touches none of them has none of their mutants: no baseline to run.
            if diff_text
                .as_ref()
                .is_some_and(|diff| !only.iter().any(|file| diff.contains(&format!("b/{file}"))))
            {
                continue;
            }
            if files.is_empty() {
                files.extend_from_slice(only);
            }
        }
        let output = out_root.join(output);
        // cargo-mutants leaves the last run's outcomes when it finds no mutant to test; with
        // `--iterate` they are what it reads to skip the caught.
        if !options.iterate {
            let _ = fs::remove_dir_all(output.join("mutants.out"));
        }
        let output = output.to_string_lossy().into_owned();
        let targets = match tests {
            Tests::All => Vec::new(),
            Tests::OwnAnd(suites) => test_targets(workspace, dir, suites)?,
            Tests::Targets(targets) => targets.iter().map(|target| target.to_string()).collect(),
        };
        baseline(workspace, test_packages, features, &targets)?;
        let mut args = vec![
            "mutants",
            "--package",
            package,
            "--timeout",
            options.timeout.as_str(),
            // The baseline above ran the tests; cargo-mutants' own runs only the mutated crate's.
            "--baseline",
            "skip",
            // Each copy's first build starts from nothing.
            "--build-timeout",
            "900",
            // Without debug info (the workspace's `mutants` profile), a mutant builds in about
            // two thirds of the time.
            "--profile",
            "mutants",
            "--output",
            output.as_str(),
            "--no-shuffle",
            "--features",
            features,
            "--jobs",
            options.jobs.as_str(),
        ];
        if options.iterate {
            args.push("--iterate");
        }
        for test_package in test_packages {
            args.extend(["--test-package", test_package]);
        }
        for target in &targets {
            args.extend(["--cargo-test-arg", target.as_str()]);
        }
        // The arena's unit tests (`src/tests/`) and their helpers are not code a user runs.
        args.extend(["--exclude", "crates/arena/src/tests/**"]);
        if let Sources::AllBut(others) = sources {
            for other in others {
                args.extend(["--exclude", other]);
            }
        }
        for file in &files {
            args.extend(["--file", file]);
        }
        let diff = diff_file
            .as_ref()
            .map(|path| path.to_string_lossy().into_owned());
        if let Some(diff) = &diff {
            args.extend(["--in-diff", diff.as_str()]);
        }
        let invocation = with_test_env(workspace.cargo(&args));
        // cargo-mutants exits non-zero when a mutant is missed or times out: the summary says
        // which, so the run goes on to the next crate.
        let _ = Invocation::succeeds(invocation);
        tally(&Path::new(&output).join("mutants.out"), &mut summary);
    }
    print_summary(&summary);
    let missed: usize = summary.values().map(|counts| counts[1] + counts[2]).sum();
    println!("mutants: took {}", Seconds(started.elapsed()));
    if missed == 0 {
        Ok(Outcome::Passed)
    } else {
        Err(format!(
            "mutants: {missed} mutants missed or timed out (see reliability/MUTANTS.md for those \
             that are justified)"
        ))
    }
}

/// Runs the tests of `packages` (narrowed to `targets`) on the unmutated tree, as each mutant's
/// will run: a mutant is caught only when tests that pass without it fail with it.
fn baseline(
    workspace: &Workspace,
    packages: &[&str],
    features: &str,
    targets: &[String],
) -> Result<(), Failure> {
    let mut args = vec!["test", "--profile", "mutants", "--features", features];
    for package in packages {
        args.extend(["--package", package]);
    }
    args.extend(targets.iter().map(String::as_str));
    with_test_env(workspace.cargo(&args))
        .run()
        .map_err(|failure| format!("mutants: the tests fail without a mutant: {failure}"))
}

fn with_test_env(mut invocation: Invocation) -> Invocation {
    for (key, value) in TEST_ENV {
        invocation = invocation.env(key, value);
    }
    invocation
}

/// The cargo arguments that select the unit tests, the integration tests of `crates/<dir>` (a
/// file each in its `tests/`) and the named reliability suites.
fn test_targets(workspace: &Workspace, dir: &str, suites: &[&str]) -> Result<Vec<String>, Failure> {
    let tests = workspace.root.join("crates").join(dir).join("tests");
    let entries = fs::read_dir(&tests).map_err(|e| format!("mutants: {}: {e}", tests.display()))?;
    let mut names: Vec<String> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "rs"))
        .filter_map(|path| Some(path.file_stem()?.to_str()?.to_string()))
        .collect();
    names.sort();
    names.extend(suites.iter().map(|suite| suite.to_string()));
    let mut targets = vec!["--lib".to_string()];
    targets.extend(names.iter().map(|name| format!("--test={name}")));
    Ok(targets)
}

/// The diff of the two crates since `rev`, in a file for `--in-diff`.
fn write_diff(
    workspace: &Workspace,
    rev: &str,
    out_root: &Path,
) -> Result<std::path::PathBuf, Failure> {
    let output = std::process::Command::new("git")
        .args(["diff", rev, "--", "crates/arena", "crates/pool"])
        .current_dir(&workspace.root)
        .output()
        .map_err(|e| format!("mutants: git diff: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "mutants: `git diff {rev}` failed: {}",
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    let path = out_root.join("in-diff.patch");
    fs::write(&path, &output.stdout).map_err(|e| format!("mutants: {}: {e}", path.display()))?;
    Ok(path)
}

/// Adds the outcomes in `dir` (one file per outcome, a mutant a line, its file first) to
/// `summary`, per source file.
fn tally(dir: &Path, summary: &mut BTreeMap<String, [usize; 4]>) {
    for (column, outcome) in OUTCOMES.iter().enumerate() {
        let Ok(text) = fs::read_to_string(dir.join(format!("{outcome}.txt"))) else {
            continue;
        };
        for line in text.lines().filter(|line| !line.is_empty()) {
            let file = line.split(':').next().unwrap_or(line).to_string();
            summary.entry(file).or_default()[column] += 1;
        }
    }
}

fn print_summary(summary: &BTreeMap<String, [usize; 4]>) {
    println!("\n| file | caught | missed | timeout | unviable | score |");
    println!("|---|---:|---:|---:|---:|---:|");
    for (file, [caught, missed, timeout, unviable]) in summary {
        let viable = caught + missed + timeout;
        let score = if viable == 0 {
            "—".to_string()
        } else {
            format!("{:.0}%", 100.0 * *caught as f64 / viable as f64)
        };
        println!("| `{file}` | {caught} | {missed} | {timeout} | {unviable} | {score} |");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each source is mutated by exactly one selection, the one whose tests read it.
    #[test]
    fn every_source_falls_to_one_selection() {
        let owners = |file: &str| -> Vec<&str> {
            MUTATED
                .iter()
                .filter(|mutated| mutated.sources.holds(mutated.dir, file))
                .map(|mutated| mutated.output)
                .collect()
        };
        assert_eq!(owners("crates/arena/src/store.rs"), ["arena"]);
        assert_eq!(owners("crates/arena/src/coop.rs"), ["arena-coop"]);
        assert_eq!(owners("crates/pool/src/framer.rs"), ["pool"]);
        assert!(owners("crates/join/src/lib.rs").is_empty());
    }
}
