//! Paired comparisons of two lines of one batch: the runs of one round met
//! the same machine weather, so each round gives one ratio B / A per figure.
//! A figure's ratios are summarised by their median, a distribution-free
//! interval from order statistics and an exact sign test, with a tie band so
//! that equal is not "better"; the figure is separable only when the
//! interval is clear of 1 and the sign test's p is at most 0.05. Pure:
//! records in, verdicts out.

use std::collections::{BTreeMap, BTreeSet};

use crate::config::{ClientProfile, CommitIntervals, EtlConfig, Profile, Replicas};
use crate::model::host::HostInfo;
use crate::results::figure::{ADDED_P50_MS, ADDED_P99_MS, CONSUMED_PER_S, US_CPU_PER_RECORD};
use crate::results::{flag, Better, Figure, Isolation, Metric, RunRecord, Status};
use crate::stats::{median_interval, median_interval_any_n, sign_test_p, QuotedInterval};

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
    /// The form the products ran in (`embedded`, `cluster`).
    pub deployment: String,
    /// The hosts the product ran on; empty for this one.
    pub hosts: Vec<String>,
    pub input_partitions: i32,
    /// An ETL workload's arm and sink settings; none on any other.
    pub etl: Option<EtlConfig>,
    pub bench_version: u32,
    pub host: &'a HostInfo,
    /// What the broker ran, as records name it.
    pub broker: Option<String>,
    /// The runs' topic replicas, and their cluster's nodes when the suite
    /// starts it (an external cluster's are whatever it has).
    pub replicas: Replicas,
    pub nodes: Option<u32>,
    /// Which CPUs each role had.
    pub isolation: Isolation,
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
            && c.deployment == self.deployment
            && c.hosts == self.hosts
            && c.input_partitions == self.input_partitions
            && c.etl == self.etl
            && record.bench_version == self.bench_version
            && record.host.same_host(self.host)
            && record.broker.version == self.broker
            && record.broker.replicas() == self.replicas
            && self.nodes.is_none_or(|nodes| nodes == record.broker.nodes)
            && c.isolation == self.isolation
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
pub const PAIRED_METRICS: [&Figure; 4] = [
    &US_CPU_PER_RECORD,
    &ADDED_P50_MS,
    &ADDED_P99_MS,
    &CONSUMED_PER_S,
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
    pub fn of_ratios(ratios: &[f64], better: Better, tie_band: f64) -> Option<RatioSummary> {
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
    pub fn separable(&self, better: Better) -> Option<Standing> {
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
        .map(|figure| compare_figure(pairs, figure.name, tie_band))
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
mod tests;
