//! `cargo xtask package`: the crates published to crates.io (the library crates and the facade)
//! packaged as `cargo publish` would package them, without building them: their manifests,
//! READMEs, licenses and file lists are checked in seconds.

use crate::outcome::{Failure, Outcome};
use crate::usage::CommandUsage;
use crate::workspace::{FACADE_CRATE, LIBRARY_CRATES, Workspace};

pub(crate) const USAGE: CommandUsage = CommandUsage {
    synopsis: "package",
    about: "cargo package --no-verify --allow-dirty the library crates and\n\
            the facade, the crates published to crates.io: what crates.io\n\
            requires of their manifests, their READMEs and licenses, and\n\
            the files each would ship (target/package), without building",
};

/// Packages every published crate present in one invocation, so cargo puts them in a local
/// registry for the run and each finds the ones it depends on there. By name rather than
/// `--workspace`, which would package the internal members too (they cannot be: they depend
/// on `pinfold-testkit`, which has no version). `--allow-dirty` lets the check run on a tree
/// with uncommitted changes; it checks what the crates would ship, not the repository.
pub(crate) fn package(workspace: &Workspace) -> Result<Outcome, Failure> {
    let packages = workspace.present(&published_crates());
    if packages.is_empty() {
        return Ok(Outcome::Skipped(
            "package: SKIPPED — no library crates found under crates/".to_string(),
        ));
    }
    let mut args = vec!["package", "--no-verify", "--allow-dirty"];
    for &package in &packages {
        args.extend(["-p", package]);
    }
    workspace.cargo(&args).run()?;
    Ok(Outcome::Passed)
}

/// The crates published to crates.io: (directory under `crates/`, package name).
fn published_crates() -> Vec<(&'static str, &'static str)> {
    let mut crates = LIBRARY_CRATES.to_vec();
    crates.push(FACADE_CRATE);
    crates
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::fs;

    use super::*;

    /// The members of the root manifest's `members = [...]`, as written there.
    fn members(workspace: &Workspace) -> Vec<String> {
        let manifest = fs::read_to_string(workspace.root.join("Cargo.toml")).unwrap();
        let start = manifest
            .find("members = [")
            .expect("the root lists its members");
        let list = &manifest[start + "members = [".len()..];
        let list = &list[..list.find(']').expect("the member list ends")];
        list.split(',')
            .map(|member| member.trim().trim_matches('"').to_string())
            .filter(|member| !member.is_empty())
            .collect()
    }

    /// The package name of a manifest, and whether it says `publish = false`.
    fn name_and_publish(manifest: &str) -> (String, bool) {
        let name = manifest
            .lines()
            .find_map(|line| line.strip_prefix("name = \""))
            .and_then(|rest| rest.strip_suffix('"'))
            .expect("a manifest names its package")
            .to_string();
        let publish = !manifest
            .lines()
            .any(|line| line.trim() == "publish = false");
        (name, publish)
    }

    #[test]
    fn packaged_crates_are_the_members_not_marked_publish_false() {
        let workspace = Workspace::locate();
        let mut publishable = BTreeSet::new();
        let mut internal = BTreeSet::new();
        for member in members(&workspace) {
            let manifest = fs::read_to_string(workspace.root.join(&member).join("Cargo.toml"))
                .unwrap_or_else(|error| panic!("member `{member}` has no manifest: {error}"));
            let (name, publish) = name_and_publish(&manifest);
            if publish {
                publishable.insert(name);
            } else {
                internal.insert(name);
            }
        }
        let packaged: BTreeSet<String> = published_crates()
            .iter()
            .map(|(_, name)| name.to_string())
            .collect();
        assert_eq!(publishable, packaged);
        for name in [
            "pinfold-testkit",
            "pinfold-benches",
            "loom-tests",
            "pinfold-reliability",
            "xtask",
        ] {
            assert!(
                internal.contains(name),
                "`{name}` must say `publish = false`"
            );
        }
    }
}
