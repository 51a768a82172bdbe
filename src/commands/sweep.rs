//! `suite sweep`: lines against a grid of offered rates or of parallelism,
//! interleaved round by round as a batch is, every run tagged with the
//! sweep's id. After a rate grid, bisection narrows each line's maximum
//! sustainable throughput: the midpoint of its bracket, run `--rounds`
//! times, step after step, in the same session.

use anyhow::Result;

use super::lines::{run_lines_then, LineEntry, LinesRequest, NextBatch};
use super::run::check_implements;
use crate::analysis::sweep::{bracket, next_rate, rate_points, Bracket, Outcome};
use crate::cli::{SweepArgs, DEFAULT_BISECT_STEPS};
use crate::config::{LineRef, Suite};
use crate::results::figure::{CONSUMED_PER_S, ROWS_PER_S_PER_CORE};
use crate::results::{self, RunRecord, SweepKind, SweepTag};

/// `suite sweep`: the grid, then (rate sweeps) the bisection, then each
/// line's outcome per point and its maximum sustainable throughput.
pub(super) fn sweep(suite: &Suite, args: SweepArgs) -> Result<i32> {
    let workload = &suite
        .workload(&args.workload)?
        .with_settings(&args.settings)?;
    let mut lines: Vec<LineRef<'_>> = Vec::new();
    for name in &args.lines {
        let line = suite.line(name, None)?;
        if lines.iter().any(|l| l.line.name == line.line.name) {
            anyhow::bail!("line `{name}` is given twice; name each line once");
        }
        check_implements(line, workload)?;
        lines.push(line);
    }
    let (kind, values) = sweep_points(&args)?;
    let bench = suite.bench.with_settings(&args.settings)?;
    let bound = bench.sweep.p99_bound_ms;
    let tag = SweepTag {
        id: results::new_run_id("sweep"),
        kind,
        p99_bound_ms: (kind == SweepKind::Rate).then_some(bound),
        bisect_step: None,
    };
    let entries = grid_entries(&lines, kind, &values);
    let steps = match kind {
        SweepKind::Rate => args.bisect_steps.unwrap_or(DEFAULT_BISECT_STEPS),
        SweepKind::Parallelism => 0,
    };
    let names: Vec<&str> = lines.iter().map(|l| l.line.name.as_str()).collect();
    let bisection = match steps {
        0 => String::new(),
        n => format!(" · then up to {n} bisection step(s)"),
    };
    eprintln!(
        "sweep {} · {} · {} over {} · {} round(s){bisection}",
        tag.id,
        workload.name,
        names.join(", "),
        values_text(kind, &values),
        args.rounds.max(1),
    );
    let mut step = 0;
    let next = |records: &[RunRecord]| {
        Ok(
            next_step(&lines, records, bound, (&mut step, steps)).map(|entries| NextBatch {
                entries,
                sweep: Some(SweepTag {
                    bisect_step: Some(step),
                    ..tag.clone()
                }),
            }),
        )
    };
    let outcome = run_lines_then(
        suite,
        LinesRequest {
            lines: entries,
            workload,
            options: args.options,
            rounds: args.rounds,
            chaos: None,
            drain: None,
            settings: args.settings,
            sweep: Some(tag.clone()),
        },
        next,
    )?;
    crate::outln!();
    match kind {
        SweepKind::Rate => crate::out!("{}", rate_summary(&tag, &lines, &outcome.records, bound)),
        SweepKind::Parallelism => {
            crate::out!("{}", parallelism_summary(&tag, &lines, &outcome.records))
        }
    }
    Ok(outcome.exit_code())
}

/// The grid's entries, value by value, the lines of one value side by
/// side: the runs of a point meet the same machine weather.
fn grid_entries<'s>(lines: &[LineRef<'s>], kind: SweepKind, values: &[u64]) -> Vec<LineEntry<'s>> {
    values
        .iter()
        .flat_map(|&value| {
            lines.iter().map(move |&line| match kind {
                SweepKind::Rate => LineEntry {
                    rate: Some(value),
                    ..LineEntry::of(line)
                },
                SweepKind::Parallelism => LineEntry {
                    parallelism: Some(value as u32),
                    ..LineEntry::of(line)
                },
            })
        })
        .collect()
}

/// The next bisection step's entries, while steps are left (`step` of
/// `steps`, counted here): each line whose bracket is closed, at its
/// midpoint. The grid's entry of line i at the first value is entry i, so
/// (i, rate) names the line. None when no step is left or no line needs one.
fn next_step(
    lines: &[LineRef<'_>],
    records: &[RunRecord],
    bound: f64,
    (step, steps): (&mut u32, u32),
) -> Option<Vec<(usize, u64)>> {
    if *step >= steps {
        return None;
    }
    let entries: Vec<(usize, u64)> = lines
        .iter()
        .enumerate()
        .filter_map(|(i, line)| {
            let runs = line_runs(records, &line.line.name);
            next_rate(&bracket(&rate_points(&runs, bound))).map(|rate| (i, rate))
        })
        .collect();
    if entries.is_empty() {
        return None;
    }
    *step += 1;
    let planned: Vec<String> = entries
        .iter()
        .map(|&(i, rate)| format!("{} at {rate}/s", lines[i].line.name))
        .collect();
    eprintln!("bisection step {step} of {steps}: {}", planned.join(", "));
    Some(entries)
}

/// What the sweep varies and its values, checked against the other flags.
fn sweep_points(args: &SweepArgs) -> Result<(SweepKind, Vec<u64>)> {
    let (kind, values) = match (&args.rates, &args.parallelism) {
        (Some(rates), None) => (SweepKind::Rate, parse_values("--rates", rates, "rates")?),
        (None, Some(values)) => (
            SweepKind::Parallelism,
            parse_values("--parallelism", values, "parallelism")?,
        ),
        // clap requires exactly one of the two
        _ => anyhow::bail!("give --rates A,B,C or --parallelism A,B,C"),
    };
    if kind == SweepKind::Rate && args.options.rate.is_some() {
        anyhow::bail!(
            "--rate does not apply to a rate sweep, whose rates are --rates; \
             --rate sets a parallelism sweep's rate"
        );
    }
    if kind == SweepKind::Parallelism && values.iter().any(|v| *v > u64::from(u32::MAX)) {
        anyhow::bail!("--parallelism takes values up to {}", u32::MAX);
    }
    Ok((kind, values))
}

/// `A,B,C` as distinct whole numbers above 0, in increasing order; a clear
/// error naming `flag` otherwise.
fn parse_values(flag: &str, text: &str, what: &str) -> Result<Vec<u64>> {
    let example = if what == "rates" {
        "2000,4000,8000"
    } else {
        "1,2,4"
    };
    let mut values = Vec::new();
    for part in text.split(',').map(str::trim) {
        let value: u64 = part.parse().map_err(|_| {
            anyhow::anyhow!(
                "{flag} `{text}`: `{part}` is not a whole number; give {what} separated by commas, such as {example}"
            )
        })?;
        if value == 0 {
            anyhow::bail!(
                "{flag} `{text}`: 0 is not a point of a sweep; give {what} above 0, such as {example}"
            );
        }
        if values.contains(&value) {
            anyhow::bail!("{flag} `{text}`: {value} is given twice; give each value once");
        }
        values.push(value);
    }
    values.sort_unstable();
    Ok(values)
}

fn values_text(kind: SweepKind, values: &[u64]) -> String {
    let list = values
        .iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join(", ");
    match kind {
        SweepKind::Rate => format!("rates {list} records/s"),
        SweepKind::Parallelism => format!("parallelism {list}"),
    }
}

/// The runs of `line` among `records`.
fn line_runs<'r>(records: &'r [RunRecord], line: &str) -> Vec<&'r RunRecord> {
    records.iter().filter(|r| r.line == line).collect()
}

/// A line's maximum sustainable throughput in words: the figure and its
/// bracket, or which end the sweep did not reach.
pub(super) fn mst_text(b: &Bracket) -> String {
    match (b.sustained, b.not_sustained) {
        (Some(low), Some(high)) => format!("{low} records/s, bracket [{low}, {high})"),
        (Some(low), None) => {
            format!("at least {low} records/s: no rate fell short, the bracket is open above")
        }
        (None, Some(high)) => {
            format!("below {high} records/s: no rate was sustained, the bracket is open below")
        }
        (None, None) => "not judged: no run was sustained or fell short".to_string(),
    }
}

/// Each line's outcome per rate, then its maximum sustainable throughput.
fn rate_summary(
    tag: &SweepTag,
    lines: &[LineRef<'_>],
    records: &[RunRecord],
    bound: f64,
) -> String {
    let mut out = format!(
        "sweep {} · rate · sustained = kept up with added p99 <= {bound} ms\n\n",
        tag.id
    );
    out.push_str(&format!(
        "{:<18} {:>10} {:>5}  outcome\n",
        "line", "rate/s", "runs"
    ));
    for line in lines {
        let runs = line_runs(records, &line.line.name);
        for point in rate_points(&runs, bound) {
            let outcome = match &point.outcome {
                Outcome::Sustained { p99_ms } => format!("sustained (added p99 {p99_ms:.1} ms)"),
                Outcome::NotSustained(short) => {
                    format!("not sustained: {}", short.describe(bound))
                }
                Outcome::Unjudged(why) => format!("not judged: {why}"),
            };
            out.push_str(&format!(
                "{:<18} {:>10} {:>5}  {outcome}\n",
                line.line.name, point.rate, point.runs
            ));
        }
    }
    out.push_str("\nmaximum sustainable throughput\n");
    for line in lines {
        let runs = line_runs(records, &line.line.name);
        let b = bracket(&rate_points(&runs, bound));
        out.push_str(&format!("{:<18} {}", line.line.name, mst_text(&b)));
        if !b.sustained_above.is_empty() {
            out.push_str(&format!(
                " (also kept up at {} above the first rate it did not: not monotone)",
                b.sustained_above
                    .iter()
                    .map(u64::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        out.push('\n');
    }
    out
}

/// Each line's consumed/s, regime and rows/s per core per parallelism.
fn parallelism_summary(tag: &SweepTag, lines: &[LineRef<'_>], records: &[RunRecord]) -> String {
    let mut out = format!("sweep {} · parallelism\n\n", tag.id);
    out.push_str(&format!(
        "{:<18} {:>11} {:>12} {:>14}  regimes\n",
        "line", "parallelism", "consumed/s", "rows/s/core"
    ));
    for line in lines {
        let runs = line_runs(records, &line.line.name);
        let mut values: Vec<u32> = runs.iter().map(|r| r.config.parallelism).collect();
        values.sort_unstable();
        values.dedup();
        for value in values {
            let at: Vec<&RunRecord> = runs
                .iter()
                .filter(|r| r.config.parallelism == value)
                .copied()
                .collect();
            let median = |name: &str| {
                let v: Vec<f64> = at
                    .iter()
                    .filter_map(|r| r.metrics.get(name).map(|m| m.value))
                    .collect();
                crate::stats::median(&v).map_or("—".to_string(), |m| format!("{m:.0}"))
            };
            let regimes: Vec<&str> = at
                .iter()
                .map(|r| r.regime.map_or("failed", |g| g.as_str()))
                .collect();
            out.push_str(&format!(
                "{:<18} {:>11} {:>12} {:>14}  {}\n",
                line.line.name,
                value,
                median(CONSUMED_PER_S.name),
                median(ROWS_PER_S_PER_CORE.name),
                regimes.join(", ")
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_whole_distinct_and_above_zero() {
        assert_eq!(
            parse_values("--rates", "4000, 2000,8000", "rates").unwrap(),
            [2000, 4000, 8000]
        );
        let err = |text| {
            parse_values("--rates", text, "rates")
                .unwrap_err()
                .to_string()
        };
        assert!(err("").contains("`` is not a whole number"), "{}", err(""));
        assert!(
            err("2000,0").contains("0 is not a point"),
            "{}",
            err("2000,0")
        );
        assert!(err("2000,2000").contains("given twice"));
        assert!(err("2k").contains("`2k` is not a whole number"));
        assert!(!err("").contains('\n'));
    }

    #[test]
    fn the_figure_names_its_bracket_or_the_open_end() {
        let b = |sustained, not_sustained| Bracket {
            sustained,
            not_sustained,
            sustained_above: Vec::new(),
        };
        assert_eq!(
            mst_text(&b(Some(4000), Some(6000))),
            "4000 records/s, bracket [4000, 6000)"
        );
        assert!(mst_text(&b(Some(4000), None)).contains("open above"));
        assert!(mst_text(&b(None, Some(2000))).starts_with("below 2000"));
    }
}
