//! Questions about the nightly toolchain, which Miri, ThreadSanitizer and the `no_std` build
//! need.

use std::process::Command;

/// Whether the nightly toolchain is installed with its `rust-src` component, which
/// `-Zbuild-std` builds the standard library from. (False if nightly itself is missing.)
pub(crate) fn nightly_has_rust_src() -> bool {
    Command::new("rustup")
        .args(["component", "list", "--toolchain", "nightly", "--installed"])
        .output()
        .map(|out| String::from_utf8_lossy(&out.stdout).contains("rust-src"))
        .unwrap_or(false)
}
