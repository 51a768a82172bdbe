//! Latency over time: the probe's per-interval latency in the record, and a
//! product that pauses its output shown stalled there.

use std::process::Output;

use libtest_mimic::Trial;
use streamsuite::results::{flag, RunRecord};

use crate::measured;
use crate::support::{ensure, run_rustpipe_with};

pub fn trials() -> Vec<Trial> {
    vec![measured(
        "a_pause_in_the_output_shows_in_latency_over_time_and_flags_stalls",
        a_pause_in_the_output_shows_in_latency_over_time_and_flags_stalls,
    )]
}

/// The record carries the window's latency per sample interval: one entry
/// per interval, each interval with output, the counts adding up to the
/// window's, and the `stalls` figure judged from them.
pub fn kept_latency_over_time(r: &RunRecord, out: &Output) -> Result<(), String> {
    let latency = r
        .latency_series
        .as_ref()
        .ok_or("latency_series missing from the record")?;
    let intervals = (r.config.window_s * 1000).div_ceil(r.config.sample_interval_ms) as usize;
    ensure(
        latency.interval_ms == r.config.sample_interval_ms,
        &format!(
            "intervals of {} ms, the run's sample interval",
            latency.interval_ms
        ),
        out,
    )?;
    ensure(
        [
            latency.t_s.len(),
            latency.count.len(),
            latency.p50_ms.len(),
            latency.p99_ms.len(),
            latency.max_ms.len(),
        ]
        .iter()
        .all(|&n| n == intervals),
        &format!("{intervals} entries in every array: {latency:?}"),
        out,
    )?;
    ensure(
        latency.t_s.last() == Some(&(r.config.window_s as f64)),
        "the last interval ends with the window",
        out,
    )?;
    let timed: u64 = latency.count.iter().sum();
    let window_count = r
        .metrics
        .get("latency_count")
        .map(|m| m.value)
        .ok_or("latency_count missing")?;
    ensure(
        timed as f64 == window_count,
        &format!("interval counts add up to {timed}, the window's count is {window_count}"),
        out,
    )?;
    ensure(
        latency
            .count
            .iter()
            .zip(&latency.p99_ms)
            .all(|(&n, p99)| n > 0 && p99.is_some_and(|p| p > 0.0)),
        &format!("output timed in every interval: {latency:?}"),
        out,
    )?;
    ensure(
        r.metrics
            .get("stalls")
            .is_some_and(|m| m.unit == "intervals"),
        "the stalls figure is recorded",
        out,
    )
}

/// rustpipe's reader stops for 1 s once it has read record 15,000, due
/// 7.5 s after the schedule's start (2,000 records/s): 4.5 s into a window
/// after a 3 s warm-up. The interval in which output resumes holds records
/// that waited out the pause; the run is flagged `stalls`, and its latency
/// is not withheld for it.
fn a_pause_in_the_output_shows_in_latency_over_time_and_flags_stalls() -> Result<(), String> {
    const RATE: f64 = 2000.0;
    const PAUSED_AT_RECORD: u64 = 15_000;
    let settings = format!("  pause_after_records: {PAUSED_AT_RECORD}\n  pause_ms: 1000\n");
    let args = [
        "rustpipe",
        "stateless",
        "--rate",
        "2000",
        "--warmup",
        "3",
        "--window",
        "10",
    ];
    let (out, records) = run_rustpipe_with(&settings, &args)?;
    ensure(out.status.success(), "the run itself must succeed", &out)?;
    ensure(records.len() == 1, "one record expected", &out)?;
    let r = &records[0];
    let latency = r
        .latency_series
        .as_ref()
        .ok_or("latency_series missing from the record")?;
    // Where the pause fell in the window, from the record itself (the
    // warm-up may outlast its minimum).
    let first_seq = r
        .gendata
        .as_ref()
        .ok_or("gendata missing")?
        .window_first_seq;
    let paused_at_s = (PAUSED_AT_RECORD as f64 - first_seq as f64) / RATE;
    ensure(
        paused_at_s >= 1.0 && paused_at_s + 2.0 <= r.config.window_s as f64,
        &format!("the pause at {paused_at_s:.2} s lies inside the window"),
        &out,
    )?;
    let max_ms = |i: usize| latency.max_ms[i].unwrap_or(0.0);
    let worst = (0..latency.len())
        .max_by(|&a, &b| max_ms(a).total_cmp(&max_ms(b)))
        .ok_or("no interval")?;
    let worst_end_s = latency.t_s[worst];
    ensure(
        worst_end_s > paused_at_s + 1.0 && worst_end_s <= paused_at_s + 2.5,
        &format!(
            "the worst interval (ending {worst_end_s} s) is where output resumed, \
             after {:.2} s: {latency:?}",
            paused_at_s + 1.0
        ),
        &out,
    )?;
    ensure(
        (900.0..2000.0).contains(&max_ms(worst)),
        &format!(
            "records waited out the 1 s pause there: max {} ms",
            max_ms(worst)
        ),
        &out,
    )?;
    ensure(
        latency.p99_ms[worst].is_some_and(|p| p >= 500.0),
        &format!("its p99 shows the pause: {:?}", latency.p99_ms[worst]),
        &out,
    )?;
    // Before the pause, latency was what it always is.
    let before: Vec<usize> = (0..latency.len())
        .filter(|&i| latency.t_s[i] <= paused_at_s.floor())
        .collect();
    ensure(
        !before.is_empty() && before.iter().all(|&i| max_ms(i) < 0.5 * max_ms(worst)),
        &format!("intervals before the pause were ordinary: {latency:?}"),
        &out,
    )?;
    flagged_stalls_and_withheld_no_latency(r, &out)
}

/// The run counts at least one stalled interval and is flagged `stalls`;
/// its latency is quoted all the same.
fn flagged_stalls_and_withheld_no_latency(r: &RunRecord, out: &Output) -> Result<(), String> {
    let stalls = r.metrics.get("stalls").map(|m| m.value).unwrap_or(0.0);
    ensure(
        stalls >= 1.0 && r.has_flag(flag::STALLS),
        &format!("stalls {stalls}, flags {:?}", r.flags),
        out,
    )?;
    ensure(
        !r.not_applicable
            .get("latency")
            .is_some_and(|why| why.contains("stall")),
        "a stall withholds no latency",
        out,
    )
}
