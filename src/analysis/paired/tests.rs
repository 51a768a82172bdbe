//! The checks of paired.

use super::*;
use crate::results::figure::{ADDED_P50_MS, ADDED_P99_MS, CONSUMED_PER_S, US_CPU_PER_RECORD};

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
    run(round, &[(US_CPU_PER_RECORD.name, us, Better::Lower)])
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
    compare_figure(&pair_by_round(&a, &b).pairs, US_CPU_PER_RECORD.name, BAND)
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
    let consumed = |round, v| run(round, &[(CONSUMED_PER_S.name, v, Better::Higher)]);
    let a: Vec<Run> = (1..=6).map(|r| consumed(r, 1000.0)).collect();
    let b: Vec<Run> = (1..=6)
        .map(|r| consumed(r, 1000.0 + 50.0 * r as f64))
        .collect();
    let (a, b) = (figures(&a), figures(&b));
    let figure = compare_figure(&pair_by_round(&a, &b).pairs, CONSUMED_PER_S.name, BAND);
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
    let figure = compare_figure(&pairing.pairs, US_CPU_PER_RECORD.name, BAND);
    let ratios: Vec<f64> = figure.rounds.iter().map(|r| r.ratio).collect();
    assert_eq!(ratios, [2.0, 3.0]);
}

#[test]
fn a_figure_missing_in_a_round_is_not_comparable_with_the_reason() {
    let latency = |round, v| run(round, &[(ADDED_P50_MS.name, v, Better::Lower)]);
    let a = [latency(1, 4.0), latency(2, 4.0)];
    let mut b = [latency(1, 5.0), run(2, &[])];
    b[1].not_applicable.insert(
        ADDED_P50_MS.name.into(),
        "latency not quoted: generator-behind".into(),
    );
    let (a, b) = (figures(&a), figures(&b));
    let figure = compare_figure(&pair_by_round(&a, &b).pairs, ADDED_P50_MS.name, BAND);
    assert_eq!(
        figure.verdict,
        Verdict::NotComparable {
            reason: "round 2, B: latency not quoted: generator-behind".into()
        }
    );
    assert!(figure.rounds.is_empty());
    let unexplained = compare_figure(&pair_by_round(&a, &b).pairs, ADDED_P99_MS.name, BAND);
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

#[test]
fn a_cluster_deployments_runs_are_a_point_of_their_own() {
    let host = host();
    let mut clustered = record("b1", "a", 1, "2026-01-01T00:00:00Z", 1000);
    let embedded = clustered.clone();
    clustered.config.deployment = "cluster".into();
    let embedded_point = point(&host);
    assert!(embedded_point.holds(&embedded));
    assert!(!embedded_point.holds(&clustered));
    let cluster_point = BenchPoint {
        deployment: "cluster".into(),
        ..point(&host)
    };
    assert!(cluster_point.holds(&clustered));
    assert!(!cluster_point.holds(&embedded));
    // A pinned run is a point of its own.
    let mut pinned = embedded.clone();
    pinned.config.isolation = crate::results::Isolation::Pinned(crate::results::CpuLayout {
        product: "1".into(),
        broker: "0".into(),
        gendata: "0".into(),
        probe: "0".into(),
    });
    assert!(!embedded_point.holds(&pinned));
    let pinned_point = BenchPoint {
        isolation: pinned.config.isolation.clone(),
        ..point(&host)
    };
    assert!(pinned_point.holds(&pinned) && !pinned_point.holds(&embedded));
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
        deployment: "embedded".into(),
        hosts: Vec::new(),
        input_partitions: 1,
        etl: None,
        bench_version: 2,
        host,
        broker: None,
        replicas: Replicas {
            replication: 1,
            min_insync_replicas: 1,
        },
        nodes: Some(1),
        isolation: crate::results::Isolation::None,
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
    // Another broker release is another point.
    let (mut a, mut b) = (side("a", &h), side("b", &h));
    a.point.broker = Some("apache-kafka 4.4.0".into());
    b.point.broker = Some("apache-kafka 4.4.0".into());
    assert!(newest_shared_batch(&records, &a, &b).is_none());
    // So is a cluster of another shape; an external cluster's brokers are
    // whatever it has.
    let (mut a, mut b) = (side("a", &h), side("b", &h));
    a.point.nodes = Some(3);
    b.point.nodes = Some(3);
    assert!(newest_shared_batch(&records, &a, &b).is_none());
    a.point.nodes = None;
    b.point.nodes = None;
    assert!(newest_shared_batch(&records, &a, &b).is_some());
    a.point.replicas.min_insync_replicas = 2;
    b.point.replicas.min_insync_replicas = 2;
    assert!(newest_shared_batch(&records, &a, &b).is_none());
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
    let consumed = |round, v| run(round, &[(CONSUMED_PER_S.name, v, Better::Higher)]);
    let a: Vec<Run> = (1..=5).map(|r| consumed(r, 1000.0)).collect();
    let b: Vec<Run> = (1..=5).map(|r| consumed(r, 800.0 + r as f64)).collect();
    let (a, b) = (figures(&a), figures(&b));
    let fell = compare_figure(&pair_by_round(&a, &b).pairs, CONSUMED_PER_S.name, BAND);
    assert!(regression(&fell, 0.05).is_some());
}
