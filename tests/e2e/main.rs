//! End-to-end tests: the real `suite` binary against the real local Kafka.
//!
//! The harness starts the local broker once (unless one already runs), runs
//! every test in turn, then stops the broker it started.

mod bad_input;
mod batches;
mod chaos;
mod cluster;
mod deployments;
mod drain;
mod etl;
mod interrupted;
mod isolation;
mod partitions;
mod products;
mod releases;
mod remote;
mod runs;
mod stalls;
mod support;
mod sweeps;
mod verification;
mod workloads;

use std::sync::Mutex;
use std::time::{Duration, Instant};

use libtest_mimic::{Arguments, Trial};

fn main() {
    let mut args = Arguments::from_args();
    // Runs measure: two at once on a 2-core machine would skew both.
    args.test_threads = Some(1);
    let mut trials = Vec::new();
    trials.extend(bad_input::trials());
    trials.extend(runs::trials());
    trials.extend(interrupted::trials());
    trials.extend(stalls::trials());
    trials.extend(batches::trials());
    trials.extend(sweeps::trials());
    trials.extend(releases::trials());
    trials.extend(verification::trials());
    trials.extend(chaos::trials());
    trials.extend(partitions::trials());
    trials.extend(cluster::trials());
    trials.extend(deployments::trials());
    trials.extend(remote::trials());
    trials.extend(products::trials());
    trials.extend(drain::trials());
    trials.extend(isolation::trials());
    trials.extend(etl::trials());
    trials.extend(workloads::trials());
    trials.extend(chaos::broker_restart_trials());
    let needs_broker = !args.list;
    let broker = needs_broker.then(support::BrokerGuard::start);
    let conclusion = libtest_mimic::run(&args, trials);
    cluster::stop();
    drop(broker);
    print_durations();
    conclusion.exit();
}

/// How long each trial took, for the log: CI's budget is spent here.
static DURATIONS: Mutex<Vec<(String, Duration)>> = Mutex::new(Vec::new());

/// The measured trials that passed only on their second attempt.
static FLAKY: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// A trial from a test function returning `Result<(), String>`.
pub fn trial(name: &'static str, test: fn() -> Result<(), String>) -> Trial {
    timed_trial(name.to_string(), test)
}

/// A trial that judges what a run measured (its regime, its latency, its
/// flow figures), run once more when it fails: on a shared two-core host a
/// neighbour's burst can tip one run. A broken behaviour fails both
/// attempts; a pass on the second is listed at the end as flaky.
pub fn measured(name: &'static str, test: fn() -> Result<(), String>) -> Trial {
    timed_trial(name.to_string(), move || retried_once(name, test))
}

/// Runs `test`, and once more if it fails: the second attempt's verdict,
/// with the first attempt's failure kept in the message.
pub fn retried_once(name: &str, test: impl Fn() -> Result<(), String>) -> Result<(), String> {
    let Err(first) = test() else {
        return Ok(());
    };
    let headline = first.lines().next().unwrap_or_default();
    eprintln!("{name}: the first attempt failed ({headline}); running it again");
    match test() {
        Ok(()) => {
            let mut flaky = FLAKY.lock().unwrap_or_else(|e| e.into_inner());
            flaky.push(format!("{name} (first attempt: {headline})"));
            Ok(())
        }
        Err(second) => Err(format!(
            "{second}\n--- the first attempt failed too:\n{first}"
        )),
    }
}

/// A trial whose duration is kept for [`print_durations`].
pub fn timed_trial(
    name: String,
    test: impl FnOnce() -> Result<(), String> + Send + 'static,
) -> Trial {
    let label = name.clone();
    Trial::test(name, move || {
        let started = Instant::now();
        let result = test();
        let mut durations = DURATIONS.lock().unwrap_or_else(|e| e.into_inner());
        durations.push((label, started.elapsed()));
        result.map_err(Into::into)
    })
}

/// The trials that ran, slowest first, one line each; then the flaky ones.
fn print_durations() {
    let mut durations = DURATIONS.lock().unwrap_or_else(|e| e.into_inner());
    durations.sort_by_key(|(_, took)| std::cmp::Reverse(*took));
    for (name, took) in durations.iter() {
        eprintln!("e2e: {name} took {:.1} s", took.as_secs_f64());
    }
    for trial in FLAKY.lock().unwrap_or_else(|e| e.into_inner()).iter() {
        eprintln!("e2e: FLAKY, passed on its second attempt: {trial}");
    }
}
