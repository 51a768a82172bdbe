//! Faults on real runs: a campaign of kills, the local broker killed and
//! started again mid-window, and the refusal of a broker restart on an
//! external broker.

use libtest_mimic::Trial;
use streamsuite::results::{Chaos, RunRecord, Status, Verification, VerificationVerdict};

use crate::support::{
    accounting_holds, config_with_broker, ensure, output, records, repo, suite_with,
};
use crate::trial;

pub fn trials() -> Vec<Trial> {
    vec![
        trial(
            "eos_line_loses_and_duplicates_nothing_through_a_three_kill_campaign",
            eos_line_loses_and_duplicates_nothing_through_a_three_kill_campaign,
        ),
        trial(
            "a_static_member_recovers_each_kill_within_its_session",
            a_static_member_recovers_each_kill_within_its_session,
        ),
        trial(
            "a_line_that_fences_nothing_recovers_within_the_transaction_timeout",
            a_line_that_fences_nothing_recovers_within_the_transaction_timeout,
        ),
        trial(
            "windows_held_in_memory_survive_a_three_kill_campaign_exactly_once",
            windows_held_in_memory_survive_a_three_kill_campaign_exactly_once,
        ),
        trial(
            "broker_restart_on_an_external_broker_is_refused",
            broker_restart_on_an_external_broker_is_refused,
        ),
    ]
}

/// The two broker restarts, the layer's last trials: a restarted broker is
/// cold, and any other trial's run on it would spend 30 s warming it
/// (broker.warmup_s); the restart runs themselves skip that warm-up.
pub fn broker_restart_trials() -> Vec<Trial> {
    vec![
        trial(
            "eos_line_loses_and_duplicates_nothing_through_a_broker_restart",
            eos_line_loses_and_duplicates_nothing_through_a_broker_restart,
        ),
        trial(
            "alos_line_counts_its_duplicates_through_a_broker_restart",
            alos_line_counts_its_duplicates_through_a_broker_restart,
        ),
    ]
}

/// `suite ARGS...` (`chaos LINE WORKLOAD ...` or `run LINE WORKLOAD ...`):
/// the one record the fault run wrote, with its chaos block and
/// verification.
fn fault_run(
    args: &[&str],
) -> Result<(RunRecord, Chaos, Verification, std::process::Output), String> {
    let results = tempfile::tempdir().map_err(|e| e.to_string())?;
    let out = output(
        suite_with(&repo().join("bench.yaml"))
            .args(args)
            .arg("--results")
            .arg(results.path()),
    )?;
    ensure(out.status.success(), "the run must succeed", &out)?;
    let workload = args.get(2).ok_or("the fault run names its workload")?;
    let mut all = records(results.path(), workload)?;
    ensure(all.len() == 1, "exactly one record expected", &out)?;
    let r = all.remove(0);
    ensure(
        r.status == Status::Ok && r.flags.iter().any(|f| f == "chaos"),
        "an ok record flagged chaos",
        &out,
    )?;
    let chaos = r.chaos.clone().ok_or("chaos missing from the record")?;
    let v = r.verification.clone().ok_or("verification missing")?;
    ensure(
        accounting_holds(&v),
        &format!("every output record accounted for: {v:?}"),
        &out,
    )?;
    Ok((r, chaos, v, out))
}

/// Three kills 4 s apart at 2000 records/s, each followed by a restart with
/// the same transactional identity: nothing lost, nothing repeated, and a
/// recovery time for each kill.
fn eos_line_loses_and_duplicates_nothing_through_a_three_kill_campaign() -> Result<(), String> {
    let (r, chaos, v, out) = fault_run(&[
        "chaos",
        "rustpipe-eos",
        "stateless",
        "--kills",
        "3",
        "--every",
        "4",
        "--rate",
        "2000",
        "--warmup",
        "3",
    ])?;
    ensure(
        r.config.window_s == 3 * 4 + 10,
        "the window holds the kills and the last recovery",
        &out,
    )?;
    ensure(chaos.kills.len() == 3, "three kills recorded", &out)?;
    for (i, kill) in chaos.kills.iter().enumerate() {
        let planned = 4.0 * (i + 1) as f64;
        ensure(
            (kill.at_s - planned).abs() < 0.5 && kill.killed_processes >= 1,
            &format!("kill {} at {planned} s: {kill:?}", i + 1),
            &out,
        )?;
        ensure(
            kill.recovery_ms.is_some_and(|ms| ms > 0.0 && ms < 4000.0),
            &format!("kill {} recovered before the next: {kill:?}", i + 1),
            &out,
        )?;
    }
    ensure(
        chaos.kills_survived == 3
            && chaos.recovery_p50_ms.is_some()
            && chaos.recovery_max_ms >= chaos.recovery_p50_ms,
        "three recoveries, their median and maximum",
        &out,
    )?;
    exactly_once_held(&v, &out)?;
    ensure(
        String::from_utf8_lossy(&out.stderr).contains("3 of 3 kills recovered from"),
        "the summary tells the campaign",
        &out,
    )
}

/// quix-eos through three kills 10 s apart: a static member (bench.yaml's
/// session_timeout_ms, 10 s) takes its partition back as it restarts, so
/// each kill recovers before the next and well inside the session; as a
/// dynamic member with Quix's 45 s session it waited out its dead self's.
fn a_static_member_recovers_each_kill_within_its_session() -> Result<(), String> {
    let (r, chaos, v, out) = fault_run(&[
        "chaos",
        "quix-eos",
        "stateless",
        "--kills",
        "3",
        "--every",
        "10",
        "--rate",
        "2000",
        "--warmup",
        "5",
    ])?;
    let session_ms = r
        .config
        .client
        .session_timeout_ms
        .ok_or("the record carries no session timeout")?;
    three_kills_recovered_within(
        &chaos,
        session_ms as f64,
        &format!("the {session_ms} ms session"),
        &out,
    )?;
    exactly_once_held(&v, &out)
}

/// rustpipe-eos on windowed-lowcard through three kills 5 s apart at 2000
/// records/s: it keeps its open window in memory only, and commits the
/// open window's first record as its input offset, so each restarted
/// process reads that window again and writes every pane exactly once.
fn windows_held_in_memory_survive_a_three_kill_campaign_exactly_once() -> Result<(), String> {
    let (_, chaos, v, out) = fault_run(&[
        "chaos",
        "rustpipe-eos",
        "windowed-lowcard",
        "--kills",
        "3",
        "--every",
        "5",
        "--rate",
        "2000",
        "--warmup",
        "3",
    ])?;
    three_kills_recovered_within(&chaos, 5000.0, "the 5 s before the next kill", &out)?;
    exactly_once_held(&v, &out)
}

/// kafka-streams-eos through three kills 15 s apart: its restarted process
/// takes a new transactional id (a stateless topology draws a new process
/// id), so the killed one's open transaction holds the output until the
/// broker aborts it, at the profile's transaction timeout plus at most one
/// of the broker's checks for timed-out transactions. Each kill recovers
/// within that and 2 s more; with Kafka Streams' old pairing of a 10 s
/// timeout and the broker's default 10 s check it took about 18 s.
fn a_line_that_fences_nothing_recovers_within_the_transaction_timeout() -> Result<(), String> {
    let (r, chaos, v, out) = fault_run(&[
        "chaos",
        "kafka-streams-eos",
        "stateless",
        "--kills",
        "3",
        "--every",
        "15",
        "--rate",
        "2000",
        "--warmup",
        "6",
    ])?;
    let timeout_ms = r
        .config
        .client
        .transaction_timeout_ms
        .ok_or("the record carries no transaction timeout")?;
    let check_ms = r
        .broker
        .abandoned_transaction_check_ms
        .ok_or("the record carries no broker check for timed-out transactions")?;
    ensure(
        check_ms == 1000,
        &format!("the local broker checks every second, recorded {check_ms} ms"),
        &out,
    )?;
    let bound_ms = timeout_ms + check_ms + 2000;
    three_kills_recovered_within(
        &chaos,
        bound_ms as f64,
        &format!("the {timeout_ms} ms timeout, the {check_ms} ms check and 2 s ({bound_ms} ms)"),
        &out,
    )?;
    exactly_once_held(&v, &out)
}

/// The campaign's three kills were each followed by committed output within
/// `bound_ms` (`bound` says what bounds it).
fn three_kills_recovered_within(
    chaos: &Chaos,
    bound_ms: f64,
    bound: &str,
    out: &std::process::Output,
) -> Result<(), String> {
    ensure(chaos.kills.len() == 3, "three kills recorded", out)?;
    for (i, kill) in chaos.kills.iter().enumerate() {
        ensure(
            kill.recovery_ms.is_some_and(|ms| ms > 0.0 && ms < bound_ms),
            &format!("kill {} recovered within {bound}: {kill:?}", i + 1),
            out,
        )?;
    }
    Ok(())
}

/// Nothing lost and nothing repeated across the kills of an exactly-once line.
fn exactly_once_held(v: &Verification, out: &std::process::Output) -> Result<(), String> {
    ensure(
        v.verdict == VerificationVerdict::Passed
            && v.missing == 0
            && v.duplicated == 0
            && v.expected > 0,
        &format!("exactly-once across the kills: {v:?}"),
        out,
    )
}

/// A broker restart 5 s into a 40 s window at 2000 records/s: the local
/// broker is away 6 to 9 s (longer under load) while it recovers its logs,
/// and the clients reconnect after their own backoff. The broker the
/// previous restart left cold is not warmed first (`broker.warmup_s=0`,
/// 30 s saved): what these trials count does not depend on a warm broker,
/// and the run restarts it anyway. Transactions outlive the outage (60 s):
/// one that times out while the only node is down is aborted by the node
/// as it starts again, and Kafka drops that abort's markers if the node is
/// fenced meanwhile (its record names them, checked below), which no
/// client can make up for.
fn broker_restart_run(line: &str) -> Result<(Chaos, Verification, std::process::Output), String> {
    let (_, chaos, v, out) = fault_run(&[
        "run",
        line,
        "stateless",
        "--rate",
        "2000",
        "--warmup",
        "3",
        "--window",
        "40",
        "--chaos",
        "broker-restart-at=5s",
        "--set",
        "broker.warmup_s=0",
        "--set",
        "client.transaction_timeout_ms=60000",
    ])?;
    let restart = chaos
        .broker_restart
        .as_ref()
        .ok_or("no broker restart in the record")?;
    ensure(
        chaos.kills.is_empty() && (restart.at_s - 5.0).abs() < 0.5 && restart.outage_ms > 0.0,
        &format!("the restart and its outage are recorded: {restart:?}"),
        &out,
    )?;
    ensure(
        restart
            .recovery_ms
            .is_some_and(|ms| ms >= restart.outage_ms),
        &format!("output flowed again after the broker came back: {restart:?}"),
        &out,
    )?;
    ensure(
        v.committed_offset >= v.input_records.saturating_sub(1) && v.expected > 0,
        &format!("the product finished the input after the restart: {v:?}"),
        &out,
    )?;
    ensure(
        restart.dropped_markers.is_empty(),
        &format!("the restarted broker dropped no transaction markers: {restart:?}"),
        &out,
    )?;
    Ok((chaos, v, out))
}

fn eos_line_loses_and_duplicates_nothing_through_a_broker_restart() -> Result<(), String> {
    let (_, v, out) = broker_restart_run("rustpipe-eos")?;
    ensure(
        v.verdict == VerificationVerdict::Passed && v.missing == 0 && v.duplicated == 0,
        &format!("exactly-once across the broker restart: {v:?}"),
        &out,
    )
}

/// At-least-once may repeat what was sent but not acknowledged when the
/// broker died; every repeat is counted, nothing is lost.
fn alos_line_counts_its_duplicates_through_a_broker_restart() -> Result<(), String> {
    let (_, v, out) = broker_restart_run("rustpipe")?;
    ensure(
        v.missing == 0 && v.unexpected == 0 && v.corrupted == 0,
        &format!("nothing lost or wrong: {v:?}"),
        &out,
    )?;
    ensure(
        v.verdict == VerificationVerdict::Passed,
        &format!("duplicates are allowed at-least-once: {v:?}"),
        &out,
    )
}

/// The suite cannot kill or start a broker it does not run.
fn broker_restart_on_an_external_broker_is_refused() -> Result<(), String> {
    let (dir, bench) =
        config_with_broker("broker: {kind: external, bootstrap: \"127.0.0.1:19092\"}\n")?;
    let results = dir.path().join("results");
    let out = output(
        suite_with(&bench)
            .args([
                "run",
                "rustpipe",
                "stateless",
                "--window",
                "10",
                "--chaos",
                "broker-restart-at=5s",
            ])
            .arg("--results")
            .arg(&results),
    )?;
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    ensure(
        out.status.code() == Some(1) && err.lines().count() == 1,
        "one line, exit 1",
        &out,
    )?;
    ensure(
        err.contains("needs the suite's local broker")
            && err.contains("external (127.0.0.1:19092)"),
        "the line says why",
        &out,
    )?;
    ensure(!results.exists(), "nothing was run or written", &out)
}
