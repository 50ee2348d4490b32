//! The usage text, assembled from each command's [`CommandUsage`] and from the table of CI
//! steps ([`ci::STEPS`]), so it lists what runs and cannot drift from it.

use crate::{
    bench, ci, first_hour, instructions, layers, loom, miri, msrv, mutants, nostd, package, paths,
    readme, rules, tsan, valgrind,
};

/// How one command is called and what it does, for the usage text.
pub(crate) struct CommandUsage {
    /// The command and its arguments, e.g. `loom [--preemptions N] [FILTER]`.
    pub(crate) synopsis: &'static str,
    /// What it does: lines of at most 62 characters, separated by `\n`, not indented.
    pub(crate) about: &'static str,
}

const HELP: CommandUsage = CommandUsage {
    synopsis: "help",
    about: "print this message",
};

/// Every command, in the order the usage text lists them.
const COMMANDS: [&CommandUsage; 17] = [
    &ci::USAGE,
    &rules::USAGE,
    &paths::USAGE,
    &layers::USAGE,
    &package::USAGE,
    &readme::USAGE,
    &first_hour::USAGE,
    &loom::USAGE,
    &miri::USAGE,
    &tsan::USAGE,
    &nostd::USAGE,
    &msrv::USAGE,
    &valgrind::USAGE,
    &bench::USAGE,
    &instructions::USAGE,
    &mutants::USAGE,
    &HELP,
];

/// The column where a command's description starts.
const ABOUT_COLUMN: usize = 34;

/// The usage text: the commands, then the steps of `ci` in the order they run.
pub(crate) fn text() -> String {
    let mut text = String::from("usage: cargo xtask <command>\n\ncommands:\n");
    for command in COMMANDS {
        let mut lines = command.about.lines();
        let first = lines.next().unwrap_or("");
        let synopsis_width = ABOUT_COLUMN - 2;
        text.push_str(&format!("  {:<synopsis_width$}{first}\n", command.synopsis));
        for line in lines {
            text.push_str(&format!("{:ABOUT_COLUMN$}{line}\n", ""));
        }
    }
    text.push_str("\nci steps, in the order `cargo xtask ci` runs them:\n");
    let width = ci::name_width();
    for step in ci::STEPS {
        text.push_str(&format!("  {:<width$}  {}\n", step.name, step.about));
        if let Some(file) = step.only_if {
            text.push_str(&format!("  {:<width$}  only if {file} exists\n", ""));
        }
    }
    text.pop(); // the last newline: `println!` adds one
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_names_every_ci_step_in_order() {
        let text = format!("{}\n", text());
        let width = ci::name_width();
        let mut from = 0;
        for step in ci::STEPS {
            let line = format!("\n  {:<width$}  {}\n", step.name, step.about);
            let Some(at) = text[from..].find(&line) else {
                panic!(
                    "the usage text does not list step `{}` after the ones before it:\n{text}",
                    step.name
                );
            };
            from += at + 1;
        }
    }

    #[test]
    fn usage_names_every_command() {
        let text = text();
        for command in COMMANDS {
            assert!(
                text.contains(&format!("\n  {} ", command.synopsis)),
                "the usage text does not list `{}`:\n{text}",
                command.synopsis
            );
        }
    }
}
