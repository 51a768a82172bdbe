//! Runs on an input of several partitions (`--set workload.partitions=2`)
//! with parallelism 2: gendata fills each partition by key, the product
//! consumes both with two workers, and verification counts every record
//! against each partition's own commit, per-key order included.

use libtest_mimic::Trial;
use streamsuite::config::Delivery;
use streamsuite::results::VerificationVerdict;

use super::support::*;
use super::trial;

pub fn trials() -> Vec<Trial> {
    vec![
        trial(
            "rustpipe_on_two_partitions_with_parallelism_2_verifies_in_key_order",
            || two_partition_run("rustpipe-eos"),
        ),
        trial(
            "kafka_streams_on_two_partitions_with_two_threads_verifies_in_key_order",
            || two_partition_run("kafka-streams-eos"),
        ),
    ]
}

fn two_partition_run(line: &str) -> Result<(), String> {
    let (out, r) = stateless_run(
        line,
        Delivery::ExactlyOnce,
        2000,
        5,
        10,
        &["workload.partitions=2", "run.parallelism=2"],
    )?;
    ensure(
        r.config.input_partitions == 2 && r.config.parallelism == 2,
        &format!(
            "the record names 2 input partitions and parallelism 2: {} and {}",
            r.config.input_partitions, r.config.parallelism
        ),
        &out,
    )?;
    let v = r.verification.as_ref().ok_or("verification missing")?;
    ensure(
        v.verdict == VerificationVerdict::Passed
            && v.missing == 0
            && v.duplicated == 0
            && v.committed_offset == v.input_records
            && v.expected > 0,
        &format!("the whole input of both partitions verified: {v:?}"),
        &out,
    )?;
    ensure(
        v.out_of_order == 0,
        &format!("each key's records came out in input order: {v:?}"),
        &out,
    )
}
