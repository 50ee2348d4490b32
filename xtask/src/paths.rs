//! `cargo xtask paths`: the examples in the docs of the items the facade re-exports at its root
//! are written with the paths a user of `pinfold` writes (`pinfold::…`, `futures::…`), so that
//! they paste into a project that depends on `pinfold` (and `futures`). rustdoc shows an item's
//! docs unchanged wherever it is re-exported, so an example there that imports
//! `pinfold_buffer::…` fails with E0432 for a user of the facade. The doctests compile them
//! against the facade (each crate has it as a dev-dependency); this check makes sure they
//! name it.

use std::fs;
use std::path::Path;

use crate::outcome::{Failure, Outcome};
use crate::usage::CommandUsage;
use crate::workspace::Workspace;

pub(crate) const USAGE: CommandUsage = CommandUsage {
    synopsis: "paths",
    about: "check that the examples in the item docs of the crates the\n\
            facade re-exports, and of the keyed set their sets forward to,\n\
            use the facade's paths (pinfold::, futures::), not a sub-crate's;\n\
            names each file and line",
};

/// The sources of the items the facade re-exports at its root, and of the keyed set's methods,
/// which the sets' and merges' methods of the same names forward to and link to for their
/// examples.
const REEXPORTED: [&str; 6] = [
    "unordered/src",
    "join/src",
    "buffer/src",
    "merge/src",
    "map/src",
    "arena/src/set",
];

/// Paths a user of the facade cannot write, and what to write instead.
const INTERNAL_PATHS: [(&str, &str); 10] = [
    ("pinfold_unordered::", "pinfold::"),
    ("pinfold_join::", "pinfold::"),
    ("pinfold_buffer::", "pinfold::"),
    ("pinfold_merge::", "pinfold::"),
    ("pinfold_map::", "pinfold::"),
    ("pinfold_arena::", "pinfold::arena::"),
    ("futures_util::", "futures::"),
    ("futures_core::", "futures::"),
    ("futures_channel::", "futures::channel::"),
    ("futures_executor::", "futures::executor::"),
];

pub(crate) fn paths(workspace: &Workspace) -> Result<Outcome, Failure> {
    let mut findings = Vec::new();
    let mut files = 0;
    for dir in REEXPORTED {
        let src = workspace.root.join("crates").join(dir);
        if !src.exists() {
            continue;
        }
        for file in rust_files(&src)? {
            files += 1;
            let text = fs::read_to_string(&file)
                .map_err(|error| format!("{}: {error}", file.display()))?;
            let shown = file.strip_prefix(&workspace.root).unwrap_or(&file);
            for (line, found, instead) in internal_paths(&text) {
                findings.push(format!(
                    "{}:{line}: `{found}` in an example: write `{instead}`",
                    shown.display()
                ));
            }
        }
    }
    if findings.is_empty() {
        println!("paths: {files} files checked; every item example uses the facade's paths");
        return Ok(Outcome::Passed);
    }
    for finding in &findings {
        eprintln!("{finding}");
    }
    Err(format!(
        "{} line(s) of item examples name a path a user of `pinfold` cannot write",
        findings.len()
    ))
}

/// The `.rs` files under `dir`, sorted.
fn rust_files(dir: &Path) -> Result<Vec<std::path::PathBuf>, Failure> {
    let mut files = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        let entries = fs::read_dir(&dir).map_err(|error| format!("{}: {error}", dir.display()))?;
        for entry in entries {
            let path = entry
                .map_err(|error| format!("{}: {error}", dir.display()))?
                .path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|ext| ext == "rs") {
                files.push(path);
            }
        }
    }
    files.sort();
    Ok(files)
}

/// The internal paths in the Rust code blocks of `text`'s `///` docs: (line from 1, the path,
/// what to write instead). `//!` docs are the sub-crate's own page, where its paths are right.
pub(crate) fn internal_paths(text: &str) -> Vec<(usize, &'static str, &'static str)> {
    let mut found = Vec::new();
    let mut in_code = false;
    for (index, line) in text.lines().enumerate() {
        let Some(doc) = line.trim_start().strip_prefix("///") else {
            in_code = false;
            continue;
        };
        let doc = doc.trim_start();
        if let Some(info) = doc.strip_prefix("```") {
            in_code = !in_code && is_rust(info.trim());
            continue;
        }
        if !in_code {
            continue;
        }
        for (path, instead) in INTERNAL_PATHS {
            if contains_path(doc, path) {
                found.push((index + 1, path, instead));
            }
        }
    }
    found
}

/// Whether a code block with this info string is compiled as Rust by rustdoc.
fn is_rust(info: &str) -> bool {
    info.split(',').map(str::trim).all(|word| {
        word.is_empty()
            || word == "rust"
            || word == "no_run"
            || word == "should_panic"
            || word == "ignore"
            || word.starts_with("compile_fail")
            || word.starts_with("edition")
    })
}

/// Whether `path` occurs in `line` as a path of its own, not as the tail of a longer name.
fn contains_path(line: &str, path: &str) -> bool {
    line.match_indices(path).any(|(at, _)| {
        line[..at]
            .chars()
            .next_back()
            .is_none_or(|c| !(c.is_alphanumeric() || c == '_'))
    })
}

#[cfg(test)]
mod tests {
    use super::internal_paths;

    #[test]
    fn finds_a_sub_crate_path_in_an_item_example() {
        let text = "/// Text naming pinfold_buffer::Limit is prose.\n\
                    ///\n\
                    /// ```\n\
                    /// use pinfold_buffer::Limit;\n\
                    /// # futures_executor::block_on(async {});\n\
                    /// ```\n\
                    pub struct A;\n";
        assert_eq!(
            internal_paths(text),
            [
                (4, "pinfold_buffer::", "pinfold::"),
                (5, "futures_executor::", "futures::executor::")
            ]
        );
    }

    #[test]
    fn leaves_the_facade_s_paths_text_blocks_and_crate_docs_alone() {
        let text = "//! ```\n\
                    //! use pinfold_buffer::Limit;\n\
                    //! ```\n\
                    /// ```text\n\
                    /// pinfold_buffer::Limit\n\
                    /// ```\n\
                    /// ```\n\
                    /// use pinfold::Limit;\n\
                    /// use futures::StreamExt;\n\
                    /// let my_futures_util::x = 1;\n\
                    /// ```\n";
        assert_eq!(internal_paths(text), []);
    }
}
