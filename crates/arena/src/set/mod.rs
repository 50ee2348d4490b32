//! The keyed sets over an arena: what the sets, merges and maps of the other crates are.

pub(crate) mod keyed_set;
