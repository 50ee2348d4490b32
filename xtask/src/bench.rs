//! `cargo xtask bench`: the criterion benchmarks, then the markdown tables of the run.

use std::env;
use std::fs;
use std::path::PathBuf;

use crate::outcome::Failure;
use crate::usage::{self, CommandUsage};
use crate::workspace::Workspace;

pub(crate) const USAGE: CommandUsage = CommandUsage {
    synopsis: "bench [--quick]",
    about: "run the criterion benchmarks (cargo bench -p\n\
            pinfold-benches); --quick sets PINFOLD_BENCH_QUICK=1",
};

pub(crate) fn bench(workspace: &Workspace, args: &[String]) -> Result<(), Failure> {
    let quick = match args {
        [] => false,
        [flag] if flag == "--quick" => true,
        [other, ..] => {
            return Err(format!(
                "bench: unknown argument `{other}`\n\n{}",
                usage::text()
            ));
        }
    };
    if !workspace.has("benches/Cargo.toml") {
        println!("bench: no benches crate yet");
        return Ok(());
    }
    // Each run starts its allocation and virtual-time records afresh.
    let records = env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| workspace.target_dir(""), PathBuf::from)
        .join("pinfold-bench");
    if records.exists() {
        fs::remove_dir_all(&records)
            .map_err(|e| format!("bench: cannot clear {}: {e}", records.display()))?;
    }
    let mut invocation = workspace.cargo(&["bench", "-p", "pinfold-benches"]);
    if quick {
        invocation = invocation.env("PINFOLD_BENCH_QUICK", "1");
    }
    invocation.run()?;
    // One markdown table: each implementation's median, pinfold's ratios, allocations.
    workspace
        .cargo(&[
            "run",
            "--quiet",
            "--release",
            "-p",
            "pinfold-benches",
            "--bin",
            "bench-table",
        ])
        .run()
}
