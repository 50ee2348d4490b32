//! Loom models live in tests/; run them with `cargo xtask loom`.
