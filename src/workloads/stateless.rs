//! stateless: keep the events of `eu-*` regions and add `latency_ratio` and
//! `sla_status`, with no state.
//!
//! Input offset `o` of the single input partition holds sequence number `o`
//! (gendata's producer is idempotent and writes in order), so the input a
//! product committed is the sequence range `[0, committed)` and its expected
//! output is every kept event of that range, once. Seen sequence numbers are
//! kept in a bitmap: memory is one bit per input record, whatever the output.

use std::collections::{BTreeMap, HashMap};

use serde::Deserialize;

use super::{
    Checked, Expectation, Implementation, Output, OutputVerifier, SanitySpec, SeqSet, Tally,
    TopicOutput, Wording,
};
use crate::config::Encoding;
use crate::gendata::event::{sla_status, Core};
use crate::gendata::schedule::Pacing;

/// Relative tolerance on `latency_ratio`: a float64 division printed and read
/// back round-trips exactly, so only a wrong computation exceeds it.
const RATIO_TOLERANCE: f64 = 1e-9;

#[derive(Debug)]
pub struct Stateless;

static SANITY: SanitySpec = SanitySpec {
    unit: "records",
    content: "derived fields",
    min_content_sample: 500,
    figures: &[("breach_rate", "breach rate")],
};

impl Implementation for Stateless {
    fn name(&self) -> &'static str {
        "stateless"
    }

    fn input(&self) -> Encoding {
        Encoding::Json
    }

    fn output(&self) -> Output {
        Output::Topic(&Self)
    }
}

impl TopicOutput for Stateless {
    fn stamp_field(&self) -> &'static str {
        "ts_us"
    }

    fn verifier(&self, expectation: Expectation) -> Result<Box<dyn OutputVerifier>, String> {
        Ok(Box::new(Verifier::new(expectation)))
    }

    fn expected_selectivity(&self, seed: u64, _pacing: Pacing, from: u64, to: u64) -> Option<f64> {
        expected_selectivity(seed, from, to)
    }

    fn sanity(&self) -> &'static SanitySpec {
        &SANITY
    }
}

/// The fields of an output record the checks read; each may be absent.
#[derive(Deserialize)]
struct Record {
    seq: Option<u64>,
    ts_us: Option<i64>,
    region: Option<String>,
    service: Option<String>,
    latency_ms: Option<u32>,
    sla_ms: Option<u32>,
    latency_ratio: Option<f64>,
    sla_status: Option<String>,
}

/// Counts what an output stream holds, one record at a time.
pub struct Verifier {
    expectation: Expectation,
    /// The input sequence numbers whose output was seen.
    seen: SeqSet,
    tally: Tally,
    enrichment_checked: u64,
    enrichment_mismatched: u64,
    breaches: u64,
    /// The highest sequence number seen per key (region, service).
    latest_per_key: HashMap<(&'static str, &'static str), u64>,
}

impl Verifier {
    pub fn new(expectation: Expectation) -> Verifier {
        Verifier {
            seen: SeqSet::new(expectation.input_records),
            expectation,
            tally: Tally::default(),
            enrichment_checked: 0,
            enrichment_mismatched: 0,
            breaches: 0,
            latest_per_key: HashMap::new(),
        }
    }

    /// Breach share of the output records read (None before any).
    fn breach_rate(&self) -> Option<f64> {
        let read = self.tally.output_records;
        (read > 0).then(|| self.breaches as f64 / read as f64)
    }
}

impl OutputVerifier for Verifier {
    fn observe(&mut self, payload: &[u8]) {
        let tally = &mut self.tally;
        tally.output_records += 1;
        let Ok(output) = serde_json::from_slice::<Record>(payload) else {
            tally.unexpected += 1;
            return;
        };
        if output.sla_status.as_deref() == Some("breach") {
            self.breaches += 1;
        }
        let Some(seq) = output.seq.filter(|&s| s < self.expectation.input_records) else {
            tally.unexpected += 1;
            return;
        };
        let core = Core::generate(self.expectation.seed, seq);
        if !core.is_kept() {
            tally.unexpected += 1;
            return;
        }
        if !self.seen.insert(seq) {
            tally.duplicated += 1;
        } else {
            if !self.expectation.owns(seq) {
                tally.beyond_commit += 1;
            }
            // A first copy after a later record of its key: the input
            // partition's order per key was not kept.
            let latest = self
                .latest_per_key
                .entry((core.region, core.service))
                .or_insert(seq);
            if seq < *latest {
                tally.out_of_order += 1;
            } else {
                *latest = seq;
            }
        }
        let enriched = derived_fields_match(&output, &core);
        self.enrichment_checked += 1;
        if !enriched {
            self.enrichment_mismatched += 1;
        }
        if !enriched || !carried_fields_match(&output, &core, seq, self.expectation.pacing) {
            tally.corrupted += 1;
        }
    }

    /// The counts, with the expected records of `[0, committed)` that never
    /// appeared as missing.
    fn finish(&self) -> Checked {
        let e = &self.expectation;
        let mut tally = self.tally.clone();
        for seq in e.owned() {
            if Core::generate(e.seed, seq).is_kept() {
                tally.expected += 1;
                if !self.seen.contains(seq) {
                    tally.missing += 1;
                }
            }
        }
        let wording = Wording {
            unit: "records",
            out_of_order: "out of order per key (region, service)",
            out_of_order_fails: false,
        };
        Checked {
            verification: tally.finish(e, e.input_records, &wording),
            content: (self.enrichment_checked, self.enrichment_mismatched),
            figures: self
                .breach_rate()
                .map(|rate| BTreeMap::from([("breach_rate".to_string(), rate)]))
                .unwrap_or_default(),
        }
    }
}

/// `latency_ratio` and `sla_status` are what the workload derives.
fn derived_fields_match(output: &Record, core: &Core) -> bool {
    let ratio = core.latency_ratio();
    output
        .latency_ratio
        .is_some_and(|r| (r - ratio).abs() <= RATIO_TOLERANCE * ratio.abs())
        && output.sla_status.as_deref() == Some(sla_status(ratio))
}

/// The fields carried over from the input are the input's.
fn carried_fields_match(output: &Record, core: &Core, seq: u64, pacing: Pacing) -> bool {
    let ts_ok = match pacing {
        Pacing::Paced(schedule) => output.ts_us == Some(schedule.slot_us(seq)),
        Pacing::Unpaced => output.ts_us.is_some(),
    };
    ts_ok
        && output.region.as_deref() == Some(core.region)
        && output.service.as_deref() == Some(core.service)
        && output.latency_ms == Some(core.latency_ms)
        && output.sla_ms == Some(core.sla_ms)
}

/// The share of input records in `[from, to)` that the workload keeps: what
/// output / consumed must be for exactly that range.
fn expected_selectivity(seed: u64, from: u64, to: u64) -> Option<f64> {
    (to > from).then(|| {
        let kept = (from..to)
            .filter(|&seq| Core::generate(seed, seq).is_kept())
            .count();
        kept as f64 / (to - from) as f64
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Delivery;
    use crate::gendata::event;
    use crate::gendata::schedule::Schedule;
    use crate::results::{Verification, VerificationVerdict};

    const SEED: u64 = 42;
    const N: u64 = 2000;

    fn schedule() -> Schedule {
        Schedule::new(1_000_000, 1000)
    }

    fn expectation(committed: u64, delivery: Delivery) -> Expectation {
        Expectation {
            seed: SEED,
            input_records: N,
            committed,
            covered: None,
            partitions: 1,
            pacing: Pacing::Paced(schedule()),
            delivery,
        }
    }

    /// The correct output of `seq`, as a product should write it.
    fn output(seq: u64) -> Vec<u8> {
        let e = event::generate(SEED, seq, schedule().slot_us(seq));
        serde_json::to_vec(&serde_json::json!({
            "seq": seq, "ts_us": e.ts_us, "region": e.region, "service": e.service,
            "latency_ms": e.latency_ms, "sla_ms": e.sla_ms,
            "latency_ratio": e.latency_ratio(), "sla_status": e.sla_status(),
        }))
        .unwrap()
    }

    fn kept(range: std::ops::Range<u64>) -> Vec<u64> {
        range
            .filter(|&s| Core::generate(SEED, s).is_kept())
            .collect()
    }

    fn verify(committed: u64, delivery: Delivery, payloads: &[Vec<u8>]) -> Verification {
        let mut verifier = Verifier::new(expectation(committed, delivery));
        for p in payloads {
            verifier.observe(p);
        }
        verifier.finish().verification
    }

    /// The fixed events the product apps' shared helpers are tested against
    /// (products/common/stateless-cases.json): each input as gendata writes
    /// it and the output this workload expects, `null` where it filters.
    fn shared_cases() -> serde_json::Value {
        let cases: Vec<_> = (0..12)
            .map(|seq| {
                let e = event::generate(SEED, seq, 1_767_225_600_000_000 + seq as i64 * 1000);
                let output = e.is_kept().then(|| {
                    serde_json::json!({
                        "seq": e.seq, "ts_us": e.ts_us, "region": e.region,
                        "service": e.service, "latency_ms": e.latency_ms,
                        "sla_ms": e.sla_ms, "latency_ratio": e.latency_ratio(),
                        "sla_status": e.sla_status(),
                    })
                });
                serde_json::json!({"input": e, "output": output})
            })
            .collect();
        serde_json::json!({ "workload": "stateless", "cases": cases })
    }

    #[test]
    fn the_product_helpers_cases_are_the_suites_expectation() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/products/common/stateless-cases.json"
        );
        let expected = shared_cases();
        let text = std::fs::read_to_string(path).unwrap_or_default();
        let committed: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
        assert!(
            committed == expected,
            "{path} differs from the suite's expectation; it should read:\n{}",
            serde_json::to_string_pretty(&expected).unwrap()
        );
        let cases = expected["cases"].as_array().unwrap();
        let kept = cases.iter().filter(|c| !c["output"].is_null()).count();
        let breached = cases
            .iter()
            .filter(|c| c["output"]["sla_status"] == "breach")
            .count();
        assert!(
            kept > 0 && kept < cases.len() && breached > 0,
            "the cases cover keep, filter and breach"
        );
    }

    #[test]
    fn the_exact_output_passes() {
        let all: Vec<_> = kept(0..N).into_iter().map(output).collect();
        let v = verify(N, Delivery::ExactlyOnce, &all);
        assert_eq!(v.verdict, VerificationVerdict::Passed, "{}", v.message);
        assert_eq!(v.expected, all.len() as u64);
        assert_eq!(v.output_records, all.len() as u64);
        assert_eq!(
            (
                v.missing,
                v.duplicated,
                v.unexpected,
                v.corrupted,
                v.out_of_order
            ),
            (0, 0, 0, 0, 0)
        );
    }

    #[test]
    fn records_swapped_within_a_key_are_out_of_order_and_replays_are_not() {
        use crate::gendata::event::Core;
        let seqs = kept(0..N);
        let key = |s: u64| {
            let c = Core::generate(SEED, s);
            (c.region, c.service)
        };
        // The first two records of one key, swapped.
        let first = seqs[0];
        let second = *seqs[1..].iter().find(|&&s| key(s) == key(first)).unwrap();
        let mut order: Vec<u64> = seqs.iter().copied().filter(|&s| s != first).collect();
        let at = order.iter().position(|&s| s == second).unwrap();
        order.insert(at + 1, first);
        let swapped: Vec<_> = order.into_iter().map(output).collect();
        let v = verify(N, Delivery::ExactlyOnce, &swapped);
        assert_eq!(v.out_of_order, 1, "{}", v.message);
        assert!(
            v.message.contains("1 out of order per key"),
            "{}",
            v.message
        );
        // An at-least-once replay: copies of earlier records, each a duplicate.
        let mut replayed: Vec<_> = seqs.iter().copied().map(output).collect();
        replayed.extend(seqs[..20].iter().copied().map(output));
        let v = verify(N, Delivery::AtLeastOnce, &replayed);
        assert_eq!((v.duplicated, v.out_of_order), (20, 0));
    }

    #[test]
    fn a_gap_is_counted_missing() {
        let seqs = kept(0..N);
        let gap = &seqs[10..17];
        let with_gap: Vec<_> = seqs
            .iter()
            .filter(|s| !gap.contains(s))
            .map(|&s| output(s))
            .collect();
        let v = verify(N, Delivery::AtLeastOnce, &with_gap);
        assert_eq!(v.missing, 7);
        assert_eq!(v.verdict, VerificationVerdict::Failed);
        assert!(v.message.contains("7 missing"), "{}", v.message);
    }

    #[test]
    fn duplicates_fail_exactly_once_only() {
        let seqs = kept(0..N);
        let mut payloads: Vec<_> = seqs.iter().map(|&s| output(s)).collect();
        payloads.push(output(seqs[3]));
        payloads.push(output(seqs[3]));
        payloads.push(output(seqs[40]));
        let alos = verify(N, Delivery::AtLeastOnce, &payloads);
        assert_eq!(alos.duplicated, 3);
        assert_eq!(
            alos.verdict,
            VerificationVerdict::Passed,
            "{}",
            alos.message
        );
        let eos = verify(N, Delivery::ExactlyOnce, &payloads);
        assert_eq!(eos.duplicated, 3);
        assert_eq!(eos.verdict, VerificationVerdict::Failed);
        assert!(eos.message.contains("3 duplicated"), "{}", eos.message);
    }

    #[test]
    fn a_filtered_event_or_foreign_record_is_unexpected() {
        let dropped = (0..N)
            .find(|&s| !Core::generate(SEED, s).is_kept())
            .unwrap();
        let mut payloads: Vec<_> = kept(0..N).into_iter().map(output).collect();
        payloads.push(output(dropped));
        payloads.push(b"not json".to_vec());
        payloads.push(br#"{"seq": 999999999}"#.to_vec());
        payloads.push(br#"{"no_seq": 1}"#.to_vec());
        let v = verify(N, Delivery::AtLeastOnce, &payloads);
        assert_eq!(v.unexpected, 4);
        assert_eq!((v.missing, v.corrupted), (0, 0));
        assert_eq!(v.verdict, VerificationVerdict::Failed);
    }

    #[test]
    fn a_wrong_field_is_corrupted_and_a_wrong_ratio_fails_enrichment() {
        let seqs = kept(0..N);
        let mut payloads: Vec<_> = seqs.iter().map(|&s| output(s)).collect();
        let mut bad_ratio: serde_json::Value = serde_json::from_slice(&payloads[0]).unwrap();
        bad_ratio["latency_ratio"] =
            serde_json::json!(bad_ratio["latency_ratio"].as_f64().unwrap() * 1.01);
        payloads[0] = serde_json::to_vec(&bad_ratio).unwrap();
        let mut bad_region: serde_json::Value = serde_json::from_slice(&payloads[1]).unwrap();
        bad_region["region"] = "us-east".into();
        payloads[1] = serde_json::to_vec(&bad_region).unwrap();
        let mut bad_ts: serde_json::Value = serde_json::from_slice(&payloads[2]).unwrap();
        bad_ts["ts_us"] = serde_json::json!(bad_ts["ts_us"].as_i64().unwrap() + 1);
        payloads[2] = serde_json::to_vec(&bad_ts).unwrap();
        let mut verifier = Verifier::new(expectation(N, Delivery::ExactlyOnce));
        for p in &payloads {
            verifier.observe(p);
        }
        let checked = verifier.finish();
        assert_eq!(checked.content, (seqs.len() as u64, 1));
        let v = checked.verification;
        assert_eq!(v.corrupted, 3);
        assert_eq!((v.missing, v.unexpected, v.duplicated), (0, 0, 0));
        assert_eq!(v.verdict, VerificationVerdict::Failed);
    }

    #[test]
    fn output_past_the_commit_is_counted_apart_and_only_committed_input_is_owed() {
        let seqs = kept(0..N);
        let committed = 1000;
        let payloads: Vec<_> = seqs[..seqs.len() - 5].iter().map(|&s| output(s)).collect();
        let v = verify(committed, Delivery::ExactlyOnce, &payloads);
        assert_eq!(v.expected, kept(0..committed).len() as u64);
        assert_eq!(v.missing, 0, "the missing tail lies past the commit");
        assert_eq!(
            v.beyond_commit,
            seqs.iter().filter(|&&s| s >= committed).count() as u64 - 5
        );
        assert_eq!(v.verdict, VerificationVerdict::Incomplete, "{}", v.message);
    }

    /// On two partitions, each partition's commit covers its own records:
    /// the partition committed in full owes all of its output, the other
    /// only what lies before its commit, and output past it is counted apart.
    #[test]
    fn each_partitions_commit_covers_its_own_records() {
        let keys = crate::gendata::KeyPartitions::new(2);
        let partition = |seq: u64| keys.of_seq(SEED, seq);
        let in_1: Vec<u64> = (0..N).filter(|&s| partition(s) == 1).collect();
        let half = in_1.len() as u64 / 2;
        let by_partition = [N - in_1.len() as u64, half];
        let covered = crate::workloads::commit_coverage(SEED, N, &by_partition);
        let mut e = expectation(by_partition.iter().sum(), Delivery::ExactlyOnce);
        e.covered = Some(std::sync::Arc::new(covered));
        e.partitions = 2;
        let owed: Vec<u64> = (0..N)
            .filter(|&s| partition(s) == 0 || in_1[..half as usize].contains(&s))
            .collect();
        assert_eq!(e.owned().collect::<Vec<_>>(), owed);
        let mut verifier = Verifier::new(e.clone());
        for &seq in kept(0..N).iter() {
            verifier.observe(&output(seq));
        }
        let v = verifier.finish().verification;
        let kept_owed = owed.iter().filter(|&&s| Core::generate(SEED, s).is_kept());
        assert_eq!(v.expected, kept_owed.count() as u64);
        assert_eq!((v.missing, v.duplicated, v.out_of_order), (0, 0, 0));
        assert_eq!(
            v.beyond_commit,
            kept(0..N).len() as u64 - v.expected,
            "{}",
            v.message
        );
        // The partition half committed owes no more: the run is incomplete.
        assert_eq!(v.verdict, VerificationVerdict::Incomplete, "{}", v.message);
        // A record of the fully committed partition that never came is missing.
        let lost = *kept(0..N).iter().find(|&&s| partition(s) == 0).unwrap();
        let mut verifier = Verifier::new(e);
        for &seq in kept(0..N).iter().filter(|&&s| s != lost) {
            verifier.observe(&output(seq));
        }
        assert_eq!(verifier.finish().verification.missing, 1);
    }

    #[test]
    fn a_product_that_never_committed_is_incomplete_never_passed() {
        let v = verify(0, Delivery::AtLeastOnce, &[]);
        assert_eq!(v.expected, 0);
        assert_eq!(v.verdict, VerificationVerdict::Incomplete);
        assert!(v.message.contains("committed 0 of 2000"), "{}", v.message);
        // its output still counts against it: a foreign record fails it
        let v = verify(0, Delivery::AtLeastOnce, &[b"x".to_vec()]);
        assert_eq!(v.verdict, VerificationVerdict::Failed);
    }

    #[test]
    fn breach_rate_reads_the_products_status() {
        let payloads: Vec<_> = kept(0..N).into_iter().map(output).collect();
        let mut verifier = Verifier::new(expectation(N, Delivery::ExactlyOnce));
        for p in &payloads {
            verifier.observe(p);
        }
        let breaches = kept(0..N)
            .iter()
            .filter(|&&s| Core::generate(SEED, s).latency_ratio() > 1.0)
            .count();
        let rate = verifier.finish().figures["breach_rate"];
        assert!((rate - breaches as f64 / payloads.len() as f64).abs() < 1e-12);
        assert!(rate > 0.1 && rate < 0.3, "{rate}");
    }

    #[test]
    fn expected_selectivity_is_the_kept_share_of_the_range() {
        let share = expected_selectivity(SEED, 100, 2100).unwrap();
        assert_eq!(share, kept(100..2100).len() as f64 / 2000.0);
        assert!((share - 0.29).abs() < 0.03, "{share}");
        assert_eq!(expected_selectivity(SEED, 5, 5), None);
    }
}
