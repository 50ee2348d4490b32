//! The workspace root, which of its members exist yet, and the library crates the checks
//! cover.

use std::path::{Path, PathBuf};

use crate::invocation::Invocation;

/// The library crates below the facade: (directory under `crates/`, package name). Their unit
/// and integration tests run under Miri and ThreadSanitizer.
pub(crate) const LIBRARY_CRATES: [(&str, &str); 8] = [
    ("sync", "pinfold-sync"),
    ("arena", "pinfold-arena"),
    ("unordered", "pinfold-unordered"),
    ("join", "pinfold-join"),
    ("buffer", "pinfold-buffer"),
    ("merge", "pinfold-merge"),
    ("map", "pinfold-map"),
    ("pool", "pinfold-pool"),
];

/// The facade crate, which re-exports the library crates: (directory, package name).
pub(crate) const FACADE_CRATE: (&str, &str) = ("pinfold", "pinfold");

/// Optional features of the library crates that their Miri and TSan runs test too
/// (`cargo test --workspace` gets them from the benches' dependencies).
const LIBRARY_FEATURES: &str = "pinfold-pool/bytes";

/// The workspace root, and questions about which members exist yet.
pub(crate) struct Workspace {
    pub(crate) root: PathBuf,
}

impl Workspace {
    pub(crate) fn locate() -> Self {
        let manifest_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
        let root = manifest_dir
            .parent()
            .expect("xtask/ lives directly under the workspace root")
            .to_path_buf();
        Workspace { root }
    }

    /// Whether `relative` (e.g. `loom-tests/Cargo.toml`) exists under the root.
    pub(crate) fn has(&self, relative: &str) -> bool {
        self.root.join(relative).is_file()
    }

    pub(crate) fn target_dir(&self, name: &str) -> PathBuf {
        self.root.join("target").join(name)
    }

    pub(crate) fn cargo(&self, args: &[&str]) -> Invocation {
        self.command("cargo", args)
    }

    /// `program` with `args`, run in the root.
    pub(crate) fn command(&self, program: &str, args: &[&str]) -> Invocation {
        Invocation::new(&self.root, program, args)
    }

    /// The package names of those of `crates` (directory under `crates/`, package name)
    /// whose manifest exists, in the order given.
    pub(crate) fn present(&self, crates: &[(&str, &'static str)]) -> Vec<&'static str> {
        crates
            .iter()
            .filter(|(dir, _)| self.has(&format!("crates/{dir}/Cargo.toml")))
            .map(|&(_, package)| package)
            .collect()
    }

    /// The `-p` arguments for every library crate present, then the features they are tested
    /// with.
    pub(crate) fn library_test_args(&self) -> Vec<&'static str> {
        self.test_args(&LIBRARY_CRATES)
    }

    /// The `-p` arguments for those of `crates` that are present, then the features they are
    /// tested with (the pool's, if it is one of them).
    pub(crate) fn test_args(&self, crates: &[(&str, &'static str)]) -> Vec<&'static str> {
        let packages = self.present(crates);
        let mut args = Vec::new();
        for &package in &packages {
            args.extend(["-p", package]);
        }
        if packages.contains(&"pinfold-pool") {
            args.extend(["--features", LIBRARY_FEATURES]);
        }
        args
    }
}
