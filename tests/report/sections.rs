//! Sections of the workload page for runs crafted from a fixture run: the
//! sweeps, each with its chart and table, a cluster deployment, and a run on
//! another host, each a section of its own.

use streamsuite::results::{Better, Metric, Regime, RunRecord, SweepKind, SweepTag};

use crate::support::{fixture_results, stateless_page};

/// A rate sweep of two lines (one falls short at 8,000/s by saturating, the
/// other at 4,000/s by going over the bound, then bisected to 3,000/s) and
/// a parallelism sweep, crafted from a fixture run: the page draws
/// latency against rate with a curve per line and each line's mark, and
/// tables each line's maximum sustainable throughput with its bracket.
#[test]
fn a_sweep_draws_latency_against_rate_and_tables_each_lines_bracket() {
    let fixture_runs = fixture_results();
    let template = fixture_runs["stateless"]
        .iter()
        .find(|r| r.line == "rustpipe" && r.regime == Some(Regime::KeepUp))
        .unwrap();
    let mut records = rate_sweep_runs(template);
    records.extend(parallelism_sweep_runs(template));
    let html = stateless_page(records);
    // Newest first: the parallelism sweep, then the rate sweep.
    let section = |id: &str| {
        html.split(&format!(r#"<h2 id="{id}">"#))
            .nth(1)
            .and_then(|s| s.split("<h2 ").next())
            .unwrap_or_else(|| panic!("no section {id}"))
            .to_string()
    };
    let rate = section("sweep-2");
    assert_the_rate_sweep_brackets_each_line(&rate);
    let parallelism = section("sweep-1");
    assert_the_parallelism_sweep_draws_capacity_and_efficiency(&parallelism);
    crate::assert_snapshot(
        "sweep_sections",
        &format!("{rate}\n{parallelism}"),
        r#"format!("{rate}\n{parallelism}")"#,
    );
}

/// The tag of a sweep: a rate sweep's bound is 250 ms.
fn sweep_tag(id: &str, kind: SweepKind, step: Option<u32>) -> SweepTag {
    SweepTag {
        id: id.to_string(),
        kind,
        p99_bound_ms: (kind == SweepKind::Rate).then_some(250.0),
        bisect_step: step,
    }
}

/// The rate sweep's runs, on a cluster: rustpipe keeps up to 4,000/s and at
/// 6,000/s (bisected), saturates at 8,000/s; rustpipe-eos goes over the
/// bound at 4,000/s, saturates at 8,000/s, keeps it at 3,000/s (bisected).
fn rate_sweep_runs(template: &RunRecord) -> Vec<RunRecord> {
    let run = |line: &str, rate: u64, added_p99: Option<f64>, step: Option<u32>, i: u32| {
        let mut r: RunRecord = template.clone();
        r.run_id = format!("20261202T10{i:02}00Z-{line}-sw{i:02}");
        r.batch_id = format!("sweep-batch-{}", step.unwrap_or(0));
        r.started_at = format!("2026-12-02T10:{i:02}:00Z");
        r.line = line.to_string();
        r.config.rate = rate;
        r.flags.clear();
        r.sweep = Some(sweep_tag(
            "20261202T100000Z-sweep-aa11",
            SweepKind::Rate,
            step,
        ));
        // The rate sweep ran on a cluster, the parallelism sweep on one node.
        (
            r.broker.nodes,
            r.broker.replication,
            r.broker.min_insync_replicas,
        ) = (3, 3, 2);
        match added_p99 {
            Some(p99) => {
                r.regime = Some(Regime::KeepUp);
                for (name, v) in [("added_p50_ms", p99 / 3.0), ("added_p99_ms", p99)] {
                    r.metrics
                        .insert(name.into(), Metric::new(v, "ms", Better::Lower));
                }
            }
            None => {
                r.regime = Some(Regime::Saturated);
                for name in ["added_p50_ms", "added_p99_ms", "latency_p99_ms"] {
                    r.metrics.remove(name);
                }
            }
        }
        r
    };
    vec![
        run("rustpipe", 2000, Some(12.0), None, 1),
        run("rustpipe-eos", 2000, Some(60.0), None, 2),
        run("rustpipe", 4000, Some(18.0), None, 3),
        run("rustpipe-eos", 4000, Some(400.0), None, 4),
        run("rustpipe", 8000, None, None, 5),
        run("rustpipe-eos", 8000, None, None, 6),
        run("rustpipe", 6000, Some(30.0), Some(1), 7),
        run("rustpipe-eos", 3000, Some(120.0), Some(1), 8),
    ]
}

/// The parallelism sweep's runs of rustpipe, at 1 and 2, on one node.
fn parallelism_sweep_runs(template: &RunRecord) -> Vec<RunRecord> {
    [1u32, 2]
        .into_iter()
        .enumerate()
        .map(|(i, parallelism)| {
            let mut r = template.clone();
            r.run_id = format!("20261202T1100{i}0Z-rustpipe-par{i}");
            r.started_at = format!("2026-12-02T11:00:{i}0Z");
            r.config.parallelism = parallelism;
            r.sweep = Some(sweep_tag(
                "20261202T110000Z-sweep-bb22",
                SweepKind::Parallelism,
                None,
            ));
            r
        })
        .collect()
}

/// The rate sweep's section: a curve per line, each line's shortfall
/// against the bound, its bracket and why it fell short, its bisection and
/// the cluster it ran on.
fn assert_the_rate_sweep_brackets_each_line(rate: &str) {
    assert!(
        rate.starts_with("Rate sweep · rustpipe, rustpipe-eos"),
        "{rate}"
    );
    for line in ["rustpipe", "rustpipe-eos"] {
        assert!(
            rate.contains(&format!("<title>{line}</title></polyline>")),
            "a curve of {line}"
        );
    }
    assert!(rate.contains("rustpipe falls short") && rate.contains("rustpipe-eos falls short"));
    assert!(rate.contains("bound 250 ms"));
    // rustpipe: sustained to 6,000 (bisected), saturated at 8,000;
    // rustpipe-eos: 400 ms over the bound at 4,000, sustained at 3,000.
    assert!(
        rate.contains("<td>rustpipe</td><td>6,000</td><td>6,000 – 8,000</td><td>saturated</td>"),
        "{rate}"
    );
    assert!(rate.contains("<td>rustpipe-eos</td><td>3,000</td><td>3,000 – 4,000</td><td>added p99 400.0 ms over the 250 ms bound</td>"), "{rate}");
    assert!(rate.contains("1 bisection step(s) after the grid"));
    // The broker's shape tells a cluster's sweep from a single node's.
    assert!(
        rate.contains("broker 3 nodes, replication 3, min ISR 2"),
        "{rate}"
    );
}

/// The parallelism sweep's section: capacity and efficiency against
/// parallelism, on one node.
fn assert_the_parallelism_sweep_draws_capacity_and_efficiency(parallelism: &str) {
    assert!(
        parallelism.starts_with("Parallelism sweep · rustpipe"),
        "{parallelism}"
    );
    assert!(parallelism.contains("capacity against parallelism"));
    assert!(parallelism.contains("efficiency against parallelism"));
    assert!(
        parallelism.contains("broker 1 node, replication 1, min ISR 1"),
        "{parallelism}"
    );
}

/// A fixture run copied as a cluster deployment's, with three processes
/// sampled: the page gives the cluster its own section, headed so, whose
/// resources table counts the processes, and the embedded runs stay in
/// theirs, with no such column.
#[test]
fn a_cluster_deployment_has_its_own_section_with_its_process_count() {
    let fixture_runs = fixture_results();
    let mut records = fixture_runs["stateless"].clone();
    let mut clustered = records
        .iter()
        .find(|r| r.line == "rustpipe" && r.resources.is_some())
        .unwrap()
        .clone();
    clustered.run_id = "20261203T100000Z-rustpipe-cl01".into();
    clustered.batch_id = "cluster-batch".into();
    clustered.config.deployment = "cluster".into();
    let product = clustered
        .resources
        .as_mut()
        .and_then(|r| r.product.as_mut())
        .unwrap();
    product.processes_max = Some(3);
    records.push(clustered);
    let html = stateless_page(records);
    // Each bench point's section; the heading names a deployment other than
    // the embedded one.
    let points: Vec<&str> = html
        .split("<h2 ")
        .filter(|s| s.starts_with(r#"id="point-"#))
        .collect();
    let heading = |s: &str| s.split("</h2>").next().unwrap_or_default().to_string();
    let cluster: Vec<&&str> = points
        .iter()
        .filter(|s| heading(s).contains("cluster deployment"))
        .collect();
    assert_eq!(cluster.len(), 1, "one section of the cluster deployment");
    let resources = cluster[0];
    assert!(resources.contains("<th>processes</th>"), "{resources}");
    assert!(resources.contains("<td>3</td>"), "{resources}");
    assert!(points.len() > 1, "the embedded points keep their sections");
    assert!(
        points
            .iter()
            .filter(|s| !heading(s).contains("cluster deployment"))
            .all(|s| !s.contains("<th>processes</th>")),
        "the embedded sections have no process column"
    );
}

/// A fixture run copied as one on another host over SSH: it is a bench
/// point of its own, headed with the host, never mixed with this host's.
#[test]
fn a_run_on_another_host_has_its_own_section_naming_the_host() {
    let fixture_runs = fixture_results();
    let mut records = fixture_runs["stateless"].clone();
    let local_sections = stateless_page(records.clone())
        .matches(r#"<h2 id="point-"#)
        .count();
    let mut placed = records
        .iter()
        .find(|r| r.line == "rustpipe" && r.resources.is_some())
        .unwrap()
        .clone();
    placed.run_id = "20261203T110000Z-rustpipe-ssh1".into();
    placed.batch_id = "remote-batch".into();
    placed.config.hosts = vec!["ssh://bench@engine-1".into()];
    records.push(placed);
    let html = stateless_page(records);
    let headings: Vec<&str> = html
        .split(r#"<h2 id="point-"#)
        .skip(1)
        .map(|s| s.split("</h2>").next().unwrap_or_default())
        .collect();
    assert_eq!(headings.len(), local_sections + 1, "{headings:?}");
    let remote: Vec<&&str> = headings
        .iter()
        .filter(|h| h.contains("on ssh://bench@engine-1"))
        .collect();
    assert_eq!(remote.len(), 1, "{headings:?}");
}
