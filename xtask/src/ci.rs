//! `cargo xtask ci`: every check, in the order of [`STEPS`], the one table that both runs
//! them and lists them in the usage text.

use std::time::{Duration, Instant};

use crate::first_hour::first_hour;
use crate::invocation::Invocation;
use crate::layers::layers;
use crate::loom::{DEFAULT_PREEMPTIONS, LoomOptions, loom};
use crate::miri::miri;
use crate::msrv::msrv;
use crate::nostd::nostd;
use crate::outcome::{Failure, Outcome, Seconds, print_skip_banner};
use crate::package::package;
use crate::paths::paths;
use crate::readme::readme;
use crate::rules::rules;
use crate::tsan::tsan;
use crate::usage::CommandUsage;
use crate::valgrind::{ValgrindOptions, valgrind};
use crate::workspace::Workspace;

pub(crate) const USAGE: CommandUsage = CommandUsage {
    synopsis: "ci",
    about: "run every CI step listed below, in order; the first failure\n\
            stops the run, and a skipped step is reported as SKIPPED,\n\
            never as passed",
};

/// One check of `cargo xtask ci`.
pub(crate) struct Step {
    /// What the `==> ci [i/n] name` line and the summary call it.
    pub(crate) name: &'static str,
    /// One line for the usage text: what the step runs.
    pub(crate) about: &'static str,
    /// A file (relative to the workspace root) without which the step is left out of the run
    /// altogether: it is not run, not counted and not reported.
    pub(crate) only_if: Option<&'static str>,
    pub(crate) run: fn(&Workspace) -> Result<Outcome, Failure>,
    /// Directories under `target/` that no later step reads. On a CI machine (`CI` set) they
    /// are removed once the step has passed, so the whole run fits a small disk.
    pub(crate) frees: &'static [&'static str],
}

/// The checks of `cargo xtask ci`, in the order they run.
pub(crate) const STEPS: &[Step] = &[
    Step {
        name: "fmt",
        about: "cargo fmt --all -- --check",
        only_if: None,
        frees: &[],
        run: |workspace| passed(workspace.cargo(&["fmt", "--all", "--", "--check"])),
    },
    Step {
        name: "rules",
        about: "cargo xtask rules (the shared rules stated in the arena's contract only)",
        only_if: None,
        frees: &[],
        run: rules,
    },
    Step {
        name: "paths",
        about: "cargo xtask paths (item examples written with the facade's paths)",
        only_if: None,
        frees: &[],
        run: paths,
    },
    Step {
        name: "layers",
        about: "cargo xtask layers (no import cycle, none up a layer of the arena)",
        only_if: None,
        frees: &[],
        run: |workspace| layers(workspace, &[]),
    },
    Step {
        name: "clippy",
        about: "cargo clippy --workspace --all-targets -- -D warnings",
        only_if: None,
        frees: &[],
        run: |workspace| {
            passed(workspace.cargo(&[
                "clippy",
                "--workspace",
                "--all-targets",
                "--",
                "-D",
                "warnings",
            ]))
        },
    },
    Step {
        name: "package",
        about: "cargo xtask package (the published crates, not built)",
        only_if: None,
        frees: &["package"],
        run: package,
    },
    Step {
        name: "msrv",
        about: "cargo xtask msrv (SKIPPED without a Rust of the declared rust-version)",
        only_if: None,
        frees: &["msrv"],
        run: msrv,
    },
    Step {
        name: "test",
        about: "cargo test --workspace",
        only_if: None,
        frees: &[],
        run: |workspace| passed(workspace.cargo(&["test", "--workspace"])),
    },
    Step {
        name: "test tokio-coop",
        about: "cargo test -p pinfold --features tokio-coop --test tokio_coop",
        only_if: Some("crates/pinfold/tests/tokio_coop.rs"),
        frees: &[],
        run: |workspace| {
            passed(workspace.cargo(&[
                "test",
                "-p",
                "pinfold",
                "--features",
                "tokio-coop",
                "--test",
                "tokio_coop",
            ]))
        },
    },
    Step {
        name: "test pool tokio",
        about: "cargo test -p pinfold-pool --features tokio --test frame_reader --test writer \
                --example message_bus",
        only_if: Some("crates/pool/tests/frame_reader.rs"),
        frees: &[],
        run: |workspace| {
            passed(workspace.cargo(&[
                "test",
                "-p",
                "pinfold-pool",
                "--features",
                "tokio",
                "--test",
                "frame_reader",
                "--test",
                "writer",
                "--example",
                "message_bus",
            ]))
        },
    },
    Step {
        name: "readme",
        about: "cargo xtask readme (each README example as a project of its own)",
        only_if: None,
        frees: &[],
        run: readme,
    },
    Step {
        name: "first-hour",
        about: "cargo xtask first-hour (a user's program beside futures::StreamExt)",
        only_if: Some("first-hour/Cargo.toml"),
        frees: &["readme"],
        run: first_hour,
    },
    Step {
        name: "tower",
        about: "scripts/tower-swap.sh (tower 0.5.3's tests with pinfold's FuturesUnordered)",
        only_if: Some("scripts/tower-swap.sh"),
        frees: &["tower"],
        run: |workspace| {
            passed(
                Invocation::new(&workspace.root, "bash", &["scripts/tower-swap.sh"])
                    .env("CARGO_TARGET_DIR", workspace.target_dir("tower")),
            )
        },
    },
    Step {
        name: "real-io",
        about: "examples/real-io: 60 pages over loopback HTTP into SQLite, and weighted under load (a budget of 120 s)",
        only_if: Some("examples/real-io/Cargo.toml"),
        frees: &["real-io"],
        run: |workspace| {
            passed(
                workspace
                    .cargo(&[
                        "run",
                        "--release",
                        "--locked",
                        "--manifest-path",
                        "examples/real-io/Cargo.toml",
                        "--",
                        "60",
                        "8",
                        "10",
                    ])
                    .env("CARGO_TARGET_DIR", workspace.target_dir("real-io"))
                    .env("PINFOLD_REAL_IO_BUDGET_MS", "120000"),
            )
        },
    },
    Step {
        name: "valgrind",
        about: "cargo xtask valgrind (SKIPPED if valgrind is not installed)",
        only_if: Some("reliability/Cargo.toml"),
        frees: &[],
        run: |workspace| valgrind(workspace, &ValgrindOptions { deep: false }),
    },
    Step {
        name: "test benches",
        about: "cargo test --workspace --benches (each benchmark once)",
        only_if: Some("benches/Cargo.toml"),
        frees: &[],
        run: |workspace| passed(workspace.cargo(&["test", "--workspace", "--benches"])),
    },
    Step {
        name: "doc",
        about: "cargo doc --workspace --no-deps, RUSTDOCFLAGS='-D warnings'",
        only_if: None,
        frees: &["debug", "doc"],
        run: |workspace| {
            passed(
                workspace
                    .cargo(&["doc", "--workspace", "--no-deps"])
                    .env("RUSTDOCFLAGS", "-D warnings"),
            )
        },
    },
    Step {
        name: "nostd",
        about: "cargo xtask nostd (SKIPPED without nightly's rust-src)",
        only_if: None,
        frees: &["nostd"],
        run: nostd,
    },
    Step {
        name: "loom",
        about: "cargo xtask loom (SKIPPED if there is no loom-tests/)",
        only_if: None,
        frees: &["loom"],
        run: |workspace| {
            let options = LoomOptions {
                preemptions: DEFAULT_PREEMPTIONS,
                filter: None,
            };
            loom(workspace, &options)
        },
    },
    Step {
        name: "miri",
        about: "cargo xtask miri (SKIPPED if Miri cannot be installed)",
        only_if: None,
        frees: &["miri"],
        run: miri,
    },
    Step {
        name: "tsan",
        about: "cargo xtask tsan (SKIPPED without nightly's rust-src)",
        only_if: None,
        frees: &[],
        run: tsan,
    },
];

/// Removes the `target/` directories a passed step leaves behind and no later step reads.
fn free(workspace: &Workspace, dirs: &[&str]) {
    for dir in dirs {
        let path = workspace.target_dir(dir);
        if !path.exists() {
            continue;
        }
        match std::fs::remove_dir_all(&path) {
            Ok(()) => println!(
                "    (CI) removed {}: no later step reads it",
                path.display()
            ),
            Err(error) => println!("    (CI) could not remove {}: {error}", path.display()),
        }
    }
}

fn passed(invocation: Invocation) -> Result<Outcome, Failure> {
    invocation.run().map(|()| Outcome::Passed)
}

/// One line of the `ci` summary.
struct StepReport {
    name: &'static str,
    result: Result<Outcome, ()>,
    took: Duration,
}

pub(crate) fn ci(workspace: &Workspace) -> Result<(), Failure> {
    let steps: Vec<&Step> = STEPS
        .iter()
        .filter(|step| step.only_if.is_none_or(|file| workspace.has(file)))
        .collect();
    let total = steps.len();
    let started = Instant::now();
    let mut reports = Vec::with_capacity(total);
    let on_ci_machine = std::env::var_os("CI").is_some_and(|value| !value.is_empty());
    for (index, step) in steps.iter().enumerate() {
        let name = step.name;
        println!("\n==> ci [{}/{total}] {name}", index + 1);
        let step_started = Instant::now();
        let result = (step.run)(workspace);
        let took = step_started.elapsed();
        match &result {
            Ok(Outcome::Passed) => println!("<== {name}: passed in {}", Seconds(took)),
            Ok(Outcome::Skipped(reason)) => {
                print_skip_banner(reason);
                println!("<== {name}: SKIPPED after {}", Seconds(took));
            }
            Err(_) => println!("<== {name}: FAILED after {}", Seconds(took)),
        }
        let failure = result.as_ref().err().cloned();
        if failure.is_none() && on_ci_machine {
            free(workspace, step.frees);
        }
        reports.push(StepReport {
            name,
            result: result.map_err(|_| ()),
            took,
        });
        if let Some(failure) = failure {
            print_summary(&reports, total, started.elapsed());
            return Err(format!("ci step `{name}` failed: {failure}"));
        }
    }
    print_summary(&reports, total, started.elapsed());
    Ok(())
}

/// The width of the step-name column: the longest name in [`STEPS`].
pub(crate) fn name_width() -> usize {
    STEPS.iter().map(|step| step.name.len()).max().unwrap_or(0)
}

fn print_summary(reports: &[StepReport], total: usize, took: Duration) {
    println!("\nci summary:");
    let width = name_width();
    for report in reports {
        let (status, note) = match &report.result {
            Ok(Outcome::Passed) => ("passed", String::new()),
            Ok(Outcome::Skipped(reason)) => ("SKIPPED", format!("  ({reason})")),
            Err(()) => ("FAILED", String::new()),
        };
        println!(
            "  {:<width$} {status:<8} {:>9}{note}",
            report.name,
            Seconds(report.took).to_string()
        );
    }
    let failed = reports.iter().filter(|r| r.result.is_err()).count();
    let skipped: Vec<&str> = reports
        .iter()
        .filter(|r| matches!(r.result, Ok(Outcome::Skipped(_))))
        .map(|r| r.name)
        .collect();
    let not_run = total - reports.len();
    if failed > 0 {
        println!(
            "ci: FAILED after {} ({not_run} step(s) not run)",
            Seconds(took)
        );
    } else if skipped.is_empty() {
        println!("ci: all {total} steps passed in {}", Seconds(took));
    } else {
        println!(
            "ci: OK in {}, but {} step(s) SKIPPED: {} — not checked in this run",
            Seconds(took),
            skipped.len(),
            skipped.join(", ")
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokio_coop_follows_test_and_nostd_follows_doc() {
        let names: Vec<&str> = STEPS.iter().map(|step| step.name).collect();
        let position = |name: &str| names.iter().position(|&n| n == name).unwrap();
        assert_eq!(position("test tokio-coop"), position("test") + 1);
        assert_eq!(position("nostd"), position("doc") + 1);
        assert_eq!(position("loom"), position("nostd") + 1);
    }

    #[test]
    fn step_names_are_unique() {
        for (index, step) in STEPS.iter().enumerate() {
            assert!(
                STEPS[..index].iter().all(|other| other.name != step.name),
                "two steps are named `{}`",
                step.name
            );
        }
    }
}
