//! `suite`: parse the command line, run the command, report errors in one line.

use clap::Parser;

use streamsuite::cli::Cli;
use streamsuite::exit;
use streamsuite::interrupt::Interrupted;

fn main() {
    let cli = Cli::parse();
    match streamsuite::commands::execute(cli) {
        Ok(code) => std::process::exit(code),
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
