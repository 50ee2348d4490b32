//! `cargo xtask tsan`: the library crates' tests under ThreadSanitizer.

use std::time::Instant;

use crate::outcome::{Failure, Outcome, Seconds};
use crate::toolchain::nightly_has_rust_src;
use crate::usage::CommandUsage;
use crate::workspace::Workspace;

pub(crate) const USAGE: CommandUsage = CommandUsage {
    synopsis: "tsan",
    about: "run the library crates' unit and integration tests under\n\
            ThreadSanitizer (nightly, -Zbuild-std) in target/tsan",
};

/// The library crates' tests under ThreadSanitizer. It sees the real hardware atomics and the
/// frees that loom cannot (the wake table's release), on the tests that wake from other threads.
pub(crate) fn tsan(workspace: &Workspace) -> Result<Outcome, Failure> {
    if !nightly_has_rust_src() {
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
    args.extend(workspace.library_test_args());
    args.extend(["--lib", "--tests"]);
    let started = Instant::now();
    let mut invocation = workspace
        .cargo(&args)
        .nightly()
        // `pinfold_tsan` leaves out the tests of how much stack a thread takes.
        .env("RUSTFLAGS", "-Zsanitizer=thread --cfg pinfold_tsan")
        .env("RUSTDOCFLAGS", "-Zsanitizer=thread")
        .env("TSAN_OPTIONS", "halt_on_error=1")
        .env("CARGO_TARGET_DIR", workspace.target_dir("tsan"));
    // With `RUST_BACKTRACE` unset, the first panic of a test binary built for ThreadSanitizer
    // takes about 5 seconds (with `0`, a few milliseconds): some 40 binaries panic on purpose.
    if std::env::var_os("RUST_BACKTRACE").is_none() {
        invocation = invocation.env("RUST_BACKTRACE", "0");
    }
    invocation.run()?;
    println!("tsan: passed in {}", Seconds(started.elapsed()));
    Ok(Outcome::Passed)
}
