//! A rate sweep of two lines: every run tagged with the sweep, its rates
//! interleaved, and the page's curve and maximum sustainable throughput.

use std::collections::BTreeSet;
use std::process::Output;

use libtest_mimic::Trial;
use streamsuite::analysis::sweep::{bracket, rate_points};
use streamsuite::results::{RunRecord, SweepKind, SweepTag};

use crate::support::{ensure, output, records, suite};
use crate::{measured, trial};

pub fn trials() -> Vec<Trial> {
    vec![
        measured(
            "a_rate_sweep_tags_its_runs_and_the_page_draws_its_curve",
            a_rate_sweep_tags_its_runs_and_the_page_draws_its_curve,
        ),
        trial(
            "sweep_refuses_bad_points_in_one_line",
            sweep_refuses_bad_points_in_one_line,
        ),
    ]
}

/// `suite sweep rustpipe rustpipe-eos --rates 2000,4000 --rounds 1
/// --bisect-steps 0`: four runs, rate by rate, both lines at each rate side
/// by side, all under one sweep id with the bench's bound; `suite report`
/// then draws a curve per line and tables each line's figure as the
/// records give it.
fn a_rate_sweep_tags_its_runs_and_the_page_draws_its_curve() -> Result<(), String> {
    let results = tempfile::tempdir().map_err(|e| e.to_string())?;
    let out = output(
        suite()
            .args([
                "sweep",
                "rustpipe-eos",
                "rustpipe",
                "--workload",
                "stateless",
            ])
            .args([
                "--rates",
                "4000,2000",
                "--rounds",
                "1",
                "--bisect-steps",
                "0",
            ])
            .args(["--warmup", "1", "--window", "5"])
            .arg("--results")
            .arg(results.path()),
    )?;
    ensure(out.status.success(), "the sweep must succeed", &out)?;
    let runs = records(results.path(), "stateless")?;
    let tag = the_sweep_ran_rate_by_rate_under_one_tag(&out, &runs)?;
    let report = output(suite().arg("report").arg("--results").arg(results.path()))?;
    ensure(report.status.success(), "the report must render", &report)?;
    let html = std::fs::read_to_string(results.path().join("html/stateless.html"))
        .map_err(|e| e.to_string())?
        .replace("&#x2f;", "/");
    let section = html
        .split(r#"<h2 id="sweep-1">"#)
        .nth(1)
        .and_then(|s| s.split("<h2 ").next())
        .unwrap_or_default();
    ensure(
        section.starts_with("Rate sweep · rustpipe, rustpipe-eos") && section.contains(&tag.id),
        "the page has the sweep's section",
        &out,
    )?;
    for line in ["rustpipe", "rustpipe-eos"] {
        the_section_draws_and_tables_the_line(&out, section, &runs, line)?;
    }
    ensure(
        section.contains("Maximum sustainable throughput"),
        "the page tables each line's figure",
        &out,
    )
}

/// The sweep ran rate by rate, the lines side by side at each, every run
/// under one tag of a rate sweep with bench.yaml's bound and no bisection,
/// in one round with no setting changed; it printed each line's outcome.
/// The sweep's tag.
fn the_sweep_ran_rate_by_rate_under_one_tag(
    out: &Output,
    runs: &[RunRecord],
) -> Result<SweepTag, String> {
    let order: Vec<(&str, u64)> = runs
        .iter()
        .map(|r| (r.line.as_str(), r.config.rate))
        .collect();
    ensure(
        order
            == [
                ("rustpipe-eos", 2000),
                ("rustpipe", 2000),
                ("rustpipe-eos", 4000),
                ("rustpipe", 4000),
            ],
        &format!("rate by rate, the lines side by side at each: {order:?}"),
        out,
    )?;
    let ids: BTreeSet<&str> = runs
        .iter()
        .filter_map(|r| r.sweep.as_ref().map(|t| t.id.as_str()))
        .collect();
    ensure(
        ids.len() == 1 && runs.iter().all(|r| r.sweep.is_some()),
        &format!("every run carries the one sweep id: {ids:?}"),
        out,
    )?;
    let tag = runs[0].sweep.clone().unwrap_or_else(|| unreachable!());
    ensure(
        tag.id.contains("-sweep-")
            && tag.kind == SweepKind::Rate
            && tag.p99_bound_ms == Some(500.0)
            && runs
                .iter()
                .all(|r| r.sweep.as_ref().is_some_and(|t| t.bisect_step.is_none())),
        &format!("a rate sweep with bench.yaml's bound, grid only: {tag:?}"),
        out,
    )?;
    ensure(
        runs.iter()
            .all(|r| r.round == Some(1) && r.config.settings.is_empty()),
        "one round, no setting changed",
        out,
    )?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    ensure(
        stdout.contains(&format!("sweep {} · rate", tag.id))
            && stdout.contains("maximum sustainable throughput"),
        "the sweep prints each line's outcome and figure",
        out,
    )?;
    Ok(tag)
}

/// The sweep's section draws `line`'s curve through its rates with a
/// latency, and tables its maximum sustainable throughput as its records
/// bracket it.
fn the_section_draws_and_tables_the_line(
    out: &Output,
    section: &str,
    runs: &[RunRecord],
    line: &str,
) -> Result<(), String> {
    let p50_chart = section
        .split("added p50 against offered rate")
        .nth(1)
        .and_then(|s| s.split("</svg>").next())
        .unwrap_or_default();
    // A curve is a polyline through its rates, with a dot at each; a rate
    // whose latency was not quoted (gendata fell behind on a busy host)
    // leaves one dot.
    let quoted = runs
        .iter()
        .filter(|r| r.line == line && r.metrics.contains_key("added_p50_ms"))
        .count();
    ensure(
        p50_chart.contains(&format!(">{line}</text>"))
            && p50_chart.matches(&format!("<title>{line}: ")).count() == quoted
            && (quoted < 2 || p50_chart.contains(&format!("<title>{line}</title></polyline>"))),
        &format!("the latency-rate chart draws a curve of {line} through its {quoted} rate(s) with a latency"),
        out,
    )?;
    let line_runs: Vec<&RunRecord> = runs.iter().filter(|r| r.line == line).collect();
    let b = bracket(&rate_points(&line_runs, 500.0));
    let figure = match (b.sustained, b.not_sustained) {
        (Some(low), Some(_)) => grouped(low),
        (Some(low), None) => format!("≥ {}", grouped(low)),
        (None, Some(high)) => format!("&lt; {}", grouped(high)),
        (None, None) => "n/a".to_string(),
    };
    let table = section
        .split("Maximum sustainable throughput")
        .nth(1)
        .unwrap_or_default();
    let cell = table
        .split(&format!("<td>{line}</td>"))
        .nth(1)
        .and_then(|s| s.split("</td>").next())
        .unwrap_or_default();
    ensure(
        cell.ends_with(&format!(">{figure}")),
        &format!("the table gives {line}'s maximum sustainable throughput, {figure}: {cell}"),
        out,
    )
}

/// 4000 as the page writes it: 4,000.
fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Empty, zero or repeated points, a line not known, and --rate with
/// --rates are each one error line, before anything runs.
fn sweep_refuses_bad_points_in_one_line() -> Result<(), String> {
    for (args, expected) in [
        (
            vec!["rustpipe", "--rates", ""],
            "--rates ``: `` is not a whole number",
        ),
        (
            vec!["rustpipe", "--rates", "2000,0"],
            "0 is not a point of a sweep",
        ),
        (vec!["rustpipe", "--parallelism", "2,2"], "2 is given twice"),
        (
            vec!["no-such-line", "--rates", "2000"],
            "unknown product line `no-such-line`",
        ),
        (
            vec!["rustpipe", "--rates", "2000", "--rate", "10"],
            "--rate does not apply to a rate sweep",
        ),
    ] {
        let out = output(suite().arg("sweep").args(&args).args([
            "--workload",
            "stateless",
            "--no-wait",
        ]))?;
        let stderr = String::from_utf8_lossy(&out.stderr);
        ensure(
            out.status.code() == Some(1)
                && stderr.starts_with("error: ")
                && stderr.contains(expected)
                && stderr.trim_end().lines().count() == 1,
            &format!("{args:?}: one error line with `{expected}`"),
            &out,
        )?;
    }
    Ok(())
}
