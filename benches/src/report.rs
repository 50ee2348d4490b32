//! The documents made from [`Record`]s: the tables of one CPU's `benches/results/<cpu>.md`, the
//! index over every CPU (`benches/RESULTS.md`), pinfold's standing in each row (for the chart
//! and the README's summary) and its ratios to each peer on the CPUs that timed each row.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use crate::format;
use crate::record::{Measured, Record};
use crate::summary::{CpuRatio, PeerRow, Standing, spelled_out};
use crate::{BYTES_MUT, CURSOR_SLICE, CURSOR_VEC, PINFOLD, SLICE, TABLES, Table, VEC, Workload};

/// The implementations that are not a peer doing the same job but a floor under it (a plain
/// allocation, the writers a message is serialized into): in the tables and the standings,
/// left out of [`peer_rows`], the claims made against each peer.
pub const BASELINES: [&str; 5] = [VEC, CURSOR_VEC, CURSOR_SLICE, BYTES_MUT, SLICE];

/// One row of a table: an entry of its workloads.
#[derive(Debug, Clone, Copy)]
struct Row {
    workload: &'static Workload,
    /// The benchmark in pinfold's column: [`PINFOLD`], or the `id` of `group/id`.
    ours: &'static str,
}

impl Row {
    fn new(workload: &'static Workload) -> Self {
        let ours = workload.name.split_once('/').map_or(PINFOLD, |(_, id)| id);
        Row { workload, ours }
    }

    fn group(&self) -> &'static str {
        self.workload.group()
    }

    /// The benchmark shown in column `id`.
    fn column(&self, id: &'static str) -> &'static str {
        if id == PINFOLD { self.ours } else { id }
    }

    fn label(&self) -> String {
        if self.ours == PINFOLD {
            format!("`{}`", self.group())
        } else {
            format!("`{}` ({})", self.group(), self.ours)
        }
    }
}

/// The peers of `table`: every implementation but pinfold.
fn peers(table: &Table) -> impl Iterator<Item = &'static str> + use<> {
    table
        .implementations
        .iter()
        .copied()
        .filter(|&id| id != PINFOLD)
}

/// The rows of `table` that some record has a figure of, the columns (implementations) that
/// some of those rows have, and those columns but pinfold's.
fn present(table: &Table, records: &[&Record]) -> (Vec<Row>, Vec<&'static str>, Vec<&'static str>) {
    let has = |group: &str, id: &str| records.iter().any(|r| r.get(group, id).is_some());
    let rows: Vec<Row> = table
        .workloads
        .iter()
        .map(Row::new)
        .filter(|row| has(row.group(), row.ours) || peers(table).any(|id| has(row.group(), id)))
        .collect();
    let columns: Vec<&'static str> = table
        .implementations
        .iter()
        .copied()
        .filter(|&id| rows.iter().any(|row| has(row.group(), row.column(id))))
        .collect();
    let peers = columns
        .iter()
        .copied()
        .filter(|&id| id != PINFOLD)
        .collect();
    (rows, columns, peers)
}

/// Each row's description on its own (one that refers to the row above it spelled out).
fn description(table: &Table, name: &str) -> String {
    let mut above = "";
    for workload in table.workloads {
        let spelled = spelled_out(above, workload.description);
        if workload.name == name {
            return spelled;
        }
        if spelled == workload.description {
            above = workload.description;
        }
    }
    String::new()
}

fn ratio_of(ours: Option<f64>, theirs: Option<f64>) -> Option<f64> {
    match (ours, theirs) {
        (Some(ours), Some(theirs)) if theirs > 0.0 => Some(ours / theirs),
        _ => None,
    }
}

fn ratio_cell(ratio: Option<f64>) -> String {
    ratio.map_or_else(|| "—".to_string(), format::ratio)
}

fn time_cell(measured: Option<&Measured>) -> String {
    let Some(m) = measured else {
        return "—".to_string();
    };
    let mut cell = m.median_ns.map_or_else(|| "—".to_string(), format::time);
    if let Some(virtual_ns) = m.virtual_ns {
        let _ = write!(cell, " (virtual {})", format::time(virtual_ns as f64));
    }
    cell
}

/// The peak of live bytes of one run of `workload` (from `measured`'s allocations) over the
/// values it holds at its peak ([`Workload::held`]): `None` for a row that holds no fixed
/// number of values, or a benchmark whose allocations were not counted.
pub fn bytes_per_value(workload: &Workload, measured: Option<&Measured>) -> Option<f64> {
    let allocs = measured?.allocs?;
    (workload.held > 0).then(|| allocs.peak_bytes as f64 / workload.held as f64)
}

fn per_value_cell(per_value: Option<f64>) -> String {
    per_value.map_or_else(|| "—".to_string(), format::per_value)
}

/// Whether any of `rows` holds values: only then has a table bytes-per-value columns.
fn holds_values(rows: &[Row]) -> bool {
    rows.iter().any(|row| row.workload.held > 0)
}

fn instructions_cell(measured: Option<&Measured>) -> String {
    measured
        .and_then(|m| m.instructions)
        .map_or_else(|| "—".to_string(), |n| format!("{n:.0}"))
}

fn alloc_cell(measured: Option<&Measured>) -> String {
    let Some(allocs) = measured.and_then(|m| m.allocs) else {
        return "—".to_string();
    };
    let mut cell = format!(
        "{} ({})",
        format::count(allocs.allocs),
        format::bytes(allocs.bytes)
    );
    if let Some(held) = measured.and_then(|m| m.retained_bytes) {
        let _ = write!(
            cell,
            ", peak {}, {} held after",
            format::bytes(allocs.peak_bytes),
            format::bytes(held)
        );
    }
    cell
}

fn header(out: &mut String, cells: &[String]) {
    let _ = writeln!(out, "| {} |", cells.join(" | "));
    let rule: String = (0..cells.len())
        .map(|i| if i == 0 { "|---" } else { "|---:" })
        .collect();
    let _ = writeln!(out, "{rule}|");
}

/// `table` as one CPU measured it: each implementation's median time, instructions per item
/// and (if a row holds values) peak bytes per value held, pinfold's ratios to each peer in
/// time and instructions, and the allocations. `None` if the record has none of its rows.
pub fn cpu_table(record: &Record, table: &Table) -> Option<String> {
    let (rows, columns, peers) = present(table, &[record]);
    if rows.is_empty() {
        return None;
    }
    let per_value = holds_values(&rows);
    let mut cells = vec!["workload".to_string()];
    cells.extend(columns.iter().map(|id| format!("{id} time")));
    cells.extend(columns.iter().map(|id| format!("{id} instructions")));
    if per_value {
        cells.extend(columns.iter().map(|id| format!("{id} bytes per value")));
    }
    cells.extend(
        peers
            .iter()
            .map(|id| format!("pinfold / {id}: time, instructions")),
    );
    cells.extend(columns.iter().map(|id| format!("{id} allocs (bytes)")));
    let mut out = format!("### {}\n\n", table.title);
    header(&mut out, &cells);
    for row in &rows {
        let group = row.group();
        let get = |id: &'static str| record.get(group, row.column(id));
        let ours = record.get(group, row.ours);
        let mut cells = vec![format!("{}: {}", row.label(), row.workload.description)];
        cells.extend(columns.iter().map(|&id| time_cell(get(id))));
        cells.extend(columns.iter().map(|&id| instructions_cell(get(id))));
        if per_value {
            cells.extend(
                columns
                    .iter()
                    .map(|&id| per_value_cell(bytes_per_value(row.workload, get(id)))),
            );
        }
        for &id in &peers {
            let theirs = get(id);
            let time = ratio_of(
                ours.and_then(|m| m.median_ns),
                theirs.and_then(|m| m.median_ns),
            );
            let instructions = ratio_of(
                ours.and_then(|m| m.instructions),
                theirs.and_then(|m| m.instructions),
            );
            cells.push(format!(
                "{}, {}",
                ratio_cell(time),
                ratio_cell(instructions)
            ));
        }
        cells.extend(columns.iter().map(|&id| alloc_cell(get(id))));
        let _ = writeln!(out, "| {} |", cells.join(" | "));
    }
    Some(out)
}

/// The newest record (by date, the last of equal dates) that counted `group/id`'s
/// instructions.
fn instructions_of(records: &[&Record], group: &str, id: &str) -> Option<f64> {
    records
        .iter()
        .filter_map(|r| Some((r.date.as_str(), r.get(group, id)?.instructions?)))
        .max_by(|a, b| a.0.cmp(b.0))
        .map(|(_, n)| n)
}

/// The newest record (by date, the last of equal dates) that counted `group/id`'s
/// allocations: its peak bytes per value held in a run of `workload`.
fn per_value_of(records: &[&Record], workload: &Workload, group: &str, id: &str) -> Option<f64> {
    records
        .iter()
        .filter_map(|r| {
            Some((
                r.date.as_str(),
                bytes_per_value(workload, r.get(group, id))?,
            ))
        })
        .max_by(|a, b| a.0.cmp(b.0))
        .map(|(_, n)| n)
}

/// `table` over every record: per row and peer, pinfold's time over the peer's on each CPU,
/// its instructions per item over the peer's, and (if a row holds values) its peak bytes per
/// value held over the peer's. `None` if no record has its rows.
pub fn index_table(records: &[&Record], table: &Table) -> Option<String> {
    let (rows, _, peers) = present(table, records);
    if rows.is_empty() {
        return None;
    }
    let per_value = holds_values(&rows);
    let mut cells = vec!["workload".to_string()];
    for peer in &peers {
        for record in records {
            cells.push(format!("pinfold / {peer}, time on {}", record.short));
        }
        cells.push(format!("pinfold / {peer}, instructions"));
        if per_value {
            cells.push(format!("pinfold / {peer}, bytes per value"));
        }
    }
    let mut out = format!("### {}\n\n", table.title);
    header(&mut out, &cells);
    for row in &rows {
        let group = row.group();
        let mut cells = vec![format!("{}: {}", row.label(), row.workload.description)];
        for &peer in &peers {
            for record in records {
                cells.push(ratio_cell(ratio_of(
                    record.get(group, row.ours).and_then(|m| m.median_ns),
                    record.get(group, peer).and_then(|m| m.median_ns),
                )));
            }
            cells.push(ratio_cell(ratio_of(
                instructions_of(records, group, row.ours),
                instructions_of(records, group, peer),
            )));
            if per_value {
                cells.push(ratio_cell(ratio_of(
                    per_value_of(records, row.workload, group, row.ours),
                    per_value_of(records, row.workload, group, peer),
                )));
            }
        }
        let _ = writeln!(out, "| {} |", cells.join(" | "));
    }
    Some(out)
}

/// pinfold's standing in every row some record has both pinfold's and a peer's figure of.
pub fn standings(records: &[&Record]) -> Vec<Standing> {
    let mut standings = Vec::new();
    for table in &TABLES {
        for row in table.workloads.iter().map(Row::new) {
            let group = row.group();
            let times: Vec<CpuRatio> = records
                .iter()
                .filter_map(|record| {
                    let pinfold_ns = record.get(group, row.ours)?.median_ns?;
                    let (peer, peer_ns) = peers(table)
                        .filter_map(|peer| Some((peer, record.get(group, peer)?.median_ns?)))
                        .filter(|&(_, ns)| ns > 0.0)
                        .min_by(|a, b| a.1.total_cmp(&b.1))?;
                    Some(CpuRatio {
                        cpu: record.short.clone(),
                        pinfold_ns,
                        peer: peer.to_string(),
                        peer_ns,
                    })
                })
                .collect();
            let instructions = instructions_of(records, group, row.ours).and_then(|ours| {
                let (peer, theirs) = peers(table)
                    .filter_map(|peer| Some((peer, instructions_of(records, group, peer)?)))
                    .filter(|&(_, n)| n > 0.0)
                    .min_by(|a, b| a.1.total_cmp(&b.1))?;
                Some((ours, peer.to_string(), theirs))
            });
            let bytes_per_value =
                per_value_of(records, row.workload, group, row.ours).and_then(|ours| {
                    let (peer, theirs) = peers(table)
                        .filter_map(|peer| {
                            Some((peer, per_value_of(records, row.workload, group, peer)?))
                        })
                        .filter(|&(_, n)| n > 0.0)
                        .min_by(|a, b| a.1.total_cmp(&b.1))?;
                    Some((ours, peer.to_string(), theirs))
                });
            if !times.is_empty() || instructions.is_some() {
                standings.push(Standing {
                    name: row.workload.name.to_string(),
                    description: description(table, row.workload.name),
                    times,
                    instructions,
                    bytes_per_value,
                });
            }
        }
    }
    standings
}

/// Each peer (not a baseline) and its rows: pinfold's time over its on each CPU that timed
/// both, its instructions per item over its, and its peak bytes per value held over its; the
/// input of [`claims`](crate::claims).
pub fn peer_rows(records: &[&Record]) -> Vec<(String, Vec<PeerRow>)> {
    let names: BTreeSet<&str> = TABLES
        .iter()
        .flat_map(peers)
        .filter(|peer| !BASELINES.contains(peer))
        .collect();
    names
        .into_iter()
        .filter_map(|peer| {
            let rows: Vec<PeerRow> = TABLES
                .iter()
                .filter(|table| table.implementations.contains(&peer))
                .flat_map(|table| table.workloads.iter().map(Row::new))
                .filter_map(|row| {
                    let group = row.group();
                    let times: Vec<f64> = records
                        .iter()
                        .filter_map(|record| {
                            ratio_of(
                                record.get(group, row.ours)?.median_ns,
                                record.get(group, peer)?.median_ns,
                            )
                        })
                        .collect();
                    let instructions = ratio_of(
                        instructions_of(records, group, row.ours),
                        instructions_of(records, group, peer),
                    );
                    let bytes_per_value = ratio_of(
                        per_value_of(records, row.workload, group, row.ours),
                        per_value_of(records, row.workload, group, peer),
                    );
                    (!times.is_empty() || instructions.is_some()).then(|| PeerRow {
                        row: row.workload.name.to_string(),
                        times,
                        instructions,
                        bytes_per_value,
                    })
                })
                .collect();
            (!rows.is_empty()).then(|| (peer.to_string(), rows))
        })
        .collect()
}

/// The lines that say where each record comes from: its CPU, file, date, commit and run.
pub fn provenance(records: &[&Record], link_prefix: &str) -> String {
    let mut out = String::new();
    for record in records {
        let _ = writeln!(
            out,
            "- **{}**: {}, {} CPUs; {} at {}, {} ([{slug}.md]({link_prefix}{slug}.md))",
            record.short,
            record.cpu,
            record.cpus,
            record.date,
            record.commit,
            record.toolchain,
            slug = record.slug,
        );
    }
    out
}

/// `benches/RESULTS.md`: the records it is made from, the chart, then the index tables.
/// `records` are in [`order_records`](crate::order_records)'s order: the lines on where each
/// comes from follow it, and the newest gives the instructions and bytes per value.
pub fn index_document(records: &[&Record]) -> String {
    let mut out = String::from("# Benchmark results\n\n");
    let _ = writeln!(
        out,
        "<!-- Written by `bench-table --write`, which `cargo xtask bench --full` runs, from \
         every file in `results/`: a full run on a CPU rewrites that CPU's files, then this \
         one, `ratios.svg` and the summary in the README. -->\n"
    );
    let _ = writeln!(
        out,
        "pinfold's figure over each peer's, from the full run recorded for each CPU (below \
         1.00x pinfold is ahead): its time on each CPU, its instructions per item under \
         callgrind, which do not depend on the CPU (from the newest run), and, in a row that \
         holds values, its peak bytes per value held (from the newest run). Each CPU's times, \
         instructions, bytes per value and allocations are in its own file:\n"
    );
    out.push_str(&provenance(records, "results/"));
    let _ = writeln!(
        out,
        "\nHow each workload is run and how to read a ratio: [README.md](README.md).\n"
    );
    let _ = writeln!(
        out,
        "![pinfold over the fastest peer: time on each CPU, instructions per item](ratios.svg)"
    );
    for table in &TABLES {
        if let Some(text) = index_table(records, table) {
            let _ = writeln!(out);
            out.push_str(&text);
        }
    }
    out
}
