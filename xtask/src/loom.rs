//! `cargo xtask loom`: the loom models of the wake protocol.

use crate::outcome::{Failure, Outcome};
use crate::usage::{self, CommandUsage};
use crate::workspace::Workspace;

pub(crate) const USAGE: CommandUsage = CommandUsage {
    synopsis: "loom [--preemptions N] [FILTER]",
    about: "run the loom models (cargo test --release -p loom-tests)\n\
            with LOOM_MAX_PREEMPTIONS=N (default 2) in target/loom",
};

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
    let mut args = vec!["test", "--release", "-p", "loom-tests"];
    if let Some(filter) = &options.filter {
        args.push(filter.as_str());
    }
    workspace
        .cargo(&args)
        .env("RUSTFLAGS", "--cfg pinfold_loom -C debug-assertions")
        .env("LOOM_MAX_PREEMPTIONS", options.preemptions.to_string())
        .env("CARGO_TARGET_DIR", workspace.target_dir("loom"))
        .run()?;
    Ok(Outcome::Passed)
}
