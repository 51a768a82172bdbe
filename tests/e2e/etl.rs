//! The avro-etl workload end to end: gendata's Avro batch datums through
//! rustpipe into the local ClickHouse (started by the suite), every row read
//! back and checked; and a ClickHouse that is not there.

use libtest_mimic::Trial;
use streamsuite::results::{RunRecord, Status, VerificationVerdict};

use crate::support::{
    config_with_products, ensure, output, records, rustpipe_product, suite, suite_with,
};
use crate::trial;

pub fn trials() -> Vec<Trial> {
    vec![
        trial(
            "avro_etl_lands_every_row_verified_in_the_local_clickhouse",
            avro_etl_lands_every_row_verified_in_the_local_clickhouse,
        ),
        trial(
            "avro_etl_raw_arm_lands_every_message_as_its_exact_bytes",
            avro_etl_raw_arm_lands_every_message_as_its_exact_bytes,
        ),
        trial(
            "avro_etl_against_a_clickhouse_that_is_not_there_fails_with_one_line",
            avro_etl_against_a_clickhouse_that_is_not_there_fails_with_one_line,
        ),
    ]
}

/// Whether the suite's local ClickHouse answers.
fn clickhouse_running() -> bool {
    suite()
        .args(["clickhouse", "status"])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// One low-rate avro-etl run with `settings`; its record, checked to be ok,
/// verified whole, and to carry the sink's figures. `rows_per_message`: of
/// the 20 events of a message, the 7 in 8 kept (an Avro arm), or 1 (raw).
fn etl_run(settings: &[&str], rows_per_message: f64) -> Result<RunRecord, String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let results = dir.path().join("results");
    let out = output(
        suite()
            .args(["run", "rustpipe", "avro-etl", "--rate", "500"])
            .args(["--warmup", "3", "--window", "8"])
            .args(settings.iter().flat_map(|s| ["--set", s]))
            .arg("--results")
            .arg(&results),
    )?;
    ensure(out.status.success(), "the run must succeed", &out)?;
    let mut found = records(&results, "avro-etl")?;
    ensure(found.len() == 1, "one record expected", &out)?;
    let r = found.remove(0);
    ensure(r.status == Status::Ok, "the run must be ok", &out)?;
    let v = r.verification.clone().ok_or("no verification")?;
    ensure(
        v.verdict == VerificationVerdict::Passed && v.missing == 0 && v.duplicated == 0,
        &format!("every row once: {v:?}"),
        &out,
    )?;
    ensure(
        v.corrupted == 0 && v.unexpected == 0 && v.expected > 0,
        &format!("rows as gendata implies: {v:?}"),
        &out,
    )?;
    // 500 messages/s for 3 + 8 s, less a record or two where gendata's
    // last tick falls against the window's end (5,499 seen).
    ensure(
        v.input_records >= 500 * 11 * 98 / 100 && v.expected == v.output_records,
        &format!("the whole input's rows: {v:?}"),
        &out,
    )?;
    let metric = |name: &str| r.metrics.get(name).map(|m| m.value);
    let rows_per_s = metric("rows_per_s").ok_or("no rows_per_s")?;
    ensure(
        (rows_per_s / (500.0 * rows_per_message) - 1.0).abs() < 0.2,
        &format!("rows/s near 500 x {rows_per_message}, got {rows_per_s}"),
        &out,
    )?;
    let (p50, p99) = (
        metric("row_e2e_p50_ms").ok_or("no row e2e p50")?,
        metric("row_e2e_p99_ms").ok_or("no row e2e p99")?,
    );
    ensure(
        0.0 < p50 && p50 <= p99,
        &format!("row e2e {p50} / {p99}"),
        &out,
    )?;
    ensure(
        metric("sink_flush_p99_ms").is_some_and(|f| f > 0.0),
        "a sink flush p99",
        &out,
    )?;
    ensure(
        r.resources.as_ref().is_some_and(|res| res.sink.is_some()),
        "ClickHouse's own tree sampled",
        &out,
    )?;
    Ok(r)
}

fn avro_etl_lands_every_row_verified_in_the_local_clickhouse() -> Result<(), String> {
    let was_running = clickhouse_running();
    let borrowed = etl_run(&[], 20.0 * 7.0 / 8.0)?;
    let variant = borrowed.variant.clone().ok_or("no variant")?;
    if (
        variant.decoder.as_str(),
        variant.format.as_deref(),
        variant.events,
    ) != ("fast-borrowed", Some("rowbinary"), Some(20))
    {
        return Err(format!("bench.yaml's arm expected, got {variant:?}"));
    }
    // The other decoder library and the other insert format, end to end.
    let apache = etl_run(
        &["etl.decoder=apache-owned", "etl.format=native"],
        20.0 * 7.0 / 8.0,
    )?;
    let variant = apache.variant.ok_or("no variant")?;
    if (variant.decoder.as_str(), variant.format.as_deref()) != ("apache-owned", Some("native")) {
        return Err(format!("the --set arm expected, got {variant:?}"));
    }
    if !was_running && clickhouse_running() {
        return Err("the run left the ClickHouse it started running".into());
    }
    Ok(())
}

fn avro_etl_raw_arm_lands_every_message_as_its_exact_bytes() -> Result<(), String> {
    let raw = etl_run(&["etl.decoder=none", "etl.format=native"], 1.0)?;
    let variant = raw.variant.ok_or("no variant")?;
    if (
        variant.decoder.as_str(),
        variant.events,
        variant.payload.as_deref(),
    ) != ("none", None, Some("raw"))
    {
        return Err(format!("the raw arm's variant expected, got {variant:?}"));
    }
    let v = raw.verification.ok_or("no verification")?;
    if v.expected != v.input_records {
        return Err(format!("one row owed per message: {v:?}"));
    }
    Ok(())
}

fn avro_etl_against_a_clickhouse_that_is_not_there_fails_with_one_line() -> Result<(), String> {
    let dir = config_with_products(&[("rustpipe", &rustpipe_product())])?;
    let bench = dir.path().join("bench.yaml");
    let text = std::fs::read_to_string(&bench).map_err(|e| e.to_string())?;
    let local = "sink:\n  kind: local\n  http_port: 18123\n  tcp_port: 19000\n";
    if !text.contains(local) {
        return Err("bench.yaml's sink section changed; update this test".into());
    }
    let text = text.replace(
        local,
        "sink: {kind: external, url: \"http://127.0.0.1:9\"}\n",
    );
    std::fs::write(&bench, text).map_err(|e| e.to_string())?;
    let results = dir.path().join("results");
    let out = output(
        suite_with(&bench)
            .args(["run", "rustpipe", "avro-etl", "--results"])
            .arg(&results),
    )?;
    ensure(out.status.code() == Some(1), "exit code 1 expected", &out)?;
    let err = String::from_utf8_lossy(&out.stderr);
    let errors: Vec<&str> = err.lines().filter(|l| l.starts_with("error")).collect();
    ensure(
        errors.len() == 1
            && errors[0].contains("ClickHouse at http://127.0.0.1:9 is not reachable"),
        "one line naming the unreachable ClickHouse",
        &out,
    )?;
    ensure(
        records(&results, "avro-etl")?.is_empty(),
        "no record expected",
        &out,
    )
}
