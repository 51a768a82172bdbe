//! `suite run`, `suite batch` and `suite chaos`: the lines each command
//! asks for, run by [`super::lines`].

use anyhow::Result;

use super::cache;
use super::lines::{run_lines, LineEntry, LinesRequest};
use crate::cli::{BatchArgs, ChaosArgs, RunArgs};
use crate::config::{ChaosPlan, Delivery, LineRef, Setting, Spacing, Suite, Workload};
use crate::products::{self, Availability};

/// `suite run`: `--repeat` runs of one line, one after another, one batch,
/// holding the host's run lock throughout.
pub(super) fn run(suite: &Suite, args: RunArgs) -> Result<i32> {
    let mode = args.mode.as_deref().and_then(Delivery::parse);
    let line = suite.line(&args.product, mode)?;
    let workload = &suite
        .workload(&args.workload)?
        .with_settings(&args.settings)?;
    check_implements(line, workload)?;
    run_lines(
        suite,
        LinesRequest {
            lines: vec![LineEntry {
                version: args.product_version.as_deref(),
                ..LineEntry::of(line)
            }],
            workload,
            options: args.options,
            rounds: args.repeat,
            chaos: args.chaos,
            drain: args.drain,
            settings: args.settings,
            sweep: None,
        },
    )?
    .finish(&workload.name, args.json)
}

/// Seconds between a campaign's kills when `suite chaos` is not told: the
/// spacing every exactly-once line's published campaign uses, longer than
/// the slowest recovery here (a JVM's start and restore, about 12 s).
const DEFAULT_KILL_EVERY_S: u64 = 20;

/// `suite chaos`: one run of one line with a campaign of kills and
/// restarts, verified over the whole run like any other.
pub(super) fn chaos(suite: &Suite, args: ChaosArgs) -> Result<i32> {
    let line = suite.line(&args.line, None)?;
    let workload = &suite
        .workload(&args.workload)?
        .with_settings(&args.settings)?;
    check_implements(line, workload)?;
    let spacing = match (args.seed, args.options.window) {
        (Some(seed), Some(window_s)) => Spacing::Seeded { seed, window_s },
        _ => Spacing::Every {
            seconds: args.every.unwrap_or(DEFAULT_KILL_EVERY_S),
        },
    };
    let (mut plan, window_s) =
        ChaosPlan::campaign(args.kills, spacing).map_err(|why| anyhow::anyhow!("chaos: {why}"))?;
    plan.member = args.member;
    let mut options = args.options;
    options.window = Some(window_s);
    run_lines(
        suite,
        LinesRequest {
            lines: vec![LineEntry::of(line)],
            workload,
            options,
            rounds: 1,
            chaos: Some(plan),
            drain: None,
            settings: args.settings,
            sweep: None,
        },
    )?
    .finish(&workload.name, args.json)
}

/// `suite batch`: several lines interleaved round by round, one batch.
pub(super) fn batch(suite: &Suite, args: BatchArgs) -> Result<i32> {
    let workload = &suite
        .workload(&args.workload)?
        .with_settings(&args.settings)?;
    let lines: Vec<(LineRef<'_>, Vec<Setting>)> = if args.all {
        runnable_lines(suite, workload)?
            .into_iter()
            .filter(|line| {
                let has_profile =
                    args.options.profile.is_uniform() || line.product.expert.is_some();
                if !has_profile {
                    eprintln!(
                        "note: skipping {}: {} has no expert profile",
                        line.line.name, line.product.name
                    );
                }
                has_profile
            })
            .map(|line| (line, Vec::new()))
            .collect()
    } else {
        let mut lines = Vec::new();
        for (i, spec) in args.lines.iter().enumerate() {
            if args.lines[..i].contains(spec) {
                anyhow::bail!("line `{spec}` is given twice; name each line once");
            }
            let line = suite.line(&spec.name, None)?;
            check_implements(line, workload)?;
            lines.push((line, spec.settings.clone()));
        }
        lines
    };
    run_lines(
        suite,
        LinesRequest {
            lines: lines
                .into_iter()
                .map(|(line, settings)| LineEntry {
                    settings,
                    ..LineEntry::of(line)
                })
                .collect(),
            workload,
            options: args.options,
            rounds: args.repeat,
            chaos: None,
            drain: None,
            settings: args.settings,
            sweep: None,
        },
    )?
    .finish(&workload.name, args.json)
}

/// `--all`: every line runnable here whose product implements `workload`;
/// the others are skipped with a note.
fn runnable_lines<'s>(suite: &'s Suite, workload: &Workload) -> Result<Vec<LineRef<'s>>> {
    let cache = cache(suite)?;
    let mut lines = Vec::new();
    for line in suite.lines() {
        let name = &line.line.name;
        if !line.product.workloads.contains(&workload.name) {
            eprintln!(
                "note: skipping {name}: {} does not implement `{}`",
                line.product.name, workload.name
            );
            continue;
        }
        match products::availability(line.product, None, &cache) {
            Availability::NotInstalled { hint } => {
                eprintln!("note: skipping {name}: not installed here: {hint}")
            }
            _ => lines.push(line),
        }
    }
    if lines.is_empty() {
        anyhow::bail!(
            "no line runnable here implements `{}`; see `suite list`",
            workload.name
        );
    }
    Ok(lines)
}

pub(super) fn check_implements(line: LineRef<'_>, workload: &Workload) -> Result<()> {
    if !line.product.workloads.contains(&workload.name) {
        anyhow::bail!(
            "{} does not implement workload `{}` (it implements: {})",
            line.product.name,
            workload.name,
            line.product.workloads.join(", ")
        );
    }
    Ok(())
}
