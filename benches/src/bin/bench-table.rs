//! Prints the last benchmark run as markdown tables, one per entry of `TABLES` (one per
//! primitive, each with the columns of its own peers): for each workload, each
//! implementation's median time, instructions per item and, in a row that holds values, peak
//! bytes per value held, pinfold's ratios to each peer in time and instructions, and each
//! implementation's allocations. A table none of whose rows has results is left out.
//!
//! It reads criterion's estimates (`<target>/criterion/<group>/<id>/new/estimates.json`, the
//! median's point estimate, in nanoseconds), the suite's own `allocs.tsv` and `virtual.tsv`,
//! and the counts of `cargo xtask instructions` (`instructions.tsv`), all under
//! `<target>/pinfold-bench/`. Run it after `cargo bench -p pinfold-benches`:
//!
//! ```text
//! cargo run -p pinfold-benches --bin bench-table [-- --write | --records]
//! ```
//!
//! `--records` rewrites what is made from every CPU's record together (the index, the chart
//! and the README's summary, below) from the `.tsv` files in `benches/results/`, with no run:
//! after a change to how they are written, or a record copied in from another machine. Each
//! CPU's own tables (`<cpu>.md`) stay as its run wrote them.
//!
//! `--stamp`, which `cargo xtask bench` runs first, notes the commit the run is built from and
//! the day it starts ([`STAMP_FILE`]), so that the record names them even if the tables are
//! written later. A benchmark run that `cargo xtask bench` did not start (`cargo bench` by
//! hand) removes the stamp: its tables name the commit and day they are made at.
//!
//! With `--write` (what `cargo xtask bench --full` passes) it records the run under the CPU it
//! ran on, then rewrites what is made from every CPU's record:
//!
//! - `benches/results/<cpu>.tsv` (the figures) and `<cpu>.md` (this CPU's tables): the CPU is
//!   named by vendor, micro-architecture where known, family and model; other CPUs' files
//!   are kept;
//! - `benches/RESULTS.md`: the index, per row pinfold's ratio to each peer on each CPU, in
//!   instructions and in bytes per value held;
//! - `benches/ratios.svg`: pinfold's ratio to the fastest peer in each row, a bar per CPU and
//!   one for instructions ([`ratio_chart`]);
//! - the summary in the top-level `README.md`, between its `<!-- bench-summary:start -->` and
//!   `<!-- bench-summary:end -->` lines ([`replace_summary`]): the rows chosen by
//!   [`summary_rows`](pinfold_benches::summary_rows)'s rule, each with its peer named once
//!   and its ratio on each CPU, and what holds against each peer on the CPUs that timed each
//!   row ([`claims`](pinfold_benches::claims)), so the README cannot state what the files do not
//!   show ([`readme_summary`]).

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::SystemTime;

use pinfold_benches::{
    Cpu, Measured, PINFOLD, Record, STAMP_FILE, TABLES, cpu_table, criterion_dir, format,
    index_document, order_records, ratio_chart, read_allocs, read_instructions, read_records,
    read_virtual, readme_summary, replace_summary, results_dir, standings,
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

/// The directory of this package, `benches/`.
fn benches_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Where each CPU's record is kept.
fn records_dir() -> PathBuf {
    benches_dir().join("results")
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

/// Seconds since the Unix epoch, now.
fn now_seconds() -> Option<u64> {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .ok()
        .map(|since| since.as_secs())
}

/// The commit, date and start time of the run: as stamped when it started, else as they are
/// now (a stamp written before the time was kept gives none).
fn commit_date_and_time() -> (String, String, Option<u64>) {
    let stamped = fs::read_to_string(results_dir().join(STAMP_FILE)).ok();
    let fields: Vec<&str> = stamped
        .as_deref()
        .map_or_else(Vec::new, |text| text.trim_end().split('\t').collect());
    match fields[..] {
        [commit, date, ref rest @ ..] => (
            commit.to_string(),
            date.to_string(),
            rest.first().and_then(|time| time.parse().ok()),
        ),
        _ => (commit(), format::utc_date(SystemTime::now()), now_seconds()),
    }
}

/// Records the commit the benchmarks are built from, today's date and the time, for the run
/// about to start (what `cargo xtask bench` does first).
fn stamp() -> Result<(), String> {
    let dir = results_dir();
    let path = dir.join(STAMP_FILE);
    let text = format!(
        "{}\t{}\t{}\n",
        commit(),
        format::utc_date(SystemTime::now()),
        now_seconds().unwrap_or(0)
    );
    fs::create_dir_all(&dir)
        .and_then(|()| fs::write(&path, text))
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// The commit the benchmarks are built from (`git rev-parse --short HEAD`), and whether the
/// tracked files differ from it.
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

/// How the run was made, by its sample counts.
fn how_run(criterion: &Path) -> String {
    match sample_counts(criterion) {
        Some((_, most)) if most <= 10 => "a quick run (`cargo xtask bench`: 10 samples a \
             benchmark, ratios that move by up to 1.5x between runs)"
            .to_string(),
        Some((fewest, most)) => format!(
            "`cargo xtask bench --full`: {fewest} to {most} samples a benchmark, every \
             implementation in the same run, in an order drawn per run; instructions per item \
             under callgrind"
        ),
        None => "`cargo xtask bench --full` (sample counts not recorded)".to_string(),
    }
}

/// The last run, as this CPU's record: every benchmark of the tables that has a median, a
/// count of instructions, allocations or a virtual time.
fn this_run(cpu: &Cpu) -> Record {
    let criterion = criterion_dir();
    let allocs = read_allocs();
    let virtual_times = read_virtual();
    let instructions = read_instructions();
    let (commit, date, started) = commit_date_and_time();
    let mut record = Record {
        slug: cpu.slug(),
        short: cpu.short(),
        cpu: cpu.label(),
        cpus: std::thread::available_parallelism().map_or(0, usize::from),
        date,
        started,
        commit,
        toolchain: first_line_of("rustc", &["--version"]).unwrap_or_else(|| "unknown".into()),
        run: how_run(&criterion),
        results: Default::default(),
    };
    for table in &TABLES {
        for workload in table.workloads {
            let (group, ours) = workload
                .name
                .split_once('/')
                .unwrap_or((workload.name, PINFOLD));
            for &column in table.implementations {
                let id = if column == PINFOLD { ours } else { column };
                let key = (group.to_string(), id.to_string());
                let alloc_row = allocs.get(&key);
                let measured = Measured {
                    median_ns: median_ns(&criterion, group, id),
                    instructions: instructions.get(&key).copied(),
                    allocs: alloc_row.map(|row| row.allocs),
                    retained_bytes: alloc_row.and_then(|row| row.retained_bytes),
                    virtual_ns: virtual_times
                        .get(&key)
                        .map(|row| row.elapsed.as_nanos() as u64),
                };
                if measured != Measured::default() {
                    record.results.insert(key, measured);
                }
            }
        }
    }
    record
}

/// One CPU's tables, after a line on the run.
fn cpu_document(record: &Record) -> String {
    let mut out = format!("# Benchmark results: {}\n\n", record.short);
    let _ = writeln!(
        out,
        "<!-- Written by `bench-table --write`, which `cargo xtask bench --full` runs: the next \
         full run on this CPU rewrites this file and `{}.tsv`. -->\n",
        record.slug
    );
    let _ = writeln!(out, "| | |\n|---|---|");
    let _ = writeln!(out, "| CPU | {}, {} CPUs |", record.cpu, record.cpus);
    let _ = writeln!(out, "| date | {} |", record.date);
    let _ = writeln!(out, "| commit | {} |", record.commit);
    let _ = writeln!(out, "| toolchain | {} |", record.toolchain);
    let _ = writeln!(out, "| run | {} |", record.run);
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "Time: the median of criterion's samples (wall time, or CPU time where the workload \
         says so). Instructions: per item (or per operation) under callgrind, in the regions \
         the benchmark times, on every thread that runs one (`cargo xtask instructions`). \
         Ratio = pinfold's over the peer's: below 1.00x pinfold is ahead. Bytes per value: in a \
         row that holds a known number of values (futures, streams) at its peak, the most bytes \
         live at once in the untimed run over that number (the values' own bytes included; — \
         where a row holds no fixed number). Allocations: one untimed run with a counting \
         allocator, count (bytes requested). What each workload \
         does is in [../README.md](../README.md); the ratios on every CPU are in \
         [../RESULTS.md](../RESULTS.md)."
    );
    for table in &TABLES {
        if let Some(text) = cpu_table(record, table) {
            let _ = writeln!(out);
            out.push_str(&text);
        }
    }
    out
}

/// Writes `text` to `path`, or says which file could not be written.
fn write(path: &Path, text: &str) -> Result<(), String> {
    fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// Writes this CPU's record and tables, then what is made from every record
/// ([`write_from_records`]); gives the summary.
fn write_report(record: &Record) -> Result<String, String> {
    let dir = records_dir();
    fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    write(&dir.join(format!("{}.tsv", record.slug)), &record.to_tsv())?;
    write(
        &dir.join(format!("{}.md", record.slug)),
        &cpu_document(record),
    )?;
    write_from_records()
}

/// Writes the index, the chart and the README's summary from every record in
/// `benches/results/`, in [`order_records`]'s order; gives the summary.
fn write_from_records() -> Result<String, String> {
    let mut records = read_records(&records_dir())?;
    order_records(&mut records)?;
    let records: Vec<&Record> = records.iter().collect();
    let benches = benches_dir();
    write(&benches.join("RESULTS.md"), &index_document(&records))?;
    write(
        &benches.join("ratios.svg"),
        &ratio_chart(&standings(&records)),
    )?;
    let summary = readme_summary(&records);
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
        [flag] if flag == "--records" => {
            return match write_from_records() {
                Ok(summary) => {
                    println!(
                        "bench-table: wrote benches/RESULTS.md, benches/ratios.svg and the \
                         README's summary from benches/results/:"
                    );
                    println!();
                    print!("{summary}");
                    ExitCode::SUCCESS
                }
                Err(error) => {
                    eprintln!("bench-table: {error}");
                    ExitCode::FAILURE
                }
            };
        }
        [flag] if flag == "--stamp" => {
            return match stamp() {
                Ok(()) => ExitCode::SUCCESS,
                Err(error) => {
                    eprintln!("bench-table: {error}");
                    ExitCode::FAILURE
                }
            };
        }
        _ => {
            eprintln!("usage: bench-table [--write | --records | --stamp]");
            return ExitCode::FAILURE;
        }
    };
    let cpu = Cpu::detect();
    let record = this_run(&cpu);
    if record.results.values().all(|m| m.median_ns.is_none()) {
        eprintln!(
            "bench-table: no criterion results under {}; run `cargo bench -p pinfold-benches` first",
            criterion_dir().display()
        );
        return ExitCode::FAILURE;
    }
    print!("{}", cpu_document(&record));

    if write {
        match write_report(&record) {
            Ok(summary) => {
                println!();
                println!(
                    "bench-table: wrote benches/results/{}.tsv and .md, benches/RESULTS.md, \
                     benches/ratios.svg and the README's summary:",
                    record.slug
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
