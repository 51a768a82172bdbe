//! What the report reads and writes: the results folder it loads, a broken
//! line in it, and the pages and data files it writes into its out folder,
//! each linked from the pages and none left behind by runs that are gone.

use std::path::Path;

use streamsuite::report::{self, export, BadLines};
use streamsuite::results::RunRecord;

use crate::support::{between, fixture, fixture_results, suite, write_fixture_site};

#[test]
fn pages_are_written_into_the_out_folder() {
    let out = tempfile::tempdir().unwrap();
    let index = write_fixture_site(out.path());
    assert_eq!(index, out.path().join("index.html"));
    assert!(out.path().join("stateless.html").is_file());
    assert!(out.path().join("avro-pipeline.html").is_file());
}

#[test]
fn a_broken_line_costs_only_itself_unless_strict() {
    let results = tempfile::tempdir().unwrap();
    let path = results.path().join("stateless.jsonl");
    let clean = std::fs::read_to_string(fixture().join("results/stateless.jsonl")).unwrap();
    let mut lines: Vec<&str> = clean.lines().collect();
    lines.insert(2, "{\"schema\": 1, \"run_id\": ");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let all = fixture_results();
    let kept = report::load_results(results.path(), BadLines::Warn).unwrap();
    assert_eq!(kept["stateless"].len(), all["stateless"].len());
    let err = format!(
        "{:#}",
        report::load_results(results.path(), BadLines::Fail).unwrap_err()
    );
    let expected = format!("{}:3: not a run record: ", path.display());
    assert!(err.starts_with(&expected), "{err}");
}

/// The `href`s of `html` (escaped `/` undone) that point into `data/`.
fn data_links(html: &str) -> Vec<String> {
    html.replace("&#x2f;", "/")
        .split("href=\"")
        .skip(1)
        .filter_map(|s| s.split('"').next())
        .filter(|href| href.starts_with("data/"))
        .map(str::to_string)
        .collect()
}

/// Whether percentile `q` of a `.hgrm` text is `value` (ms): `value` lies
/// between the rows either side of `q`, within the histogram's 3
/// significant digits.
fn hgrm_has_at(text: &str, q: f64, value: f64) -> bool {
    let rows: Vec<(f64, f64)> = text
        .lines()
        .filter_map(|line| {
            let mut fields = line.split_whitespace();
            let value = fields.next()?.parse::<f64>().ok()?;
            let percentile = fields.next()?.parse::<f64>().ok()?;
            Some((value, percentile))
        })
        .collect();
    let below = rows.iter().rev().find(|(_, p)| *p <= q).unwrap().0;
    let above = rows.iter().find(|(_, p)| *p >= q).unwrap().0;
    below * (1.0 - 1e-3) <= value && value <= above * (1.0 + 1e-3)
}

/// A stored histogram, decoded as the report decodes it (microseconds).
fn histogram_of(record: &RunRecord) -> hdrhistogram::Histogram<u64> {
    use base64::Engine;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(record.latency_histogram.as_deref().unwrap())
        .unwrap();
    hdrhistogram::serialization::Deserializer::new()
        .deserialize(&mut &bytes[..])
        .unwrap()
}

/// The workload page links each table and chart to the records it was
/// drawn from and each latency row to its runs' histograms; every link
/// names a file written beside the pages, the records as the results file
/// holds them, the histograms as `suite export --hgrm` writes them.
#[test]
fn pages_hand_over_the_records_and_histograms_they_show() {
    let out = tempfile::tempdir().unwrap();
    write_fixture_site(out.path());
    let results = fixture_results();
    let records = &results["stateless"];
    let html = std::fs::read_to_string(out.path().join("stateless.html"))
        .unwrap()
        .replace("&#x2f;", "/");
    let links = data_links(&html);
    for link in &links {
        assert!(out.path().join(link).is_file(), "a dead link: {link}");
    }
    // Every record of the workload, line for line as the results file holds it.
    assert!(links.iter().any(|l| l == "data/stateless.jsonl"));
    assert_eq!(
        std::fs::read_to_string(out.path().join("data/stateless.jsonl")).unwrap(),
        std::fs::read_to_string(fixture().join("results/stateless.jsonl")).unwrap()
    );
    assert_the_latency_rows_link_their_runs_histograms(out.path(), &html, records);
    assert_a_histograms_file_holds_the_runs_figures(out.path(), records);
    // No run without a histogram has a file.
    let written: Vec<String> = std::fs::read_dir(out.path().join("data/hgrm"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    let with_histogram = results
        .values()
        .flatten()
        .filter(|r| r.latency_histogram.is_some())
        .count();
    assert_eq!(written.len(), with_histogram);
    // Each bench point's section links its own records.
    let sections = html.matches(r#"<h2 id="point-"#).count();
    for n in 1..=sections {
        let link = format!("data/stateless/point-{n}.jsonl");
        assert!(links.contains(&link), "{link}");
    }
    assert_the_index_and_the_avro_page_link_their_records(out.path());
}

/// The latency section: its tables link the iso point's records, and each
/// row the histograms of the runs it is the median of, each file as
/// `suite export --hgrm` writes it.
fn assert_the_latency_rows_link_their_runs_histograms(
    out: &Path,
    html: &str,
    records: &[RunRecord],
) {
    let latency = between(html, r#"<h2 id="latency">"#, r#"<h2 id="point-1">"#);
    let latency_links = data_links(latency);
    assert!(
        latency_links
            .iter()
            .any(|l| l == "data/stateless/point-1.jsonl"),
        "{latency_links:?}"
    );
    let iso =
        streamsuite::results::read_records(&out.join("data/stateless/point-1.jsonl")).unwrap();
    assert!(latency.contains(&format!("data: {} records (JSONL)", iso.len())));
    let iso_ids: Vec<&str> = iso.iter().map(|r| r.run_id.as_str()).collect();
    assert_eq!(
        iso_ids,
        runs_at_the_iso_point(records),
        "the iso point's records, in file order"
    );
    let histograms: Vec<&String> = latency_links
        .iter()
        .filter(|l| l.starts_with("data/hgrm/"))
        .collect();
    // rustpipe-eos and rustpipe, 5 runs each; legacy's single run stored none.
    assert_eq!(histograms.len(), 10, "{histograms:?}");
    for link in histograms {
        let run_id = link
            .trim_start_matches("data/hgrm/")
            .trim_end_matches(".hgrm");
        assert!(
            iso_ids.contains(&run_id),
            "{run_id} is not at the iso point"
        );
        let record = records.iter().find(|r| r.run_id == run_id).unwrap();
        let text = std::fs::read_to_string(out.join(link)).unwrap();
        assert_eq!(text, export::hgrm(record).unwrap());
        let h = histogram_of(record);
        for q in [0.5, 0.99] {
            let stored = h.value_at_quantile(q) as f64 / 1000.0;
            assert!(hgrm_has_at(&text, q, stored), "{run_id} at {q}");
        }
    }
}

/// The run ids of the fixture's iso point, in file order: 20,000/s, 30 s,
/// the default commit intervals, on the AMD host.
fn runs_at_the_iso_point(records: &[RunRecord]) -> Vec<&str> {
    let newest = records
        .iter()
        .find(|r| r.run_id == "20261130T071800Z-rustpipe-eos-rrrr5")
        .unwrap();
    records
        .iter()
        .filter(|r| {
            r.config.rate == newest.config.rate
                && r.config.window_s == newest.config.window_s
                && r.config.commit_policy() == newest.config.commit_policy()
                && r.host.cpu_model == newest.host.cpu_model
        })
        .map(|r| r.run_id.as_str())
        .collect()
}

/// A run whose figures were measured from its histogram: the file's p50
/// and p99 are the record's, to the histogram's 3 digits.
fn assert_a_histograms_file_holds_the_runs_figures(out: &Path, records: &[RunRecord]) {
    let measured = records
        .iter()
        .find(|r| r.run_id == "20261130T053600Z-rustpipe-eos-b001")
        .unwrap();
    let text =
        std::fs::read_to_string(out.join("data/hgrm/20261130T053600Z-rustpipe-eos-b001.hgrm"))
            .unwrap();
    for (q, metric) in [(0.5, "latency_p50_ms"), (0.99, "latency_p99_ms")] {
        let figure = measured.metrics[metric].value;
        assert!(hgrm_has_at(&text, q, figure), "{metric}: {figure}");
    }
}

/// The index and the Avro page link their records, each link to a file
/// written beside them.
fn assert_the_index_and_the_avro_page_link_their_records(out: &Path) {
    let index = std::fs::read_to_string(out.join("index.html")).unwrap();
    let avro = std::fs::read_to_string(out.join("avro-pipeline.html")).unwrap();
    for (page, expected) in [
        (&index, "data/stateless.jsonl"),
        (&index, "data/avro-etl.jsonl"),
        (&avro, "data/avro-etl.jsonl"),
        (&avro, "data/cpu-rig.jsonl"),
    ] {
        let links = data_links(page);
        assert!(links.iter().any(|l| l == expected), "{expected}: {links:?}");
        for link in links {
            assert!(out.join(&link).is_file(), "a dead link: {link}");
        }
    }
}

/// Rendering again into the same folder after runs are gone leaves no
/// file of theirs behind.
#[test]
fn a_second_render_removes_the_data_of_runs_that_are_gone() {
    let out = tempfile::tempdir().unwrap();
    write_fixture_site(out.path());
    let kept_run = "20261130T071800Z-rustpipe-eos-rrrr5";
    let gone_run = "20261130T053600Z-rustpipe-eos-b001";
    let hgrm = |run: &str| out.path().join(format!("data/hgrm/{run}.hgrm"));
    assert!(hgrm(gone_run).is_file() && hgrm(kept_run).is_file());
    let sections_before = std::fs::read_dir(out.path().join("data/stateless"))
        .unwrap()
        .count();
    // The newest batch at the iso point alone: one section, no avro-etl.
    let fewer = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(fixture().join("results/stateless.jsonl")).unwrap();
    let kept: String = text
        .lines()
        .filter(|l| l.contains("-rrrr"))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(fewer.path().join("stateless.jsonl"), &kept).unwrap();
    report::write_site(&suite(), fewer.path(), out.path(), BadLines::Fail).unwrap();
    assert!(hgrm(kept_run).is_file());
    assert!(
        !hgrm(gone_run).exists(),
        "a histogram of a run that is gone"
    );
    assert!(!out.path().join("data/avro-etl.jsonl").exists());
    assert!(!out.path().join("data/cpu-rig.jsonl").exists());
    let sections_after = std::fs::read_dir(out.path().join("data/stateless"))
        .unwrap()
        .count();
    assert!(sections_after < sections_before);
    let html = std::fs::read_to_string(out.path().join("stateless.html")).unwrap();
    for link in data_links(&html) {
        assert!(out.path().join(&link).is_file(), "a dead link: {link}");
    }
    assert_eq!(
        std::fs::read_to_string(out.path().join("data/stateless.jsonl")).unwrap(),
        kept
    );
}
