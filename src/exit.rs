//! The suite's exit codes, one meaning each, so that a script or a CI job
//! tells a finding from a failure without reading the output. `suite
//! --help` prints [`HELP`]; the README and docs/commands.md list them too.

/// The command did what it was asked.
pub const OK: i32 = 0;
/// An error: bad input, a component that would not start, a run that
/// failed or failed its verification.
pub const ERROR: i32 = 1;
/// A command line that does not parse (clap's own code).
pub const USAGE: i32 = 2;
/// `suite broker status`, `suite clickhouse status`: the service the suite
/// starts is not running.
pub const NOT_RUNNING: i32 = 3;
/// `suite regress`: a figure is worse beyond the threshold; `suite noise`:
/// the A/A itself reads as one.
pub const REGRESSION: i32 = 4;
/// `suite compare`: no figure separates the two lines; the batch cannot
/// tell them apart.
pub const NOT_SEPARABLE: i32 = 5;
/// Interrupted (Ctrl-C or SIGTERM); everything the command started was
/// stopped.
pub const INTERRUPTED: i32 = 130;

/// The exit codes, as `suite --help` ends.
pub const HELP: &str = "\
Exit codes:
  0    ok
  1    an error, a failed run or a failed verification
  2    a usage error
  3    broker status, clickhouse status: not running
  4    regress: a regression beyond the threshold; noise: the A/A reads as one
  5    compare: no figure separates the two lines
  130  interrupted";

#[cfg(test)]
mod tests {
    use super::*;

    /// The help text lists every code with its number: a code added here
    /// must be added there.
    #[test]
    fn the_help_lists_every_code() {
        for code in [
            OK,
            ERROR,
            USAGE,
            NOT_RUNNING,
            REGRESSION,
            NOT_SEPARABLE,
            INTERRUPTED,
        ] {
            assert!(
                HELP.lines()
                    .any(|l| l.trim_start().starts_with(&format!("{code} "))),
                "{code} is not in the help"
            );
        }
    }
}
