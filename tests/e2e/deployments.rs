//! Products deployed as clusters of processes (`--deploy cluster`): each
//! starts, verifies the whole input and leaves no process behind; a member
//! killed alone is named in the record; a member that fails to start is
//! named with its log.

use std::ops::RangeInclusive;
use std::path::Path;

use libtest_mimic::Trial;
use streamsuite::results::{RunRecord, Status, VerificationVerdict};

use super::support::*;
use super::trial;

pub fn trials() -> Vec<Trial> {
    vec![
        trial(
            "cluster_deployments_verify_the_whole_input_and_leave_no_process",
            cluster_deployments_verify_the_whole_input_and_leave_no_process,
        ),
        trial(
            "hazelcast_eos_on_two_members_keeps_every_record_through_three_member_kills",
            hazelcast_eos_on_two_members_keeps_every_record_through_three_member_kills,
        ),
        trial(
            "a_member_that_fails_to_start_is_named_with_its_log_and_the_others_stop",
            a_member_that_fails_to_start_is_named_with_its_log_and_the_others_stop,
        ),
        trial(
            "a_deployment_the_run_cannot_have_is_refused_before_anything_starts",
            a_deployment_the_run_cannot_have_is_refused_before_anything_starts,
        ),
    ]
}

/// A cluster deployment reads with a process per input partition.
const CLUSTER: [&str; 4] = ["--deploy", "cluster", "--set", "workload.partitions=2"];

/// A record of a cluster run that verified its whole input with nothing
/// missing or repeated.
fn check_verified(r: &RunRecord, out: &std::process::Output) -> Result<(), String> {
    ensure(
        r.status == Status::Ok,
        &format!("{}: an ok record", r.line),
        out,
    )?;
    ensure(
        r.config.deployment == "cluster",
        &format!(
            "{}: the record names its deployment: {}",
            r.line, r.config.deployment
        ),
        out,
    )?;
    let v = r.verification.as_ref().ok_or("verification missing")?;
    ensure(
        v.verdict == VerificationVerdict::Passed
            && v.missing == 0
            && v.duplicated == 0
            && v.expected > 0,
        &format!("{}: the whole input verified: {v:?}", r.line),
        out,
    )
}

/// Every cluster deployment, its members (as their logs name them) and the
/// most processes the sampler counted at a sample: theirs and their
/// children's, from the fewest the deployment runs to the most a sample
/// may catch.
const DEPLOYMENTS: [(&str, &[&str], RangeInclusive<usize>); 6] = [
    ("rustpipe-eos", &["instance-0", "instance-1"], 2..=2),
    ("kafka-streams", &["instance-0", "instance-1"], 2..=2),
    ("quix", &["instance-0", "instance-1"], 2..=2),
    ("hazelcast-eos", &["member-0", "member-1", "job-0"], 3..=3),
    (
        "flink-eos",
        &["jobmanager-0", "taskmanager-0", "taskmanager-1", "job-0"],
        4..=4,
    ),
    // Each worker starts an executor JVM; the driver is Python and its JVM.
    // A sample may also catch a short-lived child of one of those seven
    // (8 has been counted once).
    (
        "spark",
        &["master-0", "worker-0", "worker-1", "driver-0"],
        7..=8,
    ),
];

fn cluster_deployments_verify_the_whole_input_and_leave_no_process() -> Result<(), String> {
    let results = tempfile::tempdir().map_err(|e| e.to_string())?;
    let lines: Vec<&str> = DEPLOYMENTS.iter().map(|(line, _, _)| *line).collect();
    let out = output(
        suite()
            .arg("batch")
            .args(&lines)
            .args(["--workload", "stateless", "--repeat", "1", "--rate", "2000"])
            .args(["--warmup", "2", "--window", "5"])
            .args(CLUSTER)
            .arg("--results")
            .arg(results.path()),
    )?;
    ensure(out.status.success(), "the batch must succeed", &out)?;
    let all = records(results.path(), "stateless")?;
    ensure(all.len() == lines.len(), "a record per line expected", &out)?;
    for (line, members, processes) in DEPLOYMENTS {
        let r = all
            .iter()
            .find(|r| r.line == line)
            .ok_or(format!("no record of {line}"))?;
        check_verified(r, &out)?;
        let sampled = r
            .resources
            .as_ref()
            .and_then(|res| res.product.as_ref())
            .and_then(|p| p.processes_max)
            .ok_or(format!("{line}: no process count"))?;
        ensure(
            processes.contains(&sampled),
            &format!(
                "{line}: every member's processes sampled, {sampled} (expected {processes:?})"
            ),
            &out,
        )?;
        for member in members {
            let log = r.logs.join(format!("product-{member}.stdout.log"));
            ensure(
                log.exists(),
                &format!("{line}: {} kept", log.display()),
                &out,
            )?;
        }
        let left = processes_of_run(&r.run_id);
        ensure(
            left.is_empty(),
            &format!("{line}: no process of the run is left: {left:?}"),
            &out,
        )?;
    }
    Ok(())
}

fn hazelcast_eos_on_two_members_keeps_every_record_through_three_member_kills() -> Result<(), String>
{
    let results = tempfile::tempdir().map_err(|e| e.to_string())?;
    let out = output(
        suite()
            .args([
                "chaos",
                "hazelcast-eos",
                "stateless",
                "--kills",
                "3",
                "--every",
                "10",
            ])
            .args(["--member", "member", "--rate", "2000", "--warmup", "5"])
            .args(CLUSTER)
            .arg("--results")
            .arg(results.path()),
    )?;
    ensure(out.status.success(), "the campaign must succeed", &out)?;
    let all = records(results.path(), "stateless")?;
    ensure(all.len() == 1, "one record expected", &out)?;
    let r = &all[0];
    let chaos = r.chaos.as_ref().ok_or("no chaos block")?;
    let members: Vec<&str> = chaos
        .kills
        .iter()
        .filter_map(|k| k.member.as_deref())
        .collect();
    ensure(
        members == ["member-0", "member-1", "member-0"],
        &format!("the members are killed in turn, each alone: {members:?}"),
        &out,
    )?;
    ensure(
        chaos.kills.iter().all(|k| k.killed_processes == 1),
        &format!("one process per kill: {:?}", chaos.kills),
        &out,
    )?;
    check_verified(r, &out)
}

/// A stand-in product whose second role dies before it is ready.
const BROKEN_SECOND_ROLE: &str = r#"name: twostep
description: A test double whose second process fails to start.
version: "0"
install: {kind: builtin}
start: ["sh", "-c", "echo twostep ready; exec sleep 120"]
ready: {stdout_contains: "twostep ready"}
workloads: [stateless]
deployments:
  cluster:
    summary: a worker that starts and a coordinator that does not
    processes:
      - {role: worker}
      - role: coordinator
        start: ["sh", "-c", "echo 'coordinator: no quorum' >&2; exit 3"]
lines:
  - {name: twostep, delivery: at-least-once, delivery_detail: none}
characteristics: {processing: none, engine: none, scaling: none, decode: none}
"#;

fn a_member_that_fails_to_start_is_named_with_its_log_and_the_others_stop() -> Result<(), String> {
    let dir = config_with_products(&[("twostep", BROKEN_SECOND_ROLE)])?;
    let results = dir.path().join("results");
    let out = run_suite(
        &dir.path().join("bench.yaml"),
        &[
            "twostep",
            "stateless",
            "--deploy",
            "cluster",
            "--rate",
            "100",
            "--warmup",
            "1",
            "--window",
            "5",
        ],
        &results,
    )?;
    ensure(out.status.code() == Some(1), "exit code 1 expected", &out)?;
    let all = records(&results, "stateless")?;
    ensure(all.len() == 1, "one record expected", &out)?;
    let r = &all[0];
    let failure = r.failure.clone().unwrap_or_default();
    let first = failure.lines().next().unwrap_or_default();
    let log = r.logs.join("product-coordinator-0.stderr.log");
    ensure(
        r.status == Status::Failed
            && first.starts_with("twostep coordinator-0 exited")
            && first.contains(&log.display().to_string())
            && failure.contains("coordinator: no quorum"),
        &format!("the failure names the member and its log: {failure}"),
        &out,
    )?;
    ensure(Path::new(&log).exists(), "the member's log is kept", &out)?;
    let left = processes_of_run(&r.run_id);
    ensure(
        left.is_empty(),
        &format!("the worker started first is stopped: {left:?}"),
        &out,
    )
}

fn a_deployment_the_run_cannot_have_is_refused_before_anything_starts() -> Result<(), String> {
    let results = tempfile::tempdir().map_err(|e| e.to_string())?;
    let cases: [(&[&str], &str); 3] = [
        (
            &["run", "rustpipe", "stateless", "--deploy", "swarm"],
            "rustpipe has no deployment `swarm`; it offers embedded, cluster",
        ),
        (
            &["run", "rustpipe", "stateless", "--deploy", "cluster"],
            "deployment `cluster` runs 2 processes that read the input, which needs a partition \
             for each; workload `stateless` has 1 (give --set workload.partitions=2)",
        ),
        (
            &["chaos", "rustpipe-eos", "stateless", "--kills", "1", "--member", "member"],
            "chaos: rustpipe deployed `embedded` has no member of role `member` (its roles: product)",
        ),
    ];
    for (args, expected) in cases {
        let out = output(suite().args(args).arg("--results").arg(results.path()))?;
        let stderr = String::from_utf8_lossy(&out.stderr);
        ensure(
            out.status.code() == Some(1) && stderr.contains(expected),
            &format!("{args:?} is refused with: {expected}"),
            &out,
        )?;
        ensure(
            std::fs::read_dir(results.path()).map_or(0, |d| d.count()) == 0,
            &format!("{args:?} writes nothing"),
            &out,
        )?;
    }
    Ok(())
}
