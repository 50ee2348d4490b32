//! `cargo xtask nostd`: the library crates built without `std`, for a target that has none.

use crate::outcome::{Failure, Outcome};
use crate::toolchain::nightly_has_rust_src;
use crate::usage::CommandUsage;
use crate::workspace::{FACADE_CRATE, LIBRARY_CRATES, Workspace};

pub(crate) const USAGE: CommandUsage = CommandUsage {
    synopsis: "nostd",
    about: "build the library crates and the facade with\n\
            --no-default-features for x86_64-unknown-none, a target\n\
            without std (nightly, -Zbuild-std=core,alloc) in target/nostd;\n\
            then test pinfold-arena without std on the host (its drop-guard\n\
            panic paths, which every crate uses without std)",
};

/// A target that has `core` and `alloc` but no `std`: a crate that uses `std` fails there.
const TARGET: &str = "x86_64-unknown-none";

/// What `cargo xtask nostd` prints when it cannot build: it must never read as a pass.
const NOSTD_SKIPPED: &str = "nostd: SKIPPED — the nightly toolchain or its rust-src component \
     is not installed, so -Zbuild-std cannot run \
     (rustup toolchain install nightly --component rust-src)";

/// Builds every library crate present, and the facade, without their default features (which
/// turn `std` on): one invocation, so cargo builds `core` and `alloc` once.
pub(crate) fn nostd(workspace: &Workspace) -> Result<Outcome, Failure> {
    let mut crates = LIBRARY_CRATES.to_vec();
    crates.push(FACADE_CRATE);
    let packages = workspace.present(&crates);
    if packages.is_empty() {
        return Ok(Outcome::Skipped(
            "nostd: SKIPPED — no library crates found under crates/".to_string(),
        ));
    }
    if !nightly_has_rust_src() {
        return Ok(Outcome::Skipped(NOSTD_SKIPPED.to_string()));
    }
    let mut args = vec![
        "+nightly",
        "build",
        "-Zbuild-std=core,alloc",
        "--target",
        TARGET,
        "--no-default-features",
        "--lib",
    ];
    for &package in &packages {
        args.extend(["-p", package]);
    }
    workspace
        .cargo(&args)
        .nightly()
        .env("CARGO_TARGET_DIR", workspace.target_dir("nostd"))
        .run()?;
    // Without `std` the arena survives panics with drop guards instead of `catch_unwind`
    // (`pinfold_arena::unwind`): its own tests check those paths (the tests link `std`).
    if packages.contains(&"pinfold-arena") {
        workspace
            .cargo(&[
                "test",
                "-p",
                "pinfold-arena",
                "--no-default-features",
                "--lib",
                "--tests",
            ])
            .run()?;
    }
    Ok(Outcome::Passed)
}
