//! `cargo xtask bench`: the criterion benchmarks, then the markdown tables of the run; after a
//! full run also `benches/RESULTS.md`, the chart `benches/ratios.svg` and the README's summary.

use std::env;
use std::fs;
use std::path::PathBuf;

use crate::instructions::{self, InstructionOptions};
use crate::outcome::{Failure, Outcome, print_skip_banner};
use crate::usage::{self, CommandUsage};
use crate::workspace::Workspace;

pub(crate) const USAGE: CommandUsage = CommandUsage {
    synopsis: "bench [--full]",
    about: "run the criterion benchmarks (cargo bench -p pinfold-benches)\n\
            and print their tables; by default a quick run\n\
            (PINFOLD_BENCH_QUICK=1: 10 samples a benchmark, about 2.5\n\
            minutes on 2 cores after the build); --full for the precise\n\
            one, then every row's instructions under callgrind (about\n\
            21 minutes in all), which also writes this CPU's file in\n\
            benches/results/ and rewrites benches/RESULTS.md,\n\
            benches/ratios.svg and the README's summary from all of\n\
            them; --quick is the default's old name",
};

/// How long the benchmarks run.
#[derive(Debug, PartialEq)]
enum Length {
    /// `PINFOLD_BENCH_QUICK=1`: the fewest samples criterion takes, briefly.
    Quick,
    /// The suite's own sample counts and times.
    Full,
}

fn parse(args: &[String]) -> Result<Length, Failure> {
    match args {
        [] => Ok(Length::Quick),
        [flag] if flag == "--quick" => Ok(Length::Quick),
        [flag] if flag == "--full" => Ok(Length::Full),
        [other, ..] => Err(format!(
            "bench: unknown argument `{other}`\n\n{}",
            usage::text()
        )),
    }
}

pub(crate) fn bench(workspace: &Workspace, args: &[String]) -> Result<(), Failure> {
    let length = parse(args)?;
    if !workspace.has("benches/Cargo.toml") {
        println!("bench: no benches crate yet");
        return Ok(());
    }
    // Each run starts its allocation, virtual-time and instruction records afresh.
    let records = env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| workspace.target_dir(""), PathBuf::from)
        .join("pinfold-bench");
    if records.exists() {
        fs::remove_dir_all(&records)
            .map_err(|e| format!("bench: cannot clear {}: {e}", records.display()))?;
    }
    // The variable is set either way, so one already in the environment cannot override the
    // flag.
    let quick = match length {
        Length::Quick => {
            println!(
                "bench: a quick run, 10 samples a benchmark; `cargo xtask bench --full` \
                 for the precise one"
            );
            "1"
        }
        Length::Full => "0",
    };
    // The run's commit and date, noted before anything is built. A timed run without
    // `PINFOLD_BENCH_STAMPED=1` (`cargo bench` by hand; the benches' `STAMPED_VARIABLE`)
    // removes the stamp: it is not that run's.
    workspace.cargo(&table_command(&["--stamp"])).run()?;
    workspace
        .cargo(&["bench", "-p", "pinfold-benches"])
        .env("PINFOLD_BENCH_QUICK", quick)
        .env("PINFOLD_BENCH_STAMPED", "1")
        .run()?;
    // A full run records every row's instructions per item beside its times.
    if length == Length::Full {
        let counted = instructions::instructions(workspace, &InstructionOptions::all())?;
        if let Outcome::Skipped(reason) = counted {
            print_skip_banner(&reason);
        }
    }
    // The markdown tables: each implementation's median, pinfold's ratios, allocations. Built
    // with the bench profile, so it reuses the dependencies `cargo bench` just built.
    let write: &[&str] = if length == Length::Full {
        &["--write"]
    } else {
        &[]
    };
    workspace.cargo(&table_command(write)).run()
}

/// The `cargo` arguments that run `bench-table` with `flags`: none prints the tables;
/// `--write`, after a full run, also writes this CPU's record, `benches/RESULTS.md`, the chart
/// and the README's summary (a quick run's ratios move too much to publish); `--stamp` notes
/// the run's commit and date before it starts.
fn table_command<'a>(flags: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "run",
        "--quiet",
        "--profile",
        "bench",
        "-p",
        "pinfold-benches",
        "--bin",
        "bench-table",
    ];
    if !flags.is_empty() {
        args.push("--");
        args.extend(flags);
    }
    args
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|arg| arg.to_string()).collect()
    }

    #[test]
    fn quick_is_the_default_and_full_must_be_asked_for() {
        assert_eq!(parse(&args(&[])), Ok(Length::Quick));
        assert_eq!(parse(&args(&["--quick"])), Ok(Length::Quick));
        assert_eq!(parse(&args(&["--full"])), Ok(Length::Full));
        assert!(parse(&args(&["--fast"])).is_err());
        assert!(parse(&args(&["--full", "--quick"])).is_err());
    }

    #[test]
    fn the_table_command_passes_its_flags_to_bench_table() {
        assert!(table_command(&["--write"]).ends_with(&["bench-table", "--", "--write"]));
        assert!(table_command(&[]).ends_with(&["--bin", "bench-table"]));
    }
}
