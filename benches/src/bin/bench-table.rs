//! Prints the last benchmark run as markdown tables, one per entry of `TABLES` (the sets of
//! futures and the rest; the buffer pools; the writers a message is serialized into), each
//! with its own columns: for each workload, each implementation's median time, pinfold's ratio
//! to each peer, and each implementation's allocations. A table none of whose rows has results
//! is left out.
//!
//! A row named `group/id` in a table's workloads is a second row of `group`, in which the
//! benchmark `id` (a second pinfold implementation) stands in pinfold's column against the same
//! peers.
//!
//! It reads criterion's estimates (`<target>/criterion/<group>/<id>/new/estimates.json`, the
//! median's point estimate, in nanoseconds) and the suite's own `allocs.tsv` and `virtual.tsv`
//! (`<target>/pinfold-bench/`). Run it after `cargo bench -p pinfold-benches`:
//!
//! ```text
//! cargo run -p pinfold-benches --bin bench-table [-- --write]
//! ```
//!
//! With `--write` (what `cargo xtask bench --full` passes) it also writes, from the same
//! results:
//!
//! - `benches/RESULTS.md`: the date, the commit, the machine, the toolchain and how the run
//!   was made (its sample counts), then the tables;
//! - `benches/ratios.svg`: pinfold's median over the fastest peer's in each row that has both,
//!   one bar per row ([`ratio_chart`]);
//! - the summary in the top-level `README.md`, between its `<!-- bench-summary:start -->` and
//!   `<!-- bench-summary:end -->` lines ([`replace_summary`]): the rows chosen by
//!   [`summary_rows`]'s rule, so the README cannot drift from `RESULTS.md`. It also prints it.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::SystemTime;

use pinfold_benches::{
    AllocRow, PINFOLD, SUMMARY_WORKLOADS, Standing, TABLES, Table, VirtualRow, criterion_dir,
    format, ratio_chart, read_allocs, read_virtual, replace_summary, results_dir, spelled_out,
    summary_rows, summary_table,
};

/// The median of one benchmark, in nanoseconds (of wall or CPU time, as the group measures).
fn median_ns(criterion: &Path, group: &str, id: &str) -> Option<f64> {
    let path = criterion
        .join(group)
        .join(id)
        .join("new")
        .join("estimates.json");
    let text = fs::read_to_string(path).ok()?;
    let json: serde_json::Value = serde_json::from_str(&text).ok()?;
    json["median"]["point_estimate"].as_f64()
}

fn time_cell(median: Option<f64>, virtual_time: Option<&VirtualRow>) -> String {
    match (median, virtual_time) {
        (Some(ns), Some(v)) => format!(
            "{} (virtual {})",
            format::time(ns),
            format::time(v.elapsed.as_nanos() as f64)
        ),
        (Some(ns), None) => format::time(ns),
        (None, _) => "—".to_string(),
    }
}

fn alloc_cell(row: Option<&AllocRow>) -> String {
    let Some(row) = row else {
        return "—".to_string();
    };
    let mut cell = format!(
        "{} ({})",
        format::count(row.allocs.allocs),
        format::bytes(row.allocs.bytes)
    );
    if let Some(held) = row.retained_bytes {
        let _ = write!(
            cell,
            ", peak {}, {} held after",
            format::bytes(row.allocs.peak_bytes),
            format::bytes(held)
        );
    }
    cell
}

/// The machine, for the line above the table: CPU model and how many CPUs the OS offers.
fn machine() -> String {
    let model = fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|line| line.starts_with("model name"))
                .and_then(|line| line.split_once(':'))
                .map(|(_, model)| model.trim().to_string())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_string());
    let cpus = std::thread::available_parallelism().map_or(0, usize::from);
    format!("{model}, {cpus} CPUs, {}", std::env::consts::OS)
}

/// One row of a table: an entry of its workloads, `group` or `group/id`.
struct Row {
    /// The entry: `group` or `group/id`.
    name: &'static str,
    description: &'static str,
    /// The criterion group the row's results come from.
    group: &'static str,
    /// The benchmark in pinfold's column: [`PINFOLD`], or the `id` of `group/id`.
    ours: &'static str,
}

impl Row {
    /// The row of the workload `name` (`group` or `group/id`).
    fn new(name: &'static str, description: &'static str) -> Self {
        let (group, ours) = name.split_once('/').unwrap_or((name, PINFOLD));
        Row {
            name,
            description,
            group,
            ours,
        }
    }

    /// The benchmark shown in column `id`.
    fn column(&self, id: &'static str) -> &'static str {
        if id == PINFOLD { self.ours } else { id }
    }
}

/// The peers' benchmarks of `table`: every implementation but pinfold.
fn peers(table: &Table) -> impl Iterator<Item = &'static str> + use<> {
    table
        .implementations
        .iter()
        .copied()
        .filter(|&id| id != PINFOLD)
}

/// What the tables are made from: criterion's medians and the suite's own records.
struct Results {
    criterion: PathBuf,
    allocs: HashMap<(String, String), AllocRow>,
    virtual_times: HashMap<(String, String), VirtualRow>,
}

fn key(group: &str, id: &str) -> (String, String) {
    (group.to_string(), id.to_string())
}

impl Results {
    fn read() -> Self {
        Self {
            criterion: criterion_dir(),
            allocs: read_allocs(),
            virtual_times: read_virtual(),
        }
    }

    /// `table` in markdown, its title above it, and pinfold's standing in each of its rows
    /// that has both pinfold's result and a peer's; `None` if none of its rows has results
    /// (its crate has not landed, or its groups were filtered out).
    fn table(&self, table: &Table) -> Option<(String, Vec<Standing>)> {
        let all_rows: Vec<Row> = table
            .workloads
            .iter()
            .map(|workload| Row::new(workload.name, workload.description))
            .collect();
        let medians: HashMap<(String, String), f64> = all_rows
            .iter()
            .flat_map(|row| {
                std::iter::once(row.ours)
                    .chain(peers(table))
                    .map(move |id| (row.group, id))
            })
            .filter_map(|(group, id)| {
                Some((key(group, id), median_ns(&self.criterion, group, id)?))
            })
            .collect();
        let rows: Vec<&Row> = all_rows
            .iter()
            .filter(|row| {
                medians.contains_key(&key(row.group, row.ours))
                    || peers(table).any(|id| medians.contains_key(&key(row.group, id)))
            })
            .collect();
        if rows.is_empty() {
            return None;
        }
        // Only the implementations that appear in some row get columns.
        let columns: Vec<&'static str> = table
            .implementations
            .iter()
            .copied()
            .filter(|&id| {
                rows.iter()
                    .any(|row| medians.contains_key(&key(row.group, row.column(id))))
            })
            .collect();
        let peers: Vec<&str> = columns
            .iter()
            .copied()
            .filter(|&id| id != PINFOLD)
            .collect();

        let mut header = vec!["workload".to_string()];
        header.extend(columns.iter().map(|id| format!("{id} median")));
        header.extend(peers.iter().map(|id| format!("pinfold / {id}")));
        header.extend(columns.iter().map(|id| format!("{id} allocs (bytes)")));

        let mut out = String::new();
        let _ = writeln!(out, "**{}**", table.title);
        let _ = writeln!(out);
        let _ = writeln!(out, "| {} |", header.join(" | "));
        let _ = writeln!(
            out,
            "|{}",
            header
                .iter()
                .enumerate()
                .map(|(i, _)| if i == 0 { "---|" } else { "---:|" })
                .collect::<String>()
        );
        // Each row's description on its own, for the summary, which shows rows apart from the
        // ones above them.
        let mut above = "";
        let descriptions: HashMap<&str, String> = all_rows
            .iter()
            .map(|row| {
                let description = spelled_out(above, row.description);
                if description == row.description {
                    above = row.description;
                }
                (row.name, description)
            })
            .collect();
        let mut standings = Vec::new();
        for row in rows {
            let group = row.group;
            let label = if row.ours == PINFOLD {
                format!("`{group}`")
            } else {
                format!("`{group}` ({})", row.ours)
            };
            let mut cells = vec![format!("{label}: {}", row.description)];
            for &id in &columns {
                let id = row.column(id);
                cells.push(time_cell(
                    medians.get(&key(group, id)).copied(),
                    self.virtual_times.get(&key(group, id)),
                ));
            }
            let ours = medians.get(&key(group, row.ours)).copied();
            let fastest_peer = peers
                .iter()
                .filter_map(|&id| Some((id, *medians.get(&key(group, id))?)))
                .filter(|&(_, ns)| ns > 0.0)
                .min_by(|a, b| a.1.total_cmp(&b.1));
            if let (Some(pinfold_ns), Some((peer, peer_ns))) = (ours, fastest_peer) {
                standings.push(Standing {
                    name: row.name.to_string(),
                    description: descriptions[row.name].clone(),
                    pinfold_ns,
                    peer: peer.to_string(),
                    peer_ns,
                });
            }
            for id in &peers {
                cells.push(match (ours, medians.get(&key(group, id))) {
                    (Some(ours), Some(&theirs)) if theirs > 0.0 => format::ratio(ours / theirs),
                    _ => "—".to_string(),
                });
            }
            for &id in &columns {
                cells.push(alloc_cell(self.allocs.get(&key(group, row.column(id)))));
            }
            let _ = writeln!(out, "| {} |", cells.join(" | "));
        }
        Some((out, standings))
    }
}

/// The directory of this package, `benches/`, where `--write` puts `RESULTS.md` and the chart.
fn benches_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The first line `program args` prints, if it runs and succeeds.
fn first_line_of(program: &str, args: &[&str]) -> Option<String> {
    let output = Command::new(program)
        .args(args)
        .current_dir(benches_dir())
        .output()
        .ok()?;
    if !output.status.success() {
        return None;
    }
    let text = String::from_utf8(output.stdout).ok()?;
    Some(text.lines().next().unwrap_or("").trim().to_string())
}

/// The commit the benchmarks were built from (`git rev-parse --short HEAD`), and whether the
/// tracked files differed from it.
fn commit() -> String {
    let Some(head) = first_line_of("git", &["rev-parse", "--short", "HEAD"]) else {
        return "unknown (not a git checkout)".to_string();
    };
    match first_line_of("git", &["status", "--porcelain", "--untracked-files=no"]) {
        Some(changes) if !changes.is_empty() => format!("`{head}`, with uncommitted changes"),
        _ => format!("`{head}`"),
    }
}

/// The fewest and most samples criterion took of a benchmark, from each benchmark's
/// `new/sample.json` (one entry of `iters` per sample); `None` if it recorded none.
fn sample_counts(criterion: &Path) -> Option<(usize, usize)> {
    let mut counts = Vec::new();
    for group in fs::read_dir(criterion).ok()?.flatten() {
        let Ok(ids) = fs::read_dir(group.path()) else {
            continue;
        };
        for id in ids.flatten() {
            let path = id.path().join("new").join("sample.json");
            let Ok(text) = fs::read_to_string(path) else {
                continue;
            };
            let json: Option<serde_json::Value> = serde_json::from_str(&text).ok();
            if let Some(iters) = json.as_ref().and_then(|json| json["iters"].as_array()) {
                counts.push(iters.len());
            }
        }
    }
    Some((*counts.iter().min()?, *counts.iter().max()?))
}

/// How the run was made, for `RESULTS.md`: full or quick, by its sample counts.
fn how_run(criterion: &Path) -> String {
    match sample_counts(criterion) {
        Some((_, most)) if most <= 10 => "a quick run (`cargo xtask bench`: 10 samples a \
             benchmark, ratios that move by up to 1.5x between runs)"
            .to_string(),
        Some((fewest, most)) => format!(
            "`cargo xtask bench --full`: {fewest} to {most} samples a benchmark, every \
             implementation in the same run"
        ),
        None => "`cargo xtask bench --full` (sample counts not recorded)".to_string(),
    }
}

/// `benches/RESULTS.md`: where and how the run was made, the chart, and `tables`.
fn results_document(results: &Results, date: &str, commit: &str, tables: &[String]) -> String {
    let rustc = first_line_of("rustc", &["--version"]).unwrap_or_else(|| "unknown".to_string());
    let mut out = String::new();
    let _ = writeln!(out, "# Benchmark results");
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "<!-- Written by `bench-table --write`, which `cargo xtask bench --full` runs: the next \
         full run rewrites this file, `ratios.svg` and the summary in the README. -->"
    );
    let _ = writeln!(out);
    let _ = writeln!(out, "| | |");
    let _ = writeln!(out, "|---|---|");
    let _ = writeln!(out, "| date | {date} |");
    let _ = writeln!(out, "| commit | {commit} |");
    let _ = writeln!(out, "| machine | {} |", machine());
    let _ = writeln!(out, "| toolchain | {rustc} |");
    let _ = writeln!(out, "| run | {} |", how_run(&results.criterion));
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "Each time is the median of criterion's samples (wall time, or CPU time where the \
         workload says so). Ratio = pinfold's median / the peer's: below 1.00x pinfold is \
         faster. Allocations: one untimed run with a counting allocator, count (bytes \
         requested). What each workload does, and how to read a single ratio, is in \
         [README.md](README.md)."
    );
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "![pinfold's median over the fastest peer's, one bar per row](ratios.svg)"
    );
    for table in tables {
        let _ = writeln!(out);
        out.push_str(table);
    }
    out
}

/// Writes `benches/RESULTS.md`, `benches/ratios.svg` and the README's summary; gives the
/// summary.
fn write_report(
    results: &Results,
    tables: &[String],
    standings: &[Standing],
) -> Result<String, String> {
    let date = format::utc_date(SystemTime::now());
    let commit = commit();
    let write = |path: &Path, text: &str| {
        fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
    };
    let benches = benches_dir();
    write(
        &benches.join("RESULTS.md"),
        &results_document(results, &date, &commit, tables),
    )?;
    write(&benches.join("ratios.svg"), &ratio_chart(standings))?;

    let provenance = format!(
        "`cargo xtask bench --full` at {commit} on {date} ({}); every row, with allocations, \
         in [benches/RESULTS.md](benches/RESULTS.md).",
        machine()
    );
    let summary = summary_table(&summary_rows(standings, &SUMMARY_WORKLOADS), &provenance);
    let readme_path = benches
        .parent()
        .expect("benches/ lives directly under the workspace root")
        .join("README.md");
    let readme = fs::read_to_string(&readme_path)
        .map_err(|e| format!("cannot read {}: {e}", readme_path.display()))?;
    let readme = replace_summary(&readme, &summary)
        .map_err(|e| format!("{}: {e}", readme_path.display()))?;
    write(&readme_path, &readme)?;
    Ok(summary)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let write = match args.as_slice() {
        [] => false,
        [flag] if flag == "--write" => true,
        _ => {
            eprintln!("usage: bench-table [--write]");
            return ExitCode::FAILURE;
        }
    };
    let results = Results::read();
    let (tables, standings): (Vec<String>, Vec<Vec<Standing>>) = TABLES
        .iter()
        .filter_map(|table| results.table(table))
        .unzip();
    let standings: Vec<Standing> = standings.into_iter().flatten().collect();
    if tables.is_empty() {
        eprintln!(
            "bench-table: no criterion results under {}; run `cargo bench -p pinfold-benches` first",
            results.criterion.display()
        );
        return ExitCode::FAILURE;
    }

    let mut out = String::new();
    let _ = writeln!(
        out,
        "Medians of criterion's samples on {}. Ratio = pinfold's median / the peer's (below \
         1.00x, pinfold is faster). Allocations: one untimed run, count (bytes requested); \
         from {}.",
        machine(),
        results_dir().join(pinfold_benches::ALLOCS_FILE).display()
    );
    for table in &tables {
        let _ = writeln!(out);
        out.push_str(table);
    }
    print!("{out}");

    if write {
        match write_report(&results, &tables, &standings) {
            Ok(summary) => {
                println!();
                println!(
                    "bench-table: wrote benches/RESULTS.md, benches/ratios.svg and the README's \
                     summary:"
                );
                println!();
                print!("{summary}");
            }
            Err(error) => {
                eprintln!("bench-table: {error}");
                return ExitCode::FAILURE;
            }
        }
    }
    ExitCode::SUCCESS
}
