//! Runs on the local three-node cluster: started once for these trials on
//! ports of its own (beside the harness's single node) and stopped at the
//! end of the test run.

use std::path::PathBuf;
use std::sync::Mutex;

use libtest_mimic::Trial;
use streamsuite::results::{RunRecord, Status, VerificationVerdict};

use super::support::*;
use super::trial;

pub fn trials() -> Vec<Trial> {
    vec![
        trial(
            "a_run_on_a_three_node_cluster_verifies_and_names_its_shape",
            a_run_on_a_three_node_cluster_verifies_and_names_its_shape,
        ),
        trial(
            "eos_line_survives_the_cluster_leaders_kill_with_nothing_lost_or_repeated",
            eos_line_survives_the_cluster_leaders_kill_with_nothing_lost_or_repeated,
        ),
    ]
}

/// Three nodes of 512 MB, each broker and controller; replication 3 and
/// min ISR 2, as the bench point of a production-shaped cluster.
const CLUSTER: &str = "broker:\n  kind: local\n  version: 4.4.0\n  port: 29092\n  heap_mb: 512\n  \
     warmup_s: 10\n  nodes: 3\n  replication: 3\n  min_insync_replicas: 2\n";

/// The cluster's configuration, its folder kept until the cluster stops.
struct Cluster {
    _dir: tempfile::TempDir,
    bench: PathBuf,
}

static CLUSTER_STARTED: Mutex<Option<Cluster>> = Mutex::new(None);

/// The cluster's bench.yaml, the cluster started (and warmed) on first use.
fn cluster_bench() -> Result<PathBuf, String> {
    let mut started = CLUSTER_STARTED.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(cluster) = started.as_ref() {
        return Ok(cluster.bench.clone());
    }
    let (dir, bench) = config_with_broker(CLUSTER)?;
    let out = output(suite_with(&bench).args(["broker", "start"]))?;
    ensure(out.status.success(), "the cluster starts", &out)?;
    let status = output(suite_with(&bench).args(["broker", "status"]))?;
    ensure(
        String::from_utf8_lossy(&status.stdout).contains("running: 3 of 3 nodes"),
        "all three nodes run",
        &status,
    )?;
    *started = Some(Cluster {
        _dir: dir,
        bench: bench.clone(),
    });
    Ok(bench)
}

/// Stops the cluster if a trial started it.
pub fn stop() {
    let started = CLUSTER_STARTED.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(cluster) = started.as_ref() {
        let _ = suite_with(&cluster.bench).args(["broker", "stop"]).status();
    }
}

/// `suite run ARGS...` on the cluster: its one ok record.
fn cluster_run(args: &[&str]) -> Result<(RunRecord, std::process::Output), String> {
    let bench = cluster_bench()?;
    let results = tempfile::tempdir().map_err(|e| e.to_string())?;
    let out = run_suite(&bench, args, results.path())?;
    ensure(out.status.success(), "the run must succeed", &out)?;
    let mut all = records(results.path(), "stateless")?;
    ensure(all.len() == 1, "exactly one record expected", &out)?;
    let record = all.remove(0);
    ensure(record.status == Status::Ok, "an ok record", &out)?;
    Ok((record, out))
}

fn a_run_on_a_three_node_cluster_verifies_and_names_its_shape() -> Result<(), String> {
    let (r, out) = cluster_run(&[
        "rustpipe-eos",
        "stateless",
        "--rate",
        "2000",
        "--warmup",
        "3",
        "--window",
        "10",
    ])?;
    let b = &r.broker;
    ensure(
        b.nodes == 3 && b.replication == 3 && b.min_insync_replicas == 2,
        &format!("the record names 3 nodes, replication 3, min ISR 2: {b:?}"),
        &out,
    )?;
    ensure(
        b.bootstrap == "127.0.0.1:29092,127.0.0.1:29094,127.0.0.1:29096",
        &format!("every node is in the bootstrap: {}", b.bootstrap),
        &out,
    )?;
    let v = r.verification.as_ref().ok_or("verification missing")?;
    ensure(
        v.verdict == VerificationVerdict::Passed
            && v.missing == 0
            && v.duplicated == 0
            && v.committed_offset >= v.input_records.saturating_sub(1)
            && v.expected > 0,
        &format!("the whole input verified: {v:?}"),
        &out,
    )?;
    // The broker's figures are the three nodes': each holds its own heap.
    let broker = r
        .resources
        .as_ref()
        .and_then(|res| res.broker.as_ref())
        .ok_or("no broker resources")?;
    ensure(
        broker.mem_avg_mb > 3.0 * 200.0,
        &format!("three JVMs' memory sampled as the broker: {broker:?}"),
        &out,
    )
}

/// The input partition's leader gets SIGKILL 5 s into the window and is
/// started again: another node takes the partition over, and the
/// exactly-once line loses and repeats nothing. The window leaves room for
/// rustpipe's own recovery when the kill also took the group's coordinator
/// and left librdkafka's offsets request stuck: its 30 s timeout, a margin,
/// then a restart of the process from the committed offsets.
fn eos_line_survives_the_cluster_leaders_kill_with_nothing_lost_or_repeated() -> Result<(), String>
{
    let (r, out) = cluster_run(&[
        "rustpipe-eos",
        "stateless",
        "--rate",
        "2000",
        "--warmup",
        "3",
        "--window",
        "60",
        "--chaos",
        "broker-kill-at=5s,leader",
    ])?;
    let restart = r
        .chaos
        .as_ref()
        .and_then(|c| c.broker_restart.as_ref())
        .ok_or("no broker restart in the record")?;
    ensure(
        restart.was_leader
            && restart.node.is_some()
            && restart
                .failover_ms
                .is_some_and(|ms| ms > 0.0 && ms <= restart.outage_ms)
            && restart.recovery_ms.is_some(),
        &format!(
            "the leader's kill, its failover and output's recovery recorded: {restart:?}\n{}",
            product_log(&r.run_id)
        ),
        &out,
    )?;
    let v = r.verification.as_ref().ok_or("verification missing")?;
    ensure(
        v.verdict == VerificationVerdict::Passed
            && v.missing == 0
            && v.duplicated == 0
            && v.committed_offset >= v.input_records.saturating_sub(1),
        &format!(
            "exactly-once through the leader's kill: {v:?}\n{}",
            product_log(&r.run_id)
        ),
        &out,
    )?;
    ensure(
        accounting_holds(v),
        &format!("every output record accounted for: {v:?}"),
        &out,
    )
}
