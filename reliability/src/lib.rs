//! Shared fixtures of the reliability tests; the tests live in tests/.
