//! Where results go: criterion's estimates under `<target>/criterion`, and this suite's own
//! tables under `<target>/pinfold-bench`.
//!
//! `allocs.tsv` has one row per untimed run: `group id allocs bytes peak_bytes
//! retained_bytes` (tab-separated, `-` for a figure not measured). `virtual.tsv` has `group id
//! virtual_ns`: the elapsed time on tokio's paused clock. Rows are appended; a reader keeps
//! the last row of each `(group, id)`.

use std::collections::HashMap;
use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::alloc::Allocs;

/// The allocation table's file name, in [`results_dir`].
pub const ALLOCS_FILE: &str = "allocs.tsv";
/// The virtual-time table's file name, in [`results_dir`].
pub const VIRTUAL_FILE: &str = "virtual.tsv";
/// The file `cargo xtask instructions` appends its counts to, in [`results_dir`]: `group id
/// instructions_per_item`.
pub const INSTRUCTIONS_FILE: &str = "instructions.tsv";
/// The file, in [`results_dir`], that `bench-table --stamp` writes when `cargo xtask bench`
/// starts a run: the commit, the date and the time (seconds since the Unix epoch) the run's
/// record gives, whenever its tables are written.
pub const STAMP_FILE: &str = "run.tsv";
/// The variable `cargo xtask bench` sets (to `1`) for the benchmarks it runs after stamping
/// them.
pub const STAMPED_VARIABLE: &str = "PINFOLD_BENCH_STAMPED";

const ALLOCS_HEADER: &str = "group\tid\tallocs\tbytes\tpeak_bytes\tretained_bytes";
const VIRTUAL_HEADER: &str = "group\tid\tvirtual_ns";

/// The workspace root (the parent of this package's directory).
fn workspace_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("benches/ lives directly under the workspace root")
}

/// Cargo's target directory: `$CARGO_TARGET_DIR` (a relative one is taken from the workspace
/// root) or `<workspace>/target`.
pub fn target_dir() -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) if !dir.is_empty() => workspace_root().join(dir),
        _ => workspace_root().join("target"),
    }
}

/// Where criterion writes its estimates: `<target>/criterion` (the bench binaries set it
/// explicitly, so the table printer reads what they wrote).
pub fn criterion_dir() -> PathBuf {
    target_dir().join("criterion")
}

/// Where this suite writes its own tables: `<target>/pinfold-bench`.
pub fn results_dir() -> PathBuf {
    target_dir().join("pinfold-bench")
}

/// Whether a benchmark binary started with `args` and `stamped` (the value of
/// [`STAMPED_VARIABLE`]) outdates the stamp of an earlier `cargo xtask bench` run: it times
/// benchmarks (`--bench`; not `--list`, `--test`, `--profile-time` or `--help`, and no row
/// counted under callgrind, `counting`) and `cargo xtask bench` did not start it.
pub fn outdates_stamp(args: &[String], stamped: Option<&str>, counting: bool) -> bool {
    // A flag alone or with its value after `=`.
    let given = |flag: &str| {
        args.iter()
            .any(|arg| arg.split_once('=').map_or(arg.as_str(), |(name, _)| name) == flag)
    };
    let times = given("--bench")
        && !["--list", "--test", "--profile-time", "--help", "-h"]
            .into_iter()
            .any(given);
    times && !counting && stamped != Some("1")
}

/// Removes the stamp in `dir` if a process started with `args`, `stamped` and `counting`
/// outdates it ([`outdates_stamp`]); says on stderr if it cannot.
pub fn forget_outdated_stamp_in(
    dir: &Path,
    args: &[String],
    stamped: Option<&str>,
    counting: bool,
) {
    if !outdates_stamp(args, stamped, counting) {
        return;
    }
    let path = dir.join(STAMP_FILE);
    match fs::remove_file(&path) {
        Err(error) if error.kind() != std::io::ErrorKind::NotFound => {
            eprintln!("pinfold-benches: cannot remove {}: {error}", path.display());
        }
        _ => {}
    }
}

/// [`forget_outdated_stamp_in`] for this process, in [`results_dir`]: the tables of a run
/// started by hand name the commit and day they are made at, not an older run's.
pub fn forget_outdated_stamp() {
    let args: Vec<String> = std::env::args_os()
        .map(|arg| arg.to_string_lossy().into_owned())
        .collect();
    let stamped = std::env::var(STAMPED_VARIABLE).ok();
    let counting = crate::instructions::selected().is_some();
    forget_outdated_stamp_in(&results_dir(), &args, stamped.as_deref(), counting);
}

fn append(file: &str, header: &str, row: &str) {
    let dir = results_dir();
    let path = dir.join(file);
    let write = || -> std::io::Result<()> {
        fs::create_dir_all(&dir)?;
        let mut out = OpenOptions::new().create(true).append(true).open(&path)?;
        if out.metadata()?.len() == 0 {
            writeln!(out, "{header}")?;
        }
        writeln!(out, "{row}")
    };
    if let Err(error) = write() {
        panic!("could not append to {}: {error}", path.display());
    }
}

/// One row of `allocs.tsv`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllocRow {
    /// The criterion group (the workload).
    pub group: String,
    /// The implementation (`BenchmarkId`).
    pub id: String,
    /// What the untimed run counted.
    pub allocs: Allocs,
    /// Bytes still allocated at the end of a workload that keeps its set (the growable burst:
    /// what the set holds on to once it is back to 100 futures).
    pub retained_bytes: Option<u64>,
}

/// Appends a row to `allocs.tsv`.
pub fn record_allocs(group: &str, id: &str, allocs: &Allocs, retained_bytes: Option<u64>) {
    let retained = retained_bytes.map_or_else(|| "-".to_string(), |b| b.to_string());
    let row = format!(
        "{group}\t{id}\t{}\t{}\t{}\t{retained}",
        allocs.allocs, allocs.bytes, allocs.peak_bytes
    );
    append(ALLOCS_FILE, ALLOCS_HEADER, &row);
}

/// One row of `virtual.tsv`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VirtualRow {
    /// The criterion group (the workload).
    pub group: String,
    /// The implementation (`BenchmarkId`).
    pub id: String,
    /// Elapsed time on tokio's paused clock.
    pub elapsed: Duration,
}

/// Appends a row to `virtual.tsv`.
pub fn record_virtual(group: &str, id: &str, elapsed: Duration) {
    let row = format!("{group}\t{id}\t{}", elapsed.as_nanos());
    append(VIRTUAL_FILE, VIRTUAL_HEADER, &row);
}

/// The rows of one of our tables, last row per `(group, id)` winning; none if it is missing.
fn read_rows(file: &str) -> HashMap<(String, String), Vec<String>> {
    let mut rows = HashMap::new();
    let Ok(text) = fs::read_to_string(results_dir().join(file)) else {
        return rows;
    };
    for line in text.lines().skip(1) {
        let fields: Vec<String> = line.split('\t').map(str::to_string).collect();
        if fields.len() >= 3 {
            rows.insert((fields[0].clone(), fields[1].clone()), fields[2..].to_vec());
        }
    }
    rows
}

/// `allocs.tsv`, the last row of each `(group, id)`.
pub fn read_allocs() -> HashMap<(String, String), AllocRow> {
    let number = |field: Option<&String>| field.and_then(|f| f.parse::<u64>().ok());
    read_rows(ALLOCS_FILE)
        .into_iter()
        .filter_map(|((group, id), fields)| {
            let allocs = Allocs {
                allocs: number(fields.first())?,
                bytes: number(fields.get(1))?,
                peak_bytes: number(fields.get(2)).unwrap_or(0),
            };
            let retained_bytes = number(fields.get(3));
            let row = AllocRow {
                group: group.clone(),
                id: id.clone(),
                allocs,
                retained_bytes,
            };
            Some(((group, id), row))
        })
        .collect()
}

/// `virtual.tsv`, the last row of each `(group, id)`.
pub fn read_virtual() -> HashMap<(String, String), VirtualRow> {
    read_rows(VIRTUAL_FILE)
        .into_iter()
        .filter_map(|((group, id), fields)| {
            let nanos = fields.first()?.parse::<u64>().ok()?;
            let row = VirtualRow {
                group: group.clone(),
                id: id.clone(),
                elapsed: Duration::from_nanos(nanos),
            };
            Some(((group, id), row))
        })
        .collect()
}

/// `instructions.tsv`, the last count of each `(group, id)`: instructions per item.
pub fn read_instructions() -> HashMap<(String, String), f64> {
    read_rows(INSTRUCTIONS_FILE)
        .into_iter()
        .filter_map(|(key, fields)| Some((key, fields.first()?.parse().ok()?)))
        .collect()
}
