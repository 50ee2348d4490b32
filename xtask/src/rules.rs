//! `cargo xtask rules`: the shared rules of the poll loop (order, fairness, wakes, panics,
//! memory) are stated once, in the arena's contract (`crates/arena/src/contract.rs`, rendered
//! as `pinfold_arena::contract`); every other crate links there and states only what differs
//! for it. This check fails, naming file and line, where a crate's `//!` docs or its README
//! state a rule again: under a heading named for one, or in a phrase known from an earlier
//! restatement. Prose that states what differs, under a heading of its own, is not matched.

use std::fs;

use crate::outcome::{Failure, Outcome};
use crate::usage::CommandUsage;
use crate::workspace::{FACADE_CRATE, LIBRARY_CRATES, Workspace};

pub(crate) const USAGE: CommandUsage = CommandUsage {
    synopsis: "rules",
    about: "check that the shared rules of the poll loop are stated once,\n\
            in the arena's contract: no other crate's //! docs or README\n\
            has a heading named for one (Order, Fairness, Wakes, Panics,\n\
            Memory) or a known phrase of one; names each file and line",
};

/// The file that states the shared rules, relative to the workspace root.
const CONTRACT: &str = "crates/arena/src/contract.rs";

/// The shared rules: the contract has a heading for each, and no other crate's docs do.
const RULE_HEADINGS: [&str; 5] = ["Order", "Fairness", "Wakes", "Panics", "Memory"];

/// Phrases of restatements that were taken out of the crates' docs, lowercase, as they read
/// once line breaks, backticks and emphasis are set aside: each states a shared rule, which
/// the contract states (the last, fairness across the groups of a growable primitive).
const RULE_PHRASES: [&str; 10] = [
    "polls each future at most once",
    "polls each value at most once",
    "polls each stream at most once",
    "polls each running future at most once",
    "a burst of wakes wakes the task once",
    "wakers outlive",
    "starves neither",
    "leaves the set consistent and usable",
    "leaves the merge consistent and usable",
    "polling is fair across groups",
];

/// Crates whose sections named for a rule state their own rules, not the contract's: the pool
/// polls no values in rounds, and its `Order`, `Wakes`, `Memory` and `Panics` are about its
/// waiters and buffers (its types' docs link to those sections). Their phrases are checked.
const OWN_RULE_SECTIONS: [&str; 1] = ["pool"];

/// Where a doc text comes from, which decides which of its lines are docs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Source {
    /// A `lib.rs`: its `//!` lines are the crate's docs.
    CrateDocs,
    /// A `README.md`: every line.
    Readme,
}

/// One restatement: the line (from 1) where it starts, and what was found.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Restatement {
    pub(crate) line: usize,
    pub(crate) found: String,
}

pub(crate) fn rules(workspace: &Workspace) -> Result<Outcome, Failure> {
    let contract = read(workspace, CONTRACT)?;
    let missing = missing_rules(&contract);
    if !missing.is_empty() {
        return Err(format!(
            "{CONTRACT} has no heading for {}: it is where the shared rules are stated",
            missing.join(", ")
        ));
    }
    let mut crates = LIBRARY_CRATES.to_vec();
    crates.push(FACADE_CRATE);
    let mut checked = 0;
    let mut findings = Vec::new();
    for (dir, _) in crates {
        let headings_allowed = OWN_RULE_SECTIONS.contains(&dir);
        for (file, source) in [
            (format!("crates/{dir}/src/lib.rs"), Source::CrateDocs),
            (format!("crates/{dir}/README.md"), Source::Readme),
        ] {
            if !workspace.has(&file) {
                continue;
            }
            checked += 1;
            let text = read(workspace, &file)?;
            for restatement in restatements(&text, source, headings_allowed) {
                findings.push(format!(
                    "{file}:{}: {}",
                    restatement.line, restatement.found
                ));
            }
        }
    }
    if findings.is_empty() {
        println!("rules: {checked} files checked; the shared rules are stated in {CONTRACT} only");
        return Ok(Outcome::Passed);
    }
    for finding in &findings {
        eprintln!("{finding}");
    }
    Err(format!(
        "{} restatement(s) of the shared rules: link to `pinfold_arena::contract` ({CONTRACT}) \
         and state only what differs",
        findings.len()
    ))
}

fn read(workspace: &Workspace, file: &str) -> Result<String, Failure> {
    fs::read_to_string(workspace.root.join(file)).map_err(|error| format!("{file}: {error}"))
}

/// The rules that `contract` (the contract's source) has no heading for.
pub(crate) fn missing_rules(contract: &str) -> Vec<&'static str> {
    let headings: Vec<String> = prose_lines(contract, Source::CrateDocs)
        .filter_map(|(_, line)| heading(line))
        .collect();
    RULE_HEADINGS
        .into_iter()
        .filter(|rule| !headings.iter().any(|h| h.eq_ignore_ascii_case(rule)))
        .collect()
}

/// The restatements of a shared rule in `text`: headings named for a rule (unless
/// `headings_allowed`), and phrases of [`RULE_PHRASES`], also across line breaks.
pub(crate) fn restatements(text: &str, source: Source, headings_allowed: bool) -> Vec<Restatement> {
    let lines: Vec<(usize, &str)> = prose_lines(text, source).collect();
    let mut found = Vec::new();
    if !headings_allowed {
        for &(line, prose) in &lines {
            let Some(title) = heading(prose) else {
                continue;
            };
            if let Some(rule) = RULE_HEADINGS
                .into_iter()
                .find(|rule| title.eq_ignore_ascii_case(rule))
            {
                found.push(Restatement {
                    line,
                    found: format!("a heading named for the shared rule `{rule}`"),
                });
            }
        }
    }
    // The prose as one lowercase string, one space between words, with the line each
    // character came from.
    let mut joined = String::new();
    let mut line_of = Vec::new();
    for &(line, prose) in &lines {
        for word in prose.split_whitespace() {
            let word: String = word
                .chars()
                .filter(|c| !matches!(c, '`' | '*'))
                .flat_map(char::to_lowercase)
                .collect();
            if word.is_empty() {
                continue;
            }
            if !joined.is_empty() {
                joined.push(' ');
                line_of.push(line);
            }
            joined.push_str(&word);
            line_of.resize(joined.len(), line);
        }
    }
    for phrase in RULE_PHRASES {
        for (at, _) in joined.match_indices(phrase) {
            found.push(Restatement {
                line: line_of[at],
                found: format!("\"{phrase}\" restates a shared rule"),
            });
        }
    }
    found.sort_by_key(|restatement| restatement.line);
    found
}

/// The lines of `text` that are prose docs, with their numbers (from 1): for crate docs the
/// `//!` lines, without that marker; outside code blocks, whose lines (a doctest's hidden
/// `# ...` lines among them) are not prose.
fn prose_lines(text: &str, source: Source) -> impl Iterator<Item = (usize, &str)> {
    let mut in_code = false;
    text.lines().enumerate().filter_map(move |(index, line)| {
        let doc = match source {
            Source::Readme => line,
            Source::CrateDocs => {
                let rest = line.trim_start().strip_prefix("//!")?;
                rest.strip_prefix(' ').unwrap_or(rest)
            }
        };
        if doc.trim_start().starts_with("```") {
            in_code = !in_code;
            return None;
        }
        (!in_code).then_some((index + 1, doc))
    })
}

/// The title of a markdown heading (`# Title` to `###### Title`), if `line` is one.
fn heading(line: &str) -> Option<String> {
    let hashes = line.len() - line.trim_start_matches('#').len();
    if !(1..=6).contains(&hashes) {
        return None;
    }
    let title = line[hashes..].strip_prefix(' ')?;
    Some(title.trim().trim_end_matches('#').trim().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines_found(text: &str, source: Source) -> Vec<usize> {
        restatements(text, source, false)
            .into_iter()
            .map(|restatement| restatement.line)
            .collect()
    }

    #[test]
    fn crate_docs_that_restate_a_rule_fail() {
        let docs = "//! A set of futures.\n\
                    //!\n\
                    //! # Fairness\n\
                    //!\n\
                    //! One call polls each future at most once, and a burst of\n\
                    //! wakes wakes the task once.\n\
                    #![no_std]\n";
        let found = restatements(docs, Source::CrateDocs, false);
        assert_eq!(
            found.iter().map(|r| r.line).collect::<Vec<_>>(),
            [3, 5, 5],
            "{found:?}"
        );
        assert!(found[0].found.contains("`Fairness`"), "{found:?}");
    }

    #[test]
    fn crate_docs_that_link_to_the_contract_pass() {
        let docs = "//! # The shared rules\n\
                    //!\n\
                    //! A set keeps the rules stated in [`pinfold_arena::contract`]: the\n\
                    //! [order](pinfold_arena::contract#order) of its outputs and\n\
                    //! [fairness](pinfold_arena::contract#fairness). What differs here:\n\
                    //!\n\
                    //! | Rule | What differs here |\n\
                    //! |------|-------------------|\n\
                    //! | Order | Outputs in push order. |\n\
                    //!\n\
                    //! # Keys\n\
                    //!\n\
                    //! ```\n\
                    //! # Order\n\
                    //! # futures_executor::block_on(async {\n\
                    //! # });\n\
                    //! ```\n";
        assert_eq!(
            restatements(docs, Source::CrateDocs, false),
            [],
            "a heading inside a code block, or a table row, is not a restatement"
        );
    }

    #[test]
    fn a_readme_heading_of_any_level_fails() {
        let readme = "# pinfold-merge\n\n## Order\n\nItems as they come.\n\n### Wakes ###\n";
        assert_eq!(lines_found(readme, Source::Readme), [3, 7]);
    }

    #[test]
    fn only_doc_lines_of_a_lib_rs_are_read() {
        let source = "//! Docs.\n\
                      // # Order, in a plain comment\n\
                      /// # Panics\n\
                      fn f() {}\n";
        assert_eq!(lines_found(source, Source::CrateDocs), []);
    }

    #[test]
    fn a_phrase_across_lines_is_found_at_its_first_line() {
        let readme = "Only woken streams are polled, so an always-ready stream\n\
                      *starves\n\
                      neither* the others nor the executor.\n";
        assert_eq!(lines_found(readme, Source::Readme), [2]);
    }

    #[test]
    fn a_crate_with_sections_of_its_own_is_checked_for_phrases_only() {
        let docs = "//! # Order\n//!\n//! Waiters are served first come, first served.\n";
        assert_eq!(restatements(docs, Source::CrateDocs, true), []);
        let docs = "//! # Wakes\n//!\n//! Its wakers outlive the pool.\n";
        let found = restatements(docs, Source::CrateDocs, true);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].line, 3);
    }

    #[test]
    fn the_contract_must_state_every_rule() {
        let contract = "//! # Order\n//! # Fairness\n//! # Wakes\n//! # Memory\n";
        assert_eq!(missing_rules(contract), ["Panics"]);
    }
}
