//! rustpipe's executable: settings from the environment, stopped by SIGTERM
//! or SIGINT.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use anyhow::Result;
use rustpipe::etl::{self, EtlSettings};
use rustpipe::pipeline;
use rustpipe::settings::{PipelineSettings, Workload};

fn main() {
    if let Err(err) = run_from_env() {
        eprintln!("error: {err:#}");
        std::process::exit(1);
    }
}

fn run_from_env() -> Result<()> {
    let settings = PipelineSettings::from_env()?;
    let stop = Arc::new(AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGTERM, signal_hook::consts::SIGINT] {
        signal_hook::flag::register(signal, stop.clone())?;
    }
    match settings.workload {
        // Kafka to ClickHouse: a pipeline of its own, with its sink's settings.
        Workload::AvroEtl => etl::run(&settings, &EtlSettings::from_env()?, &stop),
        Workload::Stateless | Workload::Passthrough | Workload::WindowedLowcard => {
            pipeline::run(&settings, &stop)
        }
    }
}
