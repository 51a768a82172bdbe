//! The checks of points.

use super::*;

#[test]
fn one_host_and_one_configuration_are_one_point() {
    let (a, mut b) = (
        crate::report::fixture_record(),
        crate::report::fixture_record(),
    );
    b.config.seed = 7;
    b.config.warmup_s = 20;
    b.batch_id = "another batch".into();
    assert!(BenchPoint::from_record(&a).holds(&b));
}

#[test]
fn another_host_is_another_point() {
    let (a, mut b) = (
        crate::report::fixture_record(),
        crate::report::fixture_record(),
    );
    b.host.hostname = "elsewhere".into();
    assert!(!BenchPoint::from_record(&a).holds(&b));
    let mut c = crate::report::fixture_record();
    c.host.machine_id_hash = Some("00112233".into());
    let mut d = crate::report::fixture_record();
    d.host.machine_id_hash = Some("99887766".into());
    assert!(!BenchPoint::from_record(&c).holds(&d));
}

#[test]
fn another_broker_release_is_another_point_and_is_named() {
    let suite = crate::report::repo_suite();
    let configured = suite.bench.broker.recorded_version();
    let mut now = crate::report::fixture_record();
    now.broker.version = configured.clone();
    let mut before = crate::report::fixture_record();
    before.broker.version = Some("apache-kafka 3.9.0".into());
    assert!(!BenchPoint::from_record(&now).holds(&before));
    let records = [now, before];
    let order = vec![records[0].line.clone()];
    let points = group_points(&suite, "stateless", &order, &records);
    let named: Vec<(&Option<String>, bool)> = points
        .iter()
        .map(|p| (&p.point.broker, p.name.contains("broker apache-kafka")))
        .collect();
    // The configured broker goes unnamed; another release is named.
    assert_eq!(named.len(), 2);
    for (broker, is_named) in named {
        assert_eq!(is_named, *broker != configured, "{broker:?}");
    }
}

#[test]
fn a_cluster_is_another_point_named_by_its_shape() {
    let suite = crate::report::repo_suite();
    let mut single = crate::report::fixture_record();
    single.broker.version = suite.bench.broker.recorded_version();
    let mut cluster = single.clone();
    cluster.broker.nodes = 3;
    cluster.broker.replication = 3;
    cluster.broker.min_insync_replicas = 2;
    let mut fewer_in_sync = cluster.clone();
    fewer_in_sync.broker.min_insync_replicas = 1;
    assert!(!BenchPoint::from_record(&single).holds(&cluster));
    assert!(!BenchPoint::from_record(&cluster).holds(&fewer_in_sync));
    let records = [single, cluster, fewer_in_sync];
    let order = vec![records[0].line.clone()];
    let points = group_points(&suite, "stateless", &order, &records);
    let mut names: Vec<&str> = points.iter().map(|p| p.name.as_str()).collect();
    names.sort();
    assert_eq!(names.len(), 3);
    // The configured single node goes unnamed; each cluster says its shape.
    assert_eq!(
        names
            .iter()
            .filter(|n| n.contains("3 nodes, replication 3, min ISR 2"))
            .count(),
        1,
        "{names:?}"
    );
    assert_eq!(
        names
            .iter()
            .filter(|n| n.contains("3 nodes, replication 3, min ISR 1"))
            .count(),
        1,
        "{names:?}"
    );
    assert!(names.iter().any(|n| !n.contains("node")), "{names:?}");
}

#[test]
fn hosts_of_one_name_with_two_cpu_models_are_named_apart() {
    let suite =
        Suite::load(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("bench.yaml")).unwrap();
    let amd = crate::report::fixture_record();
    let mut intel = crate::report::fixture_record();
    intel.host.cpu_model = "Intel Xeon Platinum 8375C".into();
    assert_eq!(amd.host.hostname, intel.host.hostname);
    let records = [amd, intel];
    let order = vec![records[0].line.clone()];
    let points = group_points(&suite, "stateless", &order, &records);
    let names: Vec<&str> = points.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names.len(), 2);
    assert_ne!(names[0], names[1]);
    assert!(names
        .iter()
        .any(|n| n.ends_with("host AMD EPYC · 2 cores · kernel 6.18.44-fc-v782")));
    assert!(names
        .iter()
        .any(|n| n.contains("host Intel Xeon Platinum 8375C · 2 cores")));
    // one host: no host in the name
    let one = group_points(&suite, "stateless", &order, &records[..1]);
    assert!(!one[0].name.contains("host"), "{}", one[0].name);
}

#[test]
fn another_rate_window_or_configuration_is_another_point() {
    let a = crate::report::fixture_record();
    let point = BenchPoint::from_record(&a);
    let changes: [fn(&mut RunRecord); 7] = [
        |r| r.config.rate = 1000,
        |r| r.config.window_s = 60,
        |r| {
            r.config.commit_intervals = Some(CommitIntervals {
                exactly_once: 10,
                at_least_once: 1000,
            })
        },
        |r| r.config.client.linger_ms = 20,
        |r| r.config.parallelism = 2,
        |r| r.config.input_partitions = 4,
        |r| r.bench_version += 1,
    ];
    for change in changes {
        let mut b = crate::report::fixture_record();
        change(&mut b);
        assert!(!point.holds(&b), "{:?}", b.config);
    }
    let mut other_workload = crate::report::fixture_record();
    other_workload.workload = "windowed".into();
    assert!(!point.holds(&other_workload));
}

#[test]
fn an_old_record_without_the_newer_fields_joins_the_point_of_a_new_one() {
    let mut new = crate::report::fixture_record();
    new.host.threads = Some(2);
    new.host.cpu_mhz = Some(2400);
    new.host.machine_id_hash = Some("00112233aabbccdd".into());
    new.suite_commit = Some("0faffc1".into());
    // The fixture's first record predates those fields.
    let old = crate::report::fixture_record();
    assert!(old.host.threads.is_none() && old.suite_commit.is_none());
    assert!(BenchPoint::from_record(&new).holds(&old));
    assert!(BenchPoint::from_record(&old).holds(&new));
}

#[test]
fn the_default_point_comes_first_then_the_iso_point_then_the_others() {
    // The repository's bench.yaml with run defaults at 20,000/s beside
    // its iso_rate of 10,000.
    let mut suite =
        Suite::load(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("bench.yaml")).unwrap();
    suite.bench.run.rate = Some(20_000);
    assert_ne!(suite.bench.default_rate(), suite.bench.iso_rate);
    let at = |rate: u64, started: &str| {
        let mut r = crate::report::fixture_record();
        r.config = RunConfig {
            rate,
            window_s: suite.bench.run.window_s,
            commit_interval_ms: suite.bench.run.commit_interval_ms.exactly_once,
            commit_intervals: Some(suite.bench.run.commit_interval_ms),
            client: suite.bench.client.clone(),
            parallelism: suite.bench.run.parallelism,
            ..r.config
        };
        r.started_at = started.into();
        r.batch_id = format!("batch at {started}");
        r
    };
    // The newest run at another rate does not displace the others.
    let records = [
        at(1000, "2026-11-30T09:00:00Z"),
        at(suite.bench.iso_rate, "2026-11-30T08:00:00Z"),
        at(suite.bench.default_rate(), "2026-11-30T07:00:00Z"),
        at(1000, "2026-11-30T06:00:00Z"),
    ];
    let order = vec![records[0].line.clone()];
    let points = group_points(&suite, "stateless", &order, &records);
    let summary: Vec<(u64, PointRole, usize)> = points
        .iter()
        .map(|p| (p.point.settings.rate, p.role, p.records.len()))
        .collect();
    assert_eq!(
        summary,
        [
            (suite.bench.default_rate(), PointRole::Default, 1),
            (suite.bench.iso_rate, PointRole::Iso, 1),
            (1000, PointRole::Other, 2),
        ]
    );
    assert!(points[1].is_iso() && !points[0].is_iso());
    // A line's figure at a point is its newest batch there.
    assert_eq!(points[2].lines[0].batch.len(), 1);
    assert_eq!(
        points[2].lines[0].batch[0].started_at,
        "2026-11-30T09:00:00Z"
    );
}

#[test]
fn without_a_run_rate_the_default_point_is_the_iso_point() {
    let suite =
        Suite::load(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("bench.yaml")).unwrap();
    assert_eq!(suite.bench.run.rate, None, "the repository's bench.yaml");
    assert_eq!(suite.bench.default_rate(), suite.bench.iso_rate);
    let mut r = crate::report::fixture_record();
    r.config = RunConfig {
        rate: suite.bench.iso_rate,
        window_s: suite.bench.run.window_s,
        commit_interval_ms: suite.bench.run.commit_interval_ms.exactly_once,
        commit_intervals: Some(suite.bench.run.commit_interval_ms),
        client: suite.bench.client.clone(),
        parallelism: suite.bench.run.parallelism,
        ..r.config
    };
    let order = vec![r.line.clone()];
    let points = group_points(&suite, "stateless", &order, std::slice::from_ref(&r));
    assert_eq!(points[0].role, PointRole::DefaultAndIso);
}

#[test]
fn a_rate_and_window_read_in_the_heading() {
    let settings = PointSettings::from_config(&crate::report::fixture_record().config);
    assert_eq!(settings.label(), "20,000/s · 30 s window");
    assert_eq!(
        settings.detail(),
        "commits every 10 ms exactly-once, 10 ms at-least-once · parallelism 1 · 1 input partition"
    );
}
