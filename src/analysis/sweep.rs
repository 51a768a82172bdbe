//! Maximum sustainable throughput: from a rate sweep's runs of one line,
//! whether each rate was sustained (the run kept up and its added p99 stayed
//! under the bound), the bracket the highest sustained rate lies in, and the
//! rate a bisection tries next to narrow it. Pure, so it is tested on
//! crafted outcomes.

use std::collections::BTreeMap;

use crate::results::figure::{ADDED_P99_MS, FLOOR_P99_MS, LATENCY_P99_MS};
use crate::results::{flag, Regime, RunRecord, Status};

/// Why a rate was not sustained.
#[derive(Debug, Clone, PartialEq)]
pub enum Shortfall {
    /// The backlog grew: the line's capacity is below the rate.
    Saturated,
    /// The line kept up, but its added p99 was above the bound.
    OverBound { p99_ms: f64 },
    /// The run failed, or its output failed verification.
    Failed(String),
}

impl Shortfall {
    /// In words, for a table cell or a summary.
    pub fn describe(&self, bound_ms: f64) -> String {
        match self {
            Shortfall::Saturated => "saturated".to_string(),
            Shortfall::OverBound { p99_ms } => {
                format!("added p99 {p99_ms:.1} ms over the {bound_ms} ms bound")
            }
            Shortfall::Failed(why) => format!("failed: {why}"),
        }
    }
}

/// What one run says of its rate.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Kept up with added p99 under the bound.
    Sustained {
        p99_ms: f64,
    },
    NotSustained(Shortfall),
    /// Neither: the run was draining, or its latency was not quoted (gendata
    /// or the probe fell behind, the flow was inconsistent), so it neither
    /// shows the rate sustained nor shows it not.
    Unjudged(String),
}

/// What run `record` says of its rate, against the added p99 bound
/// `p99_bound_ms`.
pub fn judge_run(record: &RunRecord, p99_bound_ms: f64) -> Outcome {
    if record.status == Status::Failed {
        let why = record.failure.as_deref().unwrap_or("no reason recorded");
        return Outcome::NotSustained(Shortfall::Failed(why.to_string()));
    }
    if record.has_flag(flag::VERIFICATION_FAILED) {
        return Outcome::NotSustained(Shortfall::Failed("its output failed verification".into()));
    }
    match record.regime {
        Some(Regime::Saturated) => return Outcome::NotSustained(Shortfall::Saturated),
        Some(Regime::Draining) => {
            return Outcome::Unjudged("draining: still eating its warm-up's backlog".into())
        }
        None => return Outcome::Unjudged("no regime was recorded".into()),
        Some(Regime::KeepUp) => {}
    }
    let metric = |name: &str| record.metrics.get(name).map(|m| m.value);
    let added_p99 = metric(ADDED_P99_MS.name).or_else(|| {
        // The product's p99 below the floor's adds nothing over the broker.
        match (metric(LATENCY_P99_MS.name), metric(FLOOR_P99_MS.name)) {
            (Some(product), Some(floor)) if product < floor => Some(0.0),
            _ => None,
        }
    });
    match added_p99 {
        Some(p99_ms) if p99_ms <= p99_bound_ms => Outcome::Sustained { p99_ms },
        Some(p99_ms) => Outcome::NotSustained(Shortfall::OverBound { p99_ms }),
        None => {
            let why = [ADDED_P99_MS.name, "latency"]
                .iter()
                .find_map(|name| record.not_applicable.get(*name))
                .map_or("its latency was not quoted", String::as_str);
            Outcome::Unjudged(format!("kept up, but no added p99: {why}"))
        }
    }
}

/// What the runs at one rate say together: not sustained when any run fell
/// short (a sustainable rate holds in every round), sustained when at
/// least one run sustained it and none fell short, unjudged otherwise.
pub fn judge_rate(outcomes: &[Outcome]) -> Outcome {
    if let Some(short) = outcomes
        .iter()
        .find(|o| matches!(o, Outcome::NotSustained(_)))
    {
        return short.clone();
    }
    let sustained: Vec<f64> = outcomes
        .iter()
        .filter_map(|o| match o {
            Outcome::Sustained { p99_ms } => Some(*p99_ms),
            _ => None,
        })
        .collect();
    match sustained.iter().copied().reduce(f64::max) {
        // The rate's worst round is the one that counts against the bound.
        Some(p99_ms) => Outcome::Sustained { p99_ms },
        None => outcomes
            .first()
            .cloned()
            .unwrap_or_else(|| Outcome::Unjudged("no run".into())),
    }
}

/// One rate of a line's sweep: what its runs say together.
#[derive(Debug, Clone, PartialEq)]
pub struct RatePoint {
    pub rate: u64,
    pub outcome: Outcome,
    pub runs: usize,
}

/// Where a line's maximum sustainable throughput lies: at least
/// `sustained` (the highest rate sustained below the first rate that was
/// not), below `not_sustained` (the lowest rate that was not). An end is
/// None when the sweep did not reach it: no rate fell short (open above)
/// or none (open below).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Bracket {
    pub sustained: Option<u64>,
    pub not_sustained: Option<u64>,
    /// Rates sustained above `not_sustained`: a line that failed at a rate
    /// and kept up at a higher one (noise, or a line whose behaviour is not
    /// monotone in the rate). They do not raise the figure.
    pub sustained_above: Vec<u64>,
}

impl Bracket {
    /// The maximum sustainable throughput: the bracket's lower end.
    pub fn mst(&self) -> Option<u64> {
        self.sustained
    }
}

/// The points of `records` (one line's runs of one sweep), one per rate in
/// increasing order.
pub fn rate_points(records: &[&RunRecord], p99_bound_ms: f64) -> Vec<RatePoint> {
    let mut by_rate: BTreeMap<u64, Vec<Outcome>> = BTreeMap::new();
    for record in records {
        by_rate
            .entry(record.config.rate)
            .or_default()
            .push(judge_run(record, p99_bound_ms));
    }
    by_rate
        .into_iter()
        .map(|(rate, outcomes)| RatePoint {
            rate,
            outcome: judge_rate(&outcomes),
            runs: outcomes.len(),
        })
        .collect()
}

/// The bracket of `points` (any order): the first rate not sustained, and
/// the highest sustained rate below it. Unjudged rates count for neither.
pub fn bracket(points: &[RatePoint]) -> Bracket {
    let mut sorted: Vec<&RatePoint> = points.iter().collect();
    sorted.sort_by_key(|p| p.rate);
    let not_sustained = sorted
        .iter()
        .find(|p| matches!(p.outcome, Outcome::NotSustained(_)))
        .map(|p| p.rate);
    let sustained_rates = sorted
        .iter()
        .filter(|p| matches!(p.outcome, Outcome::Sustained { .. }))
        .map(|p| p.rate);
    let below = |rate: &u64| not_sustained.is_none_or(|limit| *rate < limit);
    Bracket {
        sustained: sustained_rates.clone().filter(below).max(),
        not_sustained,
        sustained_above: sustained_rates.filter(|r| !below(r)).collect(),
    }
}

/// The rate a bisection step tries: the bracket's midpoint, rounded down.
/// None when the bracket is open (the sweep's grid must reach further
/// first) or already as narrow as whole records per second allow.
pub fn next_rate(bracket: &Bracket) -> Option<u64> {
    let (low, high) = (bracket.sustained?, bracket.not_sustained?);
    let mid = low + (high - low) / 2;
    (mid > low && mid < high).then_some(mid)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::{Better, Metric};

    const BOUND: f64 = 500.0;

    fn sustained(rate: u64) -> RatePoint {
        point(rate, Outcome::Sustained { p99_ms: 20.0 })
    }

    fn saturated(rate: u64) -> RatePoint {
        point(rate, Outcome::NotSustained(Shortfall::Saturated))
    }

    fn point(rate: u64, outcome: Outcome) -> RatePoint {
        RatePoint {
            rate,
            outcome,
            runs: 1,
        }
    }

    /// A bisection over a line whose true limit is `limit`: each step runs
    /// the midpoint and adds what it says.
    fn bisect(mut points: Vec<RatePoint>, limit: u64, steps: usize) -> (Bracket, Vec<u64>) {
        let mut tried = Vec::new();
        for _ in 0..steps {
            let Some(rate) = next_rate(&bracket(&points)) else {
                break;
            };
            tried.push(rate);
            points.push(if rate <= limit {
                sustained(rate)
            } else {
                saturated(rate)
            });
        }
        (bracket(&points), tried)
    }

    #[test]
    fn a_monotone_sweep_brackets_between_the_last_kept_up_and_the_first_saturated() {
        let points = vec![
            sustained(2000),
            sustained(4000),
            saturated(8000),
            saturated(16000),
        ];
        let b = bracket(&points);
        assert_eq!((b.sustained, b.not_sustained), (Some(4000), Some(8000)));
        assert_eq!(b.mst(), Some(4000));
        assert!(b.sustained_above.is_empty());
        assert_eq!(next_rate(&b), Some(6000));
    }

    #[test]
    fn bisection_narrows_the_bracket_around_the_limit() {
        let grid = vec![sustained(2000), sustained(4000), saturated(8000)];
        let (b, tried) = bisect(grid, 5300, 3);
        assert_eq!(tried, [6000, 5000, 5500]);
        assert_eq!((b.sustained, b.not_sustained), (Some(5000), Some(5500)));
        // Each step halves the bracket: 4000 wide, then 2000, 1000, 500.
        let (b, tried) = bisect(vec![sustained(4000), saturated(8000)], 7900, 5);
        assert_eq!(tried, [6000, 7000, 7500, 7750, 7875]);
        assert_eq!(b.mst(), Some(7875));
        assert_eq!(b.not_sustained, Some(8000));
    }

    #[test]
    fn bisection_stops_when_the_bracket_is_one_record_wide() {
        let (b, tried) = bisect(vec![sustained(10), saturated(12)], 10, 5);
        assert_eq!(tried, [11]);
        assert_eq!((b.sustained, b.not_sustained), (Some(10), Some(11)));
        assert_eq!(next_rate(&b), None);
    }

    #[test]
    fn every_rate_kept_up_leaves_the_bracket_open_above() {
        let b = bracket(&[sustained(1000), sustained(2000), sustained(4000)]);
        assert_eq!((b.sustained, b.not_sustained), (Some(4000), None));
        assert_eq!(b.mst(), Some(4000));
        assert_eq!(next_rate(&b), None);
    }

    #[test]
    fn no_rate_kept_up_leaves_the_bracket_open_below() {
        let b = bracket(&[saturated(1000), saturated(2000)]);
        assert_eq!((b.sustained, b.not_sustained), (None, Some(1000)));
        assert_eq!(b.mst(), None);
        assert_eq!(next_rate(&b), None);
        assert_eq!(bracket(&[]), Bracket::default());
    }

    #[test]
    fn a_rate_kept_up_above_a_failure_does_not_raise_the_figure() {
        // Not monotone: saturated at 4000, kept up at 6000 (noise, a GC
        // pause), saturated again at 8000.
        let b = bracket(&[
            sustained(2000),
            saturated(4000),
            sustained(6000),
            saturated(8000),
        ]);
        assert_eq!((b.sustained, b.not_sustained), (Some(2000), Some(4000)));
        assert_eq!(b.sustained_above, [6000]);
        assert_eq!(next_rate(&b), Some(3000));
        // Given in any order.
        let shuffled = bracket(&[
            saturated(8000),
            sustained(6000),
            sustained(2000),
            saturated(4000),
        ]);
        assert_eq!(shuffled, b);
    }

    #[test]
    fn a_p99_over_the_bound_counts_as_not_sustained() {
        let over = Outcome::NotSustained(Shortfall::OverBound { p99_ms: 900.0 });
        let b = bracket(&[sustained(1000), point(2000, over), saturated(4000)]);
        assert_eq!((b.sustained, b.not_sustained), (Some(1000), Some(2000)));
    }

    #[test]
    fn a_failed_rate_counts_as_not_sustained_and_an_unjudged_one_as_neither() {
        let failed = Outcome::NotSustained(Shortfall::Failed("the product exited".into()));
        let b = bracket(&[sustained(1000), point(2000, failed), sustained(4000)]);
        assert_eq!((b.sustained, b.not_sustained), (Some(1000), Some(2000)));
        assert_eq!(b.sustained_above, [4000]);
        let unjudged = Outcome::Unjudged("draining".into());
        let b = bracket(&[sustained(1000), point(2000, unjudged), saturated(4000)]);
        assert_eq!((b.sustained, b.not_sustained), (Some(1000), Some(4000)));
        assert_eq!(next_rate(&b), Some(2500));
    }

    #[test]
    fn a_rate_holds_only_when_no_round_fell_short() {
        let ok = |p99_ms| Outcome::Sustained { p99_ms };
        let short = Outcome::NotSustained(Shortfall::Saturated);
        let unjudged = Outcome::Unjudged("gendata fell behind".into());
        assert_eq!(
            judge_rate(&[ok(10.0), ok(30.0), ok(20.0)]),
            Outcome::Sustained { p99_ms: 30.0 }
        );
        assert_eq!(judge_rate(&[ok(10.0), short.clone(), ok(20.0)]), short);
        assert_eq!(
            judge_rate(&[unjudged.clone(), ok(12.0)]),
            Outcome::Sustained { p99_ms: 12.0 }
        );
        assert_eq!(judge_rate(std::slice::from_ref(&unjudged)), unjudged);
    }

    fn run(regime: Option<Regime>, added_p99: Option<f64>) -> RunRecord {
        let mut record: RunRecord = serde_json::from_value(serde_json::json!({
            "schema": 1, "run_id": "r", "batch_id": "b", "started_at": "2026-12-01T00:00:00Z",
            "bench_version": 3,
            "host": {"hostname": "h", "cpu_model": "c", "cores": 2, "memory_mb": 1, "kernel": "k"},
            "broker": {"kind": "local", "version": null, "bootstrap": "b"},
            "product": "rustpipe", "line": "rustpipe", "version": "1", "workload": "stateless",
            "delivery": "at-least-once",
            "config": {"rate": 1000, "warmup_s": 2, "window_s": 5, "seed": 42,
                       "commit_interval_ms": 10, "parallelism": 1,
                       "sample_interval_ms": 1000, "input_partitions": 1},
            "status": "ok", "metrics": {}, "logs": "/tmp"
        }))
        .unwrap();
        record.regime = regime;
        if let Some(v) = added_p99 {
            record.metrics.insert(
                ADDED_P99_MS.name.into(),
                Metric::new(v, "ms", Better::Lower),
            );
        }
        record
    }

    #[test]
    fn a_run_is_judged_by_its_regime_its_added_p99_and_its_status() {
        let keep_up = Some(Regime::KeepUp);
        assert_eq!(
            judge_run(&run(keep_up, Some(40.0)), BOUND),
            Outcome::Sustained { p99_ms: 40.0 }
        );
        assert_eq!(
            judge_run(&run(keep_up, Some(500.0)), BOUND),
            Outcome::Sustained { p99_ms: 500.0 }
        );
        assert_eq!(
            judge_run(&run(keep_up, Some(612.5)), BOUND),
            Outcome::NotSustained(Shortfall::OverBound { p99_ms: 612.5 })
        );
        assert_eq!(
            judge_run(&run(Some(Regime::Saturated), None), BOUND),
            Outcome::NotSustained(Shortfall::Saturated)
        );
        assert!(matches!(
            judge_run(&run(Some(Regime::Draining), None), BOUND),
            Outcome::Unjudged(_)
        ));
        let mut withheld = run(keep_up, None);
        withheld.not_applicable.insert(
            ADDED_P99_MS.name.into(),
            "gendata fell behind its schedule".into(),
        );
        assert_eq!(
            judge_run(&withheld, BOUND),
            Outcome::Unjudged("kept up, but no added p99: gendata fell behind its schedule".into())
        );
        let mut failed = run(None, None);
        failed.status = Status::Failed;
        failed.failure = Some("the product exited with status 1".into());
        assert_eq!(
            judge_run(&failed, BOUND),
            Outcome::NotSustained(Shortfall::Failed("the product exited with status 1".into()))
        );
        let mut lost = run(keep_up, Some(10.0));
        lost.flags.push(flag::VERIFICATION_FAILED.to_string());
        assert!(matches!(
            judge_run(&lost, BOUND),
            Outcome::NotSustained(Shortfall::Failed(_))
        ));
    }

    #[test]
    fn a_product_under_the_floor_adds_nothing_and_is_sustained() {
        let mut under = run(Some(Regime::KeepUp), None);
        for (name, value) in [(LATENCY_P99_MS.name, 4.0), (FLOOR_P99_MS.name, 5.0)] {
            under
                .metrics
                .insert(name.into(), Metric::new(value, "ms", Better::Lower));
        }
        assert_eq!(judge_run(&under, BOUND), Outcome::Sustained { p99_ms: 0.0 });
    }

    #[test]
    fn points_group_a_lines_runs_by_rate() {
        let mut records = Vec::new();
        for (rate, regime, p99) in [
            (4000, Regime::Saturated, None),
            (2000, Regime::KeepUp, Some(30.0)),
            (2000, Regime::KeepUp, Some(50.0)),
            (4000, Regime::KeepUp, Some(60.0)),
        ] {
            let mut r = run(Some(regime), p99);
            r.config.rate = rate;
            records.push(r);
        }
        let refs: Vec<&RunRecord> = records.iter().collect();
        let points = rate_points(&refs, BOUND);
        assert_eq!(
            points,
            [
                RatePoint {
                    rate: 2000,
                    outcome: Outcome::Sustained { p99_ms: 50.0 },
                    runs: 2
                },
                RatePoint {
                    rate: 4000,
                    outcome: Outcome::NotSustained(Shortfall::Saturated),
                    runs: 2
                },
            ]
        );
        assert_eq!(bracket(&points).mst(), Some(2000));
    }
}
