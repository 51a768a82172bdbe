//! Paired comparisons of two lines of one batch: the runs of one round met
//! the same machine weather, so each round gives one ratio B / A per figure.
//! A figure's ratios are summarised by their median, a distribution-free
//! interval from order statistics and an exact sign test, with a tie band so
//! that equal is not "better"; the figure is separable only when the
//! interval is clear of 1 and the sign test's p is at most 0.05. Pure:
//! records in, verdicts out.

use std::collections::{BTreeMap, BTreeSet};

use super::interval::{median_interval, median_interval_any_n, QuotedInterval};
use crate::config::{ClientProfile, CommitIntervals, EtlConfig, Profile};
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
    /// The uniform profile or the products' experts'.
    pub profile: Profile,
    /// Keys of the product's own settings the runs had otherwise.
    pub product_settings: BTreeMap<String, serde_json::Value>,
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
            && c.profile == self.profile
            && c.product_settings == self.product_settings
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

    /// Where a ratio B / A puts B, for a figure `better` in that direction;
    /// None for a ratio of exactly 1.
    fn of_ratio(ratio: f64, better: Better) -> Option<Standing> {
        let higher = if ratio > 1.0 {
            true
        } else if ratio < 1.0 {
            false
        } else {
            return None;
        };
        Some(match (higher, better) {
            (true, Better::Higher) | (false, Better::Lower) => Standing::Better,
            _ => Standing::Worse,
        })
    }
}

/// One round's ratio B / A.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RoundRatio {
    pub round: u32,
    pub ratio: f64,
}

/// The largest sign-test p at which a ratio is separable (one-sided).
pub const SIGNIFICANCE: f64 = 0.05;

/// Whether 1 (no difference) lies inside `interval`.
pub fn straddles_one(interval: &QuotedInterval) -> bool {
    interval.low <= 1.0 && interval.high >= 1.0
}

/// The exact sign test over the paired rounds: on which side of A each
/// round put B, rounds within the tie band left out.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SignTest {
    pub better: usize,
    pub worse: usize,
    /// Rounds whose ratio lies within 1 ± the tie band: neither side.
    pub ties: usize,
    /// One-sided p of B standing on its majority side at least this often
    /// by chance: P(X >= k), X ~ Binomial(better + worse, 1/2), k the
    /// majority's count; 1 when every round is a tie.
    pub p: f64,
}

impl SignTest {
    /// The test over `ratios` (B / A) of a figure `better` in one
    /// direction; a ratio within 1 ± `tie_band` is a tie.
    pub fn of_ratios(ratios: &[f64], better: Better, tie_band: f64) -> SignTest {
        let (mut b, mut w, mut ties) = (0, 0, 0);
        for &ratio in ratios {
            match Standing::of_ratio(ratio, better) {
                _ if (ratio - 1.0).abs() <= tie_band => ties += 1,
                Some(Standing::Better) => b += 1,
                Some(Standing::Worse) => w += 1,
                None => ties += 1,
            }
        }
        SignTest {
            better: b,
            worse: w,
            ties,
            p: sign_test_p(b.max(w), b + w),
        }
    }

    /// The side more rounds put B on; None when neither has more.
    pub fn majority(&self) -> Option<Standing> {
        match self.better.cmp(&self.worse) {
            std::cmp::Ordering::Greater => Some(Standing::Better),
            std::cmp::Ordering::Less => Some(Standing::Worse),
            std::cmp::Ordering::Equal => None,
        }
    }
}

/// P(X >= k) for X ~ Binomial(n, 1/2): the exact one-sided sign-test p of
/// k rounds of n on one side. 1 for n = 0.
pub fn sign_test_p(k: usize, n: usize) -> f64 {
    if n == 0 {
        return 1.0;
    }
    let total = 2f64.powi(n as i32);
    let mut at_least = 0.0; // P(X >= k) * 2^n
    let mut choose = 1.0; // C(n, i), from i = n down
    for i in (0..=n).rev() {
        if i < k {
            break;
        }
        at_least += choose;
        choose = choose * i as f64 / (n - i + 1) as f64;
    }
    at_least / total
}

/// A figure's per-round ratios, summarised: how many, their median, the
/// interval and the sign test.
#[derive(Debug, Clone, PartialEq)]
pub struct RatioSummary {
    /// Paired rounds.
    pub n: usize,
    /// The median of the per-round ratios.
    pub median: f64,
    /// A distribution-free interval of the median ratio from order
    /// statistics: 95 % from 6 rounds, [min, max] at its exact coverage
    /// (75 % to 93.75 %) from 3 to 5, none under 3.
    pub interval: Option<QuotedInterval>,
    pub sign: SignTest,
}

impl RatioSummary {
    /// The summary of `ratios` (B / A, at least one) of a figure `better`
    /// in one direction.
    fn of_ratios(ratios: &[f64], better: Better, tie_band: f64) -> Option<RatioSummary> {
        let median = median_interval(ratios)?.median;
        Some(RatioSummary {
            n: ratios.len(),
            median,
            interval: median_interval_any_n(ratios),
            sign: SignTest::of_ratios(ratios, better, tie_band),
        })
    }

    /// Where B stood, when the interval is clear of 1 on that side and the
    /// sign test's p is at most [`SIGNIFICANCE`]; None otherwise.
    fn separable(&self, better: Better) -> Option<Standing> {
        let interval = self.interval?;
        if straddles_one(&interval) || self.sign.p > SIGNIFICANCE {
            return None;
        }
        let side = Standing::of_ratio(self.median, better)?;
        (self.sign.majority() == Some(side)).then_some(side)
    }

    /// Why a ratio that is not separable is not, in words.
    pub fn not_separable_because(&self) -> String {
        let Some(interval) = self.interval else {
            return format!("{} round(s) give no interval", self.n);
        };
        if straddles_one(&interval) {
            "the interval straddles 1".into()
        } else if self.sign.better + self.sign.worse == 0 {
            "every round within the tie band".into()
        } else if self.sign.p > SIGNIFICANCE {
            format!("sign test p > {SIGNIFICANCE}")
        } else {
            "most rounds lie on the other side of 1".into()
        }
    }
}

/// A figure's verdict over the paired rounds.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// B stood on one side of A: the interval is clear of 1 on that side
    /// and the sign test's p is at most [`SIGNIFICANCE`].
    Separable {
        standing: Standing,
        ratios: RatioSummary,
    },
    /// The interval straddles 1, or p > [`SIGNIFICANCE`] (ties, a sign that
    /// flipped, or too few rounds): the difference is not told from the
    /// noise between rounds.
    NotSeparable { ratios: RatioSummary },
    /// A round lacks the figure, or nothing was paired.
    NotComparable { reason: String },
}

impl Verdict {
    /// The ratios' summary; None when not comparable.
    pub fn ratios(&self) -> Option<&RatioSummary> {
        match self {
            Verdict::Separable { ratios, .. } | Verdict::NotSeparable { ratios } => Some(ratios),
            Verdict::NotComparable { .. } => None,
        }
    }
}

/// One figure's paired comparison.
#[derive(Debug, Clone, PartialEq)]
pub struct PairedFigure {
    pub metric: &'static str,
    /// Every paired round's ratio, in round order; empty when not comparable.
    pub rounds: Vec<RoundRatio>,
    pub verdict: Verdict,
}

/// Compares `metric` over `pairs`: per-round ratios B / A, their median,
/// interval and sign test, a ratio within 1 ± `tie_band` (a share: 0.01 =
/// 1 %) counting as a tie.
pub fn compare_figure(
    pairs: &[RoundPair<'_>],
    metric: &'static str,
    tie_band: f64,
) -> PairedFigure {
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
    let verdict = match better.and_then(|better| {
        RatioSummary::of_ratios(&ratios, better, tie_band).map(|summary| (better, summary))
    }) {
        Some((better, ratios)) => match ratios.separable(better) {
            Some(standing) => Verdict::Separable { standing, ratios },
            None => Verdict::NotSeparable { ratios },
        },
        None => Verdict::NotComparable {
            reason: "no ratio".into(),
        },
    };
    PairedFigure {
        metric,
        rounds,
        verdict,
    }
}

/// Every figure of [`PAIRED_METRICS`] compared over `pairs`, with ties
/// within 1 ± `tie_band`.
pub fn compare_figures(pairs: &[RoundPair<'_>], tie_band: f64) -> Vec<PairedFigure> {
    PAIRED_METRICS
        .iter()
        .map(|metric| compare_figure(pairs, metric, tie_band))
        .collect()
}

/// The median change (B / A - 1) of a figure on which B was worse than A:
/// separably (the interval entirely on the worse side, sign-test p at most
/// [`SIGNIFICANCE`]) and by more than `threshold` (a share: 0.05 = 5 %) at
/// the median; None when B did not regress on it.
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

    /// bench.yaml's tie band.
    const BAND: f64 = 0.01;

    fn compare_cpu(a: &[Run], b: &[Run]) -> PairedFigure {
        let (a, b) = (figures(a), figures(b));
        compare_figure(&pair_by_round(&a, &b).pairs, "us_cpu_per_record", BAND)
    }

    #[test]
    fn ratios_are_b_over_a_per_round_with_median_interval_and_p() {
        let a = [
            cpu(1, 10.0),
            cpu(2, 20.0),
            cpu(3, 10.0),
            cpu(4, 10.0),
            cpu(5, 10.0),
        ];
        let b = [
            cpu(1, 15.0),
            cpu(2, 24.0),
            cpu(3, 20.0),
            cpu(4, 13.0),
            cpu(5, 11.0),
        ];
        let figure = compare_cpu(&a, &b);
        let ratios: Vec<(u32, f64)> = figure.rounds.iter().map(|r| (r.round, r.ratio)).collect();
        assert_eq!(ratios, [(1, 1.5), (2, 1.2), (3, 2.0), (4, 1.3), (5, 1.1)]);
        match figure.verdict {
            Verdict::Separable { standing, ratios } => {
                assert_eq!(standing, Standing::Worse, "more CPU per record is worse");
                assert_eq!(ratios.n, 5);
                assert_eq!(ratios.median, 1.3);
                // 5 rounds: [min, max], covering 1 - 2/32.
                let interval = ratios.interval.unwrap();
                assert_eq!((interval.low, interval.high), (1.1, 2.0));
                assert_eq!(interval.coverage, 0.9375);
                assert_eq!((ratios.sign.worse, ratios.sign.better), (5, 0));
                assert_eq!(ratios.sign.p, 0.03125);
            }
            other => panic!("expected a separable verdict, got {other:?}"),
        }
    }

    #[test]
    fn three_rounds_on_one_side_are_not_enough() {
        // Worse in every round of three: p = 1/8, above 0.05.
        let a = [cpu(1, 10.0), cpu(2, 20.0), cpu(3, 10.0)];
        let b = [cpu(1, 15.0), cpu(2, 24.0), cpu(3, 20.0)];
        let figure = compare_cpu(&a, &b);
        match figure.verdict {
            Verdict::NotSeparable { ratios } => {
                assert_eq!(ratios.median, 1.5);
                let interval = ratios.interval.unwrap();
                assert_eq!((interval.low, interval.high), (1.2, 2.0));
                assert_eq!(interval.coverage, 0.75);
                assert_eq!(ratios.sign.p, 0.125);
                assert_eq!(ratios.not_separable_because(), "sign test p > 0.05");
            }
            other => panic!("expected not separable, got {other:?}"),
        }
    }

    #[test]
    fn a_higher_is_better_figure_that_grows_is_better() {
        let consumed = |round, v| run(round, &[("consumed_per_s", v, Better::Higher)]);
        let a: Vec<Run> = (1..=6).map(|r| consumed(r, 1000.0)).collect();
        let b: Vec<Run> = (1..=6)
            .map(|r| consumed(r, 1000.0 + 50.0 * r as f64))
            .collect();
        let (a, b) = (figures(&a), figures(&b));
        let figure = compare_figure(&pair_by_round(&a, &b).pairs, "consumed_per_s", BAND);
        match figure.verdict {
            Verdict::Separable { standing, ratios } => {
                assert_eq!(standing, Standing::Better);
                assert!((ratios.median - 1.175).abs() < 1e-12);
                // 6 rounds: the 95 % interval, here [min, max] (rank 1).
                let interval = ratios.interval.unwrap();
                assert_eq!((interval.low, interval.high), (1.05, 1.3));
                assert_eq!(interval.coverage, 0.95);
                assert_eq!(ratios.sign.p, 1.0 / 64.0);
            }
            other => panic!("expected a separable verdict, got {other:?}"),
        }
    }

    #[test]
    fn a_sign_that_flips_is_not_separable() {
        let a = [cpu(1, 10.0), cpu(2, 10.0), cpu(3, 10.0)];
        let b = [cpu(1, 12.0), cpu(2, 9.0), cpu(3, 11.0)];
        let figure = compare_cpu(&a, &b);
        let Verdict::NotSeparable { ratios } = &figure.verdict else {
            panic!("expected not separable, got {:?}", figure.verdict);
        };
        assert_eq!(ratios.not_separable_because(), "the interval straddles 1");
        assert_eq!((ratios.sign.worse, ratios.sign.better), (2, 1));
        assert_eq!(ratios.sign.p, 0.5);
        assert_eq!(figure.rounds.len(), 3, "the ratios are still kept");
    }

    #[test]
    fn one_round_giving_the_other_side_spoils_five() {
        // Worse in four rounds of five: p = 6/32, and the interval [min,
        // max] reaches below 1.
        let a: Vec<Run> = (1..=5).map(|r| cpu(r, 10.0)).collect();
        let b = [
            cpu(1, 12.0),
            cpu(2, 13.0),
            cpu(3, 9.0),
            cpu(4, 12.5),
            cpu(5, 14.0),
        ];
        let figure = compare_cpu(&a, &b);
        let Verdict::NotSeparable { ratios } = &figure.verdict else {
            panic!("expected not separable, got {:?}", figure.verdict);
        };
        assert_eq!(ratios.sign.p, 0.1875);
        assert!(straddles_one(&ratios.interval.unwrap()));
    }

    #[test]
    fn equal_rounds_are_ties_not_better() {
        // 1.000 and 1.004 lie within 1 ± 0.01: ties, whatever their side.
        let a: Vec<Run> = (1..=5).map(|r| cpu(r, 100.0)).collect();
        let b = [
            cpu(1, 100.0),
            cpu(2, 100.4),
            cpu(3, 100.0),
            cpu(4, 100.4),
            cpu(5, 100.4),
        ];
        let figure = compare_cpu(&a, &b);
        let Verdict::NotSeparable { ratios } = &figure.verdict else {
            panic!("equal is not better or worse: {:?}", figure.verdict);
        };
        assert_eq!(
            (ratios.sign.better, ratios.sign.worse, ratios.sign.ties),
            (0, 0, 5)
        );
        assert_eq!(ratios.sign.p, 1.0);
        // Lower is better and 0.996 is below 1, but within the band.
        let ties = SignTest::of_ratios(&[1.0, 1.004, 0.996, 0.992], Better::Lower, BAND);
        assert_eq!((ties.better, ties.worse, ties.ties), (0, 0, 4));
        // Beyond the band: a side.
        let sides = SignTest::of_ratios(&[1.02, 0.98], Better::Lower, BAND);
        assert_eq!((sides.better, sides.worse, sides.ties), (1, 1, 0));
        assert_eq!(ties.majority(), None);
        // Without a band only exactly 1 is a tie.
        let bare = SignTest::of_ratios(&[1.0, 1.004, 0.996], Better::Lower, 0.0);
        assert_eq!((bare.better, bare.worse, bare.ties), (1, 1, 1));
    }

    #[test]
    fn ties_leave_the_sign_tests_n() {
        // Six rounds: five worse, one tie: p over n = 5 is 1/32, the tie
        // shown beside it.
        let ratios = [1.2, 1.3, 1.004, 1.25, 1.4, 1.1];
        let sign = SignTest::of_ratios(&ratios, Better::Lower, BAND);
        assert_eq!((sign.worse, sign.better, sign.ties), (5, 0, 1));
        assert_eq!(sign.p, 0.03125);
        assert_eq!(sign.majority(), Some(Standing::Worse));
    }

    #[test]
    fn the_sign_test_p_is_the_binomial_tail() {
        assert_eq!(sign_test_p(3, 3), 0.125);
        assert_eq!(sign_test_p(5, 5), 0.03125);
        assert_eq!(sign_test_p(4, 5), 0.1875);
        assert_eq!(sign_test_p(9, 10), 0.0107421875);
        assert_eq!(sign_test_p(0, 4), 1.0);
        assert_eq!(sign_test_p(1, 1), 0.5);
        assert_eq!(sign_test_p(0, 0), 1.0);
    }

    #[test]
    fn the_interval_is_the_order_statistics() {
        let interval = |ratios: &[f64]| {
            let a: Vec<Run> = (1..).zip(ratios).map(|(r, _)| cpu(r, 1.0)).collect();
            let b: Vec<Run> = (1..).zip(ratios).map(|(r, &x)| cpu(r, x)).collect();
            compare_cpu(&a, &b).verdict.ratios().unwrap().interval
        };
        // Under 3 rounds: none.
        assert_eq!(interval(&[1.1, 1.2]), None);
        // 4 rounds: [min, max], 1 - 2/16.
        let four = interval(&[1.3, 0.9, 1.1, 1.2]).unwrap();
        assert_eq!((four.low, four.high, four.coverage), (0.9, 1.3, 0.875));
        assert!(straddles_one(&four));
        // 9 rounds: the second and eighth (P(X <= 1) = 10/512 <= 2.5 %).
        let nine = interval(&[1.9, 1.1, 1.8, 1.2, 1.7, 1.3, 1.6, 1.4, 1.5]).unwrap();
        assert_eq!((nine.low, nine.high, nine.n), (1.2, 1.8, 9));
        assert!(nine.coverage >= 0.95);
        assert!(!straddles_one(&nine));
    }

    #[test]
    fn too_few_rounds_give_no_interval_and_no_verdict() {
        let a = [cpu(1, 10.0), cpu(2, 10.0)];
        let b = [cpu(1, 20.0), cpu(2, 20.0)];
        let figure = compare_cpu(&a, &b);
        let Verdict::NotSeparable { ratios } = &figure.verdict else {
            panic!("expected not separable, got {:?}", figure.verdict);
        };
        assert_eq!((ratios.n, ratios.median, ratios.interval), (2, 2.0, None));
        assert_eq!(
            ratios.not_separable_because(),
            "2 round(s) give no interval"
        );
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
        let figure = compare_figure(&pairing.pairs, "us_cpu_per_record", BAND);
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
        let figure = compare_figure(&pair_by_round(&a, &b).pairs, "added_p50_ms", BAND);
        assert_eq!(
            figure.verdict,
            Verdict::NotComparable {
                reason: "round 2, B: latency not quoted: generator-behind".into()
            }
        );
        assert!(figure.rounds.is_empty());
        let unexplained = compare_figure(&pair_by_round(&a, &b).pairs, "added_p99_ms", BAND);
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
        let all = compare_figures(&pairing.pairs, BAND);
        assert_eq!(all.len(), PAIRED_METRICS.len());
        assert!(all
            .iter()
            .all(|f| matches!(f.verdict, Verdict::NotComparable { .. })));
    }

    #[test]
    fn a_zero_baseline_admits_no_ratio() {
        let a = [cpu(1, 0.0)];
        let b = [cpu(1, 10.0)];
        let figure = compare_cpu(&a, &b);
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
            profile: Profile::Uniform,
            product_settings: BTreeMap::new(),
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
    fn a_regression_is_separably_worse_and_beyond_the_threshold() {
        let regressed = |a: &[f64], b: &[f64], threshold: f64| {
            let a: Vec<Run> = (1..).zip(a).map(|(r, &v)| cpu(r, v)).collect();
            let b: Vec<Run> = (1..).zip(b).map(|(r, &v)| cpu(r, v)).collect();
            regression(&compare_cpu(&a, &b), threshold)
        };
        let base = [10.0; 5];
        // Worse in 5 of 5 (p 1/32), interval [1.06, 1.12], median 1.08.
        let change = regressed(&base, &[10.8, 10.6, 11.2, 10.7, 10.9], 0.05).unwrap();
        assert!((change - 0.08).abs() < 1e-9);
        // The same but within the threshold at the median.
        assert_eq!(
            regressed(&base, &[10.3, 10.2, 10.4, 10.35, 10.6], 0.05),
            None
        );
        // Worse by far in three rounds of three: p 1/8, not enough.
        assert_eq!(regressed(&[10.0; 3], &[20.0, 21.0, 22.0], 0.05), None);
        // Worse at the median, but one round better: the interval straddles 1.
        assert_eq!(regressed(&base, &[13.0, 9.0, 12.0, 14.0, 15.0], 0.05), None);
        // Better in every round is no regression.
        assert_eq!(regressed(&base, &[5.0, 5.1, 5.2, 4.9, 5.0], 0.05), None);
        // A higher-is-better figure that fell is worse.
        let consumed = |round, v| run(round, &[("consumed_per_s", v, Better::Higher)]);
        let a: Vec<Run> = (1..=5).map(|r| consumed(r, 1000.0)).collect();
        let b: Vec<Run> = (1..=5).map(|r| consumed(r, 800.0 + r as f64)).collect();
        let (a, b) = (figures(&a), figures(&b));
        let fell = compare_figure(&pair_by_round(&a, &b).pairs, "consumed_per_s", BAND);
        assert!(regression(&fell, 0.05).is_some());
    }
}
