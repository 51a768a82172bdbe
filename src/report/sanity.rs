//! The sanity and verification section: for each line its newest comparable
//! run and its newest run with a crash injected, what the records say of
//! selectivity, the workload's own figures and content check (named by the
//! workload: breach rate and derived fields for stateless, panes per window
//! and pane aggregates for windowed-lowcard) and the exact check of the
//! output, and a one-line
//! verdict naming every line that is off. Absent results read "not verified".
//! One table for the page, each line's runs at each bench point listed with
//! their point: a run's sanity and verification judge that run alone and
//! compare it with no other, so one table reads better than one per point.

use super::lines::{comparable, is_chaos, LineRuns, Verdict};
use super::points::PointRuns;
use super::table::{date_time, grouped, number, signed_percent, Cell, Column, Row, Table};
use crate::config::Delivery;
use crate::results::{flag, Chaos, RunRecord, SanityVerdict, VerificationVerdict};
use crate::workloads::SanitySpec;

/// What a workload with no sanity spec of its own (a table sink) shows.
static NO_SPEC: SanitySpec = SanitySpec {
    unit: "records",
    content: "content",
    min_content_sample: 0,
    figures: &[],
};

/// The runs the sanity table shows per line at a point: the newest
/// comparable run, and the newest run with a crash injected.
fn sanity_runs<'a>(line: &LineRuns<'a>) -> Vec<&'a RunRecord> {
    let newest_ok = line.all.iter().rev().find(|r| comparable(r)).copied();
    let newest_chaos = line.all.iter().rev().find(|r| is_chaos(r)).copied();
    newest_ok.into_iter().chain(newest_chaos).collect()
}

/// A figure a record may lack, as text ("—" when absent).
fn maybe_number(value: Option<f64>) -> String {
    value.map_or_else(|| "—".to_string(), number)
}

fn count_cell(value: u64, bad_when_above_zero: bool) -> Cell {
    let cell = Cell::text(grouped(value as i64));
    if bad_when_above_zero && value > 0 {
        cell.with_class("warn")
    } else {
        cell
    }
}

/// Every line at every point, each named with its point when the page has
/// more than one.
fn named_lines<'p, 'a>(points: &'p [PointRuns<'a>]) -> Vec<(String, &'p LineRuns<'a>)> {
    points
        .iter()
        .flat_map(|p| {
            p.lines.iter().map(move |l| {
                if points.len() > 1 {
                    (format!("{} at {}", l.name, p.name), l)
                } else {
                    (l.name.clone(), l)
                }
            })
        })
        .collect()
}

/// The table; its figure and content columns are the workload's (`spec`).
pub(super) fn sanity_table(points: &[PointRuns<'_>], spec: Option<&SanitySpec>) -> Table {
    let spec = spec.unwrap_or(&NO_SPEC);
    let mut table = Table::new("Sanity and verification", sanity_columns(spec));
    for point in points {
        for line in &point.lines {
            for run in sanity_runs(line) {
                let name = if is_chaos(run) {
                    format!("{} (crash)", line.name)
                } else {
                    line.name.clone()
                };
                let row = Row::new()
                    .set("line", Cell::text(name))
                    .set(
                        "point",
                        Cell::text(&point.name).with_title(point.point.settings.detail()),
                    )
                    .set(
                        "run",
                        Cell::text(date_time(&run.started_at)).with_title(run.run_id.clone()),
                    );
                let row = verification_cells(sanity_cells(row, run, spec), run);
                let recovery = match &run.chaos {
                    Some(c) => recovery_cell(c),
                    None if is_chaos(run) => Cell::missing(),
                    None => Cell::text(""),
                };
                table.push(row.set("recovery", recovery));
            }
        }
    }
    table
}

/// The columns: the run, its sanity with the workload's own figures and
/// content check, then the verification's counts.
fn sanity_columns(spec: &SanitySpec) -> Vec<Column> {
    let mut columns = vec![
        Column::plain("line"),
        Column::plain("point"),
        Column::utc("run"),
        Column::plain("selectivity"),
        Column::plain("expected"),
        Column::plain("✓"),
    ];
    columns.extend(spec.figures.iter().map(|(_, label)| Column::plain(label)));
    columns.extend(
        [
            spec.content,
            "sample",
            "missing",
            "duplicated",
            "unexpected",
            "corrupted",
            "verified",
            "recovery",
        ]
        .map(Column::plain),
    );
    columns
}

/// The sanity checks' cells of `run`'s row.
fn sanity_cells(mut row: Row, run: &RunRecord, spec: &SanitySpec) -> Row {
    let content = spec.content;
    let Some(s) = &run.sanity else {
        for (_, label) in spec.figures {
            row = row.set(label, Cell::missing());
        }
        return row
            .set("selectivity", Cell::text("not verified").with_class("na"))
            .set("expected", Cell::missing())
            .set("✓", Cell::missing())
            .set(content, Cell::missing())
            .set("sample", Cell::missing());
    };
    let ok = s.selectivity_ok && s.verdict == SanityVerdict::Ok;
    for (key, label) in spec.figures {
        row = row.set(
            label,
            Cell::text(maybe_number(s.figures.get(*key).copied())),
        );
    }
    row.set("selectivity", Cell::text(maybe_number(s.selectivity)))
        .set("expected", Cell::text(maybe_number(s.expected_selectivity)))
        .set(
            "✓",
            Cell::text(if ok { "✓" } else { "⚠" })
                .with_class(if ok { "ok" } else { "warn" })
                .with_title(format!(
                    "{} off the expected value, tolerance {}; {}",
                    s.selectivity_deviation
                        .map_or_else(|| "unknown".to_string(), signed_percent),
                    signed_percent(s.tolerance),
                    s.message
                )),
        )
        .set(
            content,
            if s.content_mismatched == 0 {
                Cell::text("✓").with_class("ok")
            } else {
                Cell::text(format!("⚠ {} differ", grouped(s.content_mismatched as i64)))
                    .with_class("warn")
            },
        )
        .set("sample", Cell::text(grouped(s.content_checked as i64)))
}

/// The verification's cells of `run`'s row: duplicates count against an
/// exactly-once line only.
fn verification_cells(row: Row, run: &RunRecord) -> Row {
    let Some(v) = &run.verification else {
        return row
            .set("missing", Cell::missing())
            .set("duplicated", Cell::missing())
            .set("unexpected", Cell::missing())
            .set("corrupted", Cell::missing())
            .set("verified", Cell::text("not verified").with_class("na"));
    };
    let eos = run.delivery == Delivery::ExactlyOnce;
    let (text, class) = match v.verdict {
        VerificationVerdict::Passed => ("passed", "ok"),
        VerificationVerdict::Failed => ("failed", "warn"),
        VerificationVerdict::Incomplete => ("not verified: incomplete", "na"),
    };
    row.set("missing", count_cell(v.missing, true))
        .set("duplicated", count_cell(v.duplicated, eos))
        .set("unexpected", count_cell(v.unexpected, true))
        .set("corrupted", count_cell(v.corrupted, true))
        .set(
            "verified",
            Cell::text(text).with_class(class).with_title(format!(
                "{}; expected {} from {} input records, read {}, {} beyond the commit",
                v.message,
                grouped(v.expected as i64),
                grouped(v.input_records as i64),
                grouped(v.output_records as i64),
                grouped(v.beyond_commit as i64)
            )),
        )
}

/// A chaos run's recovery: the one kill's, or a campaign's p50 of the
/// kills recovered from; the title lists every fault.
fn recovery_cell(chaos: &Chaos) -> Cell {
    let ms = |ms: f64| format!("{} ms", grouped(ms.round() as i64));
    let cell = match (chaos.kills.as_slice(), chaos.recovery_p50_ms) {
        ([], _) => match chaos.broker_restart.as_ref().and_then(|b| b.recovery_ms) {
            Some(recovery) => Cell::text(ms(recovery)),
            None => Cell::text("never resumed").with_class("warn"),
        },
        ([_], Some(p50)) => Cell::text(ms(p50)),
        (_, Some(p50)) if chaos.kills_survived == chaos.kills.len() => {
            Cell::text(format!("p50 {}", ms(p50)))
        }
        (kills, Some(p50)) => Cell::text(format!(
            "p50 {}, {} of {} never resumed",
            ms(p50),
            kills.len() - chaos.kills_survived,
            kills.len()
        ))
        .with_class("warn"),
        (_, None) if chaos.restart => Cell::text("never resumed").with_class("warn"),
        (_, None) => Cell::text("not restarted"),
    };
    let mut faults: Vec<String> = chaos
        .kills
        .iter()
        .map(|k| {
            format!(
                "killed {} process(es) at {:.1} s: {}",
                k.killed_processes,
                k.at_s,
                k.recovery_ms.map_or("no output after".into(), ms)
            )
        })
        .collect();
    if let Some(b) = &chaos.broker_restart {
        faults.push(format!(
            "broker killed at {:.1} s, back after {}: {}",
            b.at_s,
            ms(b.outage_ms),
            b.recovery_ms.map_or("no output after".into(), ms)
        ));
    }
    cell.with_title(faults.join("; "))
}

/// What is off in one run's sanity or verification, if anything.
fn problems(run: &RunRecord, spec: &SanitySpec) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(s) = &run.sanity {
        if !s.selectivity_ok || s.verdict == SanityVerdict::Warning {
            out.push(format!(
                "selectivity {} vs {} expected",
                maybe_number(s.selectivity),
                maybe_number(s.expected_selectivity)
            ));
        }
        if s.content_mismatched > 0 {
            out.push(format!(
                "{} of {} {} have wrong {}",
                s.content_mismatched, s.content_checked, spec.unit, spec.content
            ));
        }
    } else if run.has_flag(flag::SANITY_WARNING) {
        out.push("sanity warning".to_string());
    }
    if let Some(v) = &run.verification {
        let eos = run.delivery == Delivery::ExactlyOnce;
        let failed = v.verdict == VerificationVerdict::Failed;
        if failed || (eos && (v.missing > 0 || v.duplicated > 0)) {
            out.push(format!(
                "verification {}: {} missing, {} duplicated, {} unexpected, {} corrupted",
                v.verdict.as_str(),
                v.missing,
                v.duplicated,
                v.unexpected,
                v.corrupted
            ));
        }
    } else if run.has_flag(flag::VERIFICATION_FAILED) {
        out.push("verification failed".to_string());
    }
    if let Some(c) = &run.chaos {
        let lost = c.kills.len() - c.kills_survived;
        if c.restart && lost > 0 {
            out.push(format!(
                "output never resumed after {lost} of {} kills",
                c.kills.len()
            ));
        }
        if c.broker_restart
            .as_ref()
            .is_some_and(|b| b.recovery_ms.is_none())
        {
            out.push("output never resumed after the broker restart".to_string());
        }
    }
    out
}

pub(super) fn sanity_verdict(points: &[PointRuns<'_>], spec: Option<&SanitySpec>) -> Verdict {
    let spec = spec.unwrap_or(&NO_SPEC);
    let lines = named_lines(points);
    let mut off = Vec::new();
    let mut unverified = Vec::new();
    for (name, line) in &lines {
        let runs = sanity_runs(line);
        if runs.is_empty() {
            continue;
        }
        // A run whose verification was incomplete vouches for nothing.
        if runs.iter().all(|r| {
            r.verification
                .as_ref()
                .is_none_or(|v| v.verdict == VerificationVerdict::Incomplete)
                && (r.sanity.is_none() || r.verification.is_some())
        }) {
            unverified.push(name.clone());
        }
        for run in runs {
            let p = problems(run, spec);
            if !p.is_empty() {
                off.push(format!("{name} ({})", p.join("; ")));
            }
        }
    }
    let not_verified = if unverified.is_empty() {
        String::new()
    } else {
        format!(" Not verified: {}.", unverified.join(", "))
    };
    if !off.is_empty() {
        Verdict {
            text: format!("⚠ off: {}.{not_verified}", off.join(", ")),
            class: "warn".to_string(),
        }
    } else if unverified.len()
        == lines
            .iter()
            .filter(|(_, l)| !sanity_runs(l).is_empty())
            .count()
    {
        Verdict {
            text: if unverified.is_empty() {
                "No run recorded yet.".to_string()
            } else {
                format!(
                    "Not verified: no run of {} carries a sanity or verification result yet.",
                    unverified.join(", ")
                )
            },
            class: "na".to_string(),
        }
    } else {
        Verdict {
            text: format!("✓ every verified line computed what the workload asks.{not_verified}"),
            class: "ok".to_string(),
        }
    }
}
