//! The test binaries of a package, built by `cargo test --no-run` and run by xtask itself (under
//! valgrind, or side by side).

use std::path::PathBuf;

use crate::invocation::Invocation;
use crate::outcome::Failure;

/// Runs `build`, a `cargo test --no-run --message-format=json-render-diagnostics` of some
/// package, and returns each test binary's target name and path, read from cargo's JSON
/// messages.
pub(crate) fn test_binaries(build: Invocation) -> Result<Vec<(String, PathBuf)>, Failure> {
    let (shown, messages) = build.stdout()?;
    let binaries: Vec<(String, PathBuf)> = messages.lines().filter_map(test_artifact).collect();
    if binaries.is_empty() {
        return Err(format!("`{shown}` reported no test binary"));
    }
    Ok(binaries)
}

/// The target name and executable of a cargo JSON message about a built test harness (an
/// integration test's, or the one of a library's or binary's own tests, which `cargo test` runs
/// too: a target built with a test profile); `None` for any other message. (A string search:
/// xtask has no JSON parser, and these fields are plain strings in cargo's output.)
fn test_artifact(message: &str) -> Option<(String, PathBuf)> {
    if !message.contains(r#""reason":"compiler-artifact""#) {
        return None;
    }
    // The profile object holds no other object: it ends at its first `}`.
    let test_profile = || {
        let profile = &message[message.find(r#""profile":{"#)?..];
        Some(profile[..profile.find('}')?].contains(r#""test":true"#))
    };
    if !message.contains(r#""kind":["test"]"#) && test_profile() != Some(true) {
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

    /// `cargo test` runs a library's (or binary's) own `#[test]`s from a harness built for it:
    /// a target of kind `lib` whose profile is a test one, with an executable.
    #[test]
    fn unit_test_harnesses_are_test_binaries_too() {
        let harness = r#"{"reason":"compiler-artifact","package_id":"path+file:///w/loom-tests#0.0.0","manifest_path":"/w/loom-tests/Cargo.toml","target":{"kind":["lib"],"crate_types":["lib"],"name":"loom_tests","src_path":"/w/loom-tests/src/lib.rs","edition":"2024","doc":true,"doctest":true,"test":true},"profile":{"opt_level":"3","debuginfo":0,"debug_assertions":false,"overflow_checks":false,"test":true},"features":[],"filenames":["/w/target/release/deps/loom_tests-66"],"executable":"/w/target/release/deps/loom_tests-66","fresh":false}"#;
        assert_eq!(
            test_artifact(harness),
            Some((
                "loom_tests".to_string(),
                PathBuf::from("/w/target/release/deps/loom_tests-66")
            ))
        );
        // The same library built to link against (no harness, no executable), and a binary
        // built as itself (an executable, but not a test profile): not test binaries.
        let rlib = harness
            .replace(
                r#""overflow_checks":false,"test":true}"#,
                r#""overflow_checks":false,"test":false}"#,
            )
            .replace(
                r#""executable":"/w/target/release/deps/loom_tests-66""#,
                r#""executable":null"#,
            );
        assert_eq!(test_artifact(&rlib), None);
        let bin = harness
            .replace(r#""kind":["lib"]"#, r#""kind":["bin"]"#)
            .replace(
                r#""overflow_checks":false,"test":true}"#,
                r#""overflow_checks":false,"test":false}"#,
            );
        assert_eq!(test_artifact(&bin), None);
    }
}
