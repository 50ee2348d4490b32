//! pinfold's standing in each row of the tables, and the summary of them the README shows
//! between two marker comments, which `bench-table --write` replaces so that the README
//! cannot drift from `benches/RESULTS.md`.

use std::fmt::Write as _;

use crate::format;

/// pinfold's median in one row against its fastest peer's there.
#[derive(Debug, Clone, PartialEq)]
pub struct Standing {
    /// The row as the tables name it: a criterion group, or `group/id` for a second pinfold
    /// implementation against the same peers (see [`WORKLOADS`](crate::WORKLOADS)).
    pub name: String,
    /// What the row measures.
    pub description: String,
    /// pinfold's median, in nanoseconds.
    pub pinfold_ns: f64,
    /// The fastest peer of the row (the lowest median): its `BenchmarkId`.
    pub peer: String,
    /// The fastest peer's median, in nanoseconds.
    pub peer_ns: f64,
}

impl Standing {
    /// pinfold's median over the fastest peer's: below 1.0, pinfold is faster.
    pub fn ratio(&self) -> f64 {
        self.pinfold_ns / self.peer_ns
    }

    /// The row's name as the tables print it: `` `group` `` or `` `group` (id) ``.
    pub fn label(&self) -> String {
        match self.name.split_once('/') {
            Some((group, id)) => format!("`{group}` ({id})"),
            None => format!("`{}`", self.name),
        }
    }
}

/// A row's `description` that stands on its own: one that refers to the row above it ("the
/// same ...", "as above ...", as the tables word a variant of the row before) gets that row's
/// description, `above`, in place of the reference.
pub fn spelled_out(above: &str, description: &str) -> String {
    for reference in ["the same", "as above"] {
        if let Some(rest) = description.strip_prefix(reference) {
            return format!("{above}{rest}");
        }
    }
    description.to_string()
}

/// The rows the summary always shows when they have results, whatever their ratios: the
/// workloads the README speaks of, a few per primitive, where pinfold is faster and where it
/// is not.
pub const SUMMARY_WORKLOADS: [&str; 8] = [
    "ready_512k",
    "yield_16_block_on",
    "wakes_4_threads",
    "keyed_churn_100k",
    "join_all_ready_10_block_on",
    "join_all_100k",
    "ordered_10k_c50",
    "merge_hot_16",
];

/// The most rows the summary has.
pub const SUMMARY_MAX_ROWS: usize = 10;

/// The rows of the summary. The rule: the rows of `named` that have results (at most
/// [`SUMMARY_MAX_ROWS`] - 2 of them, in their order), then, of the other rows, the one where
/// pinfold's ratio is lowest (where it is fastest) and the one where it is highest (where it
/// is slowest); all sorted by ratio, lowest first. So the summary has at most
/// [`SUMMARY_MAX_ROWS`] rows, and always shows pinfold's best and worst row.
pub fn summary_rows<'a>(standings: &'a [Standing], named: &[&str]) -> Vec<&'a Standing> {
    let mut rows: Vec<&Standing> = named
        .iter()
        .filter_map(|&name| standings.iter().find(|row| row.name == name))
        .take(SUMMARY_MAX_ROWS - 2)
        .collect();
    let by_ratio = |a: &&Standing, b: &&Standing| a.ratio().total_cmp(&b.ratio());
    let others: Vec<&Standing> = standings
        .iter()
        .filter(|row| !rows.iter().any(|chosen| chosen.name == row.name))
        .collect();
    let best = others.iter().copied().min_by(by_ratio);
    let worst = others.iter().copied().max_by(by_ratio);
    rows.extend(best);
    // With one other row, it is both.
    rows.extend(worst.filter(|worst| best.is_none_or(|best| best.name != worst.name)));
    rows.sort_by(by_ratio);
    rows
}

/// The summary in markdown: `provenance` (one line on the run it comes from), then a table of
/// `rows` with pinfold's median, the fastest peer's and the ratio of the two.
pub fn summary_table(rows: &[&Standing], provenance: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{provenance}");
    let _ = writeln!(out);
    let _ = writeln!(out, "| workload | pinfold | fastest peer | ratio |");
    let _ = writeln!(out, "|---|---:|---|---:|");
    for row in rows {
        let _ = writeln!(
            out,
            "| {}: {} | {} | {} {} | {} |",
            row.label(),
            row.description,
            format::time(row.pinfold_ns),
            row.peer,
            format::time(row.peer_ns),
            format::ratio(row.ratio()),
        );
    }
    out
}

/// The comment that opens the generated summary in the README.
pub const SUMMARY_START: &str = "<!-- bench-summary:start -->";
/// The comment that closes it.
pub const SUMMARY_END: &str = "<!-- bench-summary:end -->";

/// `text` with what stands between [`SUMMARY_START`] and [`SUMMARY_END`] replaced by `block`
/// (the markers kept, each on a line of its own around it). An error if the markers are
/// missing, repeated or out of order: the README is then left as it is.
pub fn replace_summary(text: &str, block: &str) -> Result<String, String> {
    let start = find_once(text, SUMMARY_START)?;
    let end = find_once(text, SUMMARY_END)?;
    if end < start {
        return Err(format!("`{SUMMARY_END}` comes before `{SUMMARY_START}`"));
    }
    let mut out = String::with_capacity(text.len() + block.len());
    out.push_str(&text[..start + SUMMARY_START.len()]);
    out.push('\n');
    out.push_str(block);
    if !block.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(&text[end..]);
    Ok(out)
}

fn find_once(text: &str, marker: &str) -> Result<usize, String> {
    let mut found = text.match_indices(marker).map(|(at, _)| at);
    match (found.next(), found.next()) {
        (Some(at), None) => Ok(at),
        (None, _) => Err(format!("no `{marker}` line")),
        (Some(_), Some(_)) => Err(format!("`{marker}` appears more than once")),
    }
}
