//! The stateless workload's operators: filter `region = eu-*`, then derive
//! `latency_ratio` and `sla_status`. The output keeps what verification needs:
//! the input's sequence number and gendata timestamp.

use std::borrow::Cow;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use crate::settings::PipelineOptions;

/// The input fields the workload reads (a projection of the 19).
#[derive(Deserialize)]
struct Input<'a> {
    seq: u64,
    ts_us: i64,
    #[serde(borrow)]
    region: Cow<'a, str>,
    #[serde(borrow)]
    service: Cow<'a, str>,
    latency_ms: u32,
    sla_ms: u32,
}

/// One output record of the stateless workload.
#[derive(Serialize)]
struct Output<'a> {
    seq: u64,
    ts_us: i64,
    region: &'a str,
    service: &'a str,
    latency_ms: u32,
    sla_ms: u32,
    latency_ratio: f64,
    sla_status: &'static str,
}

/// Writes the output for `payload` into `out`; false when the filter drops
/// it (or a `drop_every` fault does).
pub fn transform(payload: &[u8], out: &mut Vec<u8>, options: &PipelineOptions) -> Result<bool> {
    let input: Input<'_> =
        serde_json::from_slice(payload).context("rustpipe: an input record is not an event")?;
    if !input.region.starts_with("eu-") || is_nth(input.seq, options.drop_every) {
        return Ok(false);
    }
    let mut latency_ratio = f64::from(input.latency_ms) / f64::from(input.sla_ms);
    if is_nth(input.seq, options.corrupt_every) {
        latency_ratio *= 2.0;
    }
    let output = Output {
        seq: input.seq,
        ts_us: input.ts_us,
        region: &input.region,
        service: &input.service,
        latency_ms: input.latency_ms,
        sla_ms: input.sla_ms,
        latency_ratio,
        sla_status: sla_status(latency_ratio),
    };
    serde_json::to_writer(out, &output)?;
    Ok(true)
}

/// The SLA verdict for a latency ratio: `breach` above 1, else `ok`.
fn sla_status(latency_ratio: f64) -> &'static str {
    if latency_ratio > 1.0 {
        "breach"
    } else {
        "ok"
    }
}

/// Whether a fault set to every `n`th sequence number hits `seq`.
fn is_nth(seq: u64, n: u64) -> bool {
    n > 0 && seq.is_multiple_of(n)
}

// The output is checked against the suite's own generator and verifier, as
// any product's is in a run.
#[cfg(test)]
mod tests {
    use super::*;
    use streamsuite::gendata::Event;

    #[test]
    fn eu_events_are_kept_and_enriched() {
        let mut checked = 0;
        for seq in 0..2000 {
            let event = Event::generate(9, seq, 1_000 + seq as i64);
            let payload = serde_json::to_vec(&event).unwrap();
            let mut out = Vec::new();
            let kept = transform(&payload, &mut out, &PipelineOptions::default()).unwrap();
            assert_eq!(kept, event.region.starts_with("eu-"));
            if kept {
                let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
                assert_eq!(v["seq"], seq);
                assert_eq!(v["ts_us"], 1_000 + seq as i64);
                assert_eq!(v["latency_ratio"].as_f64().unwrap(), event.latency_ratio());
                assert_eq!(v["sla_status"], event.sla_status());
                checked += 1;
            } else {
                assert!(out.is_empty());
            }
        }
        assert!(checked > 400, "{checked}");
    }

    #[test]
    fn only_a_ratio_above_one_is_a_breach() {
        assert_eq!(sla_status(1.0), "ok");
        assert_eq!(sla_status(1.0001), "breach");
        assert_eq!(sla_status(0.2), "ok");
    }

    #[test]
    fn a_record_that_is_not_an_event_is_an_error() {
        assert!(transform(
            b"{\"nope\":1}",
            &mut Vec::new(),
            &PipelineOptions::default()
        )
        .is_err());
    }

    #[test]
    fn faults_drop_and_corrupt_what_they_say_and_verification_counts_them() {
        use streamsuite::analysis::verify::{Expectation, Verifier};
        use streamsuite::config::Delivery;
        use streamsuite::gendata::event::Core;
        use streamsuite::gendata::schedule::Schedule;

        let options = PipelineOptions {
            drop_every: 10,
            corrupt_every: 7,
            ..PipelineOptions::default()
        };
        let (seed, n, schedule) = (5, 3000, Schedule::new(0, 1000));
        let mut verifier = Verifier::new(Expectation {
            seed,
            input_records: n,
            committed: n,
            schedule: Some(schedule),
            delivery: Delivery::ExactlyOnce,
        });
        for seq in 0..n {
            let payload =
                serde_json::to_vec(&Event::generate(seed, seq, schedule.slot_us(seq))).unwrap();
            let mut out = Vec::new();
            if transform(&payload, &mut out, &options).unwrap() {
                verifier.observe(&out);
            }
        }
        let kept: Vec<u64> = (0..n)
            .filter(|&s| Core::generate(seed, s).is_kept())
            .collect();
        let dropped = kept.iter().filter(|&&s| s % 10 == 0).count() as u64;
        let corrupted = kept.iter().filter(|&&s| s % 7 == 0 && s % 10 != 0).count() as u64;
        let v = verifier.finish();
        assert!(dropped > 0 && corrupted > 0);
        assert_eq!((v.missing, v.corrupted), (dropped, corrupted));
        assert_eq!((v.duplicated, v.unexpected), (0, 0));
        assert_eq!(v.verdict, streamsuite::results::VerificationVerdict::Failed);
    }
}
