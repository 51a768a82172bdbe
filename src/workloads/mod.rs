//! Workloads as code: what each workload's input is, what a product must
//! output for it, how that output is checked and which sanity figures apply.
//!
//! `workloads/NAME.yaml` describes a workload (its topics and operators, for
//! people and the report); the module registered here under the same name
//! is what the suite runs and checks. Loading a workload file with no
//! implementation is an error, so a new YAML file can never be run as some
//! other workload. Adding a workload is its YAML file, one module here and
//! its line in [`REGISTRY`] (docs/workloads.md).

mod avro_etl;
mod passthrough;
mod stateless;
mod windowed_lowcard;

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::config::{ConfigError, Delivery, Encoding, Suite, Workload};
use crate::gendata::schedule::Pacing;
use crate::gendata::KeyPartitions;
use crate::results::figure::{ADDED_P50_MS, US_CPU_PER_RECORD};
use crate::results::Figure;
use crate::results::{Verification, VerificationVerdict};

/// Every workload the suite can run, by name.
static REGISTRY: &[&dyn Implementation] = &[
    &stateless::Stateless,
    &passthrough::Passthrough,
    &windowed_lowcard::WindowedLowcard,
    &avro_etl::AvroEtl,
];

/// The implementation registered under `name`.
pub fn find(name: &str) -> Option<&'static dyn Implementation> {
    REGISTRY.iter().copied().find(|w| w.name() == name)
}

/// The names of every implemented workload, for error messages.
pub fn names() -> Vec<&'static str> {
    REGISTRY.iter().map(|w| w.name()).collect()
}

/// Checks that every workload of a loaded suite has an implementation whose
/// input and output its file describes.
pub fn check_suite(suite: &Suite) -> Result<(), ConfigError> {
    suite.workloads.values().try_for_each(check)
}

/// Checks one workload file against its implementation.
fn check(workload: &Workload) -> Result<(), ConfigError> {
    let Some(implementation) = find(&workload.name) else {
        return Err(workload.error_at(
            "name",
            format!(
                "workload `{}` has no implementation in the suite (implemented: {}); \
                 add one in src/workloads/ (docs/workloads.md)",
                workload.name,
                names().join(", ")
            ),
        ));
    };
    if workload.input.encoding != implementation.input() {
        return Err(workload.error_at(
            "input",
            format!(
                "the implementation of `{}` writes {} input, not {}",
                workload.name,
                implementation.input().as_str(),
                workload.input.encoding.as_str()
            ),
        ));
    }
    match (&workload.output, implementation.output()) {
        (Some(_), Output::Table) => Err(workload.error_at(
            "output",
            format!(
                "`{}` writes a table: give `sink`, not `output`",
                workload.name
            ),
        )),
        (None, Output::Topic(_)) => Err(workload.error_at(
            "sink",
            format!(
                "`{}` writes a topic: give `output`, not `sink`",
                workload.name
            ),
        )),
        _ => Ok(()),
    }
}

/// The code that runs and checks a loaded workload: every workload of a
/// checked suite has one ([`check_suite`]).
pub fn implementation(workload: &Workload) -> &'static dyn Implementation {
    find(&workload.name).expect("check_suite checks every workload's implementation")
}

/// What a topic-writing workload owes and how it is checked; `None` for a
/// workload that writes a table.
pub fn topic_output(workload: &Workload) -> Option<&'static dyn TopicOutput> {
    match implementation(workload).output() {
        Output::Topic(output) => Some(output),
        Output::Table => None,
    }
}

/// One workload, as code.
pub trait Implementation: Sync {
    /// The workload's name: its YAML file's stem.
    fn name(&self) -> &'static str;
    /// What gendata writes to the input topic.
    fn input(&self) -> Encoding;
    /// Where the product's output goes and how it is checked.
    fn output(&self) -> Output;

    /// The two figures the index's matrix shows for a line's runs.
    fn headline(&self) -> [&'static Figure; 2] {
        [&ADDED_P50_MS, &US_CPU_PER_RECORD]
    }
}

/// Where a workload's output lands.
pub enum Output {
    /// On the output topic, read by the probe and checked record by record.
    Topic(&'static dyn TopicOutput),
    /// In a ClickHouse table, checked by the ETL runner (analysis::etl).
    Table,
}

/// A workload whose output is a topic.
pub trait TopicOutput: Sync + std::fmt::Debug {
    /// The field of an output record holding the time it was due, epoch
    /// microseconds: the probe's latency is its arrival minus this.
    fn stamp_field(&self) -> &'static str;

    /// A checker of the whole output against `expectation`, or why this run's
    /// output cannot be checked exactly.
    fn verifier(&self, expectation: Expectation) -> Result<Box<dyn OutputVerifier>, String>;

    /// Outputs owed per input record over the input sequence range
    /// `[from, to)`: what output / consumed must be for that range.
    fn expected_selectivity(&self, seed: u64, pacing: Pacing, from: u64, to: u64) -> Option<f64>;

    /// The committed input offset from which a product owes nothing more,
    /// for `input_records` records: a product that committed this far is
    /// done (the settle phase's goal, and what makes verification complete).
    fn owed_until(&self, pacing: Pacing, input_records: u64) -> u64 {
        let _ = pacing;
        input_records
    }

    /// How the workload's sanity figures are named and judged.
    fn sanity(&self) -> &'static SanitySpec;

    /// Whether its output can only be checked on a paced run (whose
    /// schedule fixes every record's time).
    fn needs_schedule(&self) -> bool {
        false
    }
}

/// What a workload's sanity checks look at.
#[derive(Debug)]
pub struct SanitySpec {
    /// What one output is ("records", "panes").
    pub unit: &'static str,
    /// What the content check recomputes ("derived fields", ...).
    pub content: &'static str,
    /// Fewer checked outputs than this is too small a sample to vouch for
    /// the content.
    pub min_content_sample: u64,
    /// The workload's own figures: (key in the record, label on the page).
    pub figures: &'static [(&'static str, &'static str)],
}

/// What the product was given and what it acknowledged.
#[derive(Debug, Clone)]
pub struct Expectation {
    pub seed: u64,
    /// Records gendata wrote: sequence numbers `0..input_records`.
    pub input_records: u64,
    /// The product's committed input offset after the settle phase (summed
    /// over the input's partitions): on one partition it owns the output of
    /// `0..committed`. For a product that commits no offsets,
    /// `input_records`: its output is checked against the whole input.
    pub committed: u64,
    /// On an input of several partitions, the records its commit covers:
    /// each partition's committed offset applied to that partition's own
    /// records ([`commit_coverage`]). None on one partition.
    pub covered: Option<Arc<SeqSet>>,
    /// The input's partitions, which gendata filled by key.
    pub partitions: u32,
    /// gendata's pacing: a schedule fixes every `ts_us`.
    pub pacing: Pacing,
    pub delivery: Delivery,
}

impl Expectation {
    /// Whether the product's commit covers input record `seq`: it owes its
    /// output.
    pub fn owns(&self, seq: u64) -> bool {
        match &self.covered {
            Some(covered) => seq < self.input_records && covered.contains(seq),
            None => seq < self.committed.min(self.input_records),
        }
    }

    /// The input records the commit covers, in sequence order.
    pub fn owned(&self) -> impl Iterator<Item = u64> + '_ {
        let bound = match self.covered {
            Some(_) => self.input_records,
            None => self.committed.min(self.input_records),
        };
        (0..bound).filter(|&seq| self.owns(seq))
    }
}

/// Which of `input_records` records a commit of `committed` (each input
/// partition's committed offset, by partition) covers, on an input of
/// `committed.len()` partitions that gendata filled by key: record `seq`
/// lies in its key's partition ([`KeyPartitions`]) at the offset that
/// counts the records before it there, and is covered when that offset is
/// below its partition's commit.
pub fn commit_coverage(seed: u64, input_records: u64, committed: &[u64]) -> SeqSet {
    let keys = KeyPartitions::new(committed.len() as u32);
    let mut next_offset = vec![0u64; committed.len()];
    let mut covered = SeqSet::new(input_records);
    for seq in 0..input_records {
        let partition = keys.of_seq(seed, seq) as usize;
        if next_offset[partition] < committed[partition] {
            covered.insert(seq);
        }
        next_offset[partition] += 1;
    }
    covered
}

/// Checks an output stream, one record at a time.
pub trait OutputVerifier {
    /// Checks one output record's payload.
    fn observe(&mut self, payload: &[u8]);
    /// The counts, the verdict and the workload's sanity figures.
    fn finish(&self) -> Checked;
}

/// What a verifier found.
#[derive(Debug, Clone)]
pub struct Checked {
    pub verification: Verification,
    /// (outputs whose content was recomputed, of which wrong).
    pub content: (u64, u64),
    /// The workload's own sanity figures, by key.
    pub figures: BTreeMap<String, f64>,
}

/// The counts every exact check keeps, and the verdict they lead to.
#[derive(Debug, Clone, Default)]
pub struct Tally {
    pub output_records: u64,
    pub expected: u64,
    pub missing: u64,
    pub duplicated: u64,
    pub unexpected: u64,
    pub corrupted: u64,
    pub beyond_commit: u64,
    pub out_of_order: u64,
}

/// What a workload calls what it counts, for the verdict's message.
pub struct Wording {
    /// What is owed ("records", "panes").
    pub unit: &'static str,
    /// What `out_of_order` means here.
    pub out_of_order: &'static str,
    /// Whether `out_of_order` fails the run (late panes) or is only noted
    /// (records reordered per key).
    pub out_of_order_fails: bool,
}

impl Tally {
    /// The verdict: anything missing, unexpected or corrupted fails, and so do
    /// duplicates on an exactly-once line; a clean output is still only
    /// `incomplete` while the product had not committed up to `owed_until`.
    pub fn finish(&self, e: &Expectation, owed_until: u64, wording: &Wording) -> Verification {
        let mut problems = Vec::new();
        for (count, what) in [
            (self.missing, "missing"),
            (self.unexpected, "unexpected"),
            (self.corrupted, "corrupted"),
        ] {
            if count > 0 {
                problems.push(format!("{count} {what}"));
            }
        }
        if e.delivery == Delivery::ExactlyOnce && self.duplicated > 0 {
            problems.push(format!(
                "{} duplicated on an exactly-once line",
                self.duplicated
            ));
        }
        if wording.out_of_order_fails && self.out_of_order > 0 {
            problems.push(format!("{} {}", self.out_of_order, wording.out_of_order));
        }
        let unit = wording.unit;
        let expected = self.expected;
        let committed = e.committed.min(e.input_records);
        let verdict = if !problems.is_empty() {
            VerificationVerdict::Failed
        } else if committed < owed_until {
            // Nothing wrong in the committed range is not a pass while input
            // past it was never owed: the product must commit all of it.
            VerificationVerdict::Incomplete
        } else {
            VerificationVerdict::Passed
        };
        let note = match self.out_of_order {
            n if n > 0 && !wording.out_of_order_fails => format!("; {n} {}", wording.out_of_order),
            _ => String::new(),
        };
        let message = match verdict {
            VerificationVerdict::Passed => format!(
                "all {expected} expected {unit} present, {} duplicated, nothing unexpected or corrupted",
                self.duplicated
            ),
            VerificationVerdict::Incomplete => format!(
                "not verified: the product committed {committed} of {} input records by the end of the settle phase \
                 ({owed_until} needed); the {expected} {unit} owed for those are all present",
                e.input_records
            ),
            VerificationVerdict::Failed => {
                format!("{} (of {expected} expected {unit})", problems.join(", "))
            }
        } + &note;
        Verification {
            committed_offset: e.committed,
            input_records: e.input_records,
            expected,
            output_records: self.output_records,
            missing: self.missing,
            duplicated: self.duplicated,
            unexpected: self.unexpected,
            corrupted: self.corrupted,
            beyond_commit: self.beyond_commit,
            out_of_order: self.out_of_order,
            verdict,
            message,
        }
    }
}

/// One bit per input sequence number.
#[derive(Debug, Clone)]
pub struct SeqSet(Vec<u64>);

impl SeqSet {
    pub fn new(len: u64) -> SeqSet {
        SeqSet(vec![0; len.div_ceil(64) as usize])
    }

    /// Marks `seq`; false when it was already marked.
    pub fn insert(&mut self, seq: u64) -> bool {
        let (word, bit) = ((seq / 64) as usize, 1u64 << (seq % 64));
        let fresh = self.0[word] & bit == 0;
        self.0[word] |= bit;
        fresh
    }

    pub fn contains(&self, seq: u64) -> bool {
        self.0[(seq / 64) as usize] & (1 << (seq % 64)) != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The edited suite, loaded and checked against the implementations.
    fn checked(edit: impl FnOnce(&std::path::Path)) -> Result<(), ConfigError> {
        let (suite, _dir) = crate::config::edited_suite(edit)?;
        check_suite(&suite)
    }

    #[test]
    fn a_workload_needs_an_implementation_that_writes_what_its_file_says() {
        assert!(checked(|_| {}).is_ok());
        let err = checked(|dir| {
            std::fs::write(
                dir.join("workloads/joins.yaml"),
                "description: x\nname: joins\ninput: {partitions: 1}\noutput: {partitions: 1}\noperators: []\n",
            )
            .unwrap();
        })
        .unwrap_err()
        .to_string();
        assert!(
            err.contains(
                "workloads/joins.yaml:2: workload `joins` has no implementation in the suite"
            ),
            "{err}"
        );
        let err = checked(|dir| {
            let text = std::fs::read_to_string(dir.join("workloads/passthrough.yaml")).unwrap();
            let as_table = text.replace("output:\n  partitions: 1", "sink:\n  kind: clickhouse");
            std::fs::write(dir.join("workloads/passthrough.yaml"), as_table).unwrap();
        })
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("`passthrough` writes a topic: give `output`, not `sink`"),
            "{err}"
        );
    }
    use std::path::Path;

    #[test]
    fn every_workload_file_has_its_implementation_and_every_implementation_a_file() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("workloads");
        let mut files: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(|e| {
                let path = e.unwrap().path();
                (path.extension()? == "yaml")
                    .then(|| path.file_stem()?.to_str().map(String::from))?
            })
            .collect();
        files.sort();
        let mut registered: Vec<String> = names().into_iter().map(String::from).collect();
        registered.sort();
        assert_eq!(files, registered);
    }

    #[test]
    fn a_seq_set_marks_each_number_once() {
        let mut set = SeqSet::new(130);
        assert!(set.insert(129));
        assert!(!set.insert(129));
        assert!(set.contains(129) && !set.contains(128));
    }
}
