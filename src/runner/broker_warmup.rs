//! Warming a broker the suite has just started. A fresh Kafka JVM compiles
//! its produce and fetch paths for about its first minute, at over a core of
//! a small host: a run measured then is measured on a starved host. gendata
//! and the probe, the harness's own load, run against topics of their own
//! for `broker.warmup_s` before any run uses the broker; no product takes
//! part, so every line meets the same broker.

use std::time::Duration;

use anyhow::{Context, Result};

use crate::broker::admin::{self, TopicRequest};
use crate::broker::LocalBroker;
use crate::cache::Cache;
use crate::clock::now_us;
use crate::gendata::GendataPlan;
use crate::interrupt::Interrupt;
use crate::probe::READY_LINE as PROBE_READY;

use super::pipeline::spawn_helper;
use crate::isolation::Role;

/// A local broker up for less than this, with no warm-up noted, is cold.
const COLD_UPTIME_S: f64 = 120.0;

/// Warms the suite's local broker when it is cold (just started, no warm-up
/// noted) and notes the warm-up beside it; returns the seconds of load
/// applied, or None when it needed none.
pub fn warm_if_cold(
    local: &LocalBroker,
    warmup_s: u64,
    rate: u64,
    cache: &Cache,
    interrupt: &Interrupt,
) -> Result<Option<f64>> {
    let cold = local.running_pid().is_some()
        && local.warmed_s().is_none()
        && local.uptime_s().is_none_or(|up| up < COLD_UPTIME_S);
    if warmup_s == 0 || !cold {
        return Ok(None);
    }
    let applied = warm_up_broker(local, rate, warmup_s, cache, interrupt)?;
    local.note_warm_up(applied)?;
    Ok(Some(applied))
}

/// The field gendata's input events carry their schedule slot in.
const INPUT_STAMP: &str = "ts_us";

/// Puts `seconds` of load at `rate` records/s through `local` (produce, read_committed fetch and the probe's floor round
/// trips), then deletes its topics. Returns the seconds of load applied.
fn warm_up_broker(
    local: &LocalBroker,
    rate: u64,
    seconds: u64,
    cache: &Cache,
    interrupt: &Interrupt,
) -> Result<f64> {
    let bootstrap = &local.bootstrap();
    let key = crate::results::new_run_id("broker-warm-up");
    let (input, floor) = (format!("ss-{key}-in"), format!("ss-{key}-floor"));
    let log_dir = cache.run_dir(&key);
    std::fs::create_dir_all(&log_dir).with_context(|| format!("creating {}", log_dir.display()))?;
    admin::create_topics(
        bootstrap,
        local.replicas(),
        &[
            TopicRequest {
                name: input.clone(),
                partitions: 1,
                compression: "producer".into(),
            },
            TopicRequest {
                name: floor.clone(),
                partitions: 1,
                compression: "producer".into(),
            },
        ],
    )?;
    eprintln!(
        "warming up the local broker for {seconds} s at {rate} records/s (it was just started)"
    );
    let started_us = now_us();
    let load = apply_load(
        bootstrap, &input, &floor, rate, seconds, &log_dir, interrupt,
    );
    let applied_s = (now_us() - started_us) as f64 / 1e6;
    if let Err(err) = admin::delete_run_topics(bootstrap, &format!("ss-{key}")) {
        eprintln!("warning: {err:#}");
    }
    load.map(|()| applied_s)
        .with_context(|| format!("warming up the broker (logs: {})", log_dir.display()))
}

fn apply_load(
    bootstrap: &str,
    input: &str,
    floor: &str,
    rate: u64,
    seconds: u64,
    log_dir: &std::path::Path,
    interrupt: &Interrupt,
) -> Result<()> {
    let start_us = now_us() + 1_000_000;
    let end_us = start_us + seconds as i64 * 1_000_000;
    let mut probe = spawn_helper(
        "probe",
        Role::Probe,
        &[
            "probe",
            "--bootstrap",
            bootstrap,
            "--topic",
            input,
            "--floor-topic",
            floor,
            "--window-start-us",
            &start_us.to_string(),
            "--window-end-us",
            &end_us.to_string(),
            "--stamp-field",
            INPUT_STAMP,
            "--summary",
            &log_dir.join("probe.json").to_string_lossy(),
        ],
        log_dir,
        PROBE_READY,
    )?;
    probe.wait_ready(Duration::from_secs(30), interrupt)?;
    let plan = GendataPlan {
        bootstrap: bootstrap.to_string(),
        topic: input.to_string(),
        rate,
        seed: 1,
        start_us,
        window_start_us: start_us,
        end_us,
        window_file: None,
        max_records: None,
        summary: Some(log_dir.join("gendata.json")),
        avro_events: None,
        partitions: 1,
    };
    let mut gendata = spawn_helper("gendata", Role::Gendata, &plan.command_args(), log_dir, "")?;
    let bound = Duration::from_secs(seconds + 60);
    gendata.wait_exit(bound, interrupt)?;
    probe.wait_exit(bound, interrupt)?;
    Ok(())
}
