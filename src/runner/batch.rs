//! A batch: several lines on one workload, interleaved round by round under
//! one batch id, so the runs of one round meet the same machine weather. The
//! order rotates from round to round (A B C, B C A, C A B, ...), so no line
//! always runs first or last. Each record is handed on as its run ends; a
//! failed run is recorded and the batch goes on; an interruption stops it.

use std::time::{Duration, Instant};

use anyhow::Result;

use super::{run_once, RunContext};
use crate::config::{LineRef, Workload};
use crate::products::Installation;
use crate::results::{flag, RunConfig, RunRecord, Status};

/// One run of a batch's plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlannedRun {
    /// 1-based.
    pub round: u32,
    /// 1-based place within the round.
    pub position: u32,
    /// Index into the batch's lines.
    pub line: usize,
}

/// The batch's run order: every line once per round for `rounds` rounds (at
/// least one), round r in the lines' order rotated by r - 1 places. Over n
/// rounds of n lines every line runs at every position once (a cyclic Latin
/// square): with two lines, A B, B A, A B, ... A position effect (the
/// first run meeting a colder cache, say) then falls on every line alike.
pub fn plan_runs(lines: usize, rounds: u32) -> Vec<PlannedRun> {
    (1..=rounds.max(1))
        .flat_map(|round| {
            (0..lines).map(move |place| PlannedRun {
                round,
                position: place as u32 + 1,
                line: (place + (round as usize - 1)) % lines,
            })
        })
        .collect()
}

/// A line of a batch, installed and ready to run.
pub struct BatchLine<'a> {
    pub line: LineRef<'a>,
    /// The line as the batch names it, with any settings of its own.
    pub label: String,
    pub installation: Installation,
    /// The line's own configuration: its delivery mode's commit interval.
    pub config: RunConfig,
}

/// How a batch went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchOutcome {
    pub runs: usize,
    /// Runs that failed or whose verification failed.
    pub failed: usize,
}

/// The time a batch has left: each run's warm-up and window, plus the
/// per-run overhead (start-up, settle, verification) measured so far.
#[derive(Debug, Clone)]
pub struct TimeLeft {
    /// Warm-up + window of one run.
    loaded: Duration,
    /// Each finished run's time beyond warm-up + window.
    overheads: Vec<Duration>,
}

impl TimeLeft {
    pub fn new(config: &RunConfig) -> TimeLeft {
        TimeLeft {
            loaded: Duration::from_secs(config.warmup_s + config.window_s),
            overheads: Vec::new(),
        }
    }

    /// Notes a finished run that took `elapsed`.
    pub fn run_took(&mut self, elapsed: Duration) {
        self.overheads.push(elapsed.saturating_sub(self.loaded));
    }

    /// The estimate for `runs` runs still to go, and whether it includes a
    /// measured overhead (before the first run ends it is a lower bound).
    pub fn estimate(&self, runs: usize) -> (Duration, bool) {
        let measured = !self.overheads.is_empty();
        let overhead = if measured {
            self.overheads.iter().sum::<Duration>() / self.overheads.len() as u32
        } else {
            Duration::ZERO
        };
        ((self.loaded + overhead) * runs as u32, measured)
    }
}

/// The line printed before each run: round, line, position and time left.
pub fn progress_line(
    planned: PlannedRun,
    rounds: u32,
    line: &str,
    position: usize,
    runs: usize,
    left: (Duration, bool),
) -> String {
    let (left, measured) = left;
    let secs = left.as_secs();
    let time = if secs >= 60 {
        format!("{}m{:02}s", secs / 60, secs % 60)
    } else {
        format!("{secs}s")
    };
    let bound = if measured { "about" } else { "at least" };
    format!(
        "round {} of {rounds} · {line} · run {position} of {runs} · {bound} {time} left",
        planned.round
    )
}

/// Runs `lines` on `workload` round by round, `rounds` times, handing each
/// record to `recorded` as its run ends. Stops at an interruption (the
/// records handed on so far stay).
pub fn run_batch(
    ctx: &RunContext<'_>,
    lines: &[BatchLine<'_>],
    workload: &Workload,
    rounds: u32,
    mut recorded: impl FnMut(&RunRecord) -> Result<()>,
) -> Result<BatchOutcome> {
    let plan = plan_runs(lines.len(), rounds);
    let Some(first) = lines.first() else {
        return Ok(BatchOutcome { runs: 0, failed: 0 });
    };
    let mut time_left = TimeLeft::new(&first.config);
    let mut outcome = BatchOutcome { runs: 0, failed: 0 };
    for (i, planned) in plan.iter().enumerate() {
        let batch_line = &lines[planned.line];
        if plan.len() > 1 {
            eprintln!(
                "{}",
                progress_line(
                    *planned,
                    rounds.max(1),
                    &batch_line.label,
                    i + 1,
                    plan.len(),
                    time_left.estimate(plan.len() - i),
                )
            );
        }
        let started = Instant::now();
        let record = run_once(
            ctx,
            batch_line.line,
            &batch_line.installation,
            workload,
            &batch_line.config,
            *planned,
        )?;
        time_left.run_took(started.elapsed());
        outcome.runs += 1;
        if record.status == Status::Failed || record.has_flag(flag::VERIFICATION_FAILED) {
            outcome.failed += 1;
        }
        recorded(&record)?;
    }
    Ok(outcome)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(warmup_s: u64, window_s: u64) -> RunConfig {
        RunConfig {
            warmup_s,
            window_s,
            seed: 1,
            ..RunConfig::example()
        }
    }

    fn order(plan: &[PlannedRun]) -> Vec<(u32, u32, usize)> {
        plan.iter().map(|p| (p.round, p.position, p.line)).collect()
    }

    #[test]
    fn two_lines_alternate_which_goes_first() {
        assert_eq!(
            order(&plan_runs(2, 3)),
            [
                (1, 1, 0),
                (1, 2, 1),
                (2, 1, 1),
                (2, 2, 0),
                (3, 1, 0),
                (3, 2, 1)
            ]
        );
    }

    #[test]
    fn every_line_takes_every_position_over_as_many_rounds() {
        for lines in 1..=6 {
            let plan = plan_runs(lines, lines as u32);
            assert_eq!(plan.len(), lines * lines);
            // Round 1 keeps the given order.
            let first: Vec<usize> = plan.iter().take(lines).map(|p| p.line).collect();
            assert_eq!(first, (0..lines).collect::<Vec<_>>());
            for round in 1..=lines as u32 {
                let mut in_round: Vec<(u32, usize)> = plan
                    .iter()
                    .filter(|p| p.round == round)
                    .map(|p| (p.position, p.line))
                    .collect();
                // Runs in position order, each line once.
                let positions: Vec<u32> = in_round.iter().map(|r| r.0).collect();
                assert_eq!(positions, (1..=lines as u32).collect::<Vec<_>>());
                in_round.sort_by_key(|r| r.1);
                let ran: Vec<usize> = in_round.iter().map(|r| r.1).collect();
                assert_eq!(ran, (0..lines).collect::<Vec<_>>(), "round {round}");
            }
            for line in 0..lines {
                let mut places: Vec<u32> = plan
                    .iter()
                    .filter(|p| p.line == line)
                    .map(|p| p.position)
                    .collect();
                places.sort_unstable();
                assert_eq!(
                    places,
                    (1..=lines as u32).collect::<Vec<_>>(),
                    "{lines} lines: line {line}"
                );
            }
        }
    }

    #[test]
    fn three_lines_once_is_one_round_and_zero_repeats_is_one() {
        assert_eq!(order(&plan_runs(3, 1)), [(1, 1, 0), (1, 2, 1), (1, 3, 2)]);
        assert_eq!(
            plan_runs(1, 0),
            [PlannedRun {
                round: 1,
                position: 1,
                line: 0
            }]
        );
        assert_eq!(order(&plan_runs(1, 3)), [(1, 1, 0), (2, 1, 0), (3, 1, 0)]);
    }

    #[test]
    fn time_left_adds_the_measured_overhead() {
        let mut left = TimeLeft::new(&config(2, 5));
        assert_eq!(left.estimate(4), (Duration::from_secs(28), false));
        left.run_took(Duration::from_secs(17));
        left.run_took(Duration::from_secs(13));
        // 7 s loaded + 8 s mean overhead, three runs to go.
        assert_eq!(left.estimate(3), (Duration::from_secs(45), true));
    }

    #[test]
    fn the_progress_line_names_round_line_and_time_left() {
        let planned = PlannedRun {
            round: 2,
            position: 2,
            line: 1,
        };
        let line = progress_line(
            planned,
            3,
            "rustpipe-eos",
            4,
            6,
            (Duration::from_secs(125), true),
        );
        assert_eq!(
            line,
            "round 2 of 3 · rustpipe-eos · run 4 of 6 · about 2m05s left"
        );
        let first = progress_line(planned, 3, "x", 1, 6, (Duration::from_secs(42), false));
        assert!(first.ends_with("at least 42s left"), "{first}");
    }
}
