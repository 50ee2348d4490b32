//! [`Invocation`]: one external command, printed before it runs.

use std::ffi::OsStr;
use std::io::Write;
use std::path::Path;
use std::process::Command;

use crate::outcome::Failure;

/// One external command: printed, then run in the workspace root.
pub(crate) struct Invocation {
    command: Command,
    shown: String,
}

impl Invocation {
    pub(crate) fn new(root: &Path, program: &str, args: &[&str]) -> Self {
        let mut command = Command::new(program);
        command.args(args).current_dir(root);
        let mut shown = program.to_string();
        for arg in args {
            shown.push(' ');
            shown.push_str(&quoted(arg));
        }
        Invocation { command, shown }
    }

    pub(crate) fn env(mut self, key: &str, value: impl AsRef<OsStr>) -> Self {
        let value = value.as_ref();
        self.shown = format!("{key}={} {}", quoted(&value.to_string_lossy()), self.shown);
        self.command.env(key, value);
        self
    }

    /// For `cargo +nightly ...`: drop what the outer (stable) cargo put in the environment,
    /// so the nightly cargo and its subcommands find their own toolchain.
    pub(crate) fn nightly(mut self) -> Self {
        self.command
            .env_remove("CARGO")
            .env_remove("RUSTUP_TOOLCHAIN");
        self
    }

    /// Prints and runs the command; an error if it cannot start or exits unsuccessfully.
    pub(crate) fn run(mut self) -> Result<(), Failure> {
        println!("$ {}", self.shown);
        self.wait()
    }

    /// Runs the command with its output (stdout and stderr) written to `log` instead of
    /// shown, for commands that run side by side; the command line is the log's first line.
    pub(crate) fn run_logged(mut self, log: &Path) -> Result<(), Failure> {
        let failed = |error: std::io::Error| format!("{}: {error}", log.display());
        let mut file = std::fs::File::create(log).map_err(failed)?;
        writeln!(file, "$ {}", self.shown).map_err(failed)?;
        let err = file.try_clone().map_err(failed)?;
        self.command.stdout(file).stderr(err);
        self.wait()
    }

    /// Prints and runs the command, its stderr shown and its stdout returned, with the command
    /// line as printed; an error if it cannot start or exits unsuccessfully.
    pub(crate) fn stdout(mut self) -> Result<(String, String), Failure> {
        println!("$ {}", self.shown);
        let output = self
            .command
            .stderr(std::process::Stdio::inherit())
            .output()
            .map_err(|error| format!("could not start `{}`: {error}", self.shown))?;
        if !output.status.success() {
            return Err(format!("`{}` failed ({})", self.shown, output.status));
        }
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        Ok((self.shown, stdout))
    }

    /// Runs the command as it is set up; an error if it cannot start or exits unsuccessfully.
    fn wait(&mut self) -> Result<(), Failure> {
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
    pub(crate) fn succeeds(self) -> bool {
        self.run().is_ok()
    }
}

/// `arg` as a POSIX shell would need it: bare if it is plainly safe, else single-quoted.
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
