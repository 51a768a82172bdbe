//! Short real runs of both rustpipe lines: keep-up, coarse commits, an
//! external broker, the steady warm-up and an overloaded run.

use std::process::Output;

use libtest_mimic::Trial;
use streamsuite::config::Delivery;
use streamsuite::gendata::event::eu_share;
use streamsuite::probe::{ProbeSummary, PROBE_BEHIND_LIMIT_MS};
use streamsuite::results::figure::SETTLE_S;
use streamsuite::results::{flag, Regime, RunRecord, Status, VerificationVerdict};
use streamsuite::runner::QUIET_AFTER_COMMIT;

use crate::support::{
    config_with_broker, config_with_products, did_the_same_work, ensure, metric, output, records,
    repo, run_log_file, run_rustpipe_with, run_suite, stateless_run, suite, suite_with,
};
use crate::{measured, trial};

pub fn trials() -> Vec<Trial> {
    vec![
        measured(
            "alos_line_keeps_up_and_keeps_the_eu_share",
            alos_line_keeps_up_and_keeps_the_eu_share,
        ),
        measured(
            "eos_line_keeps_up_and_keeps_the_eu_share",
            eos_line_keeps_up_and_keeps_the_eu_share,
        ),
        measured(
            "coarse_commits_keep_up_and_are_flagged",
            coarse_commits_keep_up_and_are_flagged,
        ),
        trial(
            "external_broker_is_one_setting_away",
            external_broker_is_one_setting_away,
        ),
        trial(
            "broker_status_exits_3_when_the_local_broker_is_not_running",
            broker_status_exits_3_when_the_local_broker_is_not_running,
        ),
        measured(
            "default_warm_up_lasts_until_steady_on_a_warmed_broker",
            default_warm_up_lasts_until_steady_on_a_warmed_broker,
        ),
        measured(
            "overloaded_run_is_saturated_and_quotes_no_latency",
            overloaded_run_is_saturated_and_quotes_no_latency,
        ),
    ]
}

/// A 10 s window at 2000 records/s, checked against what the workload
/// implies; the at-least-once line commits at bench.yaml's 1 s interval, the
/// exactly-once line gets a client profile of its own.
fn short_run_keeps_up(line: &str, delivery: Delivery) -> Result<(), String> {
    let settings: &[&str] = match delivery {
        Delivery::AtLeastOnce => &[],
        Delivery::ExactlyOnce => &crate::support::PROFILE_SETTINGS,
    };
    let (out, record) = stateless_run(line, delivery, 2000, 3, 10, settings)?;
    let r = &record;
    let interval = match delivery {
        Delivery::AtLeastOnce => 1000,
        Delivery::ExactlyOnce => 10,
    };
    ensure(
        r.config.commit_interval_ms == interval,
        &format!("{line} commits every {interval} ms"),
        &out,
    )?;
    crate::support::applied_the_client_profile(r, &out)?;
    ensure(
        r.broker.kind == "local" && r.broker.version.is_some(),
        "broker recorded",
        &out,
    )?;
    ensure(
        r.host.cores > 0 && !r.host.kernel.is_empty(),
        "host recorded",
        &out,
    )?;
    the_flow_is_the_offered_rate_and_the_eu_share(r, &out)?;
    kept_up_above_the_setup_floor(r, &out)?;
    sampled_the_product_and_each_harness_process(r, &out)?;
    the_harness_checked_itself(r, &out)?;
    settled_at_the_commit(r, &out)?;
    did_the_same_work(r, &out)?;
    let series = r.series.as_ref().ok_or("series missing")?;
    ensure(
        series.t_s.len() >= 12 && series.t_s.len() == series.backlog.len(),
        "series kept",
        &out,
    )?;
    crate::stalls::kept_latency_over_time(r, &out)
}

/// The settle figure is the time the commit took to cover the input, as
/// the run's settle.json timeline has it; the second of quiet output the
/// phase waits for after the commit is not part of it.
fn settled_at_the_commit(r: &RunRecord, out: &Output) -> Result<(), String> {
    let file = run_log_file(&r.run_id, "settle.json")?;
    let timeline: serde_json::Value =
        streamsuite::handoff::read(&file).map_err(|e| format!("{e:#}"))?;
    let (committed, ended) = (
        timeline["committed_s"].as_f64(),
        timeline["ended_s"].as_f64().unwrap_or(f64::NAN),
    );
    let settle = metric(r, "settle_s")?;
    let quiet = QUIET_AFTER_COMMIT.as_secs_f64();
    ensure(
        committed.is_some_and(|c| (c - settle).abs() < 1e-9) && ended - settle >= quiet,
        &format!(
            "settle_s {settle} is the commit's time, and {quiet} s of quiet followed it: {timeline}"
        ),
        out,
    )
}

/// Offered about 2000/s, consumed within 5 % of it, records timed, output
/// within 5 % of the eu-* share, every figure with a unit and the histogram
/// stored.
fn the_flow_is_the_offered_rate_and_the_eu_share(
    r: &RunRecord,
    out: &Output,
) -> Result<(), String> {
    let offered = metric(r, "offered_per_s")?;
    let consumed = metric(r, "consumed_per_s")?;
    let output_rate = metric(r, "output_per_s")?;
    ensure(
        (offered - 2000.0).abs() / 2000.0 < 0.01,
        &format!("offered {offered} ~ 2000"),
        out,
    )?;
    ensure(
        (consumed - offered).abs() / offered < 0.05,
        &format!("consumed {consumed} within 5% of offered {offered}"),
        out,
    )?;
    ensure(metric(r, "latency_count")? > 0.0, "records timed", out)?;
    ensure(metric(r, "latency_p50_ms")? > 0.0, "p50 above zero", out)?;
    let share = output_rate / consumed;
    ensure(
        (share / eu_share() - 1.0).abs() < 0.05,
        &format!(
            "output/consumed {share:.4} within 5% of the eu-* share {}",
            eu_share()
        ),
        out,
    )?;
    for (name, m) in &r.metrics {
        ensure(!m.unit.is_empty(), &format!("{name} has a unit"), out)?;
    }
    ensure(
        r.latency_histogram.as_ref().is_some_and(|h| !h.is_empty()),
        "histogram stored",
        out,
    )
}

/// The regime: a low rate keeps up with a flat backlog. The setup floor is
/// reported, below what the product adds on top of it.
fn kept_up_above_the_setup_floor(r: &RunRecord, out: &Output) -> Result<(), String> {
    ensure(r.regime == Some(Regime::KeepUp), "keep-up expected", out)?;
    let drift = metric(r, "lag_drift")?;
    ensure(
        drift.abs() <= 0.02,
        &format!("lag drift {drift} near 0"),
        out,
    )?;
    let floor = metric(r, "floor_p50_ms")?;
    let p50 = metric(r, "latency_p50_ms")?;
    ensure(
        floor > 0.0 && floor < p50,
        &format!("floor p50 {floor} in (0, {p50})"),
        out,
    )?;
    ensure(
        (metric(r, "added_p50_ms")? - (p50 - floor)).abs() < 1e-9,
        "added = product - floor",
        out,
    )
}

/// The resources: the product's tree and each harness process, apart, about
/// a sample a second, and the efficiency figures that follow from them.
fn sampled_the_product_and_each_harness_process(r: &RunRecord, out: &Output) -> Result<(), String> {
    ensure(
        metric(r, "cpu_avg_pct")? > 0.0,
        "product CPU above zero",
        out,
    )?;
    ensure(
        metric(r, "mem_avg_mb")? > 0.0,
        "product PSS above zero",
        out,
    )?;
    ensure(
        metric(r, "samples")? >= 9.0,
        "about one sample per second of window",
        out,
    )?;
    let consumed = metric(r, "consumed_per_s")?;
    let cpu = metric(r, "cpu_avg_pct")?;
    let per_core = metric(r, "rows_per_s_per_core")?;
    ensure(
        (per_core - consumed / (cpu / 100.0)).abs() < 1e-6 * per_core,
        "rows/s per core = consumed / cores busy",
        out,
    )?;
    ensure(
        metric(r, "extra_records_per_record")? == 0.0,
        "rustpipe writes no other topic",
        out,
    )?;
    let resources = r.resources.as_ref().ok_or("resources missing")?;
    let gendata = resources.gendata.as_ref().ok_or("gendata not sampled")?;
    let probe = resources.probe.as_ref().ok_or("probe not sampled")?;
    let broker = resources.broker.as_ref().ok_or("broker not sampled")?;
    ensure(
        gendata.cpu_avg_pct > 0.0 && gendata.mem_avg_mb > 0.0,
        "gendata sampled",
        out,
    )?;
    ensure(
        probe.cpu_avg_pct > 0.0 && probe.mem_avg_mb > 0.0,
        "probe sampled",
        out,
    )?;
    ensure(
        broker.mem_avg_mb > 100.0,
        "the broker's JVM sampled on its own",
        out,
    )?;
    ensure(resources.host.is_some(), "host sampled", out)
}

fn alos_line_keeps_up_and_keeps_the_eu_share() -> Result<(), String> {
    short_run_keeps_up("rustpipe", Delivery::AtLeastOnce)
}

fn eos_line_keeps_up_and_keeps_the_eu_share() -> Result<(), String> {
    short_run_keeps_up("rustpipe-eos", Delivery::ExactlyOnce)
}

/// Commits every 5 s in a 15 s window make the backlog a sawtooth: the
/// product still keeps up, and the record says the commits were coarse.
fn coarse_commits_keep_up_and_are_flagged() -> Result<(), String> {
    let dir = config_with_products(&[("rustpipe", &crate::support::rustpipe_product())])?;
    let bench = dir.path().join("bench.yaml");
    let results = dir.path().join("results");
    let out = output(
        suite_with(&bench)
            .args(["run", "rustpipe", "stateless", "--rate", "1000"])
            .args(["--set", "run.commit_interval_ms.at-least-once=5000"])
            .args(["--warmup", "3", "--window", "15", "--results"])
            .arg(&results),
    )?;
    ensure(out.status.success(), "the run must succeed", &out)?;
    let r = records(&results, "stateless")?
        .pop()
        .ok_or("no record written")?;
    ensure(r.regime == Some(Regime::KeepUp), "keep-up expected", &out)?;
    ensure(
        r.has_flag(streamsuite::results::flag::COARSE_COMMITS),
        "flagged coarse-commits",
        &out,
    )?;
    let moves = metric(&r, "commit_moves")?;
    ensure(
        (2.0..=4.0).contains(&moves),
        &format!("the committed offset moved about every 5 s: {moves} of 15 intervals"),
        &out,
    )?;
    crate::support::covers_the_whole_input(&r, &out)
}

/// The harness's broker, used as an external one: nothing is started or
/// stopped, and the record says so.
fn external_broker_is_one_setting_away() -> Result<(), String> {
    let (dir, bench) = config_with_broker(
        "broker: {kind: external, bootstrap: \"127.0.0.1:19092\", version: \"kafka under test\"}\n",
    )?;
    let results = dir.path().join("results");
    let out = output(
        suite_with(&bench)
            .args([
                "run",
                "rustpipe",
                "stateless",
                "--rate",
                "500",
                "--warmup",
                "1",
                "--window",
                "5",
            ])
            .arg("--results")
            .arg(&results),
    )?;
    ensure(out.status.success(), "the run must succeed", &out)?;
    let records = records(&results, "stateless")?;
    ensure(
        records.len() == 1 && records[0].status == Status::Ok,
        "one ok record",
        &out,
    )?;
    let broker = &records[0].broker;
    ensure(
        broker.kind == "external" && broker.version.as_deref() == Some("kafka under test"),
        "the external broker is recorded as such",
        &out,
    )?;
    let status = output(suite().args(["broker", "status"]))?;
    ensure(
        status.status.success(),
        "the local broker is left as it was",
        &status,
    )
}

/// `suite broker status` tells "not running" (exit 3) from running (0) and
/// from an error (1): here a local broker on a port of its own, with a
/// cache folder where none was ever started.
fn broker_status_exits_3_when_the_local_broker_is_not_running() -> Result<(), String> {
    let (dir, bench) = config_with_broker(
        "broker:\n  kind: local\n  version: 4.4.0\n  port: 19093\n  heap_mb: 1024\n  \
         nodes: 1\n  replication: 1\n  min_insync_replicas: 1\n",
    )?;
    let text = std::fs::read_to_string(&bench).map_err(|e| e.to_string())?;
    let shared = "cache_dir: ~/.cache/streamsuite\n";
    if !text.contains(shared) {
        return Err(format!("bench.yaml no longer holds `{shared}`"));
    }
    let own = format!("cache_dir: {}\n", dir.path().join("cache").display());
    std::fs::write(&bench, text.replace(shared, &own)).map_err(|e| e.to_string())?;
    // STREAMSUITE_CACHE wins over cache_dir: a caller's own would point the
    // check at the harness's broker.
    let out = output(
        suite_with(&bench)
            .env_remove("STREAMSUITE_CACHE")
            .args(["broker", "status"]),
    )?;
    ensure(
        out.status.code() == Some(3)
            && String::from_utf8_lossy(&out.stdout).trim() == "not running",
        "broker status exits 3 and says not running",
        &out,
    )?;
    let running = output(suite().args(["broker", "status"]))?;
    ensure(
        running.status.code() == Some(0),
        "the harness's broker is running: exit 0",
        &running,
    )
}

/// gendata timed every window record at its acknowledgement, and the probe
/// compared its position with the output's end through the window.
fn the_harness_checked_itself(r: &RunRecord, out: &Output) -> Result<(), String> {
    let gendata = r.gendata.as_ref().ok_or("gendata summary missing")?;
    ensure(
        gendata.window_records > 0 && gendata.behind_count == gendata.window_records,
        &format!(
            "lateness timed for {} of {} window records",
            gendata.behind_count, gendata.window_records
        ),
        out,
    )?;
    ensure(
        gendata.behind_p99_ms > 0.0 && gendata.behind_p99_ms <= gendata.behind_max_ms,
        &format!(
            "lateness p99 {} in (0, max {}]",
            gendata.behind_p99_ms, gendata.behind_max_ms
        ),
        out,
    )?;
    let probe: ProbeSummary =
        streamsuite::handoff::read(&r.logs.join("probe.json")).map_err(|e| format!("{e:#}"))?;
    let lag = &probe.lag;
    ensure(
        lag.samples >= 50,
        &format!("{} lag samples, about ten a second expected", lag.samples),
        out,
    )?;
    // A busy host can catch one burst of output in flight at a sample (p99 of
    // about 100 samples is nearly their max); a broken comparison counts the
    // whole output, seconds' worth.
    ensure(
        lag.trailing_p99_ms < 10.0 * PROBE_BEHIND_LIMIT_MS,
        &format!(
            "the probe kept up: trailing p99 {} ms worth, {} records at most",
            lag.trailing_p99_ms, lag.trailing_records_max
        ),
        out,
    )?;
    ensure(
        lag.query_max_ms > 0.0,
        "the reads of the output's end were timed",
        out,
    )
}

/// Without `--warmup`, a run warms up until the product is steady: from
/// run.warmup_s (3 s here) until 10 s of samples show it keeping up at a
/// steady CPU per record, then announces the window to gendata and the
/// probe. The record keeps the warm-up used and how its broker was warmed.
fn default_warm_up_lasts_until_steady_on_a_warmed_broker() -> Result<(), String> {
    let results = tempfile::tempdir().map_err(|e| e.to_string())?;
    let args = [
        "rustpipe",
        "stateless",
        "--rate",
        "2000",
        "--window",
        "5",
        "--set",
        "run.warmup_s=3",
    ];
    let out = run_suite(&repo().join("bench.yaml"), &args, results.path())?;
    ensure(out.status.success(), "the run must succeed", &out)?;
    let records = records(results.path(), "stateless")?;
    ensure(records.len() == 1, "one record expected", &out)?;
    let r = &records[0];
    ensure(
        r.config.warmup_s == 3 && r.config.warmup_cap_s == Some(120),
        &format!("a steady-state warm-up of 3..120 s: {:?}", r.config),
        &out,
    )?;
    let used = metric(r, "warmup_used_s")?;
    ensure(
        (10.0..120.0).contains(&used),
        &format!("warm-up {used} s: 10 s of evidence at least, under the cap"),
        &out,
    )?;
    ensure(
        !r.has_flag(flag::NOT_STEADY),
        &format!("steady: {:?}", r.not_applicable.get("steady")),
        &out,
    )?;
    ensure(
        r.regime == Some(Regime::KeepUp) && r.metrics.contains_key("added_p50_ms"),
        "keep-up with its latency quoted",
        &out,
    )?;
    // gendata and the probe learnt the window from the file the suite wrote
    let announced: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(r.logs.join("window.json")).map_err(|e| e.to_string())?,
    )
    .map_err(|e| e.to_string())?;
    let (start, end) = (
        announced["start_us"].as_i64().unwrap_or(0),
        announced["end_us"].as_i64().unwrap_or(0),
    );
    ensure(
        end - start == 5_000_000,
        &format!("the announced window is 5 s: {announced}"),
        &out,
    )?;
    ensure(
        (metric(r, "offered_per_s")? - 2000.0).abs() < 20.0,
        "gendata counted the announced window's records",
        &out,
    )?;
    // The harness's broker was started and warmed by `suite broker start`,
    // or was found running long enough to be warm.
    ensure(
        r.broker.warmed_s.is_some_and(|s| s >= 5.0)
            || r.broker.uptime_s.is_some_and(|s| s >= 120.0),
        &format!("the record says how its broker was warmed: {:?}", r.broker),
        &out,
    )
}

/// rustpipe made slow on purpose (1 ms of CPU per record: ~1000 records/s at
/// most), fed 2500 records/s. Saturated, it reads chunks of 2048 records and
/// stores their offsets a chunk at a time, so its committed offset moves
/// about every 2 s: the window spans several such commits, and the capacity
/// must agree with the output it wrote. Its backlog takes about 30 s to
/// drain, so a 3 s settle bound ends the run with the input partly
/// committed: the settle time and the verification say so.
fn overloaded_run_is_saturated_and_quotes_no_latency() -> Result<(), String> {
    let args = [
        "rustpipe",
        "stateless",
        "--rate",
        "2500",
        "--warmup",
        "2",
        "--window",
        "16",
        "--set",
        "run.settle_s=3",
    ];
    let (out, records) = run_rustpipe_with("  work_us_per_record: 1000\n", &args)?;
    ensure(out.status.success(), "the run itself must succeed", &out)?;
    ensure(records.len() == 1, "one record expected", &out)?;
    let r = &records[0];
    ensure(
        r.regime == Some(Regime::Saturated),
        "saturated expected",
        &out,
    )?;
    ensure(metric(r, "lag_drift")? > 0.02, "the backlog grew", &out)?;
    ensure(
        !r.has_flag(flag::INCONSISTENT_FLOW),
        &format!("the flow figures agree: {:?}", r.not_applicable.get("flow")),
        &out,
    )?;
    let consumed = metric(r, "consumed_per_s")?;
    ensure(
        consumed > 300.0 && consumed < 0.5 * metric(r, "offered_per_s")?,
        &format!("consumed/s {consumed} is the capacity, well under the offered rate"),
        &out,
    )?;
    let output = metric(r, "output_per_s")?;
    let owed = r
        .sanity
        .as_ref()
        .and_then(|s| s.expected_selectivity)
        .ok_or("the expected selectivity is known on one partition")?
        * consumed;
    ensure(
        (output / owed - 1.0).abs() < 0.25,
        &format!("output/s {output} agrees with the capacity's owed output {owed}"),
        &out,
    )?;
    let quoted: Vec<&String> = r
        .metrics
        .keys()
        .filter(|k| k.starts_with("latency_") || k.starts_with("added_"))
        .collect();
    ensure(
        quoted.is_empty(),
        &format!("no latency quoted, found {quoted:?}"),
        &out,
    )?;
    ensure(
        r.not_applicable.contains_key("latency"),
        "latency marked as not applying",
        &out,
    )?;
    ensure(
        String::from_utf8_lossy(&out.stderr).contains("not quoted"),
        "the summary says so",
        &out,
    )?;
    left_its_backlog_unverified(r, &out)
}

/// The settle bound ran out before the backlog drained: no settle time, and
/// the verification incomplete (the input past the commit was never owed),
/// not failed.
fn left_its_backlog_unverified(r: &RunRecord, out: &Output) -> Result<(), String> {
    ensure(
        r.not_applicable
            .get(SETTLE_S.name)
            .is_some_and(|why| why.contains("had not finished its input")),
        &format!(
            "the settle bound ran out first: {:?}",
            r.not_applicable.get(SETTLE_S.name)
        ),
        out,
    )?;
    let verdict = r.verification.as_ref().map(|v| v.verdict);
    ensure(
        verdict == Some(VerificationVerdict::Incomplete),
        &format!("the verification is incomplete: {verdict:?}"),
        out,
    )
}
