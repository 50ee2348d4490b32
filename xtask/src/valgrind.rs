//! `cargo xtask valgrind`: the reliability tests under valgrind memcheck.

use std::env;
use std::path::PathBuf;
use std::process::{self, Command};
use std::time::Instant;

use crate::invocation::Invocation;
use crate::outcome::{Failure, Outcome, Seconds};
use crate::usage::{self, CommandUsage};
use crate::workspace::Workspace;

pub(crate) const USAGE: CommandUsage = CommandUsage {
    synopsis: "valgrind [--deep]",
    about: "run the reliability tests (stress, faults, reentrance,\n\
            starvation, and a short differential run) under valgrind\n\
            memcheck with\n\
            --error-exitcode=1 --leak-check=full; sizes fit CI (about\n\
            a minute and a half); --deep runs ten times the wakes and\n\
            eight times the cases. A PINFOLD_* or PROPTEST_CASES\n\
            variable already set wins over both",
};

/// What `cargo xtask valgrind` prints when valgrind cannot be run: it must never read as a pass.
const VALGRIND_SKIPPED: &str =
    "valgrind: SKIPPED — valgrind is not installed (on Debian: apt-get install valgrind)";

/// Every time limit of the tests is multiplied by this under valgrind (it runs one thread at a
/// time, 10 to 50 times slower); a hang still fails, only later.
const VALGRIND_TIMEOUT_SCALE: &str = "50";

pub(crate) struct ValgrindOptions {
    pub(crate) deep: bool,
}

impl ValgrindOptions {
    pub(crate) fn parse(args: &[String]) -> Result<Self, Failure> {
        match args {
            [] => Ok(Self { deep: false }),
            [flag] if flag == "--deep" => Ok(Self { deep: true }),
            [other, ..] => Err(format!(
                "valgrind: unknown argument `{other}`\n\n{}",
                usage::text()
            )),
        }
    }
}

/// The reliability test binaries run under valgrind, and the environment of each: variables
/// that the caller has not set already. Sizes are chosen from measurements (see
/// reliability/README.md): the default run takes about a minute and a half on two cores, the
/// deep one about 13 minutes. (Valgrind runs one thread at a time: a ping-pong wake, which
/// waits for the poll it causes, costs about 30 times a flood wake.)
fn valgrind_runs(deep: bool) -> [(&'static str, Vec<(&'static str, &'static str)>); 5] {
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
        ("reentrance", Vec::new()),
        ("starvation", Vec::new()),
        ("differential", vec![("PROPTEST_CASES", differential_cases)]),
    ]
}

/// Whether `valgrind` runs here.
pub(crate) fn available() -> bool {
    Command::new("valgrind")
        .arg("--version")
        .output()
        .is_ok_and(|output| output.status.success())
}

pub(crate) fn valgrind(
    workspace: &Workspace,
    options: &ValgrindOptions,
) -> Result<Outcome, Failure> {
    if !workspace.has("reliability/Cargo.toml") {
        return Ok(Outcome::Skipped(
            "valgrind: SKIPPED — no reliability crate yet".to_string(),
        ));
    }
    if !available() {
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
