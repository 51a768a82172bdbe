//! Release checks of a peer: `suite regress` of a pip product between two
//! of its versions, installed side by side, as a CI job calls it.

use libtest_mimic::Trial;
use serde_json::Value;
use streamsuite::results::Status;

use crate::support::{ensure, output, records, suite};
use crate::trial;

pub fn trials() -> Vec<Trial> {
    vec![
        trial(
            "regress_of_a_peer_runs_both_versions_and_exits_as_its_json_says",
            regress_of_a_peer_runs_both_versions_and_exits_as_its_json_says,
        ),
        trial(
            "regress_to_an_uninstallable_version_is_one_clear_line",
            regress_to_an_uninstallable_version_is_one_clear_line,
        ),
        trial(
            "noise_runs_a_line_twice_a_round_and_its_json_follows_from_its_records",
            noise_runs_a_line_twice_a_round_and_its_json_follows_from_its_records,
        ),
    ]
}

/// `suite noise rustpipe stateless --json`: entries 1 and 2 of one line in
/// five rounds; the JSON's spread of CPU per record is the records' own
/// per-round ratios, and its smallest caught change is at least what lifts
/// the lowest ratio past the tie band and the median past the threshold.
fn noise_runs_a_line_twice_a_round_and_its_json_follows_from_its_records() -> Result<(), String> {
    let results = tempfile::tempdir().map_err(|e| e.to_string())?;
    let out = output(
        suite()
            .args(["noise", "rustpipe", "stateless", "--json"])
            .args(["--rate", "2000", "--warmup", "1", "--window", "5"])
            .arg("--results")
            .arg(results.path()),
    )?;
    let report: Value = serde_json::from_slice(&out.stdout)
        .map_err(|e| format!("standard output is not one JSON document: {e}"))?;
    ensure(
        report["rounds_paired"] == 5 && matches!(out.status.code(), Some(0) | Some(4)),
        &format!("five rounds paired, exit 0 or 4: {report}"),
        &out,
    )?;
    let runs = records(results.path(), "stateless")?;
    let cpu = |round: u32, entry: u32| -> Result<f64, String> {
        runs.iter()
            .find(|r| r.round == Some(round) && r.entry == Some(entry))
            .and_then(|r| r.metrics.get("us_cpu_per_record"))
            .map(|m| m.value)
            .ok_or_else(|| format!("round {round}, entry {entry}: no CPU per record"))
    };
    let mut ratios = Vec::new();
    for round in 1..=5 {
        ratios.push(cpu(round, 2)? / cpu(round, 1)?);
    }
    ratios.sort_by(f64::total_cmp);
    let figure = report["figures"]
        .as_array()
        .and_then(|f| f.iter().find(|f| f["figure"] == "us_cpu_per_record"))
        .ok_or("no CPU per record in the JSON")?;
    let pct = |v: &Value| v.as_f64().unwrap_or(f64::NAN);
    let (low, high) = ((ratios[0] - 1.0) * 100.0, (ratios[4] - 1.0) * 100.0);
    ensure(
        (pct(&figure["spread_low_pct"]) - low).abs() < 0.06
            && (pct(&figure["spread_high_pct"]) - high).abs() < 0.06,
        &format!("the spread is the records' ratios {ratios:?}: {figure}"),
        &out,
    )?;
    // Five rounds: every one must clear the 1 % tie band, and the median
    // the 5 % threshold.
    // The search starts at 0.1 %: an A/A that already reads as a
    // regression is caught there.
    let floor = ((1.01 / ratios[0] - 1.0).max(1.05 / ratios[2] - 1.0) * 100.0).max(0.1);
    let caught = pct(&figure["detectable_pct"]);
    ensure(
        caught >= floor - 0.06 && caught <= floor + 0.2,
        &format!("the smallest caught change {caught} % follows from the ratios (≥ {floor:.2} %)"),
        &out,
    )
}

/// The release before Quix Streams' default: installed beside it.
const QUIX_BASELINE: &str = "3.27.0";

/// `suite regress quix stateless --baseline 3.27.0 --json`: both versions
/// run interleaved, five rounds in rotated order; standard output is one
/// JSON document whose verdict follows from its own figures, and the exit
/// code is the one the document names (0 none, 4 a regression).
fn regress_of_a_peer_runs_both_versions_and_exits_as_its_json_says() -> Result<(), String> {
    let results = tempfile::tempdir().map_err(|e| e.to_string())?;
    let out = output(
        suite()
            .args(["regress", "quix", "stateless", "--baseline", QUIX_BASELINE])
            .args(["--json", "--threshold", "50"])
            .args(["--rate", "1000", "--warmup", "1", "--window", "5"])
            .arg("--results")
            .arg(results.path()),
    )?;
    let report: Value = serde_json::from_slice(&out.stdout)
        .map_err(|e| format!("standard output is not one JSON document: {e}"))?;
    let current = crate::products::default_version("quix")?;
    ensure(
        report["baseline"] == QUIX_BASELINE
            && report["current"] == current.as_str()
            && report["rounds_paired"] == 5,
        &format!("both versions, five rounds paired: {report}"),
        &out,
    )?;
    let figures = report["figures"]
        .as_array()
        .ok_or("no figures in the JSON")?;
    // A regression: separably worse, with p <= 0.05, by more than 50 %.
    let regressed = figures.iter().filter(|f| {
        let worse = f["standing"] == "worse";
        let p = f["sign_p"].as_f64().unwrap_or(1.0);
        let change = f["median_ratio"].as_f64().map_or(0.0, |m| (m - 1.0).abs());
        worse && p <= 0.05 && change > 0.5
    });
    let flagged = figures.iter().filter(|f| f["regression"] == true);
    let (regressed, flagged): (Vec<&Value>, Vec<&Value>) = (regressed.collect(), flagged.collect());
    let (verdict, code) = if regressed.is_empty() {
        ("no-regression", 0)
    } else {
        ("regression", 4)
    };
    ensure(
        regressed == flagged
            && report["verdict"] == verdict
            && report["exit_code"] == code
            && out.status.code() == Some(code),
        &format!("the verdict {verdict} and exit code {code} follow the figures: {report}"),
        &out,
    )?;
    let runs = records(results.path(), "stateless")?;
    let order: Vec<(Option<u32>, &str, Option<u32>)> = runs
        .iter()
        .map(|r| (r.round, r.version.as_str(), r.entry))
        .collect();
    let expected: Vec<(Option<u32>, &str, Option<u32>)> = (1..=5u32)
        .flat_map(|round| {
            let baseline = (Some(round), QUIX_BASELINE, Some(1));
            let now = (Some(round), current.as_str(), Some(2));
            if round % 2 == 1 {
                [baseline, now]
            } else {
                [now, baseline]
            }
        })
        .collect();
    ensure(
        order == expected && runs.iter().all(|r| r.status == Status::Ok),
        &format!("the versions take turns going first, every run ok: {order:?}"),
        &out,
    )
}

/// A baseline the registry does not have stops the check before any run,
/// in one line that names the version and what the registry said.
fn regress_to_an_uninstallable_version_is_one_clear_line() -> Result<(), String> {
    let results = tempfile::tempdir().map_err(|e| e.to_string())?;
    let out = output(
        suite()
            .args(["regress", "quix", "stateless", "--baseline", "99.0.0"])
            .arg("--results")
            .arg(results.path()),
    )?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error")).collect();
    ensure(
        out.status.code() == Some(1)
            && errors.len() == 1
            && errors[0].contains("installing quix 99.0.0 (pip) failed")
            && errors[0].contains("No matching distribution found for quixstreams==99.0.0"),
        "one error line, naming the version and the registry's answer",
        &out,
    )?;
    ensure(
        records(results.path(), "stateless")?.is_empty(),
        "nothing recorded",
        &out,
    )
}
