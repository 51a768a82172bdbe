//! End-to-end tests: the real `suite` binary against the real local Kafka.
//!
//! The harness starts the local broker once (unless one already runs), runs
//! every test in turn, then stops the broker it started.

mod bad_input;
mod batches;
mod chaos;
mod drain;
mod etl;
mod products;
mod runs;
mod stalls;
mod support;
mod verification;
mod workloads;

use libtest_mimic::{Arguments, Trial};

fn main() {
    let mut args = Arguments::from_args();
    // Runs measure: two at once on a 2-core machine would skew both.
    args.test_threads = Some(1);
    let mut trials = Vec::new();
    trials.extend(bad_input::trials());
    trials.extend(runs::trials());
    trials.extend(stalls::trials());
    trials.extend(batches::trials());
    trials.extend(verification::trials());
    trials.extend(chaos::trials());
    trials.extend(products::trials());
    trials.extend(drain::trials());
    trials.extend(etl::trials());
    trials.extend(workloads::trials());
    let needs_broker = !args.list;
    let broker = needs_broker.then(support::BrokerGuard::start);
    let conclusion = libtest_mimic::run(&args, trials);
    drop(broker);
    conclusion.exit();
}

/// A trial from a test function returning `Result<(), String>`.
pub fn trial(name: &'static str, test: fn() -> Result<(), String>) -> Trial {
    Trial::test(name, move || test().map_err(Into::into))
}
