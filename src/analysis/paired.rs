//! Paired comparisons of two lines of one batch: the runs of one round met
//! the same machine weather, so each round gives one ratio B / A per figure;
//! the figure's verdict is the ratios' spread and whether B stood on the same
//! side of A in every round. Pure: records in, verdicts out.

use std::collections::{BTreeMap, BTreeSet};

use super::{spread, Spread};
use crate::config::{ClientProfile, CommitIntervals, EtlConfig};
use crate::host::HostInfo;
use crate::results::{flag, Better, Metric, RunRecord, Status};

/// A bench point: the runs of two lines compare only when both ran here.
#[derive(Debug, Clone)]
pub struct BenchPoint<'a> {
    pub workload: &'a str,
    pub rate: u64,
    pub window_s: u64,
    pub commit_policy: CommitIntervals,
    pub client: ClientProfile,
    pub parallelism: u32,
    pub input_partitions: i32,
    /// An ETL workload's arm and sink settings; none on any other.
    pub etl: Option<EtlConfig>,
    pub bench_version: u32,
    pub host: &'a HostInfo,
}

impl BenchPoint<'_> {
    /// Whether `record` was measured at this point.
    pub fn holds(&self, record: &RunRecord) -> bool {
        let c = &record.config;
        record.workload == self.workload
            && c.rate == self.rate
            && c.window_s == self.window_s
            && c.commit_policy() == self.commit_policy
            && c.client == self.client
            && c.parallelism == self.parallelism
            && c.input_partitions == self.input_partitions
            && c.etl == self.etl
            && record.bench_version == self.bench_version
            && record.host.same_host(self.host)
    }
}

/// Whether a run can be compared: it ended well and had no crash injected.
fn comparable(record: &RunRecord) -> bool {
    record.status == Status::Ok && record.chaos.is_none() && !record.has_flag(flag::CHAOS)
}

/// Two lines' comparable runs in one batch.
#[derive(Debug, Clone)]
pub struct SharedBatch<'r> {
    pub batch_id: String,
    pub a: Vec<&'r RunRecord>,
    pub b: Vec<&'r RunRecord>,
}

/// One side of a comparison: a line, and the point its runs were made at
/// (two sides may be one line at two client profiles).
#[derive(Debug, Clone)]
pub struct Side<'a> {
    pub line: &'a str,
    pub point: BenchPoint<'a>,
}

/// The newest batch with comparable runs of both sides (newest = the latest
/// run start), or None.
pub fn newest_shared_batch<'r>(
    records: &'r [RunRecord],
    a: &Side<'_>,
    b: &Side<'_>,
) -> Option<SharedBatch<'r>> {
    let of = |side: &Side<'_>| -> Vec<&'r RunRecord> {
        records
            .iter()
            .filter(|r| comparable(r) && r.line == side.line && side.point.holds(r))
            .collect()
    };
    let (all_a, all_b) = (of(a), of(b));
    let batches: BTreeSet<&str> = all_a.iter().map(|r| r.batch_id.as_str()).collect();
    batches
        .into_iter()
        .filter_map(|batch| {
            let within = |runs: &[&'r RunRecord]| -> Vec<&'r RunRecord> {
                runs.iter()
                    .filter(|r| r.batch_id == batch)
                    .copied()
                    .collect()
            };
            let (runs_a, runs_b) = (within(&all_a), within(&all_b));
            let newest = runs_a
                .iter()
                .chain(&runs_b)
                .map(|r| r.started_at.as_str())
                .max()?
                .to_string();
            (!runs_a.is_empty() && !runs_b.is_empty()).then(|| {
                (
                    newest,
                    SharedBatch {
                        batch_id: batch.to_string(),
                        a: runs_a,
                        b: runs_b,
                    },
                )
            })
        })
        .max_by(|x, y| x.0.cmp(&y.0))
        .map(|(_, shared)| shared)
}

/// The figures a paired comparison reports, in the order it shows them.
pub const PAIRED_METRICS: [&str; 4] = [
    "us_cpu_per_record",
    "added_p50_ms",
    "added_p99_ms",
    "consumed_per_s",
];

/// One run as a comparison sees it: its round and its figures.
#[derive(Debug, Clone, Copy)]
pub struct RunFigures<'a> {
    /// 1-based round within the batch.
    pub round: u32,
    pub metrics: &'a BTreeMap<String, Metric>,
    /// Figures that do not apply to the run, with the reason.
    pub not_applicable: &'a BTreeMap<String, String>,
}

impl<'a> RunFigures<'a> {
    /// The figures of `record`; None for a record without a round.
    pub fn from_record(record: &'a RunRecord) -> Option<RunFigures<'a>> {
        Some(RunFigures {
            round: record.round?,
            metrics: &record.metrics,
            not_applicable: &record.not_applicable,
        })
    }

    /// Why `metric` has no value in this run.
    fn missing_reason(&self, metric: &str) -> String {
        match self.not_applicable.get(metric) {
            Some(why) => why.clone(),
            None => "not recorded".to_string(),
        }
    }
}

/// The runs of A and B in one round.
#[derive(Debug, Clone, Copy)]
pub struct RoundPair<'a> {
    pub round: u32,
    pub a: RunFigures<'a>,
    pub b: RunFigures<'a>,
}

/// Runs of two lines matched by round.
#[derive(Debug, Clone)]
pub struct Pairing<'a> {
    /// Rounds where both lines have a run, in round order.
    pub pairs: Vec<RoundPair<'a>>,
    /// Rounds where only one of the two has a run (the other failed or is
    /// missing), in round order.
    pub unpaired: Vec<u32>,
}

/// Matches `a`'s runs with `b`'s by round. A round with more than one run
/// of a line keeps the first.
pub fn pair_by_round<'a>(a: &[RunFigures<'a>], b: &[RunFigures<'a>]) -> Pairing<'a> {
    let by_round = |runs: &[RunFigures<'a>]| {
        let mut map = BTreeMap::new();
        for run in runs {
            map.entry(run.round).or_insert(*run);
        }
        map
    };
    let (a, b) = (by_round(a), by_round(b));
    let rounds: BTreeSet<u32> = a.keys().chain(b.keys()).copied().collect();
    let mut pairing = Pairing {
        pairs: Vec::new(),
        unpaired: Vec::new(),
    };
    for round in rounds {
        match (a.get(&round), b.get(&round)) {
            (Some(&a), Some(&b)) => pairing.pairs.push(RoundPair { round, a, b }),
            _ => pairing.unpaired.push(round),
        }
    }
    pairing
}

/// Where B stood against A, in the figure's own direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Standing {
    Better,
    Worse,
}

impl Standing {
    pub fn as_str(self) -> &'static str {
        match self {
            Standing::Better => "better",
            Standing::Worse => "worse",
        }
    }
}

/// One round's ratio B / A.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RoundRatio {
    pub round: u32,
    pub ratio: f64,
}

/// A figure's verdict over the paired rounds.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// B stood on the same side of A in every round.
    Separable { standing: Standing, ratios: Spread },
    /// B was better in some rounds and worse (or equal) in others: no
    /// number is quoted.
    NotSeparable,
    /// A round lacks the figure, or nothing was paired.
    NotComparable { reason: String },
}

/// One figure's paired comparison.
#[derive(Debug, Clone, PartialEq)]
pub struct PairedFigure {
    pub metric: &'static str,
    /// Every paired round's ratio, in round order; empty when not comparable.
    pub rounds: Vec<RoundRatio>,
    pub verdict: Verdict,
}

/// Compares `metric` over `pairs`: per-round ratios B / A, their spread and
/// whether the sign held.
pub fn compare_figure(pairs: &[RoundPair<'_>], metric: &'static str) -> PairedFigure {
    let not_comparable = |reason: String| PairedFigure {
        metric,
        rounds: Vec::new(),
        verdict: Verdict::NotComparable { reason },
    };
    if pairs.is_empty() {
        return not_comparable("no round has a run of both lines".into());
    }
    let mut rounds = Vec::new();
    let mut better = None;
    for pair in pairs {
        let (a, b) = match (pair.a.metrics.get(metric), pair.b.metrics.get(metric)) {
            (Some(a), Some(b)) => (a, b),
            (None, _) => {
                return not_comparable(format!(
                    "round {}, A: {}",
                    pair.round,
                    pair.a.missing_reason(metric)
                ))
            }
            (_, None) => {
                return not_comparable(format!(
                    "round {}, B: {}",
                    pair.round,
                    pair.b.missing_reason(metric)
                ))
            }
        };
        if a.value <= 0.0 || !a.value.is_finite() || !b.value.is_finite() {
            return not_comparable(format!(
                "round {}: A's value {} admits no ratio",
                pair.round, a.value
            ));
        }
        better = Some(a.better);
        rounds.push(RoundRatio {
            round: pair.round,
            ratio: b.value / a.value,
        });
    }
    let ratios: Vec<f64> = rounds.iter().map(|r| r.ratio).collect();
    let verdict = match (spread(&ratios), better) {
        (Some(ratios), Some(better)) => match sign_held(&rounds, better) {
            Some(standing) => Verdict::Separable { standing, ratios },
            None => Verdict::NotSeparable,
        },
        _ => Verdict::NotComparable {
            reason: "no ratio".into(),
        },
    };
    PairedFigure {
        metric,
        rounds,
        verdict,
    }
}

/// B's standing if it was the same in every round; None when it flipped or
/// a round was a tie.
fn sign_held(rounds: &[RoundRatio], better: Better) -> Option<Standing> {
    let standing = |ratio: f64| {
        let higher = match ratio {
            r if r > 1.0 => true,
            r if r < 1.0 => false,
            _ => return None,
        };
        Some(match (higher, better) {
            (true, Better::Higher) | (false, Better::Lower) => Standing::Better,
            _ => Standing::Worse,
        })
    };
    let first = standing(rounds.first()?.ratio)?;
    rounds
        .iter()
        .all(|r| standing(r.ratio) == Some(first))
        .then_some(first)
}

/// Every figure of [`PAIRED_METRICS`] compared over `pairs`.
pub fn compare_figures(pairs: &[RoundPair<'_>]) -> Vec<PairedFigure> {
    PAIRED_METRICS
        .iter()
        .map(|metric| compare_figure(pairs, metric))
        .collect()
}

/// The median change (B / A - 1) of a figure on which B was worse than A
/// in every round, by more than `threshold` (a share: 0.05 = 5 %) at the
/// median; None when B did not regress on it.
pub fn regression(figure: &PairedFigure, threshold: f64) -> Option<f64> {
    match &figure.verdict {
        Verdict::Separable {
            standing: Standing::Worse,
            ratios,
        } if (ratios.median - 1.0).abs() > threshold => Some(ratios.median - 1.0),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Run {
        round: u32,
        metrics: BTreeMap<String, Metric>,
        not_applicable: BTreeMap<String, String>,
    }

    fn run(round: u32, figures: &[(&str, f64, Better)]) -> Run {
        Run {
            round,
            metrics: figures
                .iter()
                .map(|&(name, value, better)| (name.to_string(), Metric::new(value, "u", better)))
                .collect(),
            not_applicable: BTreeMap::new(),
        }
    }

    fn cpu(round: u32, us: f64) -> Run {
        run(round, &[("us_cpu_per_record", us, Better::Lower)])
    }

    fn figures(runs: &[Run]) -> Vec<RunFigures<'_>> {
        runs.iter()
            .map(|r| RunFigures {
                round: r.round,
                metrics: &r.metrics,
                not_applicable: &r.not_applicable,
            })
            .collect()
    }

    #[test]
    fn ratios_are_b_over_a_per_round_with_their_median() {
        let a = [cpu(1, 10.0), cpu(2, 20.0), cpu(3, 10.0)];
        let b = [cpu(1, 15.0), cpu(2, 24.0), cpu(3, 20.0)];
        let (a, b) = (figures(&a), figures(&b));
        let pairing = pair_by_round(&a, &b);
        let figure = compare_figure(&pairing.pairs, "us_cpu_per_record");
        let ratios: Vec<(u32, f64)> = figure.rounds.iter().map(|r| (r.round, r.ratio)).collect();
        assert_eq!(ratios, [(1, 1.5), (2, 1.2), (3, 2.0)]);
        match figure.verdict {
            Verdict::Separable { standing, ratios } => {
                assert_eq!(standing, Standing::Worse, "more CPU per record is worse");
                assert_eq!((ratios.median, ratios.min, ratios.max), (1.5, 1.2, 2.0));
                assert_eq!(ratios.count, 3);
            }
            other => panic!("expected a separable verdict, got {other:?}"),
        }
    }

    #[test]
    fn a_higher_is_better_figure_that_grows_is_better() {
        let consumed = |round, v| run(round, &[("consumed_per_s", v, Better::Higher)]);
        let a = [consumed(1, 1000.0), consumed(2, 1000.0)];
        let b = [consumed(1, 1100.0), consumed(2, 1300.0)];
        let (a, b) = (figures(&a), figures(&b));
        let figure = compare_figure(&pair_by_round(&a, &b).pairs, "consumed_per_s");
        match figure.verdict {
            Verdict::Separable { standing, ratios } => {
                assert_eq!(standing, Standing::Better);
                assert!((ratios.median - 1.2).abs() < 1e-12);
            }
            other => panic!("expected a separable verdict, got {other:?}"),
        }
    }

    #[test]
    fn a_sign_that_flips_is_not_separable() {
        let a = [cpu(1, 10.0), cpu(2, 10.0), cpu(3, 10.0)];
        let b = [cpu(1, 12.0), cpu(2, 9.0), cpu(3, 11.0)];
        let (a, b) = (figures(&a), figures(&b));
        let figure = compare_figure(&pair_by_round(&a, &b).pairs, "us_cpu_per_record");
        assert_eq!(figure.verdict, Verdict::NotSeparable);
        assert_eq!(figure.rounds.len(), 3, "the ratios are still kept");
    }

    #[test]
    fn a_tie_in_a_round_is_not_separable() {
        let a = [cpu(1, 10.0), cpu(2, 10.0)];
        let b = [cpu(1, 12.0), cpu(2, 10.0)];
        let (a, b) = (figures(&a), figures(&b));
        let figure = compare_figure(&pair_by_round(&a, &b).pairs, "us_cpu_per_record");
        assert_eq!(figure.verdict, Verdict::NotSeparable);
    }

    #[test]
    fn rounds_pair_by_number_and_a_missing_round_is_left_out() {
        let a = [cpu(1, 10.0), cpu(2, 10.0), cpu(3, 10.0)];
        // B's round 2 failed and was not compared.
        let b = [cpu(3, 30.0), cpu(1, 20.0)];
        let (a, b) = (figures(&a), figures(&b));
        let pairing = pair_by_round(&a, &b);
        let rounds: Vec<u32> = pairing.pairs.iter().map(|p| p.round).collect();
        assert_eq!(rounds, [1, 3]);
        assert_eq!(pairing.unpaired, [2]);
        let figure = compare_figure(&pairing.pairs, "us_cpu_per_record");
        let ratios: Vec<f64> = figure.rounds.iter().map(|r| r.ratio).collect();
        assert_eq!(ratios, [2.0, 3.0]);
    }

    #[test]
    fn a_figure_missing_in_a_round_is_not_comparable_with_the_reason() {
        let latency = |round, v| run(round, &[("added_p50_ms", v, Better::Lower)]);
        let a = [latency(1, 4.0), latency(2, 4.0)];
        let mut b = [latency(1, 5.0), run(2, &[])];
        b[1].not_applicable.insert(
            "added_p50_ms".into(),
            "latency not quoted: generator-behind".into(),
        );
        let (a, b) = (figures(&a), figures(&b));
        let figure = compare_figure(&pair_by_round(&a, &b).pairs, "added_p50_ms");
        assert_eq!(
            figure.verdict,
            Verdict::NotComparable {
                reason: "round 2, B: latency not quoted: generator-behind".into()
            }
        );
        assert!(figure.rounds.is_empty());
        let unexplained = compare_figure(&pair_by_round(&a, &b).pairs, "added_p99_ms");
        assert_eq!(
            unexplained.verdict,
            Verdict::NotComparable {
                reason: "round 1, A: not recorded".into()
            }
        );
    }

    #[test]
    fn nothing_paired_is_not_comparable() {
        let a = [cpu(1, 10.0)];
        let b = [cpu(2, 10.0)];
        let (a, b) = (figures(&a), figures(&b));
        let pairing = pair_by_round(&a, &b);
        assert!(pairing.pairs.is_empty());
        assert_eq!(pairing.unpaired, [1, 2]);
        let all = compare_figures(&pairing.pairs);
        assert_eq!(all.len(), PAIRED_METRICS.len());
        assert!(all
            .iter()
            .all(|f| matches!(f.verdict, Verdict::NotComparable { .. })));
    }

    #[test]
    fn a_zero_baseline_admits_no_ratio() {
        let a = [cpu(1, 0.0)];
        let b = [cpu(1, 10.0)];
        let (a, b) = (figures(&a), figures(&b));
        let figure = compare_figure(&pair_by_round(&a, &b).pairs, "us_cpu_per_record");
        assert!(matches!(figure.verdict, Verdict::NotComparable { .. }));
    }

    fn host() -> HostInfo {
        HostInfo {
            hostname: "h".into(),
            cpu_model: "c".into(),
            cores: 2,
            threads: Some(2),
            cpu_mhz: Some(2000),
            memory_mb: 1,
            kernel: "k".into(),
            machine_id_hash: None,
        }
    }

    fn record(batch: &str, line: &str, round: u32, started: &str, rate: u64) -> RunRecord {
        serde_json::from_value(serde_json::json!({
            "schema": 1, "run_id": format!("{batch}-{line}-{round}"), "batch_id": batch,
            "round": round, "started_at": started, "bench_version": 2, "host": host(),
            "broker": {"kind": "local", "version": null, "bootstrap": "b"},
            "product": "p", "line": line, "version": "1", "workload": "stateless",
            "delivery": "at-least-once",
            "config": {"rate": rate, "warmup_s": 2, "window_s": 5, "seed": 42,
                       "commit_interval_ms": 10, "parallelism": 1,
                       "sample_interval_ms": 1000, "input_partitions": 1},
            "status": "ok", "metrics": {}, "logs": "/tmp"
        }))
        .unwrap()
    }

    fn point(host: &HostInfo) -> BenchPoint<'_> {
        BenchPoint {
            workload: "stateless",
            rate: 1000,
            window_s: 5,
            commit_policy: CommitIntervals {
                exactly_once: 10,
                at_least_once: 10,
            },
            client: ClientProfile::before_profiles(),
            parallelism: 1,
            input_partitions: 1,
            etl: None,
            bench_version: 2,
            host,
        }
    }

    fn side<'a>(line: &'a str, h: &'a HostInfo) -> Side<'a> {
        Side {
            line,
            point: point(h),
        }
    }

    #[test]
    fn one_line_at_two_client_profiles_pairs_with_itself() {
        let mut records = vec![
            record("study", "q", 1, "2026-11-30T01:00:00Z", 1000),
            record("study", "q", 1, "2026-11-30T01:01:00Z", 1000),
        ];
        records[1].config.client.fetch_min_bytes = 1;
        let h = host();
        let a = side("q", &h);
        let mut b = side("q", &h);
        b.point.client.fetch_min_bytes = 1;
        let shared = newest_shared_batch(&records, &a, &b).unwrap();
        assert_eq!((shared.a.len(), shared.b.len()), (1, 1));
        assert_eq!(shared.a[0].config.client.fetch_min_bytes, 65536);
        assert_eq!(shared.b[0].config.client.fetch_min_bytes, 1);
    }

    #[test]
    fn the_newest_batch_with_both_lines_at_the_point_is_chosen() {
        let records = vec![
            record("old", "a", 1, "2026-11-30T01:00:00Z", 1000),
            record("old", "b", 1, "2026-11-30T01:01:00Z", 1000),
            // Newer, but at another rate.
            record("rate", "a", 1, "2026-11-30T02:00:00Z", 2000),
            record("rate", "b", 1, "2026-11-30T02:01:00Z", 2000),
            record("mid", "a", 1, "2026-11-30T03:00:00Z", 1000),
            record("mid", "b", 1, "2026-11-30T03:01:00Z", 1000),
            record("mid", "a", 2, "2026-11-30T03:02:00Z", 1000),
            // Newest, but B only.
            record("b-only", "b", 1, "2026-11-30T04:00:00Z", 1000),
        ];
        let h = host();
        let shared = newest_shared_batch(&records, &side("a", &h), &side("b", &h)).unwrap();
        assert_eq!(shared.batch_id, "mid");
        assert_eq!((shared.a.len(), shared.b.len()), (2, 1));
        let mut failed = records.clone();
        for r in failed
            .iter_mut()
            .filter(|r| r.batch_id == "mid" && r.line == "b")
        {
            r.status = Status::Failed;
        }
        let shared = newest_shared_batch(&failed, &side("a", &h), &side("b", &h)).unwrap();
        assert_eq!(shared.batch_id, "old", "a failed run does not count");
        let mut other = h.clone();
        other.kernel = "k2".into();
        assert!(newest_shared_batch(&records, &side("a", &other), &side("b", &other)).is_none());
        assert!(newest_shared_batch(&records, &side("a", &h), &side("c", &h)).is_none());
    }

    #[test]
    fn a_regression_is_worse_in_every_round_and_beyond_the_threshold() {
        let figure = |verdict| PairedFigure {
            metric: "us_cpu_per_record",
            rounds: Vec::new(),
            verdict,
        };
        let worse = |median| Verdict::Separable {
            standing: Standing::Worse,
            ratios: Spread {
                median,
                min: median,
                max: median,
                count: 3,
            },
        };
        let change = regression(&figure(worse(1.08)), 0.05).unwrap();
        assert!((change - 0.08).abs() < 1e-12);
        // a lower-is-better figure that fell: worse for a higher-is-better one
        assert!(regression(&figure(worse(0.90)), 0.05).is_some());
        assert_eq!(regression(&figure(worse(1.03)), 0.05), None);
        let better = Verdict::Separable {
            standing: Standing::Better,
            ratios: Spread {
                median: 0.5,
                min: 0.5,
                max: 0.5,
                count: 3,
            },
        };
        assert_eq!(regression(&figure(better), 0.05), None);
        assert_eq!(regression(&figure(Verdict::NotSeparable), 0.0), None);
    }
}
