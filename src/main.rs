//! `suite`: parse the command line, run the command, report errors in one line.

use clap::Parser;

use streamsuite::cli::Cli;
use streamsuite::exit;
use streamsuite::interrupt::Interrupted;

fn main() {
    let cli = Cli::parse();
    match streamsuite::commands::execute(cli) {
        Ok(code) => match streamsuite::stdout::failure() {
            Some(err) => {
                eprintln!("error: writing to standard output: {err}");
                std::process::exit(exit::ERROR);
            }
            None => std::process::exit(code),
        },
        Err(err) => {
            eprintln!("error: {err:#}");
            let code = if err.is::<Interrupted>() {
                exit::INTERRUPTED
            } else {
                exit::ERROR
            };
            std::process::exit(code);
        }
    }
}
