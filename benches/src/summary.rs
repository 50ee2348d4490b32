//! pinfold's standing in each row of the tables, and the summary of them the README shows
//! between two marker comments, which `bench-table --write` (or `--records`) replaces so that
//! the README cannot drift from `benches/RESULTS.md`.

use std::fmt::Write as _;

use crate::{Record, format, peer_rows, standings};

/// pinfold's time in one row on one CPU against the fastest peer's there.
#[derive(Debug, Clone, PartialEq)]
pub struct CpuRatio {
    /// The CPU's short name ([`Cpu::short`](crate::Cpu::short)).
    pub cpu: String,
    /// pinfold's median, in nanoseconds.
    pub pinfold_ns: f64,
    /// The fastest peer of the row on that CPU (the lowest median): its `BenchmarkId`.
    pub peer: String,
    /// The fastest peer's median, in nanoseconds.
    pub peer_ns: f64,
}

impl CpuRatio {
    /// pinfold's median over the fastest peer's: below 1.0, pinfold is faster.
    pub fn ratio(&self) -> f64 {
        self.pinfold_ns / self.peer_ns
    }
}

/// pinfold's standing in one row: against the fastest peer on each CPU recorded, in
/// instructions per item against the peer that runs the fewest, and, in a row that holds
/// values, in peak bytes per value against the peer that takes the fewest.
#[derive(Debug, Clone, PartialEq)]
pub struct Standing {
    /// The row as the tables name it: a criterion group, or `group/id` for a second pinfold
    /// implementation against the same peers (see [`Workload`](crate::Workload)).
    pub name: String,
    /// What the row measures.
    pub description: String,
    /// One entry per CPU that timed the row, in the order of the records.
    pub times: Vec<CpuRatio>,
    /// pinfold's instructions per item, the peer with the fewest, and that peer's.
    pub instructions: Option<(f64, String, f64)>,
    /// In a row that holds values ([`Workload::held`](crate::Workload::held)): pinfold's peak
    /// bytes per value, the peer with the fewest, and that peer's.
    pub bytes_per_value: Option<(f64, String, f64)>,
}

impl Standing {
    /// The highest of pinfold's time ratios over the CPUs (the instruction ratio if no CPU
    /// timed the row): the figure a claim about the row must hold at.
    pub fn worst(&self) -> f64 {
        self.times
            .iter()
            .map(CpuRatio::ratio)
            .reduce(f64::max)
            .or_else(|| self.instruction_ratio())
            .unwrap_or(1.0)
    }

    /// The lowest of pinfold's time ratios over the CPUs.
    pub fn best(&self) -> f64 {
        self.times
            .iter()
            .map(CpuRatio::ratio)
            .reduce(f64::min)
            .unwrap_or_else(|| self.worst())
    }

    /// pinfold's instructions per item over the fewest any peer runs.
    pub fn instruction_ratio(&self) -> Option<f64> {
        self.instructions
            .as_ref()
            .map(|(ours, _, theirs)| ours / theirs)
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
/// is slowest); all sorted by ratio, lowest first. A row's ratio is its
/// [`worst`](Standing::worst) over the CPUs. So the summary has at most
/// [`SUMMARY_MAX_ROWS`] rows, and always shows pinfold's best and worst row.
pub fn summary_rows<'a>(standings: &'a [Standing], named: &[&str]) -> Vec<&'a Standing> {
    let mut rows: Vec<&Standing> = named
        .iter()
        .filter_map(|&name| standings.iter().find(|row| row.name == name))
        .take(SUMMARY_MAX_ROWS - 2)
        .collect();
    let by_ratio = |a: &&Standing, b: &&Standing| a.worst().total_cmp(&b.worst());
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

/// The summary in markdown: `provenance` (one line on the records it comes from), then a
/// table of `rows` (by name: `RESULTS.md` says what each measures): the row's peer
/// ([`row_peer`]), pinfold's time over the fastest peer's on each of `cpus` (short names), its
/// instructions per item over the fewest of any peer, and, if some row holds values, pinfold's
/// peak bytes per value with its ratio to the fewest of any peer (`—` in a row that holds
/// none). A ratio against another peer than the row's names that peer.
pub fn summary_table(rows: &[&Standing], cpus: &[String], provenance: &str) -> String {
    let per_value = rows.iter().any(|row| row.bytes_per_value.is_some());
    let mut out = String::new();
    let _ = writeln!(out, "{provenance}");
    let _ = writeln!(out);
    let mut head = String::from("| workload | peer |");
    let mut rule = String::from("|---|---|");
    for cpu in cpus {
        let _ = write!(head, " time, {cpu} |");
        rule.push_str("---|");
    }
    head.push_str(" instructions |");
    rule.push_str("---|");
    if per_value {
        head.push_str(" bytes per value |");
        rule.push_str("---|");
    }
    let _ = writeln!(out, "{head}");
    let _ = writeln!(out, "{rule}");
    for row in rows {
        let peer = row_peer(row).unwrap_or("—");
        let against = |ratio: f64, other: &str| {
            if other == peer {
                format::ratio(ratio)
            } else {
                format!("{} {other}", format::ratio(ratio))
            }
        };
        let _ = write!(out, "| {} | {peer} |", row.label());
        for cpu in cpus {
            match row.times.iter().find(|time| &time.cpu == cpu) {
                Some(time) => {
                    let _ = write!(out, " {} |", against(time.ratio(), &time.peer));
                }
                None => out.push_str(" — |"),
            }
        }
        match &row.instructions {
            Some((ours, other, theirs)) => {
                let _ = write!(out, " {} |", against(ours / theirs, other));
            }
            None => out.push_str(" — |"),
        }
        if per_value {
            match &row.bytes_per_value {
                Some((ours, other, theirs)) => {
                    let _ = write!(
                        out,
                        " {} ({}) |",
                        format::per_value(*ours),
                        against(ours / theirs, other)
                    );
                }
                None => out.push_str(" — |"),
            }
        }
        out.push('\n');
    }
    out
}

/// The peer a summary row names once: the one most of its ratios (time on each CPU,
/// instructions, bytes per value) are against, the first named of those tied. `None` for a
/// row with no ratio.
pub fn row_peer(row: &Standing) -> Option<&str> {
    let peers: Vec<&str> = row
        .times
        .iter()
        .map(|time| time.peer.as_str())
        .chain(row.instructions.iter().map(|(_, peer, _)| peer.as_str()))
        .chain(row.bytes_per_value.iter().map(|(_, peer, _)| peer.as_str()))
        .collect();
    let count = |peer: &str| peers.iter().filter(|&&other| other == peer).count();
    // `max_by_key` keeps the last of equal keys: walk backwards so the first named wins.
    peers.iter().rev().copied().max_by_key(|&peer| count(peer))
}

/// How pinfold compares with one peer in one row: its time over the peer's on each CPU that
/// timed both, its instructions per item over the peer's, and its peak bytes per value held
/// over the peer's.
#[derive(Debug, Clone, PartialEq)]
pub struct PeerRow {
    /// The row's name.
    pub row: String,
    /// pinfold's time over the peer's, one per CPU that timed both.
    pub times: Vec<f64>,
    /// pinfold's instructions per item over the peer's.
    pub instructions: Option<f64>,
    /// pinfold's peak bytes per value held over the peer's, in a row that holds values.
    pub bytes_per_value: Option<f64>,
}

/// A peer is "faster" in a row where pinfold's time is more than this over its.
pub const SLOWER_BY: f64 = 1.05;

/// What holds on the CPUs recorded, one line per peer (`peers`: each peer's `BenchmarkId`
/// and its rows): in how many of its rows pinfold took less time on every CPU that timed the
/// row (a row that some CPUs did not time counts on those that did), in which rows the peer
/// was more than 5% faster on at least one of them, in how many pinfold ran fewer
/// instructions per item, and in how many of the rows that hold values it took fewer bytes
/// per value at its peak (both from the newest run, as [`peer_rows`] gives them). `cpus`
/// names the CPUs.
pub fn claims(cpus: &[String], peers: &[(String, Vec<PeerRow>)]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Against each peer, in the rows it runs in, on the CPUs recorded ({}): in how many \
         pinfold took less time on every CPU that timed the row, where the peer was more than \
         5% faster on at least one of them, in how many pinfold ran fewer instructions per item \
         (from the newest run), and, of the rows that hold values, in how many it took fewer \
         bytes per value at its peak (from the newest run).",
        cpus.join(", ")
    );
    let _ = writeln!(out);
    for (peer, rows) in peers {
        let timed: Vec<&PeerRow> = rows.iter().filter(|row| !row.times.is_empty()).collect();
        let faster = timed
            .iter()
            .filter(|row| row.times.iter().all(|&ratio| ratio < 1.0))
            .count();
        let behind: Vec<String> = timed
            .iter()
            .filter(|row| row.times.iter().any(|&ratio| ratio > SLOWER_BY))
            .map(|row| format!("`{}`", row.row))
            .collect();
        let counted: Vec<f64> = rows.iter().filter_map(|row| row.instructions).collect();
        let fewer = counted.iter().filter(|&&ratio| ratio < 1.0).count();
        let mut line = format!("- **{peer}**: less time in {faster} of {}", timed.len());
        if behind.is_empty() {
            line.push_str(", never 5% slower");
        } else if behind.len() <= 6 {
            let _ = write!(line, "; {peer} faster in {}", behind.join(", "));
        } else {
            let _ = write!(line, "; {peer} faster in {} rows", behind.len());
        }
        if !counted.is_empty() {
            let _ = write!(line, "; fewer instructions in {fewer} of {}", counted.len());
        }
        let held: Vec<f64> = rows.iter().filter_map(|row| row.bytes_per_value).collect();
        if !held.is_empty() {
            let smaller = held.iter().filter(|&&ratio| ratio < 1.0).count();
            let _ = write!(
                line,
                "; fewer bytes per value in {smaller} of {}",
                held.len()
            );
        }
        line.push('.');
        let _ = writeln!(out, "{line}");
    }
    out
}

/// The README's summary of `records` (in [`order_records`](crate::order_records)'s order):
/// a line on the runs, the table of [`summary_rows`] (with [`SUMMARY_WORKLOADS`]), then the
/// [`claims`] against each peer.
pub fn readme_summary(records: &[&Record]) -> String {
    let standings = standings(records);
    let cpus: Vec<String> = records.iter().map(|r| r.short.clone()).collect();
    let provenance = format!(
        "`cargo xtask bench --full` on {}. A ratio is pinfold's over the best peer's: the one in \
         the peer column, or the one its cell names. Every row, what it measures and its \
         allocations: [benches/RESULTS.md](benches/RESULTS.md).",
        records
            .iter()
            .map(|r| format!("{} ({} at {})", r.short, r.date, r.commit))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let mut summary = summary_table(
        &summary_rows(&standings, &SUMMARY_WORKLOADS),
        &cpus,
        &provenance,
    );
    summary.push('\n');
    summary.push_str(&claims(&cpus, &peer_rows(records)));
    summary
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
