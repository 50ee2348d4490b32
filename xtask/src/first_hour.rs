//! `cargo xtask first-hour`: the project in `first-hour/`, outside the workspace, built and run
//! as a new user's program: `futures::StreamExt` and `pinfold::*` in one scope, the facade's
//! paths only, and the calls its docs show (`concurrent_for_each`, `driven`, an `Adaptive`
//! limit, a keyed `remove`). It fails where that program would not build or would panic.

use crate::invocation::Invocation;
use crate::outcome::{Failure, Outcome};
use crate::usage::CommandUsage;
use crate::workspace::Workspace;

pub(crate) const USAGE: CommandUsage = CommandUsage {
    synopsis: "first-hour",
    about: "build and run first-hour/, a user's program outside the workspace\n\
            (futures::StreamExt beside pinfold::*, the facade's paths only),\n\
            with its own Cargo.lock (adjusted where pinfold's dependencies changed)",
};

/// The project's directory, relative to the workspace root.
const PROJECT: &str = "first-hour";

pub(crate) fn first_hour(workspace: &Workspace) -> Result<Outcome, Failure> {
    let project = workspace.root.join(PROJECT);
    // The README examples' target directory: the same dependencies, built once.
    Invocation::new(&project, "cargo", &["run", "--quiet"])
        .env(
            "CARGO_TARGET_DIR",
            workspace.target_dir("readme").join("target"),
        )
        .run()
        .map_err(|error| format!("{PROJECT}/ does not build or run: {error}"))?;
    Ok(Outcome::Passed)
}
