//! `cargo xtask miri`: the library crates' tests under Miri, with both aliasing models.

use crate::invocation::Invocation;
use crate::lanes::{self, Job};
use crate::outcome::{Failure, Outcome};
use crate::usage::CommandUsage;
use crate::workspace::{LIBRARY_CRATES, Workspace};

pub(crate) const USAGE: CommandUsage = CommandUsage {
    synopsis: "miri",
    about: "run the library crates' unit and integration tests under\n\
            Miri with stacked borrows, then those of the crates with\n\
            unsafe code (arena, pool) and of the arena's direct users\n\
            (join, the bounded set's tests of unordered) again with\n\
            tree borrows, then the model tests and the join sweep of\n\
            pinfold-reliability (at their Miri size) with stacked\n\
            borrows, in target/miri; with two cores or more, in two\n\
            lanes side by side (stacked borrows but pool's, and the\n\
            bounded set; the other tree borrows run, pool's stacked\n\
            borrows run and the models), and each run's output is shown\n\
            once all have ended",
};

/// What `cargo xtask miri` prints when Miri cannot be used: it must never read as a pass.
const MIRI_SKIPPED: &str =
    "miri: SKIPPED — Miri is not installed for the nightly toolchain and could not be installed";

/// `MIRIFLAGS` of the first Miri run (Stacked Borrows, Miri's default aliasing model).
const MIRIFLAGS_STACKED: &str = "-Zmiri-strict-provenance -Zmiri-symbolic-alignment-check";
/// `MIRIFLAGS` of the second Miri run: the same checks under Tree Borrows, with the tags no
/// pointer holds collected ten times as often as Miri's default. An arena's slots and tables are
/// one allocation each, reborrowed at every poll; collecting often keeps their trees small,
/// which makes these runs faster (Stacked Borrows runs are not).
const MIRIFLAGS_TREE: &str = "-Zmiri-strict-provenance -Zmiri-symbolic-alignment-check \
                              -Zmiri-tree-borrows -Zmiri-provenance-gc=1000";

/// The crates whose tests the Tree Borrows run takes: the two with `unsafe` code, and the
/// user of `JoinArena` (join) with the fewest layers in between. The other library crates stand
/// on `GrowableArena`, whose many groups make Tree Borrows about ten times slower than Stacked
/// Borrows (unordered's `alloc` tests: 27 s and 300 s), and the arena's own tests cover
/// `GrowableArena` under both models.
const TREE_BORROWS_CRATES: [(&str, &str); 3] = [
    ("arena", "pinfold-arena"),
    ("join", "pinfold-join"),
    ("pool", "pinfold-pool"),
];

/// The test files of `pinfold-unordered` whose `FuturesUnorderedBounded` cases the Tree Borrows
/// run takes too: the user of `Arena` with the fewest layers in between. Each file runs its
/// cases over both sets, the bounded set's in its module `bounded`, which
/// [`TREE_BORROWS_BOUNDED_FILTER`] selects (the growable set's, and the contracts of the other
/// files, run under Stacked Borrows only).
const TREE_BORROWS_BOUNDED_TESTS: [&str; 6] = [
    "alloc",
    "auto_traits",
    "basics",
    "into_iter",
    "panics",
    "wakes",
];

/// The test name filter that picks the bounded set's cases out of [`TREE_BORROWS_BOUNDED_TESTS`].
const TREE_BORROWS_BOUNDED_FILTER: &str = "bounded::";

/// The library crates whose Stacked Borrows run goes in the second lane, after its Tree Borrows
/// run (which built them). Join's Stacked Borrows run, a short one, goes in the first lane,
/// which is the shorter without it.
const STACKED_BORROWS_SECOND_LANE: [&str; 1] = ["pinfold-pool"];

/// The test files of `pinfold-reliability` that run under Miri too (with Stacked Borrows):
/// the models, which shrink to a few short programs there, and the joins' fault sweep, which
/// takes about 20 of the calls into user code of each join there.
const RELIABILITY_TESTS: [&str; 3] = ["join_sweep", "keyed_model", "map_model"];

fn miri_available(workspace: &Workspace) -> bool {
    let check = || {
        workspace
            .cargo(&["+nightly", "miri", "--version"])
            .nightly()
            .succeeds()
    };
    if check() {
        return true;
    }
    println!("miri: not available; trying to install it once");
    let installed = Invocation::new(
        &workspace.root,
        "rustup",
        &[
            "component",
            "add",
            "miri",
            "rust-src",
            "--toolchain",
            "nightly",
        ],
    )
    .succeeds();
    installed && check()
}

pub(crate) fn miri(workspace: &Workspace) -> Result<Outcome, Failure> {
    if workspace.present(&LIBRARY_CRATES).is_empty() {
        return Ok(Outcome::Skipped(
            "miri: SKIPPED — no library crates found under crates/".to_string(),
        ));
    }
    if !miri_available(workspace) {
        return Ok(Outcome::Skipped(MIRI_SKIPPED.to_string()));
    }
    let target_dir = workspace.target_dir("miri");
    workspace
        .cargo(&["+nightly", "miri", "setup"])
        .nightly()
        .env("CARGO_TARGET_DIR", &target_dir)
        .run()?;

    let tree_crates = workspace.test_args(&TREE_BORROWS_CRATES);
    let mut tree_bounded = Vec::new();
    if workspace.has("crates/unordered/Cargo.toml") {
        tree_bounded.extend(["-p", "pinfold-unordered"]);
        for test in TREE_BORROWS_BOUNDED_TESTS {
            tree_bounded.extend(["--test", test]);
        }
        tree_bounded.extend(["--", TREE_BORROWS_BOUNDED_FILTER]);
    }
    let mut reliability = Vec::new();
    if workspace.has("reliability/Cargo.toml") {
        reliability.extend(["-p", "pinfold-reliability"]);
        for test in RELIABILITY_TESTS {
            reliability.extend(["--test", test]);
        }
    }
    // Miri runs one test at a time on one core: with two, the runs go in two lanes of about
    // the same length, each with a target directory of its own (cargo locks one while it
    // builds). The first lane takes the Stacked Borrows run of every crate but pool and then
    // the bounded set's Tree Borrows run, whose crate it has built; the second the other Tree
    // Borrows run, pool's Stacked Borrows run and the reliability models.
    let (stacked_first, stacked_second): (Vec<_>, Vec<_>) = LIBRARY_CRATES
        .into_iter()
        .partition(|(_, package)| !STACKED_BORROWS_SECOND_LANE.contains(package));
    let runs: Vec<Run> = [
        Run::new(
            "stacked borrows",
            MIRIFLAGS_STACKED,
            workspace.test_args(&stacked_first),
            0,
        ),
        Run::new(
            "tree borrows, the bounded set",
            MIRIFLAGS_TREE,
            tree_bounded,
            0,
        ),
        Run::new("tree borrows", MIRIFLAGS_TREE, tree_crates, 1),
        Run::new(
            "stacked borrows, pool",
            MIRIFLAGS_STACKED,
            workspace.test_args(&stacked_second),
            1,
        ),
        Run::new(
            "the reliability models and join sweep",
            MIRIFLAGS_STACKED,
            reliability,
            1,
        ),
    ]
    .into_iter()
    .filter(|run| !run.crates.is_empty())
    .collect();
    let mut lanes: Vec<Vec<Job>> = vec![Vec::new(), Vec::new()];
    for (n, run) in runs.iter().enumerate() {
        let dir = target_dir.join(format!("lane-{}", run.lane));
        std::fs::create_dir_all(&dir).map_err(|error| format!("{}: {error}", dir.display()))?;
        let mut args = vec!["+nightly", "miri", "test"];
        args.extend(run.crates.iter().copied());
        if !run.crates.contains(&"--test") {
            args.extend(["--lib", "--tests"]);
        }
        lanes[run.lane].push(Job {
            name: format!("{} run", run.model),
            invocation: workspace
                .cargo(&args)
                .nightly()
                .env("MIRIFLAGS", run.flags)
                .env("CARGO_TARGET_DIR", &dir),
            log: dir.join(format!("run-{n}.log")),
        });
    }
    println!(
        "miri: {} run(s) in lanes side by side; each run's output follows once all end",
        runs.len(),
    );
    let (_, result) = lanes::run_and_report("miri", lanes);
    result.map(|()| Outcome::Passed)
}

/// One `cargo miri test` of the whole run, and the lane (0 or 1) it runs in with two cores.
struct Run {
    model: &'static str,
    flags: &'static str,
    crates: Vec<&'static str>,
    lane: usize,
}

impl Run {
    fn new(
        model: &'static str,
        flags: &'static str,
        crates: Vec<&'static str>,
        lane: usize,
    ) -> Self {
        Run {
            model,
            flags,
            crates,
            lane,
        }
    }
}
