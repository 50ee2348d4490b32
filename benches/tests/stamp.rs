//! `bench-table`'s stamp: the commit and day a run started, which its tables name. A run that
//! `cargo xtask bench` did not start makes it stale; nothing else does.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use pinfold_benches::outdates_stamp;

fn args(args: &[&str]) -> Vec<String> {
    args.iter().map(|arg| arg.to_string()).collect()
}

#[test]
fn only_a_timed_run_that_was_not_stamped_outdates_the_stamp() {
    let timed = args(&["unordered", "--bench"]);
    assert!(outdates_stamp(&timed, None, false), "cargo bench by hand");
    assert!(outdates_stamp(&timed, Some("0"), false));
    assert!(
        !outdates_stamp(&timed, Some("1"), false),
        "cargo xtask bench"
    );
    assert!(
        !outdates_stamp(&timed, None, true),
        "a count under callgrind"
    );
    let listed = args(&["unordered", "--bench", "--list"]);
    assert!(
        !outdates_stamp(&listed, None, false),
        "a list of the benchmarks"
    );
    assert!(
        !outdates_stamp(&args(&["unordered"]), None, false),
        "cargo test --benches"
    );
}

/// A target directory of its own (removed when dropped), with one criterion estimate in it.
struct Target(PathBuf);

impl Target {
    fn with_one_estimate() -> Self {
        let dir = std::path::absolute(std::env::temp_dir())
            .unwrap()
            .join(format!("pinfold-stamp-{}", std::process::id()));
        let estimate = dir.join("criterion/ready_512k/pinfold/new");
        fs::create_dir_all(&estimate).unwrap();
        fs::write(
            estimate.join("estimates.json"),
            r#"{"median":{"point_estimate":1000.0}}"#,
        )
        .unwrap();
        Target(dir)
    }
}

impl Drop for Target {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// `bench-table` with `args`, over `target`: its output, after checking it succeeded.
fn bench_table(target: &Path, args: &[&str]) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_bench-table"))
        .args(args)
        .env("CARGO_TARGET_DIR", target)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "bench-table {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn tables_printed_again_still_name_the_stamped_run() {
    let target = Target::with_one_estimate();
    let stamp = target.0.join("pinfold-bench/run.tsv");
    bench_table(&target.0, &["--stamp"]);
    assert!(stamp.exists(), "--stamp wrote no stamp");
    // A run that started on another day, at another commit.
    fs::write(&stamp, "`0000000`\t2000-01-01\t946684800\n").unwrap();
    for _ in 0..2 {
        let tables = bench_table(&target.0, &[]);
        assert!(tables.contains("`0000000`"), "{tables}");
        assert!(tables.contains("2000-01-01"), "{tables}");
    }
    fs::remove_file(&stamp).unwrap();
    // With no stamp (removed by a run by hand), the tables name the day they are made.
    let tables = bench_table(&target.0, &[]);
    assert!(!tables.contains("2000-01-01"), "{tables}");
}
