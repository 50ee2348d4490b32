//! `cargo xtask readme`: each Rust example of `README.md` built and run as a project of its own,
//! outside the workspace, with only the dependencies its `Needs:` line names. The facade's
//! doctests run the same examples, but with every dev-dependency of the facade at hand; this
//! check fails where a reader who copies an example and adds what the README says would fail.
//!
//! A `Needs:` line reads `` Needs: `pinfold`; `futures-util`; `tokio` with `macros`, `rt`. ``:
//! entries separated by `;`, each a crate in backticks, then `with` and its features in
//! backticks. The last such line before a ```` ```rust ```` block is that block's. `pinfold`
//! is always a path dependency on the facade; every other crate takes the version of the
//! root manifest's `[workspace.dependencies]` (and the workspace's `Cargo.lock`), with its
//! default features and the ones named.

use std::fs;
use std::path::Path;

use crate::invocation::Invocation;
use crate::outcome::{Failure, Outcome};
use crate::usage::CommandUsage;
use crate::workspace::Workspace;

pub(crate) const USAGE: CommandUsage = CommandUsage {
    synopsis: "readme",
    about: "build and run each ```rust block of README.md as a project of\n\
            its own outside the workspace (target/readme/line-N), with the\n\
            dependencies and features its `Needs:` line names; a failure\n\
            names the block's line",
};

const README: &str = "README.md";

/// The line that names an example's dependencies starts with this.
const NEEDS: &str = "Needs:";

/// One ```` ```rust ```` block of the README.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Example {
    /// The line (from 1) of the block's opening fence.
    pub(crate) line: usize,
    /// The code between the fences.
    pub(crate) code: String,
    /// What the block's `Needs:` line names, `pinfold` left out.
    pub(crate) needs: Vec<Dependency>,
}

/// A crate an example needs, with the features it names.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Dependency {
    pub(crate) name: String,
    pub(crate) features: Vec<String>,
}

pub(crate) fn readme(workspace: &Workspace) -> Result<Outcome, Failure> {
    let text = read(&workspace.root.join(README))?;
    let manifest = read(&workspace.root.join("Cargo.toml"))?;
    let lock = read(&workspace.root.join("Cargo.lock"))?;
    let examples = examples(&text)?;
    if examples.is_empty() {
        return Err(format!("{README} has no ```rust block"));
    }
    let facade = workspace.root.join("crates/pinfold");
    let target = workspace.target_dir("readme");
    remove_stale_projects(&target, &examples)?;
    for example in &examples {
        let project = target.join(format!("line-{}", example.line));
        let cargo_toml = project_manifest(example, &facade, &manifest)
            .map_err(|error| format!("{README}:{}: {error}", example.line))?;
        write(&project.join("Cargo.toml"), &cargo_toml)?;
        // The workspace's lock file, so the examples get the versions the workspace is tested
        // with and need nothing that is not in the registry cache already.
        write(&project.join("Cargo.lock"), &lock)?;
        write(&project.join("src/main.rs"), &program(&example.code))?;
        println!(
            "readme: {README}:{}, in {}",
            example.line,
            project.display()
        );
        Invocation::new(&project, "cargo", &["run", "--quiet"])
            .env("CARGO_TARGET_DIR", target.join("target"))
            .run()
            .map_err(|error| {
                format!(
                    "{README}:{}: the example does not build or run with the dependencies \
                     its `{NEEDS}` line names ({}): {error}",
                    example.line,
                    project.display()
                )
            })?;
    }
    println!("readme: {} examples built and run", examples.len());
    Ok(Outcome::Passed)
}

/// Removes the projects of blocks that have moved or gone, so `target/readme` holds one
/// project per example of the README as it is.
fn remove_stale_projects(target: &Path, examples: &[Example]) -> Result<(), Failure> {
    let Ok(entries) = fs::read_dir(target) else {
        return Ok(()); // the first run
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let current = examples
            .iter()
            .any(|example| name == format!("line-{}", example.line));
        if name.starts_with("line-") && !current {
            fs::remove_dir_all(entry.path())
                .map_err(|error| format!("{}: {error}", entry.path().display()))?;
        }
    }
    Ok(())
}

fn read(path: &Path) -> Result<String, Failure> {
    fs::read_to_string(path).map_err(|error| format!("{}: {error}", path.display()))
}

fn write(path: &Path, contents: &str) -> Result<(), Failure> {
    let failed = |error: std::io::Error| format!("{}: {error}", path.display());
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir).map_err(failed)?;
    }
    // Unchanged files are left alone, so cargo does not rebuild what it built last time.
    if fs::read_to_string(path).is_ok_and(|old| old == contents) {
        return Ok(());
    }
    fs::write(path, contents).map_err(failed)
}

/// The ```` ```rust ```` blocks of `text`, each with its `Needs:` line; an error naming the
/// line of a block without one, or of a `Needs:` line that cannot be read.
pub(crate) fn examples(text: &str) -> Result<Vec<Example>, Failure> {
    let mut examples = Vec::new();
    let mut needs: Option<Vec<Dependency>> = None;
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(index, line)| (index + 1, line));
    while let Some((number, line)) = lines.next() {
        let trimmed = line.trim_start();
        if let Some(rest) = trimmed.strip_prefix(NEEDS) {
            needs = Some(parse_needs(rest).map_err(|error| format!("{README}:{number}: {error}"))?);
        } else if let Some(info) = trimmed.strip_prefix("```") {
            let is_rust = info.trim() == "rust";
            let mut code = String::new();
            let mut closed = false;
            for (_, inner) in lines.by_ref() {
                if inner.trim_start().starts_with("```") {
                    closed = true;
                    break;
                }
                code.push_str(inner);
                code.push('\n');
            }
            if !closed {
                return Err(format!("{README}:{number}: the block is never closed"));
            }
            if is_rust {
                let needs = needs.take().ok_or_else(|| {
                    format!(
                        "{README}:{number}: no `{NEEDS}` line before this example names its \
                         dependencies"
                    )
                })?;
                examples.push(Example {
                    line: number,
                    code,
                    needs,
                });
            }
        }
    }
    Ok(examples)
}

/// The entries of a `Needs:` line (what follows `Needs:`), `pinfold` left out.
pub(crate) fn parse_needs(line: &str) -> Result<Vec<Dependency>, Failure> {
    let mut needs = Vec::new();
    for entry in line.trim().trim_end_matches('.').split(';') {
        let mut names = backticked(entry).into_iter();
        let Some(name) = names.next() else {
            return Err(format!("`{NEEDS}` entry `{}` names no crate", entry.trim()));
        };
        let features: Vec<String> = names.collect();
        if !features.is_empty() && !entry.contains(" with ") {
            return Err(format!(
                "`{NEEDS}` entry `{}`: features follow `with`",
                entry.trim()
            ));
        }
        if name != "pinfold" {
            needs.push(Dependency { name, features });
        }
    }
    Ok(needs)
}

/// The words between backticks in `text`, in order.
fn backticked(text: &str) -> Vec<String> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

/// The version the root manifest's `[workspace.dependencies]` gives `name`.
pub(crate) fn workspace_version(manifest: &str, name: &str) -> Option<String> {
    let table = &manifest[manifest.find("[workspace.dependencies]")?..];
    let table = table[1..]
        .find("\n[")
        .map_or(table, |end| &table[..end + 1]);
    let value = table.lines().find_map(|line| {
        let (key, value) = line.split_once('=')?;
        (key.trim() == name).then(|| value.trim())
    })?;
    let quoted = match value.strip_prefix('"') {
        Some(bare) => bare,
        None => {
            let at = value.find("version")?;
            let after = &value[at + "version".len()..];
            after
                .trim_start()
                .strip_prefix('=')?
                .trim_start()
                .strip_prefix('"')?
        }
    };
    Some(quoted[..quoted.find('"')?].to_string())
}

/// The `Cargo.toml` of an example's project: the facade by path, each other crate it needs at
/// the workspace's version, and an empty `[workspace]`, so it is a workspace of its own.
pub(crate) fn project_manifest(
    example: &Example,
    facade: &Path,
    workspace_manifest: &str,
) -> Result<String, Failure> {
    let mut toml = format!(
        "# Written by `cargo xtask readme` from README.md line {}.\n\
         [package]\nname = \"readme-line-{}\"\nversion = \"0.0.0\"\nedition = \"2024\"\n\
         publish = false\n\n[workspace]\n\n[dependencies]\npinfold = {{ path = {:?} }}\n",
        example.line,
        example.line,
        facade.display()
    );
    for dependency in &example.needs {
        let version = workspace_version(workspace_manifest, &dependency.name).ok_or_else(|| {
            format!(
                "`{}` is not in the root manifest's [workspace.dependencies]",
                dependency.name
            )
        })?;
        let features: Vec<String> = dependency
            .features
            .iter()
            .map(|feature| format!("{feature:?}"))
            .collect();
        toml.push_str(&format!(
            "{} = {{ version = \"{version}\", features = [{}] }}\n",
            dependency.name,
            features.join(", ")
        ));
    }
    Ok(toml)
}

/// The example as a program: as it is if it has a `main`, else inside one (as rustdoc does).
pub(crate) fn program(code: &str) -> String {
    if code.contains("fn main(") {
        code.to_string()
    } else {
        format!("fn main() {{\n{code}}}\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const README_TEXT: &str = "# title\n\
        \n\
        ```sh\n\
        cargo add pinfold\n\
        ```\n\
        \n\
        Needs: `pinfold`; `futures-util`; `tokio` with `macros`, `rt`.\n\
        \n\
        ```rust\n\
        fn main() {}\n\
        ```\n\
        \n\
        Needs: `pinfold`.\n\
        ```rust\n\
        let x = 1;\n\
        ```\n";

    fn dependency(name: &str, features: &[&str]) -> Dependency {
        Dependency {
            name: name.to_string(),
            features: features.iter().map(|f| f.to_string()).collect(),
        }
    }

    #[test]
    fn rust_blocks_come_with_their_line_and_needs() {
        let examples = examples(README_TEXT).unwrap();
        assert_eq!(
            examples,
            [
                Example {
                    line: 9,
                    code: "fn main() {}\n".to_string(),
                    needs: vec![
                        dependency("futures-util", &[]),
                        dependency("tokio", &["macros", "rt"]),
                    ],
                },
                Example {
                    line: 14,
                    code: "let x = 1;\n".to_string(),
                    needs: vec![],
                },
            ]
        );
    }

    #[test]
    fn a_needs_line_serves_one_example_only() {
        let text = "Needs: `pinfold`.\n```rust\nfn main() {}\n```\n```rust\nfn main() {}\n```\n";
        let error = examples(text).unwrap_err();
        assert_eq!(
            error,
            "README.md:5: no `Needs:` line before this example names its dependencies"
        );
    }

    #[test]
    fn an_unclosed_block_names_its_line() {
        let error = examples("Needs: `pinfold`.\n\n```rust\nfn main() {}\n").unwrap_err();
        assert_eq!(error, "README.md:3: the block is never closed");
    }

    #[test]
    fn a_needs_entry_without_a_crate_is_refused() {
        let error = examples("Needs: `pinfold`; tokio.\n```rust\n```\n").unwrap_err();
        assert!(error.starts_with("README.md:1: "), "{error}");
    }

    #[test]
    fn features_without_with_are_refused() {
        assert!(parse_needs(" `tokio` `rt`.").is_err());
    }

    #[test]
    fn versions_come_from_the_workspace_dependencies() {
        let manifest = "[workspace]\nmembers = []\n\n[workspace.dependencies]\n\
            futures-util = { version = \"0.3.31\" }\n\
            tokio = { version = \"1\", features = [\"rt\"] }\n\
            bab = \"0.0.4\"\n\n[workspace.lints.rust]\nfoo = \"9\"\n";
        assert_eq!(
            workspace_version(manifest, "futures-util").as_deref(),
            Some("0.3.31")
        );
        assert_eq!(workspace_version(manifest, "tokio").as_deref(), Some("1"));
        assert_eq!(workspace_version(manifest, "bab").as_deref(), Some("0.0.4"));
        assert_eq!(workspace_version(manifest, "foo"), None);
        assert_eq!(workspace_version(manifest, "missing"), None);
    }

    #[test]
    fn the_project_has_only_the_named_dependencies_and_features() {
        let example = Example {
            line: 49,
            code: String::new(),
            needs: vec![dependency("tokio", &["macros", "rt"])],
        };
        let manifest = "[workspace.dependencies]\n\
            tokio = { version = \"1\", features = [\"rt\", \"time\", \"test-util\"] }\n";
        let toml = project_manifest(&example, Path::new("/repo/crates/pinfold"), manifest).unwrap();
        assert!(toml.contains("\n[workspace]\n"), "{toml}");
        assert!(
            toml.contains("\npinfold = { path = \"/repo/crates/pinfold\" }\n"),
            "{toml}"
        );
        assert!(
            toml.contains("\ntokio = { version = \"1\", features = [\"macros\", \"rt\"] }\n"),
            "{toml}"
        );
        assert!(!toml.contains("test-util"), "{toml}");
    }

    #[test]
    fn a_crate_missing_from_the_workspace_is_refused() {
        let example = Example {
            line: 7,
            code: String::new(),
            needs: vec![dependency("serde_json", &[])],
        };
        assert!(project_manifest(&example, Path::new("/p"), "[workspace.dependencies]\n").is_err());
    }

    #[test]
    fn code_without_main_is_wrapped_in_one() {
        assert_eq!(program("let x = 1;\n"), "fn main() {\nlet x = 1;\n}\n");
        let with_main = "#[tokio::main]\nasync fn main() {}\n";
        assert_eq!(program(with_main), with_main);
    }

    #[test]
    fn the_readme_names_the_needs_of_every_example() {
        let workspace = Workspace::locate();
        let text = read(&workspace.root.join(README)).unwrap();
        let manifest = read(&workspace.root.join("Cargo.toml")).unwrap();
        let examples = examples(&text).unwrap();
        assert!(!examples.is_empty());
        for example in &examples {
            project_manifest(example, Path::new("/p"), &manifest).unwrap();
        }
    }
}
