//! The workloads beyond stateless: rustpipe's two lines on passthrough and
//! windowed-lowcard, each peer once on each workload it implements, and the
//! refusals (a workload a product does not implement, a windowed run
//! without a schedule).

use libtest_mimic::Trial;
use streamsuite::config::Delivery;
use streamsuite::results::Regime;

use crate::support::{did_the_same_work, ensure, output, suite, workload_run};
use crate::{measured, trial};

pub fn trials() -> Vec<Trial> {
    vec![
        measured("rustpipe_runs_passthrough_exactly", || {
            runs_clean("rustpipe", "passthrough", Delivery::AtLeastOnce, 1000)
        }),
        measured("rustpipe_eos_runs_passthrough_exactly", || {
            runs_clean("rustpipe-eos", "passthrough", Delivery::ExactlyOnce, 1000)
        }),
        measured("rustpipe_runs_windowed_lowcard_exactly", || {
            runs_clean("rustpipe", "windowed-lowcard", Delivery::AtLeastOnce, 1000)
        }),
        measured("rustpipe_eos_runs_windowed_lowcard_exactly", || {
            runs_clean(
                "rustpipe-eos",
                "windowed-lowcard",
                Delivery::ExactlyOnce,
                1000,
            )
        }),
        measured("flink_eos_runs_windowed_lowcard_exactly", || {
            runs_clean("flink-eos", "windowed-lowcard", Delivery::ExactlyOnce, 1000)
        }),
        measured("flink_runs_passthrough_exactly", || {
            runs_clean("flink", "passthrough", Delivery::AtLeastOnce, 1000)
        }),
        measured("kafka_streams_eos_runs_windowed_lowcard_exactly", || {
            // a core a thousand records/s here: half that leaves it room to
            // catch up its start-up backlog within the warm-up
            runs_clean(
                "kafka-streams-eos",
                "windowed-lowcard",
                Delivery::ExactlyOnce,
                500,
            )
        }),
        measured("kafka_streams_runs_passthrough_exactly", || {
            runs_clean("kafka-streams", "passthrough", Delivery::AtLeastOnce, 1000)
        }),
        measured("quix_eos_runs_windowed_lowcard_exactly", || {
            runs_clean("quix-eos", "windowed-lowcard", Delivery::ExactlyOnce, 1000)
        }),
        measured("quix_runs_passthrough_exactly", || {
            runs_clean("quix", "passthrough", Delivery::AtLeastOnce, 1000)
        }),
        measured("faststream_runs_passthrough_exactly", || {
            runs_clean("faststream", "passthrough", Delivery::AtLeastOnce, 1000)
        }),
        trial(
            "a_workload_the_product_does_not_implement_is_refused",
            a_workload_the_product_does_not_implement_is_refused,
        ),
        trial(
            "windowed_lowcard_refuses_an_unpaced_run",
            windowed_lowcard_refuses_an_unpaced_run,
        ),
    ]
}

/// `rate` records/s, a warm-up that lasts until the line is steady, and at
/// least 8 s for a JVM's JIT and Kafka Streams' repartition topic on two
/// shared cores (4 s for the others), and a 6 s window: one ok record,
/// keep-up, panes or records timed, sanity ✓ and verification passed with
/// nothing missing, duplicated, unexpected or corrupted, over all the input
/// the product owed output for.
fn runs_clean(line: &str, workload: &str, delivery: Delivery, rate: u64) -> Result<(), String> {
    let install = output(suite().args(["install", line]))?;
    ensure(
        install.status.success(),
        "the install must succeed",
        &install,
    )?;
    let jvm = line.starts_with("flink") || line.starts_with("kafka-streams");
    let warmup_s = if jvm { 8 } else { 4 };
    let (out, r) = workload_run(line, workload, delivery, rate, warmup_s, 6, &[])?;
    ensure(r.regime == Some(Regime::KeepUp), "keep-up expected", &out)?;
    let figure = |name: &str| crate::support::metric(&r, name);
    ensure(figure("latency_count")? > 0.0, "outputs timed", &out)?;
    ensure(
        figure("latency_p50_ms")? <= figure("latency_p99_ms")?,
        "p50 at most p99",
        &out,
    )?;
    did_the_same_work(&r, &out)?;
    let v = r.verification.as_ref().ok_or("verification missing")?;
    ensure(
        v.duplicated == 0,
        &format!("no duplicate without a crash, got {}", v.duplicated),
        &out,
    )?;
    if workload == "windowed-lowcard" {
        let sanity = r.sanity.as_ref().ok_or("sanity missing")?;
        let per_window = sanity
            .figures
            .get("panes_per_window")
            .ok_or("panes_per_window missing")?;
        ensure(
            (35.0..=42.0).contains(per_window) && v.out_of_order == 0,
            &format!(
                "35 to 42 panes a window and none late: {per_window}, {} late",
                v.out_of_order
            ),
            &out,
        )?;
    }
    Ok(())
}

/// FastStream has no windows: `suite run` refuses before anything starts,
/// naming what it implements.
fn a_workload_the_product_does_not_implement_is_refused() -> Result<(), String> {
    let results = tempfile::tempdir().map_err(|e| e.to_string())?;
    let out = output(
        suite()
            .args(["run", "faststream", "windowed-lowcard", "--results"])
            .arg(results.path()),
    )?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    ensure(
        !out.status.success()
            && stderr.contains("faststream does not implement workload `windowed-lowcard`")
            && stderr.trim().lines().count() == 1,
        "one line naming the product and the workload",
        &out,
    )?;
    ensure(
        !results.path().join("windowed-lowcard.jsonl").exists(),
        "no record written",
        &out,
    )
}

/// Panes are placed in windows by gendata's schedule: rate 0 has none.
fn windowed_lowcard_refuses_an_unpaced_run() -> Result<(), String> {
    let results = tempfile::tempdir().map_err(|e| e.to_string())?;
    let out = output(
        suite()
            .args([
                "run",
                "rustpipe",
                "windowed-lowcard",
                "--rate",
                "0",
                "--results",
            ])
            .arg(results.path()),
    )?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    ensure(
        !out.status.success()
            && stderr.contains("workload `windowed-lowcard` needs a paced run")
            && stderr.trim().lines().count() == 1,
        "one line saying why",
        &out,
    )
}
