//! Project automation for the pinfold workspace, run as `cargo xtask <command>`
//! (the [cargo-xtask](https://github.com/matklad/cargo-xtask) convention).
//!
//! ```text
//! cargo xtask ci                              fmt, clippy, test, valgrind, doc, loom, miri
//! cargo xtask loom [--preemptions N] [FILTER] loom models, LOOM_MAX_PREEMPTIONS=N (default 2)
//! cargo xtask miri                            library tests under Miri (stacked and tree borrows)
//! cargo xtask valgrind [--deep]               reliability tests under valgrind memcheck
//! cargo xtask bench [--quick]                 criterion benchmarks
//! cargo xtask help                            this list
//! ```
//!
//! Every command is printed before it runs. The first failing command stops the task
//! with a non-zero exit code. Only `std` is used, so the tool builds with the workspace.

use std::env;
use std::ffi::OsStr;
use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{self, Command};
use std::time::{Duration, Instant};

const USAGE: &str = "\
usage: cargo xtask <command>

commands:
  ci                              run every check CI runs, in order: fmt, clippy, test,
                                  valgrind (skipped with a loud notice if valgrind is not
                                  installed), doc, loom (if loom-tests/ exists), miri
                                  (skipped with a loud notice if Miri is not installed)
  loom [--preemptions N] [FILTER] run the loom models (cargo test --release -p loom-tests)
                                  with LOOM_MAX_PREEMPTIONS=N (default 2) in target/loom
  miri                            run the library crates' unit and integration tests under
                                  Miri, once with stacked borrows and once with tree borrows,
                                  in target/miri
  tsan                            run the library crates' unit and integration tests under
                                  ThreadSanitizer (nightly, -Zbuild-std) in target/tsan
  valgrind [--deep]               run the reliability tests (stress, faults, and a short
                                  differential run) under valgrind memcheck with
                                  --error-exitcode=1 --leak-check=full; sizes fit CI (about
                                  a minute and a half); --deep runs ten times the wakes and
                                  eight times the cases. A PINFOLD_* or PROPTEST_CASES
                                  variable already set wins over both
  bench [--quick]                 run the criterion benchmarks (cargo bench -p
                                  pinfold-benches); --quick sets PINFOLD_BENCH_QUICK=1
  help                            print this message";

/// What `cargo xtask miri` prints when Miri cannot be used: it must never read as a pass.
const MIRI_SKIPPED: &str =
    "miri: SKIPPED — Miri is not installed for the nightly toolchain and could not be installed";

/// What `cargo xtask valgrind` prints when valgrind cannot be run: it must never read as a pass.
const VALGRIND_SKIPPED: &str =
    "valgrind: SKIPPED — valgrind is not installed (on Debian: apt-get install valgrind)";

/// Loom's preemption bound when `--preemptions` is not given (see STYLE.md, Tests).
const DEFAULT_PREEMPTIONS: u32 = 2;

/// The library crates whose tests run under Miri: (directory under `crates/`, package name).
const MIRI_CRATES: [(&str, &str); 8] = [
    ("arena", "pinfold-arena"),
    ("bounded", "pinfold-bounded"),
    ("unordered", "pinfold-unordered"),
    ("join", "pinfold-join"),
    ("buffer", "pinfold-buffer"),
    ("merge", "pinfold-merge"),
    ("map", "pinfold-map"),
    ("pool", "pinfold-pool"),
];

/// Optional features of the library crates that their Miri and TSan runs test too
/// (`cargo test --workspace` gets them from the benches' dependencies).
const LIBRARY_FEATURES: &str = "pinfold-pool/bytes";

/// The `-p` arguments for every library crate present, then the features they are tested with.
fn library_test_args(workspace: &Workspace) -> Vec<&'static str> {
    let mut args = Vec::new();
    for (dir, package) in MIRI_CRATES {
        if workspace.has(&format!("crates/{dir}/Cargo.toml")) {
            args.extend(["-p", package]);
        }
    }
    if workspace.has("crates/pool/Cargo.toml") {
        args.extend(["--features", LIBRARY_FEATURES]);
    }
    args
}

/// `MIRIFLAGS` of the first Miri run (Stacked Borrows, Miri's default aliasing model).
const MIRIFLAGS_STACKED: &str = "-Zmiri-strict-provenance -Zmiri-symbolic-alignment-check";
/// `MIRIFLAGS` of the second Miri run: the same checks under Tree Borrows.
const MIRIFLAGS_TREE: &str =
    "-Zmiri-strict-provenance -Zmiri-symbolic-alignment-check -Zmiri-tree-borrows";

/// The reason a task stopped; printed as `xtask: error: <message>`.
type Failure = String;

fn main() {
    let args: Vec<String> = env::args().skip(1).collect();
    let workspace = Workspace::locate();
    let result = match args.first().map(String::as_str) {
        Some("ci") => no_more_args("ci", &args[1..]).and_then(|()| ci(&workspace)),
        Some("loom") => LoomOptions::parse(&args[1..]).and_then(|options| {
            loom(&workspace, &options).map(|outcome| {
                if let Outcome::Skipped(reason) = outcome {
                    println!("{reason}");
                }
            })
        }),
        Some("tsan") => no_more_args("tsan", &args[1..]).and_then(|()| {
            tsan(&workspace).map(|outcome| {
                if let Outcome::Skipped(reason) = outcome {
                    print_skip_banner(&reason);
                }
            })
        }),
        Some("miri") => no_more_args("miri", &args[1..]).and_then(|()| {
            miri(&workspace).map(|outcome| {
                if let Outcome::Skipped(reason) = outcome {
                    print_skip_banner(&reason);
                }
            })
        }),
        Some("valgrind") => ValgrindOptions::parse(&args[1..]).and_then(|options| {
            valgrind(&workspace, &options).map(|outcome| {
                if let Outcome::Skipped(reason) = outcome {
                    print_skip_banner(&reason);
                }
            })
        }),
        Some("bench") => bench(&workspace, &args[1..]),
        Some("help" | "-h" | "--help") => {
            println!("{USAGE}");
            Ok(())
        }
        Some(unknown) => {
            eprintln!("xtask: unknown command `{unknown}`\n\n{USAGE}");
            process::exit(2);
        }
        None => {
            eprintln!("xtask: no command given\n\n{USAGE}");
            process::exit(2);
        }
    };
    if let Err(failure) = result {
        eprintln!("xtask: error: {failure}");
        process::exit(1);
    }
}

fn no_more_args(command: &str, rest: &[String]) -> Result<(), Failure> {
    match rest.first() {
        None => Ok(()),
        Some(extra) => Err(format!("`{command}` takes no arguments, got `{extra}`")),
    }
}

/// The workspace root, and questions about which members exist yet.
struct Workspace {
    root: PathBuf,
}

impl Workspace {
    fn locate() -> Self {
        let manifest_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
        let root = manifest_dir
            .parent()
            .expect("xtask/ lives directly under the workspace root")
            .to_path_buf();
        Workspace { root }
    }

    /// Whether `relative` (e.g. `loom-tests/Cargo.toml`) exists under the root.
    fn has(&self, relative: &str) -> bool {
        self.root.join(relative).is_file()
    }

    fn target_dir(&self, name: &str) -> PathBuf {
        self.root.join("target").join(name)
    }

    fn cargo(&self, args: &[&str]) -> Invocation {
        Invocation::new(&self.root, "cargo", args)
    }
}

/// One external command: printed, then run in the workspace root.
struct Invocation {
    command: Command,
    shown: String,
}

impl Invocation {
    fn new(root: &Path, program: &str, args: &[&str]) -> Self {
        let mut command = Command::new(program);
        command.args(args).current_dir(root);
        let mut shown = program.to_string();
        for arg in args {
            shown.push(' ');
            shown.push_str(&quoted(arg));
        }
        Invocation { command, shown }
    }

    fn env(mut self, key: &str, value: impl AsRef<OsStr>) -> Self {
        let value = value.as_ref();
        self.shown = format!("{key}={} {}", quoted(&value.to_string_lossy()), self.shown);
        self.command.env(key, value);
        self
    }

    /// For `cargo +nightly ...`: drop what the outer (stable) cargo put in the environment,
    /// so the nightly cargo and its subcommands find their own toolchain.
    fn nightly(mut self) -> Self {
        self.command
            .env_remove("CARGO")
            .env_remove("RUSTUP_TOOLCHAIN");
        self
    }

    /// Prints and runs the command; an error if it cannot start or exits unsuccessfully.
    fn run(mut self) -> Result<(), Failure> {
        println!("$ {}", self.shown);
        let status = self
            .command
            .status()
            .map_err(|error| format!("could not start `{}`: {error}", self.shown))?;
        if status.success() {
            Ok(())
        } else {
            Err(format!("`{}` failed ({status})", self.shown))
        }
    }

    /// Prints and runs the command, reporting only whether it succeeded (output is shown).
    fn succeeds(self) -> bool {
        self.run().is_ok()
    }
}

fn quoted(arg: &str) -> String {
    if !arg.is_empty()
        && arg
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_=+./:,@".contains(c))
    {
        arg.to_string()
    } else {
        format!("'{}'", arg.replace('\'', r"'\''"))
    }
}

/// How a step ended when it did not fail.
enum Outcome {
    Passed,
    Skipped(String),
}

struct Seconds(Duration);

impl fmt::Display for Seconds {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let secs = self.0.as_secs_f64();
        if secs < 60.0 {
            write!(f, "{secs:.1}s")
        } else {
            write!(f, "{}m {:04.1}s", (secs / 60.0).floor(), secs % 60.0)
        }
    }
}

/// One line of the `ci` summary.
struct StepReport {
    name: &'static str,
    result: Result<Outcome, ()>,
    took: Duration,
}

fn ci(workspace: &Workspace) -> Result<(), Failure> {
    type Step<'a> = (&'static str, Box<dyn Fn() -> Result<Outcome, Failure> + 'a>);
    let passed = |invocation: Invocation| invocation.run().map(|()| Outcome::Passed);
    let mut steps: Vec<Step<'_>> = vec![
        (
            "fmt",
            Box::new(move || passed(workspace.cargo(&["fmt", "--all", "--", "--check"]))),
        ),
        (
            "clippy",
            Box::new(move || {
                passed(workspace.cargo(&[
                    "clippy",
                    "--workspace",
                    "--all-targets",
                    "--",
                    "-D",
                    "warnings",
                ]))
            }),
        ),
        (
            "test",
            Box::new(move || passed(workspace.cargo(&["test", "--workspace"]))),
        ),
    ];
    if workspace.has("reliability/Cargo.toml") {
        steps.push((
            "valgrind",
            Box::new(move || valgrind(workspace, &ValgrindOptions { deep: false })),
        ));
    }
    if workspace.has("benches/Cargo.toml") {
        steps.push((
            "test benches",
            Box::new(move || passed(workspace.cargo(&["test", "--workspace", "--benches"]))),
        ));
    }
    steps.push((
        "doc",
        Box::new(move || {
            passed(
                workspace
                    .cargo(&["doc", "--workspace", "--no-deps"])
                    .env("RUSTDOCFLAGS", "-D warnings"),
            )
        }),
    ));
    steps.push((
        "loom",
        Box::new(move || {
            let options = LoomOptions {
                preemptions: DEFAULT_PREEMPTIONS,
                filter: None,
            };
            loom(workspace, &options)
        }),
    ));
    steps.push(("miri", Box::new(move || miri(workspace))));
    steps.push(("tsan", Box::new(move || tsan(workspace))));

    let total = steps.len();
    let started = Instant::now();
    let mut reports = Vec::with_capacity(total);
    for (index, (name, step)) in steps.iter().enumerate() {
        println!("\n==> ci [{}/{total}] {name}", index + 1);
        let step_started = Instant::now();
        let result = step();
        let took = step_started.elapsed();
        match &result {
            Ok(Outcome::Passed) => println!("<== {name}: passed in {}", Seconds(took)),
            Ok(Outcome::Skipped(reason)) => {
                print_skip_banner(reason);
                println!("<== {name}: SKIPPED after {}", Seconds(took));
            }
            Err(_) => println!("<== {name}: FAILED after {}", Seconds(took)),
        }
        let failure = result.as_ref().err().cloned();
        reports.push(StepReport {
            name,
            result: result.map_err(|_| ()),
            took,
        });
        if let Some(failure) = failure {
            print_summary(&reports, total, started.elapsed());
            return Err(format!("ci step `{name}` failed: {failure}"));
        }
    }
    print_summary(&reports, total, started.elapsed());
    Ok(())
}

fn print_summary(reports: &[StepReport], total: usize, took: Duration) {
    println!("\nci summary:");
    for report in reports {
        let (status, note) = match &report.result {
            Ok(Outcome::Passed) => ("passed", String::new()),
            Ok(Outcome::Skipped(reason)) => ("SKIPPED", format!("  ({reason})")),
            Err(()) => ("FAILED", String::new()),
        };
        println!(
            "  {:<13} {status:<8} {:>9}{note}",
            report.name,
            Seconds(report.took).to_string()
        );
    }
    let failed = reports.iter().filter(|r| r.result.is_err()).count();
    let skipped: Vec<&str> = reports
        .iter()
        .filter(|r| matches!(r.result, Ok(Outcome::Skipped(_))))
        .map(|r| r.name)
        .collect();
    let not_run = total - reports.len();
    if failed > 0 {
        println!(
            "ci: FAILED after {} ({not_run} step(s) not run)",
            Seconds(took)
        );
    } else if skipped.is_empty() {
        println!("ci: all {total} steps passed in {}", Seconds(took));
    } else {
        println!(
            "ci: OK in {}, but {} step(s) SKIPPED: {} — not checked in this run",
            Seconds(took),
            skipped.len(),
            skipped.join(", ")
        );
    }
}

fn print_skip_banner(reason: &str) {
    let rule = "!".repeat(78);
    println!("{rule}\n{reason}\n{rule}");
}

struct LoomOptions {
    preemptions: u32,
    filter: Option<String>,
}

impl LoomOptions {
    fn parse(args: &[String]) -> Result<Self, Failure> {
        let mut options = LoomOptions {
            preemptions: DEFAULT_PREEMPTIONS,
            filter: None,
        };
        let mut args = args.iter();
        while let Some(arg) = args.next() {
            let value = if arg == "--preemptions" {
                Some(
                    args.next()
                        .ok_or("`--preemptions` needs a number, e.g. `--preemptions 3`")?
                        .as_str(),
                )
            } else {
                arg.strip_prefix("--preemptions=")
            };
            if let Some(value) = value {
                options.preemptions = value
                    .parse()
                    .map_err(|_| format!("`--preemptions` needs a number, got `{value}`"))?;
            } else if arg.starts_with('-') {
                return Err(format!("loom: unknown option `{arg}`\n\n{USAGE}"));
            } else if let Some(previous) = &options.filter {
                return Err(format!(
                    "loom: takes one FILTER, got `{previous}` and `{arg}`"
                ));
            } else {
                options.filter = Some(arg.clone());
            }
        }
        Ok(options)
    }
}

fn loom(workspace: &Workspace, options: &LoomOptions) -> Result<Outcome, Failure> {
    if !workspace.has("loom-tests/Cargo.toml") {
        return Ok(Outcome::Skipped(
            "loom: skipped, no loom-tests crate yet".to_string(),
        ));
    }
    let mut args = vec!["test", "--release", "-p", "loom-tests"];
    if let Some(filter) = &options.filter {
        args.push(filter.as_str());
    }
    workspace
        .cargo(&args)
        .env("RUSTFLAGS", "--cfg pinfold_loom -C debug-assertions")
        .env("LOOM_MAX_PREEMPTIONS", options.preemptions.to_string())
        .env("CARGO_TARGET_DIR", workspace.target_dir("loom"))
        .run()?;
    Ok(Outcome::Passed)
}

/// The library crates' tests under ThreadSanitizer. It sees the real hardware atomics and the
/// frees that loom cannot (the wake table's release), on the tests that wake from other threads.
fn tsan(workspace: &Workspace) -> Result<Outcome, Failure> {
    let installed = Command::new("rustup")
        .args(["component", "list", "--toolchain", "nightly", "--installed"])
        .output()
        .map(|out| String::from_utf8_lossy(&out.stdout).contains("rust-src"))
        .unwrap_or(false);
    if !installed {
        return Ok(Outcome::Skipped(
            "tsan: the nightly toolchain's rust-src is not installed, so -Zbuild-std cannot run"
                .to_string(),
        ));
    }
    let mut args = vec![
        "+nightly",
        "test",
        "-Zbuild-std",
        "--target",
        "x86_64-unknown-linux-gnu",
    ];
    args.extend(library_test_args(workspace));
    args.extend(["--lib", "--tests"]);
    let started = Instant::now();
    workspace
        .cargo(&args)
        .nightly()
        .env("RUSTFLAGS", "-Zsanitizer=thread")
        .env("RUSTDOCFLAGS", "-Zsanitizer=thread")
        .env("TSAN_OPTIONS", "halt_on_error=1")
        .env("CARGO_TARGET_DIR", workspace.target_dir("tsan"))
        .run()?;
    println!("tsan: passed in {}", Seconds(started.elapsed()));
    Ok(Outcome::Passed)
}

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

fn miri(workspace: &Workspace) -> Result<Outcome, Failure> {
    let packages: Vec<&str> = MIRI_CRATES
        .iter()
        .filter(|(dir, _)| workspace.has(&format!("crates/{dir}/Cargo.toml")))
        .map(|&(_, package)| package)
        .collect();
    if packages.is_empty() {
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

    let mut args = vec!["+nightly", "miri", "test"];
    args.extend(library_test_args(workspace));
    args.extend(["--lib", "--tests"]);
    for (model, flags) in [
        ("stacked borrows", MIRIFLAGS_STACKED),
        ("tree borrows", MIRIFLAGS_TREE),
    ] {
        println!("miri: {model}");
        let started = Instant::now();
        let result = workspace
            .cargo(&args)
            .nightly()
            .env("MIRIFLAGS", flags)
            .env("CARGO_TARGET_DIR", &target_dir)
            .run();
        let took = Seconds(started.elapsed());
        match result {
            Ok(()) => println!("miri: {model} run passed in {took}"),
            Err(failure) => {
                println!("miri: {model} run FAILED after {took}");
                return Err(failure);
            }
        }
    }
    Ok(Outcome::Passed)
}

struct ValgrindOptions {
    deep: bool,
}

impl ValgrindOptions {
    fn parse(args: &[String]) -> Result<Self, Failure> {
        match args {
            [] => Ok(Self { deep: false }),
            [flag] if flag == "--deep" => Ok(Self { deep: true }),
            [other, ..] => Err(format!("valgrind: unknown argument `{other}`\n\n{USAGE}")),
        }
    }
}

/// The reliability test binaries run under valgrind, and the environment of each: variables
/// that the caller has not set already. Sizes are chosen from measurements (see
/// reliability/README.md): the default run takes about a minute and a half on two cores, the
/// deep one about 13 minutes. (Valgrind runs one thread at a time: a ping-pong wake, which
/// waits for the poll it causes, costs about 30 times a flood wake.)
fn valgrind_runs(deep: bool) -> [(&'static str, Vec<(&'static str, &'static str)>); 3] {
    let (wakes, ping_pong_wakes, sets, fault_cases, differential_cases) = if deep {
        ("10000000", "200000", "100000", "512", "256")
    } else {
        ("1000000", "20000", "2000", "64", "32")
    };
    [
        (
            "stress",
            vec![
                ("PINFOLD_STRESS_WAKES", wakes),
                ("PINFOLD_PING_PONG_WAKES", ping_pong_wakes),
                ("PINFOLD_CHURN_SETS", sets),
            ],
        ),
        ("faults", vec![("PROPTEST_CASES", fault_cases)]),
        ("differential", vec![("PROPTEST_CASES", differential_cases)]),
    ]
}

/// Every time limit of the tests is multiplied by this under valgrind (it runs one thread at a
/// time, 10 to 50 times slower); a hang still fails, only later.
const VALGRIND_TIMEOUT_SCALE: &str = "50";

fn valgrind(workspace: &Workspace, options: &ValgrindOptions) -> Result<Outcome, Failure> {
    if !workspace.has("reliability/Cargo.toml") {
        return Ok(Outcome::Skipped(
            "valgrind: SKIPPED — no reliability crate yet".to_string(),
        ));
    }
    let available = Command::new("valgrind")
        .arg("--version")
        .output()
        .is_ok_and(|output| output.status.success());
    if !available {
        return Ok(Outcome::Skipped(VALGRIND_SKIPPED.to_string()));
    }
    println!("valgrind: building the reliability tests");
    let binaries = test_binaries(workspace, "pinfold-reliability")?;
    let package_dir = workspace.root.join("reliability");
    let suppressions = package_dir.join("valgrind.supp");
    let suppressions = format!("--suppressions={}", suppressions.display());
    for (test, variables) in valgrind_runs(options.deep) {
        let Some((_, binary)) = binaries.iter().find(|(name, _)| name == test) else {
            return Err(format!(
                "valgrind: `cargo test -p pinfold-reliability --no-run` built no `{test}` test"
            ));
        };
        let binary = binary.to_string_lossy();
        let args = [
            "--error-exitcode=1",
            "--leak-check=full",
            suppressions.as_str(),
            binary.as_ref(),
            "--test-threads=1",
        ];
        // The tests run in the package directory, as under `cargo test`.
        let mut invocation = Invocation::new(&package_dir, "valgrind", &args);
        for (key, value) in variables
            .into_iter()
            .chain([("PINFOLD_TIMEOUT_SCALE", VALGRIND_TIMEOUT_SCALE)])
        {
            if env::var_os(key).is_none() {
                invocation = invocation.env(key, value);
            }
        }
        let started = Instant::now();
        let result = invocation.run();
        let took = Seconds(started.elapsed());
        match result {
            Ok(()) => println!("valgrind: {test} passed in {took}"),
            Err(failure) => {
                println!("valgrind: {test} FAILED after {took}");
                return Err(failure);
            }
        }
    }
    Ok(Outcome::Passed)
}

/// Builds the test targets of `package` (`cargo test --no-run`) and returns each test
/// binary's target name and path, read from cargo's JSON messages.
fn test_binaries(workspace: &Workspace, package: &str) -> Result<Vec<(String, PathBuf)>, Failure> {
    let args = [
        "test",
        "-p",
        package,
        "--no-run",
        "--message-format=json-render-diagnostics",
    ];
    let shown = format!("cargo {}", args.join(" "));
    println!("$ {shown}");
    let output = Command::new("cargo")
        .args(args)
        .current_dir(&workspace.root)
        .stderr(process::Stdio::inherit())
        .output()
        .map_err(|error| format!("could not start `{shown}`: {error}"))?;
    if !output.status.success() {
        return Err(format!("`{shown}` failed ({})", output.status));
    }
    let messages = String::from_utf8_lossy(&output.stdout);
    let binaries: Vec<(String, PathBuf)> = messages.lines().filter_map(test_artifact).collect();
    if binaries.is_empty() {
        return Err(format!("`{shown}` reported no test binary"));
    }
    Ok(binaries)
}

/// The target name and executable of a cargo JSON message about a built integration test;
/// `None` for any other message. (A string search: xtask has no JSON parser, and these fields
/// are plain strings in cargo's output.)
fn test_artifact(message: &str) -> Option<(String, PathBuf)> {
    if !message.contains(r#""reason":"compiler-artifact""#)
        || !message.contains(r#""kind":["test"]"#)
    {
        return None;
    }
    let string_field = |json: &str, key: &str| -> Option<String> {
        let start = json.find(&format!(r#""{key}":""#))? + key.len() + 4;
        let rest = &json[start..];
        let end = rest.find('"')?;
        let value = &rest[..end];
        // A backslash would be a JSON escape this search does not undo.
        (!value.contains('\\')).then(|| value.to_string())
    };
    let target = &message[message.find(r#""target":{"#)?..];
    let name = string_field(target, "name")?;
    let executable = string_field(message, "executable")?;
    Some((name, PathBuf::from(executable)))
}

fn bench(workspace: &Workspace, args: &[String]) -> Result<(), Failure> {
    let quick = match args {
        [] => false,
        [flag] if flag == "--quick" => true,
        [other, ..] => return Err(format!("bench: unknown argument `{other}`\n\n{USAGE}")),
    };
    if !workspace.has("benches/Cargo.toml") {
        println!("bench: no benches crate yet");
        return Ok(());
    }
    // Each run starts its allocation and virtual-time records afresh.
    let records = env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| workspace.target_dir(""), PathBuf::from)
        .join("pinfold-bench");
    if records.exists() {
        fs::remove_dir_all(&records)
            .map_err(|e| format!("bench: cannot clear {}: {e}", records.display()))?;
    }
    let mut invocation = workspace.cargo(&["bench", "-p", "pinfold-benches"]);
    if quick {
        invocation = invocation.env("PINFOLD_BENCH_QUICK", "1");
    }
    invocation.run()?;
    // One markdown table: each implementation's median, pinfold's ratios, allocations.
    workspace
        .cargo(&[
            "run",
            "--quiet",
            "--release",
            "-p",
            "pinfold-benches",
            "--bin",
            "bench-table",
        ])
        .run()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_artifacts_are_read_from_cargo_json() {
        let test = r#"{"reason":"compiler-artifact","package_id":"path+file:///w/reliability#pinfold-reliability@0.0.0","manifest_path":"/w/reliability/Cargo.toml","target":{"kind":["test"],"crate_types":["bin"],"name":"stress","src_path":"/w/reliability/tests/stress.rs","edition":"2024","doc":false,"doctest":false,"test":true},"profile":{"opt_level":"0"},"features":[],"filenames":["/w/target/debug/deps/stress-0123"],"executable":"/w/target/debug/deps/stress-0123","fresh":true}"#;
        assert_eq!(
            test_artifact(test),
            Some((
                "stress".to_string(),
                PathBuf::from("/w/target/debug/deps/stress-0123")
            ))
        );
        let lib = test
            .replace(r#""kind":["test"]"#, r#""kind":["lib"]"#)
            .replace(
                r#""executable":"/w/target/debug/deps/stress-0123""#,
                r#""executable":null"#,
            );
        assert_eq!(test_artifact(&lib), None);
        assert_eq!(
            test_artifact(r#"{"reason":"build-finished","success":true}"#),
            None
        );
    }
}
