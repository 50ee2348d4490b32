//! [`Record`]: what one full run measured on one CPU, kept in `benches/results/<cpu>.tsv`
//! beside the tables made from it (`<cpu>.md`). `RESULTS.md`, the chart and the README's
//! summary are made from every CPU's record together.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

use crate::alloc::Allocs;

/// One benchmark's figures in a run; `None` where the run did not measure one.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Measured {
    /// criterion's median, in nanoseconds (wall or CPU time, as the workload says).
    pub median_ns: Option<f64>,
    /// Instructions per item under callgrind.
    pub instructions: Option<f64>,
    /// The untimed run's allocations.
    pub allocs: Option<Allocs>,
    /// Bytes a workload that keeps its set still held at its end.
    pub retained_bytes: Option<u64>,
    /// Elapsed time on tokio's paused clock, in nanoseconds.
    pub virtual_ns: Option<u64>,
}

/// What one run measured on one CPU.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Record {
    /// The file name's stem, [`Cpu::slug`](crate::Cpu::slug).
    pub slug: String,
    /// The CPU's short name for column heads, [`Cpu::short`](crate::Cpu::short).
    pub short: String,
    /// The CPU's full description, [`Cpu::label`](crate::Cpu::label).
    pub cpu: String,
    /// How many CPUs the operating system offered.
    pub cpus: usize,
    /// The run's day, `2026-11-27`.
    pub date: String,
    /// When the run started (as `bench-table --stamp` noted it; with no stamp, when the tables
    /// were made), in seconds since the Unix epoch: it orders the records of one day
    /// ([`order_records`]). Records written before the time was kept have none.
    pub started: Option<u64>,
    /// The commit the benchmarks were built from.
    pub commit: String,
    /// `rustc --version`.
    pub toolchain: String,
    /// How the run was made (its sample counts).
    pub run: String,
    /// `(group, id)` → its figures.
    pub results: BTreeMap<(String, String), Measured>,
}

const COLUMNS: &str =
    "group\tid\tmedian_ns\tinstructions\tallocs\tbytes\tpeak_bytes\tretained_bytes\tvirtual_ns";

fn cell<T: ToString>(value: Option<T>) -> String {
    value.map_or_else(|| "-".to_string(), |v| v.to_string())
}

impl Record {
    /// The figures of `group/id`, if the run has any.
    pub fn get(&self, group: &str, id: &str) -> Option<&Measured> {
        self.results.get(&(group.to_string(), id.to_string()))
    }

    /// The record as its `.tsv` file: `# key<TAB>value` lines, then a row per benchmark.
    pub fn to_tsv(&self) -> String {
        let mut out = String::new();
        for (key, value) in [
            ("cpu", self.cpu.as_str()),
            ("short", self.short.as_str()),
            ("cpus", &self.cpus.to_string()),
            ("date", &self.date),
            ("commit", &self.commit),
            ("toolchain", &self.toolchain),
            ("run", &self.run),
        ] {
            let _ = writeln!(out, "# {key}\t{value}");
        }
        if let Some(started) = self.started {
            let _ = writeln!(out, "# started\t{started}");
        }
        let _ = writeln!(out, "{COLUMNS}");
        for ((group, id), m) in &self.results {
            let _ = writeln!(
                out,
                "{group}\t{id}\t{}\t{}\t{}\t{}\t{}\t{}\t{}",
                cell(m.median_ns.map(|ns| format!("{ns:.1}"))),
                cell(m.instructions.map(|n| format!("{n:.2}"))),
                cell(m.allocs.map(|a| a.allocs)),
                cell(m.allocs.map(|a| a.bytes)),
                cell(m.allocs.map(|a| a.peak_bytes)),
                cell(m.retained_bytes),
                cell(m.virtual_ns),
            );
        }
        out
    }

    /// A record read back from its `.tsv` file, named `slug`.
    pub fn from_tsv(slug: &str, text: &str) -> Result<Self, String> {
        let mut record = Record {
            slug: slug.to_string(),
            ..Record::default()
        };
        let mut lines = text.lines();
        for line in lines.by_ref() {
            let Some(meta) = line.strip_prefix("# ") else {
                if line != COLUMNS {
                    return Err(format!("{slug}: expected the column line, found `{line}`"));
                }
                break;
            };
            let (key, value) = meta.split_once('\t').unwrap_or((meta, ""));
            let value = value.to_string();
            match key {
                "cpu" => record.cpu = value,
                "short" => record.short = value,
                "cpus" => record.cpus = value.parse().unwrap_or(0),
                "date" => record.date = value,
                "commit" => record.commit = value,
                "toolchain" => record.toolchain = value,
                "run" => record.run = value,
                "started" => record.started = value.parse().ok(),
                _ => {}
            }
        }
        for line in lines {
            let fields: Vec<&str> = line.split('\t').collect();
            let [
                group,
                id,
                median,
                instructions,
                allocs,
                bytes,
                peak,
                retained,
                virtual_ns,
            ] = fields[..]
            else {
                return Err(format!(
                    "{slug}: a row of {} fields: `{line}`",
                    fields.len()
                ));
            };
            let number = |text: &str| text.parse::<f64>().ok();
            let whole = |text: &str| text.parse::<u64>().ok();
            let allocs = match (whole(allocs), whole(bytes)) {
                (Some(allocs), Some(bytes)) => Some(Allocs {
                    allocs,
                    bytes,
                    peak_bytes: whole(peak).unwrap_or(0),
                }),
                _ => None,
            };
            record.results.insert(
                (group.to_string(), id.to_string()),
                Measured {
                    median_ns: number(median),
                    instructions: number(instructions),
                    allocs,
                    retained_bytes: whole(retained),
                    virtual_ns: whole(virtual_ns),
                },
            );
        }
        Ok(record)
    }
}

/// Puts `records` in the order the index, the chart and the summary read them, oldest first:
/// by day, then by when each run started (a record with no time first), then by file name, so
/// that the order does not depend on the order they were read in. The index and the summary
/// take each row's instruction count and bytes per value from the last record that has them.
/// An error if there is no record, or if the last record has no time and shares its day with
/// another: which of them is the newest cannot be told (a record with no time came from a
/// `bench-table` that kept none; run it again with this one to give it a time).
pub fn order_records(records: &mut [Record]) -> Result<(), String> {
    records.sort_by(|a, b| {
        a.date
            .cmp(&b.date)
            .then(a.started.unwrap_or(0).cmp(&b.started.unwrap_or(0)))
            .then(a.slug.cmp(&b.slug))
    });
    match records {
        [] => Err("no record of a run in benches/results/".to_string()),
        [.., before, last] if before.date == last.date && last.started.is_none() => Err(format!(
            "`{}` and `{}` both ran on {} and `{}` has no start time: which is the newest \
             cannot be told",
            before.slug, last.slug, last.date, last.slug
        )),
        _ => Ok(()),
    }
}

/// Every CPU's record in `dir` (its `.tsv` files, each named by its file's stem), by file name.
pub fn read_records(dir: &Path) -> Result<Vec<Record>, String> {
    let mut paths: Vec<PathBuf> = fs::read_dir(dir)
        .map_err(|e| format!("cannot read {}: {e}", dir.display()))?
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "tsv"))
        .collect();
    paths.sort();
    paths
        .iter()
        .map(|path| {
            let slug = path
                .file_stem()
                .map_or(String::new(), |s| s.to_string_lossy().into());
            let text = fs::read_to_string(path)
                .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            Record::from_tsv(&slug, &text)
        })
        .collect()
}
