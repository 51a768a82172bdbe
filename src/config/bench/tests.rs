//! The checks of bench.

use super::*;
use crate::model::broker::Replicas;

const RUN: &str =
    "run: {warmup_s: 1, window_s: 2, rate: 10, seed: 1, sample_interval_ms: 1000, \
    commit_interval_ms: {exactly-once: 10, at-least-once: 1000}, parallelism: 1, \
    ready_timeout_s: 5, stop_grace_s: 5}\n\
    tolerances: {lag_drift: 0.02, selectivity: 0.25, generator_behind_ms: 100, host_busy_pct: 90}\n";

#[test]
fn broker_defaults_to_local_kafka() {
    let bench: Bench =
        parse_yaml(Path::new("b.yaml"), &format!("bench_version: 1\n{RUN}")).unwrap();
    assert!(matches!(
        bench.broker,
        BrokerConfig::Local { port: 19092, .. }
    ));
}

#[test]
fn an_external_broker_is_one_setting() {
    let text = format!("bench_version: 1\nbroker: {{kind: external, bootstrap: 'h:9092'}}\n{RUN}");
    let bench: Bench = parse_yaml(Path::new("b.yaml"), &text).unwrap();
    assert_eq!(
        bench.broker,
        BrokerConfig::External {
            bootstrap: "h:9092".into(),
            version: None,
            replication: 1,
            min_insync_replicas: 1,
        }
    );
}

#[test]
fn a_cluster_places_its_replicas_or_says_which_setting_cannot() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bench.yaml");
    let run = RUN.replace("window_s: 2", "window_s: 5");
    let with_broker = |broker: &str| format!("bench_version: 1\nbroker:\n{broker}{run}");
    std::fs::write(
        &path,
        with_broker("  kind: local\n  nodes: 3\n  replication: 3\n  min_insync_replicas: 2\n"),
    )
    .unwrap();
    let bench = Bench::from_file(&path).unwrap();
    assert_eq!(
        bench.broker.replicas(),
        Replicas {
            replication: 3,
            min_insync_replicas: 2
        }
    );
    let refused = [
        (
            "  kind: local\n  nodes: 1\n  replication: 3\n",
            ":5: broker.replication 3 needs as many nodes; the local cluster has 1",
        ),
        (
            "  kind: local\n  nodes: 3\n  replication: 3\n  min_insync_replicas: 4\n",
            ":6: broker.min_insync_replicas 4 must be from 1 to broker.replication (3)",
        ),
        (
            "  kind: local\n  nodes: 0\n",
            ":4: broker.nodes 0: the local cluster has 1 to 5 nodes",
        ),
        (
            "  kind: external\n  bootstrap: h:9092\n  min_insync_replicas: 2\n",
            ":5: broker.min_insync_replicas 2 must be from 1 to broker.replication (1)",
        ),
    ];
    for (broker, expected) in refused {
        std::fs::write(&path, with_broker(broker)).unwrap();
        let err = Bench::from_file(&path).unwrap_err().to_string();
        assert!(
            err.starts_with(&format!("{}{expected}", path.display())),
            "{broker}: {err}"
        );
    }
}

#[test]
fn sink_defaults_to_local_clickhouse() {
    let bench: Bench =
        parse_yaml(Path::new("b.yaml"), &format!("bench_version: 1\n{RUN}")).unwrap();
    assert_eq!(
        bench.sink,
        SinkConfig::Local {
            http_port: 18123,
            tcp_port: 19000
        }
    );
    assert_eq!(bench.sink.url(), "http://127.0.0.1:18123");
    let text = format!("bench_version: 1\nsink: {{kind: local, http_port: 28123}}\n{RUN}");
    let bench: Bench = parse_yaml(Path::new("b.yaml"), &text).unwrap();
    assert_eq!(
        bench.sink,
        SinkConfig::Local {
            http_port: 28123,
            tcp_port: 19000
        }
    );
}

#[test]
fn an_external_sink_is_a_url() {
    let text = format!(
        "bench_version: 1\nsink: {{kind: external, url: 'http://h:8123', user: etl, password: pw}}\n{RUN}"
    );
    let bench: Bench = parse_yaml(Path::new("b.yaml"), &text).unwrap();
    assert_eq!(
        bench.sink,
        SinkConfig::External {
            url: "http://h:8123".into(),
            user: Some("etl".into()),
            password: Some("pw".into())
        }
    );
    assert_eq!(bench.sink.url(), "http://h:8123");
    let text = format!("bench_version: 1\nsink: {{kind: external}}\n{RUN}");
    let err = parse_yaml::<Bench>(Path::new("b.yaml"), &text)
        .unwrap_err()
        .to_string();
    assert!(err.contains("missing field `url`"), "{err}");
}

#[test]
fn an_unknown_sink_key_is_named() {
    let text = format!("bench_version: 1\nsink: {{kind: local, http_prot: 1}}\n{RUN}");
    let err = parse_yaml::<Bench>(Path::new("b.yaml"), &text)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("unknown field `http_prot`, expected `http_port` or `tcp_port`"),
        "{err}"
    );
    let text = format!(
        "bench_version: 1\nsink: {{kind: external, url: 'http://h:8123', bootstrap: x}}\n{RUN}"
    );
    let err = parse_yaml::<Bench>(Path::new("b.yaml"), &text)
        .unwrap_err()
        .to_string();
    assert!(err.contains("unknown field `bootstrap`"), "{err}");
}

#[test]
fn a_sink_that_cannot_work_names_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bench.yaml");
    // A window long enough for the other checks.
    let run = RUN.replace("window_s: 2", "window_s: 5");
    let with_sink = |sink: &str| format!("bench_version: 1\nsink:\n{sink}{run}");
    std::fs::write(
        &path,
        with_sink("  kind: external\n  url: https://h:8443\n"),
    )
    .unwrap();
    let err = Bench::from_file(&path).unwrap_err().to_string();
    assert!(
        err.starts_with(&format!(
            "{}:4: sink.url `https://h:8443` is not an http:// address",
            path.display()
        )),
        "{err}"
    );
    std::fs::write(
        &path,
        with_sink("  kind: local\n  http_port: 18123\n  tcp_port: 18123\n"),
    )
    .unwrap();
    let err = Bench::from_file(&path).unwrap_err().to_string();
    assert!(
        err.starts_with(&format!(
            "{}:5: sink.http_port and sink.tcp_port are both 18123",
            path.display()
        )),
        "{err}"
    );
}

#[test]
fn a_negative_or_nan_tolerance_names_file_and_line() {
    for bad in ["-0.02", ".nan", ".inf"] {
        let text = RUN.replace("lag_drift: 0.02", &format!("lag_drift: {bad}"));
        let text = format!(
            "bench_version: 1\n{}",
            text.replace(", tolerances", "\ntolerances")
        );
        let err = parse_yaml::<Bench>(Path::new("b.yaml"), &text)
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("b.yaml:3: "), "{bad}: {err}");
        assert!(
            err.contains("a tolerance must be a finite number"),
            "{bad}: {err}"
        );
    }
    let bench: Bench =
        parse_yaml(Path::new("b.yaml"), &format!("bench_version: 1\n{RUN}")).unwrap();
    assert_eq!(bench.tolerances.lag_drift, 0.02);
    assert_eq!(bench.run.settle_s, 30);
    assert_eq!(bench.tolerances.tie_band, 0.01, "an older file's tie band");
}

#[test]
fn an_unknown_field_names_file_and_line() {
    let text = format!("bench_version: 1\n{RUN}colour: blue\n");
    let err = parse_yaml::<Bench>(Path::new("b.yaml"), &text)
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("b.yaml:4: unknown field `colour`"), "{err}");
    let text = format!("bench_version: 1\nbroker: {{kind: local, prot: 1}}\n{RUN}");
    let err = parse_yaml::<Bench>(Path::new("b.yaml"), &text)
        .unwrap_err()
        .to_string();
    assert!(err.contains("unknown field `prot`"), "{err}");
}

fn run_defaults(window_s: u64, sample_interval_ms: u64) -> RunDefaults {
    let text = RUN
        .replace("window_s: 2", &format!("window_s: {window_s}"))
        .replace(
            "sample_interval_ms: 1000",
            &format!("sample_interval_ms: {sample_interval_ms}"),
        );
    let bench: Bench =
        parse_yaml(Path::new("b.yaml"), &format!("bench_version: 1\n{text}")).unwrap();
    bench.run
}

#[test]
fn a_window_spans_at_least_five_samples() {
    let run = run_defaults(30, 1000);
    assert_eq!(run.min_window_s(), 5);
    assert_eq!(run.check_window(0), Err(5));
    assert_eq!(run.check_window(4), Err(5));
    assert_eq!(run.check_window(5), Ok(()));
    // Five samples of 1.5 s take 7.5 s: a whole second more.
    assert_eq!(run_defaults(30, 1500).min_window_s(), 8);
    // Fast sampling still needs a window of one second.
    assert_eq!(run_defaults(30, 100).min_window_s(), 1);
    assert_eq!(run_defaults(30, 100).check_window(0), Err(1));
}

#[test]
fn a_short_window_in_bench_yaml_names_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bench.yaml");
    let text = "bench_version: 1\nrun:\n  warmup_s: 1\n  window_s: 4\n  rate: 10\n  seed: 1\n  \
        sample_interval_ms: 1000\n  commit_interval_ms: {exactly-once: 10, at-least-once: 1000}\n  parallelism: 1\n  \
        ready_timeout_s: 5\n  stop_grace_s: 5\n\
        tolerances: {lag_drift: 0.02, selectivity: 0.25, generator_behind_ms: 100, host_busy_pct: 90}\n";
    std::fs::write(&path, text).unwrap();
    let err = Bench::from_file(&path).unwrap_err().to_string();
    let expected = format!(
        "{}:4: run.window_s 4 is too short: a window must span at least 5 samples, \
         5 s at run.sample_interval_ms 1000; set it to 5 or more",
        path.display()
    );
    assert_eq!(err, expected);
    std::fs::write(&path, text.replace("window_s: 4", "window_s: 5")).unwrap();
    assert_eq!(Bench::from_file(&path).unwrap().run.window_s, 5);
}

#[test]
fn hosts_place_a_product_over_ssh_or_say_what_cannot_work() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bench.yaml");
    let run = RUN.replace("window_s: 2", "window_s: 5");
    let with = |broker: &str, hosts: &str| format!("bench_version: 1\n{broker}{hosts}{run}");
    let external = "broker: {kind: external, bootstrap: 'kafka-1:9092'}\n";
    std::fs::write(
        &path,
        with(
            external,
            "hosts:\n  rustpipe: [ssh://bench@10.0.0.5, 'ssh://bench@10.0.0.6:2222']\n\
             ssh: {config: /etc/bench/ssh_config}\n",
        ),
    )
    .unwrap();
    let bench = Bench::from_file(&path).unwrap();
    let hosts: Vec<String> = bench.hosts["rustpipe"]
        .iter()
        .map(|h| h.to_string())
        .collect();
    assert_eq!(hosts, ["ssh://bench@10.0.0.5", "ssh://bench@10.0.0.6:2222"]);
    assert_eq!(
        bench.ssh.config.as_deref(),
        Some(Path::new("/etc/bench/ssh_config"))
    );
    // Loopback reaches the local broker.
    std::fs::write(
        &path,
        with("", "hosts: {rustpipe: ['ssh://root@127.0.0.1:2299']}\n"),
    )
    .unwrap();
    assert!(Bench::from_file(&path).is_ok());
    let refused = [
        (
            with("", "hosts:\n  rustpipe: [ssh://bench@10.0.0.5]\n"),
            ":2: hosts.rustpipe places it on ssh://bench@10.0.0.5, which cannot reach the local broker",
        ),
        (
            with(external, "hosts:\n  rustpipe: []\n"),
            ":3: hosts.rustpipe names no host",
        ),
        (
            with(external, "hosts:\n  rustpipe: [bench@10.0.0.5]\n"),
            ":4: hosts.rustpipe: `bench@10.0.0.5` is not an ssh:// address",
        ),
    ];
    for (text, expected) in refused {
        std::fs::write(&path, text).unwrap();
        let err = Bench::from_file(&path).unwrap_err().to_string();
        assert!(
            err.starts_with(&format!("{}{expected}", path.display())),
            "{err}"
        );
    }
}
