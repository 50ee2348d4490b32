//! `cargo xtask msrv`: the library crates and the facade checked with the oldest Rust the
//! workspace declares (`rust-version` in the root manifest), with their default features, with
//! none, and with all of them.

use std::path::PathBuf;
use std::process::Command;

use crate::outcome::{Failure, Outcome};
use crate::usage::CommandUsage;
use crate::workspace::{FACADE_CRATE, LIBRARY_CRATES, Workspace};

pub(crate) const USAGE: CommandUsage = CommandUsage {
    synopsis: "msrv",
    about: "cargo check the library crates and the facade with the Rust\n\
            of the workspace's rust-version (default, no and all\n\
            features) in target/msrv; the toolchain is `rustup run\n\
            <version>`, else $PINFOLD_MSRV_CARGO and $PINFOLD_MSRV_RUSTC,\n\
            else Debian's cargo-web in /usr/bin (SKIPPED if none is that\n\
            version)",
};

/// A cargo and a rustc of one version.
struct Toolchain {
    cargo: PathBuf,
    rustc: PathBuf,
}

pub(crate) fn msrv(workspace: &Workspace) -> Result<Outcome, Failure> {
    let version = declared_version(workspace)?;
    let Some(toolchain) = find_toolchain(&version) else {
        return Ok(Outcome::Skipped(format!(
            "msrv: SKIPPED — no Rust {version} found (rustup toolchain {version}, \
             $PINFOLD_MSRV_CARGO with $PINFOLD_MSRV_RUSTC, or Debian's \
             `apt-get install cargo-web={version}*`)"
        )));
    };
    let packages = workspace.present(&[LIBRARY_CRATES.as_slice(), &[FACADE_CRATE]].concat());
    for features in [&[][..], &["--no-default-features"], &["--all-features"]] {
        let mut args = vec!["check", "--locked", "--lib"];
        for &package in &packages {
            args.extend(["-p", package]);
        }
        args.extend(features);
        workspace
            .command(&toolchain.cargo.to_string_lossy(), &args)
            .nightly()
            .env("RUSTC", &toolchain.rustc)
            .env("RUSTDOC", toolchain.rustc.with_file_name("rustdoc"))
            .env("CARGO_TARGET_DIR", workspace.target_dir("msrv"))
            .run()?;
    }
    Ok(Outcome::Passed)
}

/// `rust-version` of the root manifest's `[workspace.package]`.
fn declared_version(workspace: &Workspace) -> Result<String, Failure> {
    let manifest = std::fs::read_to_string(workspace.root.join("Cargo.toml"))
        .map_err(|error| format!("cannot read the root Cargo.toml: {error}"))?;
    manifest
        .lines()
        .find_map(|line| {
            let value = line.trim().strip_prefix("rust-version")?.trim();
            let value = value.strip_prefix('=')?.trim();
            Some(value.trim_matches('"').to_string())
        })
        .ok_or_else(|| "the root Cargo.toml declares no rust-version".to_string())
}

/// A cargo and rustc whose `rustc --version` is `version` (`1.85` matches `1.85.x`).
fn find_toolchain(version: &str) -> Option<Toolchain> {
    let rustup = Command::new("rustup")
        .args(["which", "--toolchain", version, "rustc"])
        .output()
        .ok()
        .filter(|out| out.status.success())
        .map(|out| PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()));
    let from_env = std::env::var_os("PINFOLD_MSRV_RUSTC").map(PathBuf::from);
    let candidates = [
        rustup.map(|rustc| (rustc.with_file_name("cargo"), rustc)),
        std::env::var_os("PINFOLD_MSRV_CARGO")
            .map(PathBuf::from)
            .zip(from_env),
        Some((
            PathBuf::from("/usr/bin/cargo"),
            PathBuf::from("/usr/bin/rustc"),
        )),
    ];
    candidates
        .into_iter()
        .flatten()
        .find(|(cargo, rustc)| cargo.is_file() && reports_version(rustc, version))
        .map(|(cargo, rustc)| Toolchain { cargo, rustc })
}

/// Whether `rustc --version` says `rustc <version>` or `rustc <version>.<patch>`.
fn reports_version(rustc: &PathBuf, version: &str) -> bool {
    let Ok(out) = Command::new(rustc).arg("--version").output() else {
        return false;
    };
    let said = String::from_utf8_lossy(&out.stdout);
    let Some(number) = said.split_whitespace().nth(1) else {
        return false;
    };
    number == version || number.starts_with(&format!("{version}."))
}
