//! `cargo xtask layers`: the import graph of each library crate's modules, read from their
//! `crate::` and `super::` paths, has no cycle, and in a crate with declared layers no module
//! imports from a layer above its own. A path to a name the crate root re-exports counts as
//! an import of the module that defines it. Test modules, doc-only imports (`#[cfg(doc)]`)
//! and comments are not read.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

use crate::outcome::{Failure, Outcome};
use crate::usage::CommandUsage;
use crate::workspace::{FACADE_CRATE, LIBRARY_CRATES, Workspace};

pub(crate) const USAGE: CommandUsage = CommandUsage {
    synopsis: "layers [--graph]",
    about: "check each library crate's module imports: no cycle, and in\n\
            the arena no import from a layer above (its root modules, then\n\
            wake, poll, storage, set); --graph prints every import",
};

/// The arena's layers, lowest first: the top-level module names in each. A module in a layer
/// may import from its own layer and those below. The crate root and the modules that are
/// documentation only are in none: they may name anything.
const ARENA_LAYERS: &[&[&str]] = &[
    &["sync", "unwind", "key", "index", "coop"],
    &["wake"],
    &["poll"],
    &["storage"],
    &["set"],
];

/// Modules of the arena that hold documentation only.
const ARENA_DOCS: &[&str] = &["contract", "implementation"];

pub(crate) fn layers(workspace: &Workspace, args: &[String]) -> Result<Outcome, Failure> {
    let graph = match args {
        [] => false,
        [flag] if flag == "--graph" => true,
        [other, ..] => {
            return Err(format!(
                "`layers` takes `--graph` or nothing, got `{other}`"
            ));
        }
    };
    let mut crates = LIBRARY_CRATES.to_vec();
    crates.push(FACADE_CRATE);
    let mut findings = Vec::new();
    let mut edges_seen = 0;
    for (dir, _) in crates {
        let src = workspace.root.join("crates").join(dir).join("src");
        if !src.is_dir() {
            continue;
        }
        let modules = read_modules(&src)?;
        let imports = imports(&modules);
        edges_seen += imports.values().map(BTreeSet::len).sum::<usize>();
        if graph {
            for (from, tos) in &imports {
                for to in tos {
                    println!("{dir}: {} -> {}", shown(from), shown(to));
                }
            }
        }
        if dir == "arena" {
            findings.extend(upward(&imports).into_iter().map(|(from, to)| {
                format!(
                    "crates/{dir}: `{}` imports from `{}`, a layer above it",
                    shown(&from),
                    shown(&to)
                )
            }));
        }
        if let Some(cycle) = cycle(&imports) {
            let names: Vec<String> = cycle.iter().map(|m| shown(m)).collect();
            findings.push(format!(
                "crates/{dir}: an import cycle: {}",
                names.join(" -> ")
            ));
        }
    }
    if findings.is_empty() {
        println!("layers: {edges_seen} imports read; no cycle, none up a layer");
        return Ok(Outcome::Passed);
    }
    for finding in &findings {
        eprintln!("{finding}");
    }
    Err(format!("{} layering finding(s)", findings.len()))
}

/// A module's path in its crate, `crate` for the root.
fn shown(module: &str) -> String {
    if module.is_empty() {
        "crate".to_owned()
    } else {
        module.to_owned()
    }
}

/// The crate's modules (path from the root, `""` for the root) with their source, test
/// modules left out.
fn read_modules(src: &Path) -> Result<BTreeMap<String, String>, Failure> {
    let mut modules = BTreeMap::new();
    let mut dirs = vec![src.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        let entries = fs::read_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        for entry in entries {
            let path = entry.map_err(|e| format!("{}: {e}", dir.display()))?.path();
            let relative = path.strip_prefix(src).expect("under src").to_path_buf();
            let parts: Vec<String> = relative
                .iter()
                .map(|part| part.to_string_lossy().into_owned())
                .collect();
            if parts
                .iter()
                .any(|part| part == "tests" || part == "tests.rs")
            {
                continue;
            }
            if path.is_dir() {
                dirs.push(path);
            } else if let Some(module) = module_path(&parts) {
                let text =
                    fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
                modules.insert(module, text);
            }
        }
    }
    Ok(modules)
}

/// The module path of the file at `parts` under `src`: `lib.rs` is the root, `a/mod.rs` and
/// `a.rs` are `a`, `a/b.rs` is `a::b`. `None` for a file that is not Rust.
pub(crate) fn module_path(parts: &[String]) -> Option<String> {
    let (file, dirs) = parts.split_last()?;
    let stem = file.strip_suffix(".rs")?;
    let mut path: Vec<&str> = dirs.iter().map(String::as_str).collect();
    if !(stem == "mod" || (stem == "lib" && dirs.is_empty())) {
        path.push(stem);
    }
    Some(path.join("::"))
}

/// Each module's imports of other modules of its crate (not of itself or its submodules; a
/// name the root re-exports counts as the module behind it). The root's own imports are not
/// read: it declares and re-exports the modules, and is above them all.
fn imports(modules: &BTreeMap<String, String>) -> BTreeMap<String, BTreeSet<String>> {
    let names: BTreeSet<&str> = modules.keys().map(String::as_str).collect();
    let reexports = modules
        .get("")
        .map(|root| reexports(root))
        .unwrap_or_default();
    let mut graph = BTreeMap::new();
    for (module, text) in modules {
        if module.is_empty() {
            graph.insert(module.clone(), BTreeSet::new());
            continue;
        }
        let mut targets = BTreeSet::new();
        for path in paths(text, module) {
            let Some(target) = resolve(&path, &names, &reexports) else {
                continue;
            };
            let inside = target == *module || target.starts_with(&format!("{module}::"));
            if !inside {
                targets.insert(target);
            }
        }
        graph.insert(module.clone(), targets);
    }
    graph
}

/// The module that `path` (segments from the crate root) names: its longest prefix that is a
/// module, or through the root's re-export of its first segment.
fn resolve(
    path: &[String],
    modules: &BTreeSet<&str>,
    reexports: &BTreeMap<String, String>,
) -> Option<String> {
    for len in (1..=path.len()).rev() {
        let candidate = path[..len].join("::");
        if modules.contains(candidate.as_str()) {
            return Some(candidate);
        }
    }
    let first = path.first()?;
    reexports.get(first).cloned()
}

/// The root's `pub use a::b::{X, Y}` re-exports: name to the module it comes from.
fn reexports(root: &str) -> BTreeMap<String, String> {
    let mut map = BTreeMap::new();
    for item in use_items(root) {
        let Some(rest) = item.strip_prefix("pub use ") else {
            continue;
        };
        let rest = rest.trim_end_matches(';').trim();
        let rest = rest.strip_prefix("crate::").unwrap_or(rest);
        for full in expand(rest) {
            let segments: Vec<&str> = full.split("::").collect();
            if let Some((name, module)) = segments.split_last() {
                let name = name.split(" as ").last().unwrap_or(name).trim();
                if !module.is_empty() {
                    map.insert(name.to_owned(), module.join("::"));
                }
            }
        }
    }
    map
}

/// The `use` items of `text` (whole, also over several lines), doc-only ones left out.
fn use_items(text: &str) -> Vec<String> {
    let mut items = Vec::new();
    let mut current: Option<String> = None;
    let mut doc_only = false;
    for line in code_lines(text) {
        let trimmed = line.trim();
        if let Some(item) = current.as_mut() {
            item.push(' ');
            item.push_str(trimmed);
            if trimmed.ends_with(';') {
                items.push(current.take().expect("an item"));
            }
            continue;
        }
        if trimmed.starts_with("#[cfg(doc)]") {
            doc_only = true;
            continue;
        }
        let is_use = trimmed.starts_with("use ")
            || trimmed.starts_with("pub use ")
            || trimmed.starts_with("pub(crate) use ");
        if is_use && !doc_only {
            if trimmed.ends_with(';') {
                items.push(trimmed.to_owned());
            } else {
                current = Some(trimmed.to_owned());
            }
        }
        if !trimmed.starts_with("#[") {
            doc_only = false;
        }
    }
    items
}

/// `a::{b, c::{d, e}}` as `a::b`, `a::c::d`, `a::c::e`.
pub(crate) fn expand(tree: &str) -> Vec<String> {
    let tree = tree.trim();
    let Some(open) = tree.find('{') else {
        return vec![tree.to_owned()];
    };
    let prefix = tree[..open].trim_end_matches("::");
    let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    parts
        .into_iter()
        .map(str::trim)
        .filter(|part| !part.is_empty())
        .flat_map(|part| {
            expand(part).into_iter().map(|rest| {
                if rest == "self" {
                    prefix.to_owned()
                } else if prefix.is_empty() {
                    rest
                } else {
                    format!("{prefix}::{rest}")
                }
            })
        })
        .collect()
}

/// The crate paths `text` (the source of `module`) names, as segments from the root: every
/// `use` item's paths, and `crate::a::b` or `super::a` paths in code.
pub(crate) fn paths(text: &str, module: &str) -> Vec<Vec<String>> {
    let here: Vec<&str> = if module.is_empty() {
        Vec::new()
    } else {
        module.split("::").collect()
    };
    let mut found = Vec::new();
    let absolute = |path: &str| -> Option<Vec<String>> {
        let path = path.split(" as ").next()?.trim();
        let mut segments: Vec<&str> = path.split("::").map(str::trim).collect();
        let mut base: Vec<&str> = here.clone();
        match segments.first().copied() {
            Some("crate") => {
                base.clear();
                segments.remove(0);
            }
            Some("super") => {
                while segments.first() == Some(&"super") {
                    base.pop()?;
                    segments.remove(0);
                }
            }
            Some("self") => {
                segments.remove(0);
            }
            _ => return None,
        }
        base.extend(
            segments
                .into_iter()
                .filter(|s| !s.is_empty() && *s != "self"),
        );
        Some(base.into_iter().map(str::to_owned).collect())
    };
    let mut uses = String::new();
    for item in use_items(text) {
        let tree = item
            .trim_start_matches("pub(crate) ")
            .trim_start_matches("pub ")
            .trim_start_matches("use ")
            .trim_end_matches(';');
        found.extend(expand(tree).iter().filter_map(|path| absolute(path)));
        uses.push_str(&item);
    }
    for line in code_lines(text) {
        let trimmed = line.trim();
        if trimmed.starts_with("use ") || trimmed.starts_with("pub use ") {
            continue;
        }
        for prefix in ["crate::", "super::"] {
            let mut rest = line;
            while let Some(at) = rest.find(prefix) {
                let before = rest[..at].chars().last();
                let tail = &rest[at..];
                let end = tail
                    .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                    .unwrap_or(tail.len());
                if !before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                    found.extend(absolute(tail[..end].trim_end_matches(':')));
                }
                rest = &tail[end.max(1)..];
            }
        }
    }
    found
}

/// The lines of `text` that are code: comments and doc comments left out, and so is the body
/// of a module compiled for tests only (`#[cfg(test)]`, `#[cfg(all(test, ...))]`).
fn code_lines(text: &str) -> impl Iterator<Item = &str> {
    let mut skipping_test_module = false;
    let mut depth = 0i32;
    let mut pending_test = false;
    text.lines().filter(move |line| {
        let trimmed = line.trim_start();
        if skipping_test_module {
            depth += brace_balance(trimmed);
            if depth <= 0 {
                skipping_test_module = false;
            }
            return false;
        }
        if trimmed.starts_with("//") {
            return false;
        }
        if trimmed.starts_with("#[cfg(") && trimmed.contains("test") {
            pending_test = true;
            return false;
        }
        if pending_test && trimmed.starts_with("mod ") && trimmed.ends_with('{') {
            skipping_test_module = true;
            depth = brace_balance(trimmed);
            pending_test = false;
            return false;
        }
        if !trimmed.starts_with("#[") {
            pending_test = false;
        }
        true
    })
}

fn brace_balance(line: &str) -> i32 {
    line.chars()
        .map(|c| match c {
            '{' => 1,
            '}' => -1,
            _ => 0,
        })
        .sum()
}

/// The arena's layer of `module`: the index in [`ARENA_LAYERS`] of its top-level name; `None`
/// for the root and the documentation modules.
fn layer(module: &str) -> Option<usize> {
    let top = module.split("::").next()?;
    if top.is_empty() || ARENA_DOCS.contains(&top) {
        return None;
    }
    Some(
        ARENA_LAYERS
            .iter()
            .position(|layer| layer.contains(&top))
            .unwrap_or_else(|| {
                panic!("the arena's module `{top}` is in no layer: add it to ARENA_LAYERS")
            }),
    )
}

/// The imports that run from a module up to a layer above its own.
pub(crate) fn upward(imports: &BTreeMap<String, BTreeSet<String>>) -> Vec<(String, String)> {
    let mut found = Vec::new();
    for (from, tos) in imports {
        let Some(from_layer) = layer(from) else {
            continue;
        };
        for to in tos {
            if layer(to).is_some_and(|to_layer| to_layer > from_layer) {
                found.push((from.clone(), to.clone()));
            }
        }
    }
    found
}

/// A cycle of imports, if there is one, as the modules on it with the first repeated last.
pub(crate) fn cycle(imports: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    // 0: not seen, 1: on the current path, 2: done.
    let mut state: BTreeMap<&str, u8> = BTreeMap::new();
    let mut path: Vec<&str> = Vec::new();
    fn visit<'a>(
        node: &'a str,
        imports: &'a BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<&'a str, u8>,
        path: &mut Vec<&'a str>,
    ) -> Option<Vec<String>> {
        state.insert(node, 1);
        path.push(node);
        for next in imports.get(node).into_iter().flatten() {
            match state.get(next.as_str()).copied().unwrap_or(0) {
                1 => {
                    let start = path.iter().position(|m| *m == next.as_str())?;
                    let mut cycle: Vec<String> =
                        path[start..].iter().map(|m| (*m).to_owned()).collect();
                    cycle.push(next.clone());
                    return Some(cycle);
                }
                0 => {
                    if let Some(cycle) = visit(next, imports, state, path) {
                        return Some(cycle);
                    }
                }
                _ => {}
            }
        }
        path.pop();
        state.insert(node, 2);
        None
    }
    for node in imports.keys() {
        if state.get(node.as_str()).copied().unwrap_or(0) != 0 {
            continue;
        }
        let found = visit(node, imports, &mut state, &mut path);
        if found.is_some() {
            return found;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(edges: &[(&str, &str)]) -> BTreeMap<String, BTreeSet<String>> {
        let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (from, to) in edges {
            graph
                .entry((*from).to_owned())
                .or_default()
                .insert((*to).to_owned());
            graph.entry((*to).to_owned()).or_default();
        }
        graph
    }

    #[test]
    fn files_name_their_modules() {
        let path = |parts: &[&str]| {
            module_path(&parts.iter().map(|p| (*p).to_owned()).collect::<Vec<_>>())
        };
        assert_eq!(path(&["lib.rs"]).as_deref(), Some(""));
        assert_eq!(path(&["wake", "mod.rs"]).as_deref(), Some("wake"));
        assert_eq!(path(&["wake", "hub.rs"]).as_deref(), Some("wake::hub"));
        assert_eq!(path(&["key.rs"]).as_deref(), Some("key"));
        assert_eq!(path(&["README.md"]), None);
    }

    #[test]
    fn use_trees_expand_to_every_path() {
        assert_eq!(
            expand("crate::poll::{round::{self, Slots}, queue::Mark}"),
            [
                "crate::poll::round",
                "crate::poll::round::Slots",
                "crate::poll::queue::Mark"
            ]
        );
    }

    #[test]
    fn paths_are_read_from_uses_and_code_but_not_comments_or_doc_uses() {
        let text = "use crate::wake::hub::Hub;\nuse super::sealed;\n#[cfg(doc)]\nuse crate::set::X;\n\
                    // crate::storage::store\nfn f() { crate::index::trusted(a, 1); }\n";
        let found: Vec<String> = paths(text, "storage::arena")
            .iter()
            .map(|p| p.join("::"))
            .collect();
        assert_eq!(
            found,
            ["wake::hub::Hub", "storage::sealed", "index::trusted"]
        );
    }

    #[test]
    fn an_import_up_a_layer_is_found() {
        let ok = graph(&[
            ("storage::store", "poll::round"),
            ("poll::round", "wake::hub"),
        ]);
        assert!(upward(&ok).is_empty());
        let up = graph(&[("poll::queue", "storage::store")]);
        assert_eq!(
            upward(&up),
            [("poll::queue".to_owned(), "storage::store".to_owned())]
        );
    }

    #[test]
    fn a_cycle_is_found_and_a_tree_has_none() {
        assert_eq!(cycle(&graph(&[("a", "b"), ("b", "c"), ("a", "c")])), None);
        assert_eq!(
            cycle(&graph(&[("a", "b"), ("b", "c"), ("c", "a")])),
            Some(vec!["a".into(), "b".into(), "c".into(), "a".into()])
        );
    }
}
