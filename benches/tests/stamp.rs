//! `bench-table`'s stamp: the commit and day a run started, which its tables name. A timed run
//! that `cargo xtask bench` did not start removes it; printing or writing the tables does not.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use pinfold_benches::{STAMP_FILE, forget_outdated_stamp_in, outdates_stamp};

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
    for kept in [
        &["unordered", "--bench", "--test"][..],
        &["unordered", "--bench", "--profile-time", "5"],
        &["unordered", "--bench", "--profile-time=5"],
        &["unordered", "--bench", "--help"],
        &["unordered", "--bench", "-h"],
    ] {
        assert!(!outdates_stamp(&args(kept), None, false), "{kept:?}");
    }
}

#[test]
fn a_timed_run_by_hand_removes_the_stamp_and_a_stamped_one_keeps_it() {
    let target = Target::with_one_estimate("forget");
    let stamp = target.0.join(STAMP_FILE);
    fs::write(&stamp, "`0000000`\t2000-01-01\t946684800\n").unwrap();
    let timed = args(&["unordered", "--bench", "FILTER"]);
    forget_outdated_stamp_in(&target.0, &timed, Some("1"), false);
    assert!(
        stamp.exists(),
        "a run of cargo xtask bench removed its own stamp"
    );
    forget_outdated_stamp_in(&target.0, &timed, None, false);
    assert!(!stamp.exists(), "a run by hand left an older run's stamp");
    // Nothing left to remove: no complaint.
    forget_outdated_stamp_in(&target.0, &timed, None, false);
}

/// A target directory of its own (removed when dropped), with one criterion estimate in it.
struct Target(PathBuf);

impl Target {
    /// `name` tells apart the directories of tests run at once.
    fn with_one_estimate(name: &str) -> Self {
        let dir = std::path::absolute(std::env::temp_dir())
            .unwrap()
            .join(format!("pinfold-stamp-{}-{name}", std::process::id()));
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
    let target = Target::with_one_estimate("print");
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
