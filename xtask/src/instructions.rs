//! `cargo xtask instructions`: each benchmark's instructions per item under valgrind's
//! callgrind, pinfold's over each peer's, and the change against a base revision.
//!
//! The bench binaries have a counting mode (`benches/src/instructions.rs`): with
//! `PINFOLD_INSTRUCTIONS=<group>/<id>` one benchmark runs once uncounted, then once more
//! inside the function callgrind toggles collection on, and the binary prints how many items
//! that run handled. Callgrind counts only those regions (on every thread that runs one), so
//! neither the process's start nor the setup a custom round leaves untimed is counted. The
//! counts do not depend on the CPU or on the load of the machine: they are the figure to
//! compare changes by, beside the times, which do.

use std::collections::BTreeMap;
use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::thread;
use std::time::Instant;

use crate::outcome::{Failure, Outcome, Seconds};
use crate::usage::CommandUsage;
use crate::valgrind;
use crate::workspace::Workspace;

pub(crate) const USAGE: CommandUsage = CommandUsage {
    synopsis: "instructions [--base REV] [ROW]",
    about: "instructions per item of each implementation under\n\
            valgrind's callgrind, and pinfold's over each peer's, for\n\
            the rows named (criterion groups; several may be given),\n\
            by default one row per bench file (under a minute after\n\
            the build), --all for every row; --base REV also counts\n\
            pinfold at REV (built in a worktree) and prints the\n\
            change; writes target/pinfold-bench/instructions.tsv",
};

/// One row per bench file: what `instructions` counts when given no row.
pub(crate) const QUICK_ROWS: [&str; 10] = [
    "ready_512k",
    "unordered_ready_512k",
    "join_all_ready_10_block_on",
    "ordered_1k_c10",
    "keyed_churn_100k",
    "merge_hot_16",
    "futures_ordered_bounded_ready_512k",
    "map_churn_100k",
    "pool_acquire_release",
    "writer_1x1000",
];

/// The function the bench binaries run their counted regions in (`MEASURED_FUNCTION` in
/// `benches/src/instructions.rs`).
const MEASURED_FUNCTION: &str = "pinfold_benches::instructions::measured";
const SELECT_VARIABLE: &str = "PINFOLD_INSTRUCTIONS";
const REPORT_PREFIX: &str = "pinfold-instructions:";
/// The file, under `<target>/pinfold-bench/`, the counts go to.
pub(crate) const FILE: &str = "instructions.tsv";
const HEADER: &str = "group\tid\tinstructions_per_item";

const SKIPPED: &str = "instructions: SKIPPED — valgrind is not installed (on Debian: \
                       apt-get install valgrind)";

#[derive(Debug, PartialEq)]
pub(crate) struct InstructionOptions {
    base: Option<String>,
    rows: Rows,
}

#[derive(Debug, PartialEq)]
enum Rows {
    Quick,
    All,
    Named(Vec<String>),
}

impl InstructionOptions {
    pub(crate) fn parse(args: &[String]) -> Result<Self, Failure> {
        let mut base = None;
        let mut all = false;
        let mut named = Vec::new();
        let mut args = args.iter();
        while let Some(arg) = args.next() {
            match arg.as_str() {
                "--base" => match args.next() {
                    Some(rev) if !rev.starts_with('-') => base = Some(rev.clone()),
                    _ => return Err("instructions: --base takes a revision".to_string()),
                },
                "--all" => all = true,
                flag if flag.starts_with('-') => {
                    return Err(format!("instructions: unknown argument `{flag}`"));
                }
                row => named.push(row.to_string()),
            }
        }
        let rows = match (all, named.is_empty()) {
            (true, true) => Rows::All,
            (true, false) => {
                return Err("instructions: --all or rows, not both".to_string());
            }
            (false, true) => Rows::Quick,
            (false, false) => Rows::Named(named),
        };
        Ok(Self { base, rows })
    }

    /// Every row, as `bench --full` records them.
    pub(crate) fn all() -> Self {
        Self {
            base: None,
            rows: Rows::All,
        }
    }
}

/// `group/id` → the bench binary that runs it.
type Benchmarks = BTreeMap<(String, String), PathBuf>;

/// Instructions per item of each `(group, id)`.
type Counts = BTreeMap<(String, String), f64>;

pub(crate) fn instructions(
    workspace: &Workspace,
    options: &InstructionOptions,
) -> Result<Outcome, Failure> {
    if !valgrind::available() {
        return Ok(Outcome::Skipped(SKIPPED.to_string()));
    }
    let began = Instant::now();
    let target = target_dir(workspace);
    let benchmarks = list(&build(&workspace.root, &target)?)?;
    let rows = select(&benchmarks, &options.rows)?;
    let jobs: Vec<(String, String)> = benchmarks
        .keys()
        .filter(|(group, _)| rows.contains(group))
        .cloned()
        .collect();
    println!(
        "instructions: {} benchmarks of {} rows under callgrind",
        jobs.len(),
        rows.len()
    );
    let counts = count(&benchmarks, &jobs)?;
    write_counts(&target, &counts)?;

    let base = match &options.base {
        Some(rev) => Some((rev.as_str(), count_at(workspace, &target, rev, &jobs)?)),
        None => None,
    };
    println!();
    print!(
        "{}",
        table(&rows, &counts, base.as_ref().map(|(rev, c)| (*rev, c)))
    );
    println!(
        "\ninstructions: took {}; counts in {}",
        Seconds(began.elapsed()),
        target.join("pinfold-bench").join(FILE).display()
    );
    Ok(Outcome::Passed)
}

/// `$CARGO_TARGET_DIR` (relative to the root) or `<root>/target`.
fn target_dir(workspace: &Workspace) -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) if !dir.is_empty() => workspace.root.join(dir),
        _ => workspace.root.join("target"),
    }
}

/// Builds the bench binaries of the workspace at `root` into `target`; gives their paths.
fn build(root: &Path, target: &Path) -> Result<Vec<PathBuf>, Failure> {
    println!(
        "$ cargo bench -p pinfold-benches --no-run --message-format=json  (in {})",
        root.display()
    );
    let output = Command::new("cargo")
        .args([
            "bench",
            "-p",
            "pinfold-benches",
            "--no-run",
            "--message-format=json",
        ])
        .current_dir(root)
        .env("CARGO_TARGET_DIR", target)
        .stderr(std::process::Stdio::inherit())
        .output()
        .map_err(|e| format!("instructions: could not start cargo: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "instructions: building the benches failed ({})",
            output.status
        ));
    }
    let text = String::from_utf8_lossy(&output.stdout);
    let binaries: Vec<PathBuf> = text
        .lines()
        .filter(|line| line.contains(r#""kind":["bench"]"#))
        .filter_map(|line| json_string(line, "executable"))
        .map(PathBuf::from)
        .collect();
    if binaries.is_empty() {
        return Err("instructions: cargo built no bench binary".to_string());
    }
    Ok(binaries)
}

/// The string value of `"key":"..."` in one line of cargo's JSON (paths have no quotes or
/// escapes but `\\`).
fn json_string(line: &str, key: &str) -> Option<String> {
    let start = line.find(&format!(r#""{key}":""#))? + key.len() + 4;
    let end = start + line[start..].find('"')?;
    Some(line[start..end].replace(r"\\", r"\"))
}

/// Every benchmark of every binary, from criterion's `--list`.
fn list(binaries: &[PathBuf]) -> Result<Benchmarks, Failure> {
    let mut benchmarks = Benchmarks::new();
    for binary in binaries {
        let output = Command::new(binary)
            .args(["--bench", "--list"])
            .output()
            .map_err(|e| format!("instructions: could not run {}: {e}", binary.display()))?;
        for line in String::from_utf8_lossy(&output.stdout).lines() {
            let name = line.split_once(": ").map(|(name, _)| name);
            if let Some((group, id)) = name.and_then(|name| name.split_once('/')) {
                benchmarks.insert((group.to_string(), id.to_string()), binary.clone());
            }
        }
    }
    Ok(benchmarks)
}

/// The groups `rows` names, each checked against what the binaries run.
fn select(benchmarks: &Benchmarks, rows: &Rows) -> Result<Vec<String>, Failure> {
    let groups: Vec<String> = {
        let mut groups: Vec<String> = benchmarks.keys().map(|(g, _)| g.clone()).collect();
        groups.dedup();
        groups
    };
    let named: Vec<String> = match rows {
        Rows::All => return Ok(groups),
        Rows::Quick => QUICK_ROWS.iter().map(|row| row.to_string()).collect(),
        Rows::Named(rows) => rows
            .iter()
            .map(|row| {
                row.split_once('/')
                    .map_or(row.as_str(), |(g, _)| g)
                    .to_string()
            })
            .collect(),
    };
    for row in &named {
        if !groups.contains(row) {
            return Err(format!(
                "instructions: no benchmark group `{row}`; the groups are: {}",
                groups.join(", ")
            ));
        }
    }
    Ok(named)
}

/// Counts `jobs` with `benchmarks`' binaries, as many at once as there are CPUs.
fn count(benchmarks: &Benchmarks, jobs: &[(String, String)]) -> Result<Counts, Failure> {
    let queue = Mutex::new(jobs.iter());
    let results = Mutex::new(Counts::new());
    let failures = Mutex::new(Vec::new());
    let workers = thread::available_parallelism()
        .map_or(1, usize::from)
        .min(jobs.len().max(1));
    thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                loop {
                    let Some(job) = queue.lock().unwrap().next() else {
                        return;
                    };
                    let binary = &benchmarks[job];
                    match count_one(binary, &job.0, &job.1) {
                        Ok(per_item) => {
                            println!("  {}/{}: {per_item:.1} per item", job.0, job.1);
                            results.lock().unwrap().insert(job.clone(), per_item);
                        }
                        Err(failure) => failures.lock().unwrap().push(failure),
                    }
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    if !failures.is_empty() {
        return Err(failures.join("\n"));
    }
    Ok(results.into_inner().unwrap())
}

/// One benchmark's instructions per item.
fn count_one(binary: &Path, group: &str, id: &str) -> Result<f64, Failure> {
    let output = Command::new("valgrind")
        .args([
            "--tool=callgrind",
            "--collect-atstart=no",
            &format!("--toggle-collect={MEASURED_FUNCTION}"),
            "--callgrind-out-file=/dev/null",
        ])
        .arg(binary)
        .arg("--bench")
        .env(SELECT_VARIABLE, format!("{group}/{id}"))
        .output()
        .map_err(|e| format!("instructions: could not start valgrind: {e}"))?;
    let stderr = String::from_utf8_lossy(&output.stderr);
    if !output.status.success() {
        return Err(format!(
            "instructions: {group}/{id} failed under callgrind ({}):\n{stderr}",
            output.status
        ));
    }
    let (runs, items) = report(&stderr).ok_or_else(|| {
        format!(
            "instructions: {group}/{id}: the binary printed no `{REPORT_PREFIX}` line (a bench \
             binary without the counting mode?)"
        )
    })?;
    // A child the process forks (criterion looking for gnuplot) reports a count of its own.
    let collected: u64 = stderr
        .lines()
        .filter_map(|line| line.split_once("Collected :"))
        .filter_map(|(_, count)| count.trim().parse::<u64>().ok())
        .sum();
    Ok(collected as f64 / (runs * items) as f64)
}

/// `runs` and `items` from the counting mode's line.
fn report(stderr: &str) -> Option<(u64, u64)> {
    let line = stderr
        .lines()
        .find_map(|line| line.strip_prefix(REPORT_PREFIX))?;
    let field = |name: &str| -> Option<u64> {
        line.split_whitespace()
            .find_map(|field| field.strip_prefix(name)?.strip_prefix('='))?
            .parse()
            .ok()
    };
    Some((field("runs")?, field("items")?)).filter(|&(runs, items)| runs * items > 0)
}

/// Appends the counts to the file (a reader keeps the last row of each `(group, id)`, as of
/// the suite's other tables), its header first if it is new.
fn write_counts(target: &Path, counts: &Counts) -> Result<(), Failure> {
    let dir = target.join("pinfold-bench");
    let path = dir.join(FILE);
    let append = || -> std::io::Result<()> {
        fs::create_dir_all(&dir)?;
        let mut out = fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)?;
        let mut text = String::new();
        if out.metadata()?.len() == 0 {
            text.push_str(HEADER);
            text.push('\n');
        }
        for ((group, id), per_item) in counts {
            text.push_str(&format!("{group}\t{id}\t{per_item:.2}\n"));
        }
        out.write_all(text.as_bytes())
    };
    append().map_err(|e| format!("instructions: cannot write {}: {e}", path.display()))
}

/// pinfold's benchmarks among `jobs` counted at `rev`: built from a worktree of it into the
/// same target directory (the dependencies are shared; the workspace's crates, at another
/// path, are built apart).
fn count_at(
    workspace: &Workspace,
    target: &Path,
    rev: &str,
    jobs: &[(String, String)],
) -> Result<Counts, Failure> {
    let tree = target.join("pinfold-base");
    if tree.exists() {
        let _ = workspace
            .command(
                "git",
                &["worktree", "remove", "--force", &tree.to_string_lossy()],
            )
            .run();
        let _ = fs::remove_dir_all(&tree);
    }
    workspace
        .command(
            "git",
            &["worktree", "add", "--detach", &tree.to_string_lossy(), rev],
        )
        .run()?;
    let result = (|| {
        let benchmarks = list(&build(&tree, target)?)?;
        let ours: Vec<(String, String)> = jobs
            .iter()
            .filter(|(_, id)| id.starts_with("pinfold"))
            .filter(|job| benchmarks.contains_key(*job))
            .cloned()
            .collect();
        println!(
            "instructions: {} of pinfold's benchmarks at {rev}",
            ours.len()
        );
        count(&benchmarks, &ours)
    })();
    let _ = workspace
        .command(
            "git",
            &["worktree", "remove", "--force", &tree.to_string_lossy()],
        )
        .run();
    result
}

/// The markdown table: per row and pinfold implementation, its count, each peer's with
/// pinfold's over it, and the change since the base.
fn table(rows: &[String], counts: &Counts, base: Option<(&str, &Counts)>) -> String {
    let mut out = String::from(
        "Instructions per item (callgrind); in brackets pinfold's over the peer's.\n\n",
    );
    out.push_str("| row | pinfold | peers |");
    if let Some((rev, _)) = base {
        out.push_str(&format!(" pinfold at `{rev}` | change |"));
    }
    out.push('\n');
    out.push_str(if base.is_some() {
        "|---|---:|---|---:|---:|\n"
    } else {
        "|---|---:|---|\n"
    });
    for group in rows {
        let in_group: Vec<(&str, f64)> = counts
            .iter()
            .filter(|((g, _), _)| g == group)
            .map(|((_, id), &n)| (id.as_str(), n))
            .collect();
        let (ours, peers): (Vec<_>, Vec<_>) = in_group
            .iter()
            .partition(|(id, _)| id.starts_with("pinfold"));
        for &(id, n) in &ours {
            let label = if id == "pinfold" {
                format!("`{group}`")
            } else {
                format!("`{group}` ({id})")
            };
            let peer_cells: Vec<String> = peers
                .iter()
                .map(|&(peer, theirs)| format!("{peer} {theirs:.1} ({:.2}x)", n / theirs))
                .collect();
            out.push_str(&format!("| {label} | {n:.1} | {} |", peer_cells.join(", ")));
            if let Some((_, base)) = base {
                match base.get(&(group.clone(), id.to_string())) {
                    Some(&then) => {
                        out.push_str(&format!(" {then:.1} | {:+.1}% |", (n / then - 1.0) * 100.0))
                    }
                    None => out.push_str(" — | — |"),
                }
            }
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|arg| arg.to_string()).collect()
    }

    #[test]
    fn rows_default_to_the_quick_set_and_take_a_base() {
        let parsed = InstructionOptions::parse(&args(&[])).unwrap();
        assert_eq!(parsed.rows, Rows::Quick);
        assert_eq!(parsed.base, None);
        let parsed =
            InstructionOptions::parse(&args(&["--base", "HEAD~1", "merge_hot_16"])).unwrap();
        assert_eq!(parsed.base.as_deref(), Some("HEAD~1"));
        assert_eq!(parsed.rows, Rows::Named(vec!["merge_hot_16".to_string()]));
        assert_eq!(
            InstructionOptions::parse(&args(&["--all"])).unwrap().rows,
            Rows::All
        );
        assert!(InstructionOptions::parse(&args(&["--base"])).is_err());
        assert!(InstructionOptions::parse(&args(&["--all", "ready_512k"])).is_err());
        assert!(InstructionOptions::parse(&args(&["--fast"])).is_err());
    }

    #[test]
    fn the_report_line_gives_runs_and_items() {
        let stderr =
            "==1== Callgrind\npinfold-instructions: runs=2 items=512000\n==1== Collected : 5\n";
        assert_eq!(report(stderr), Some((2, 512_000)));
        assert_eq!(report("nothing here"), None);
        assert_eq!(report("pinfold-instructions: runs=0 items=5"), None);
    }

    #[test]
    fn an_executable_is_read_from_cargo_json() {
        let line = r#"{"reason":"compiler-artifact","target":{"kind":["bench"],"name":"merge"},"executable":"/w/target/release/deps/merge-1f5c"}"#;
        assert_eq!(
            json_string(line, "executable").as_deref(),
            Some("/w/target/release/deps/merge-1f5c")
        );
        assert_eq!(json_string(r#"{"executable":null}"#, "executable"), None);
    }

    #[test]
    fn the_table_has_a_line_per_pinfold_implementation_with_its_ratios() {
        let mut counts = Counts::new();
        counts.insert(("merge_hot_16".into(), "pinfold".into()), 99.0);
        counts.insert(("merge_hot_16".into(), "pinfold-growable".into()), 128.0);
        counts.insert(("merge_hot_16".into(), "tokio-stream".into()), 52.0);
        let mut base = Counts::new();
        base.insert(("merge_hot_16".into(), "pinfold".into()), 90.0);
        let text = table(&["merge_hot_16".to_string()], &counts, Some(("abc", &base)));
        assert!(
            text.contains("| `merge_hot_16` | 99.0 | tokio-stream 52.0 (1.90x) | 90.0 | +10.0% |"),
            "{text}"
        );
        assert!(
            text.contains(
                "| `merge_hot_16` (pinfold-growable) | 128.0 | tokio-stream 52.0 (2.46x) | — | — |"
            ),
            "{text}"
        );
    }
}
