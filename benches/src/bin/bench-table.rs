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
//! cargo run -p pinfold-benches --bin bench-table
//! ```

use std::collections::HashMap;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use pinfold_benches::{
    AllocRow, PINFOLD, TABLES, Table, VirtualRow, criterion_dir, read_allocs, read_virtual,
    results_dir,
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

/// `1.23 ms`: three significant figures in the unit that fits.
fn time(ns: f64) -> String {
    let (value, unit) = if ns < 1e3 {
        (ns, "ns")
    } else if ns < 1e6 {
        (ns / 1e3, "µs")
    } else if ns < 1e9 {
        (ns / 1e6, "ms")
    } else {
        (ns / 1e9, "s")
    };
    let decimals = if value >= 100.0 {
        0
    } else if value >= 10.0 {
        1
    } else {
        2
    };
    format!("{value:.decimals$} {unit}")
}

/// `9.1 KiB`.
fn bytes(n: u64) -> String {
    let n = n as f64;
    if n < 1024.0 {
        format!("{n} B")
    } else if n < 1024.0 * 1024.0 {
        format!("{:.1} KiB", n / 1024.0)
    } else if n < 1024.0 * 1024.0 * 1024.0 {
        format!("{:.1} MiB", n / (1024.0 * 1024.0))
    } else {
        format!("{:.2} GiB", n / (1024.0 * 1024.0 * 1024.0))
    }
}

/// `512,002`.
fn count(n: u64) -> String {
    let digits = n.to_string();
    let mut groups: Vec<&str> = Vec::new();
    let mut end = digits.len();
    while end > 3 {
        groups.push(&digits[end - 3..end]);
        end -= 3;
    }
    groups.push(&digits[..end]);
    groups.reverse();
    groups.join(",")
}

fn time_cell(median: Option<f64>, virtual_time: Option<&VirtualRow>) -> String {
    match (median, virtual_time) {
        (Some(ns), Some(v)) => format!(
            "{} (virtual {})",
            time(ns),
            time(v.elapsed.as_nanos() as f64)
        ),
        (Some(ns), None) => time(ns),
        (None, _) => "—".to_string(),
    }
}

fn alloc_cell(row: Option<&AllocRow>) -> String {
    let Some(row) = row else {
        return "—".to_string();
    };
    let mut cell = format!("{} ({})", count(row.allocs.allocs), bytes(row.allocs.bytes));
    if let Some(held) = row.retained_bytes {
        let _ = write!(
            cell,
            ", peak {}, {} held after",
            bytes(row.allocs.peak_bytes),
            bytes(held)
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

    /// `table` in markdown, its title above it; `None` if none of its rows has results (its
    /// crate has not landed, or its groups were filtered out).
    fn table(&self, table: &Table) -> Option<String> {
        let all_rows: Vec<Row> = table
            .workloads
            .iter()
            .map(|&(name, description)| Row::new(name, description))
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
            for id in &peers {
                cells.push(match (ours, medians.get(&key(group, id))) {
                    (Some(ours), Some(&theirs)) if theirs > 0.0 => {
                        format!("{:.2}x", ours / theirs)
                    }
                    _ => "—".to_string(),
                });
            }
            for &id in &columns {
                cells.push(alloc_cell(self.allocs.get(&key(group, row.column(id)))));
            }
            let _ = writeln!(out, "| {} |", cells.join(" | "));
        }
        Some(out)
    }
}

fn main() -> ExitCode {
    let results = Results::read();
    let tables: Vec<String> = TABLES
        .iter()
        .filter_map(|table| results.table(table))
        .collect();
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
    for table in tables {
        let _ = writeln!(out);
        out.push_str(&table);
    }
    print!("{out}");
    ExitCode::SUCCESS
}
