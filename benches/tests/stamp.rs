//! `bench-table`'s stamp: the commit and day a run started, which its tables name. The tables
//! of that run use it up, so tables made after a later run by hand name their own.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A target directory of its own, with one criterion estimate in it.
fn target_with_one_estimate() -> PathBuf {
    let target = std::env::temp_dir().join(format!("pinfold-stamp-{}", std::process::id()));
    let estimate = target.join("criterion/ready_512k/pinfold/new");
    fs::create_dir_all(&estimate).unwrap();
    fs::write(
        estimate.join("estimates.json"),
        r#"{"median":{"point_estimate":1000.0}}"#,
    )
    .unwrap();
    target
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
fn the_tables_of_a_run_use_its_stamp_up() {
    let target = target_with_one_estimate();
    let stamp = target.join("pinfold-bench/run.tsv");
    bench_table(&target, &["--stamp"]);
    assert!(stamp.exists(), "--stamp wrote no stamp");
    // A run that started on another day, at another commit.
    fs::write(&stamp, "`0000000`\t2000-01-01\t946684800\n").unwrap();

    let tables = bench_table(&target, &[]);
    assert!(tables.contains("`0000000`"), "{tables}");
    assert!(tables.contains("2000-01-01"), "{tables}");
    assert!(!stamp.exists(), "the tables of the run left its stamp");

    // Tables made again, as after a run by hand: not the old run's commit or day.
    let later = bench_table(&target, &[]);
    assert!(!later.contains("`0000000`"), "{later}");
    assert!(!later.contains("2000-01-01"), "{later}");
    fs::remove_dir_all(&target).unwrap();
}
