//! The suite's standard output. `println!` panics when its reader goes away
//! (`suite list --json | head -1`); these writes end quietly instead, as
//! ripgrep's and hyperfine's do. Once the reader has gone, the rest of the
//! output is dropped and the command finishes its work, so a run still
//! appends its record. Any other failure to write (a full disk under
//! `> file`) is kept, and `main` reports it and exits with an error: a
//! cut-off file never passes for a whole one.

use std::fmt;
use std::io::{ErrorKind, Write};
use std::sync::Mutex;

/// What became of standard output so far.
#[derive(Clone, Debug, PartialEq)]
enum State {
    Open,
    /// The reader went away: nothing more is written, and that is no error.
    Closed,
    /// A write failed otherwise: nothing more is written, and the command fails.
    Failed(String),
}

static STATE: Mutex<State> = Mutex::new(State::Open);

/// Writes `args` to standard output, unless it has closed or failed.
pub fn write(args: fmt::Arguments<'_>) {
    let mut state = STATE.lock().unwrap_or_else(|p| p.into_inner());
    if *state != State::Open {
        return;
    }
    let mut out = std::io::stdout().lock();
    if let Err(err) = out.write_fmt(args).and_then(|()| out.flush()) {
        *state = match err.kind() {
            ErrorKind::BrokenPipe => State::Closed,
            _ => State::Failed(err.to_string()),
        };
    }
}

/// The error of a write that failed for another reason than a reader gone.
pub fn failure() -> Option<String> {
    match &*STATE.lock().unwrap_or_else(|p| p.into_inner()) {
        State::Failed(err) => Some(err.clone()),
        State::Open | State::Closed => None,
    }
}

/// `print!` through [`write`].
#[macro_export]
macro_rules! out {
    ($($arg:tt)*) => { $crate::stdout::write(format_args!($($arg)*)) };
}

/// `println!` through [`write`].
#[macro_export]
macro_rules! outln {
    () => { $crate::stdout::write(format_args!("\n")) };
    ($($arg:tt)*) => {
        $crate::stdout::write(format_args!("{}\n", format_args!($($arg)*)))
    };
}
