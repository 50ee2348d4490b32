//! Project automation for the pinfold workspace, run as `cargo xtask <command>`
//! (the [cargo-xtask](https://github.com/matklad/cargo-xtask) convention).
//!
//! `cargo xtask help` lists the commands and the steps of `cargo xtask ci`. That text is
//! assembled from each command's module (its `USAGE`) and from the table of CI steps,
//! [`ci::STEPS`], which is also what `ci` runs, so the list cannot drift from what runs.
//!
//! Every command is printed before it runs. The first failing command stops the task
//! with a non-zero exit code; a skipped check is reported as SKIPPED, never as passed.
//! Only `std` is used, so the tool builds with the workspace.

mod bench;
mod ci;
mod first_hour;
mod instructions;
mod invocation;
mod lanes;
mod layers;
mod loom;
mod miri;
mod msrv;
mod mutants;
mod nostd;
mod outcome;
mod package;
mod paths;
mod readme;
mod rules;
mod test_binaries;
mod toolchain;
mod tsan;
mod usage;
mod valgrind;
mod workspace;

use std::env;
use std::process;

use crate::instructions::InstructionOptions;
use crate::loom::LoomOptions;
use crate::mutants::MutantsOptions;
use crate::outcome::{Failure, Outcome, print_skip_banner};
use crate::valgrind::ValgrindOptions;
use crate::workspace::Workspace;

fn main() {
    let args: Vec<String> = env::args().skip(1).collect();
    let workspace = Workspace::locate();
    let result = match args.first().map(String::as_str) {
        Some("ci") => no_more_args("ci", &args[1..]).and_then(|()| ci::ci(&workspace)),
        Some("loom") => LoomOptions::parse(&args[1..]).and_then(|options| {
            loom::loom(&workspace, &options).map(|outcome| {
                if let Outcome::Skipped(reason) = outcome {
                    println!("{reason}");
                }
            })
        }),
        Some("tsan") => no_more_args("tsan", &args[1..])
            .and_then(|()| tsan::tsan(&workspace))
            .map(announce_skip),
        Some("miri") => no_more_args("miri", &args[1..])
            .and_then(|()| miri::miri(&workspace))
            .map(announce_skip),
        Some("msrv") => no_more_args("msrv", &args[1..])
            .and_then(|()| msrv::msrv(&workspace))
            .map(announce_skip),
        Some("nostd") => no_more_args("nostd", &args[1..])
            .and_then(|()| nostd::nostd(&workspace))
            .map(announce_skip),
        Some("layers") => layers::layers(&workspace, &args[1..]).map(announce_skip),
        Some("rules") => no_more_args("rules", &args[1..])
            .and_then(|()| rules::rules(&workspace))
            .map(announce_skip),
        Some("first-hour") => no_more_args("first-hour", &args[1..])
            .and_then(|()| first_hour::first_hour(&workspace))
            .map(announce_skip),
        Some("paths") => no_more_args("paths", &args[1..])
            .and_then(|()| paths::paths(&workspace))
            .map(announce_skip),
        Some("readme") => no_more_args("readme", &args[1..])
            .and_then(|()| readme::readme(&workspace))
            .map(announce_skip),
        Some("package") => no_more_args("package", &args[1..])
            .and_then(|()| package::package(&workspace))
            .map(announce_skip),
        Some("valgrind") => ValgrindOptions::parse(&args[1..])
            .and_then(|options| valgrind::valgrind(&workspace, &options))
            .map(announce_skip),
        Some("bench") => bench::bench(&workspace, &args[1..]),
        Some("instructions") => InstructionOptions::parse(&args[1..])
            .and_then(|options| instructions::instructions(&workspace, &options))
            .map(announce_skip),
        Some("mutants") => MutantsOptions::parse(&args[1..])
            .and_then(|options| mutants::mutants(&workspace, &options))
            .map(announce_skip),
        Some("help" | "-h" | "--help") => {
            println!("{}", usage::text());
            Ok(())
        }
        Some(unknown) => {
            eprintln!("xtask: unknown command `{unknown}`\n\n{}", usage::text());
            process::exit(2);
        }
        None => {
            eprintln!("xtask: no command given\n\n{}", usage::text());
            process::exit(2);
        }
    };
    if let Err(failure) = result {
        eprintln!("xtask: error: {failure}");
        process::exit(1);
    }
}

fn no_more_args(command: &str, rest: &[String]) -> Result<(), Failure> {
    match rest.first() {
        None => Ok(()),
        Some(extra) => Err(format!("`{command}` takes no arguments, got `{extra}`")),
    }
}

/// A command run on its own that skipped says so between rules, as in `ci`.
fn announce_skip(outcome: Outcome) {
    if let Outcome::Skipped(reason) = outcome {
        print_skip_banner(&reason);
    }
}
