//! passthrough: the identity job. Every input record is written to the
//! output unchanged, so what a product costs here is its floor: consuming,
//! producing and committing, with no work between.
//!
//! Each output must be byte for byte what gendata wrote for its sequence
//! number: the record is regenerated from the seed and its slot and compared
//! whole.

use std::collections::BTreeMap;

use serde::Deserialize;

use super::{
    Checked, Expectation, Implementation, Output, OutputVerifier, SanitySpec, SeqSet, Tally,
    TopicOutput, Wording,
};
use crate::config::Encoding;
use crate::gendata::schedule::Pacing;
use crate::gendata::{event, KeyPartitions};

#[derive(Debug)]
pub struct Passthrough;

static SANITY: SanitySpec = SanitySpec {
    unit: "records",
    content: "bytes",
    min_content_sample: 500,
    figures: &[],
};

impl Implementation for Passthrough {
    fn name(&self) -> &'static str {
        "passthrough"
    }

    fn input(&self) -> Encoding {
        Encoding::Json
    }

    fn output(&self) -> Output {
        Output::Topic(&Self)
    }
}

impl TopicOutput for Passthrough {
    fn stamp_field(&self) -> &'static str {
        "ts_us"
    }

    fn verifier(&self, expectation: Expectation) -> Result<Box<dyn OutputVerifier>, String> {
        Ok(Box::new(Verifier {
            seen: SeqSet::new(expectation.input_records),
            highest: vec![None; expectation.partitions.max(1) as usize],
            keys: KeyPartitions::new(expectation.partitions),
            expectation,
            tally: Tally::default(),
            mismatched: 0,
            regenerated: Vec::new(),
        }))
    }

    fn expected_selectivity(&self, _seed: u64, _pacing: Pacing, from: u64, to: u64) -> Option<f64> {
        (to > from).then_some(1.0)
    }

    fn sanity(&self) -> &'static SanitySpec {
        &SANITY
    }
}

/// The fields that say which input record an output claims to be.
#[derive(Deserialize)]
struct Identity {
    seq: u64,
    ts_us: i64,
}

struct Verifier {
    expectation: Expectation,
    seen: SeqSet,
    tally: Tally,
    /// The highest sequence number seen so far, per input partition: each
    /// partition's order is what a product must keep.
    highest: Vec<Option<u64>>,
    /// Which input partition each record came from.
    keys: KeyPartitions,
    /// Outputs whose bytes differ from gendata's.
    mismatched: u64,
    /// The buffer gendata's bytes are regenerated into.
    regenerated: Vec<u8>,
}

impl OutputVerifier for Verifier {
    fn observe(&mut self, payload: &[u8]) {
        let e = &self.expectation;
        self.tally.output_records += 1;
        let Some(id) = serde_json::from_slice::<Identity>(payload)
            .ok()
            .filter(|id| id.seq < e.input_records)
        else {
            self.tally.unexpected += 1;
            return;
        };
        if self.seen.insert(id.seq) {
            if !e.owns(id.seq) {
                self.tally.beyond_commit += 1;
            }
            let partition = self.keys.of_seq(e.seed, id.seq) as usize;
            let highest = &mut self.highest[partition];
            if highest.is_some_and(|h| id.seq < h) {
                self.tally.out_of_order += 1;
            }
            *highest = (*highest).max(Some(id.seq));
        } else {
            self.tally.duplicated += 1;
        }
        // Unpaced, the slot is the send time gendata stamped: take the
        // output's and check every other byte.
        let ts_us = e.pacing.schedule().map_or(id.ts_us, |s| s.slot_us(id.seq));
        self.regenerated.clear();
        serde_json::to_writer(
            &mut self.regenerated,
            &event::generate(e.seed, id.seq, ts_us),
        )
        .expect("an event serializes");
        if self.regenerated != payload {
            self.mismatched += 1;
            self.tally.corrupted += 1;
        }
    }

    fn finish(&self) -> Checked {
        let e = &self.expectation;
        let mut tally = self.tally.clone();
        tally.expected = e.owned().count() as u64;
        tally.missing = e.owned().filter(|&seq| !self.seen.contains(seq)).count() as u64;
        let wording = Wording {
            unit: "records",
            out_of_order: "out of input order (per input partition)",
            out_of_order_fails: false,
        };
        Checked {
            verification: tally.finish(e, e.input_records, &wording),
            content: (
                self.tally.output_records - tally.unexpected,
                self.mismatched,
            ),
            figures: BTreeMap::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Delivery;
    use crate::results::VerificationVerdict;

    const SEED: u64 = 42;
    const N: u64 = 1000;

    fn expectation(committed: u64, delivery: Delivery, paced: bool) -> Expectation {
        Expectation {
            seed: SEED,
            input_records: N,
            committed,
            covered: None,
            partitions: 1,
            pacing: Pacing::new(1_000_000, if paced { 500 } else { 0 }),
            delivery,
        }
    }

    /// What gendata wrote for `seq`.
    fn input(seq: u64, e: &Expectation) -> Vec<u8> {
        let ts = e
            .pacing
            .schedule()
            .map_or(7_000_000 + seq as i64, |s| s.slot_us(seq));
        serde_json::to_vec(&event::generate(SEED, seq, ts)).unwrap()
    }

    fn check(e: Expectation, outputs: &[Vec<u8>]) -> Checked {
        let mut verifier = Passthrough.verifier(e).unwrap();
        for output in outputs {
            verifier.observe(output);
        }
        verifier.finish()
    }

    #[test]
    fn the_input_copied_passes_paced_and_unpaced() {
        for paced in [true, false] {
            let e = expectation(N, Delivery::ExactlyOnce, paced);
            let all: Vec<_> = (0..N).map(|s| input(s, &e)).collect();
            let checked = check(e, &all);
            let v = &checked.verification;
            assert_eq!(v.verdict, VerificationVerdict::Passed, "{}", v.message);
            assert_eq!((v.expected, v.output_records), (N, N));
            assert_eq!(checked.content, (N, 0));
        }
    }

    #[test]
    fn each_fault_is_counted() {
        let e = expectation(N, Delivery::ExactlyOnce, true);
        let mut outputs: Vec<_> = (0..N).filter(|&s| s != 10).map(|s| input(s, &e)).collect();
        // one record re-serialized with a changed field, one repeated, one
        // reordered, one foreign
        let mut changed: serde_json::Value = serde_json::from_slice(&outputs[20]).unwrap();
        changed["status"] = serde_json::json!(999);
        outputs[20] = serde_json::to_vec(&changed).unwrap();
        outputs.push(input(30, &e));
        outputs.swap(40, 41);
        outputs.push(b"{\"seq\": 5}".to_vec());
        let checked = check(e, &outputs);
        let v = &checked.verification;
        assert_eq!(
            (
                v.missing,
                v.corrupted,
                v.duplicated,
                v.out_of_order,
                v.unexpected
            ),
            (1, 1, 1, 1, 1),
            "{}",
            v.message
        );
        assert_eq!(v.verdict, VerificationVerdict::Failed);
        assert!(v.message.contains("1 duplicated on an exactly-once line"));
        assert_eq!(checked.content.1, 1);
    }

    #[test]
    fn a_reformatted_record_with_equal_fields_is_not_a_copy() {
        let e = expectation(N, Delivery::AtLeastOnce, true);
        let mut outputs: Vec<_> = (0..N).map(|s| input(s, &e)).collect();
        let value: serde_json::Value = serde_json::from_slice(&outputs[0]).unwrap();
        outputs[0] = serde_json::to_vec_pretty(&value).unwrap();
        assert_eq!(check(e, &outputs).verification.corrupted, 1);
    }

    #[test]
    fn only_committed_input_is_owed() {
        let e = expectation(600, Delivery::AtLeastOnce, true);
        let outputs: Vec<_> = (0..650).map(|s| input(s, &e)).collect();
        let v = check(e, &outputs).verification;
        assert_eq!((v.expected, v.missing, v.beyond_commit), (600, 0, 50));
        assert_eq!(v.verdict, VerificationVerdict::Incomplete, "{}", v.message);
    }
}
