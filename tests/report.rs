//! Snapshot tests of the report pages and exports, rendered from fixture
//! results: a repeated batch, keep-up, saturated and draining lines, an
//! exactly-once / at-least-once pair, a failed run, a run with an injected
//! crash (in the one-kill form of older records), a kill campaign that
//! repeated records on an exactly-once line, an at-least-once broker
//! restart, a sanity warning, a line no product describes, and an empty folder;
//! three bench points (20,000/s, 1,000/s, and another window), a two-line
//! batch at 1,000/s and a pair measured only at different points; at the
//! iso point a 5-round interleaved batch of an exactly-once / at-least-once
//! pair beside their older batches and a single run, and the same pair in 3
//! rounds on a second host of the same name with another CPU. For the
//! Avro pipeline page: a CPU rig batch of nine arms, and avro-etl runs of
//! three Avro arms (two repeated), the raw arm and a failed arm.

use std::path::PathBuf;

use streamsuite::config::Suite;
use streamsuite::report::{self, export, BadLines};

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/report")
}

fn suite() -> Suite {
    Suite::load(&fixture().join("config/bench.yaml")).unwrap()
}

#[test]
fn pages_show_every_kind_of_run() {
    let pages = fixture_pages();
    let names: Vec<&str> = pages.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "index.html",
            "avro-etl.html",
            "stateless.html",
            "avro-pipeline.html"
        ]
    );
    // minijinja's HTML escaping writes `/` as `&#x2f;`
    let index = &pages[0].1.replace("&#x2f;", "/");
    // The iso point's host, as every point of a page with two hosts names it.
    const AMD: &str = " · host AMD EPYC · 2 cores · kernel 6.18.44-fc-v782";
    // The matrix: each line's newest batch at its page's compared point with
    // its n and interval, the regime of a line that did not keep up there,
    // or why there is none.
    for expected in [
        "Workloads × lines",
        &format!("<td title=\"added_p50_ms, us_cpu_per_record: median of 5 run(s) of the newest batch at 20,000/s · 30 s window{AMD}; newest 20261130T071600Z-rustpipe-rrrr5\">20.2 ms · 7.00 µs<span class=\"ci\">n = 5 · 93.75 %: 19.5 – 21.1 · 6.80 – 7.20</span></td>"),
        ">saturated</td>",
        "<td class=\"na\">not run</td>",
        ">212,814 rows/s · —<",
        "title=\"fakeflow does not implement avro-etl (products/fakeflow/product.yaml)\">not supported<",
    ] {
        assert!(index.contains(expected), "index: missing `{expected}`");
    }
    let workload = &pages[2].1.replace("&#x2f;", "/");
    for expected in [
        "median of 3 runs",
        "saturated",
        "draining",
        "legacy: product legacy has no exactly-once line to pair with.",
        "fakeflow-eos exited (exit status: 1)",
        "brand-new-flag",
        "4,210 ms",
        &format!("⚠ off: rustpipe-eos at 20,000/s · 30 s window{AMD} (selectivity 0.4127 vs 0.2885 expected; 3 of 1100 records have wrong derived fields)"),
        "band-red",
        "drain of 300,000 records",
        // A release check of rustpipe, 0.0.9 against 0.1.0 round by round:
        // CPU per record worse in every round, by 10 % at the median, is
        // marked; p50 moved inside the A/A check's spread.
        ">0.0.9 → 0.1.0</td>",
        "⚠ +10.0 % [+9.0 % … +12.0 %]</td>",
        "+0.0 % [-1.5 % … +2.0 %] · within noise</td>",
        // The A/A check: the noise floor.
        ">+0.0 % [-3.0 % … +3.0 %]</td>",
        "read capacity",
        "262,144",
        "not verified: incomplete",
        &format!("Not verified: fakeflow at 20,000/s · 30 s window{AMD}, rustpipe at 20,000/s · 30 s window{AMD}, \
         legacy at 20,000/s · 30 s window{AMD}, rustpipe at 1,000/s · 30 s window{AMD}, "),
        "not described in products/",
        // one section per point, the run defaults first
        &format!("20,000/s · 30 s window{AMD} (run defaults, iso rate)"),
        &format!("1,000/s · 30 s window{AMD}</h2>"),
        &format!("20,000/s · 60 s window{AMD}</h2>"),
        "Exactly-once lines",
        "At-least-once lines",
        "µs",
        "abc1234",
        "not comparable",
    ] {
        assert!(workload.contains(expected), "missing `{expected}`");
    }
    // The faults table: each line's newest run with kills and with a broker
    // restart. The exactly-once campaign that repeated records is red with
    // its counts; the at-least-once line's repeats are only counted.
    let faults = workload
        .split(r#"<h3 id="chaos">"#)
        .nth(1)
        .and_then(|s| s.split("</details>").next())
        .unwrap();
    for expected in [
        "3 kills, restarted",
        "2 / 3",
        "<td class=\"bad\">2</td>",
        "exactly-once broken",
        "1,000 ms",
        "broker restart at 5 s",
        "out 6,400 ms; output again after 9,100 ms",
        ">37<",
        "✗ exactly-once did not hold under faults: rustpipe-eos (0 missing, 2 duplicated).",
    ] {
        assert!(faults.contains(expected), "faults: missing `{expected}`");
    }
    assert!(
        !faults.contains("class=\"bad\">37<"),
        "an at-least-once line's duplicates marked as a broken claim"
    );
    assert!(!workload.contains(">us<"), "a unit written us");
    assert!(!workload.contains("-0.0 %"), "a drift of -0.0 %");
    let order = |text: &str| workload.find(text).unwrap();
    // The default point's section shows none of the newer runs at 1,000/s
    // or at a 60 s window, though they are each line's newest.
    let default_point = workload
        .split(r#"<h2 id="point-1">"#)
        .nth(1)
        .and_then(|s| s.split(r#"<h2 id="point-2">"#).next())
        .unwrap();
    assert!(!default_point.contains("2026-11-30 06:0"), "points mixed");
    // The latency tables are at the iso point (20,000/s in the fixture): the
    // newer eos run at 1,000/s (p50 32.3 ms) is not in them.
    let latency = workload
        .split(r#"<h2 id="latency">"#)
        .nth(1)
        .and_then(|s| s.split(r#"<h2 id="point-1">"#).next())
        .unwrap();
    assert!(
        latency.contains(">36.2<") && !latency.contains(">32.3<"),
        "{latency}"
    );
    assert!(workload.contains(&format!(
        "20,000/s · 30 s window · commits every 1000 ms exactly-once, 1000 ms at-least-once{AMD}</h2>"
    )));
    assert!(
        order("(run defaults, iso rate)</h2>") < order(&format!("1,000/s · 30 s window{AMD}</h2>"))
    );
    // The eos and alos lines of one batch at 1,000/s are interleaved; at
    // 20,000/s they ran in two batches.
    let cost = workload
        .split(r#"<h2 id="eos">"#)
        .nth(1)
        .and_then(|s| s.split("</table>").next())
        .unwrap();
    let row_of = |point: &str| {
        cost.split("<tr>")
            .find(|row| row.contains("rustpipe-eos") && row.contains(point))
            .unwrap_or_else(|| panic!("no cost row at {point}"))
            .to_string()
    };
    assert!(row_of("1,000/s").contains("interleaved"));
    // The 5 rounds at the iso point: the median of the per-round ratios
    // with its interval; the 3 rounds on the Intel host decide nothing.
    let iso = row_of(&format!("20,000/s · 30 s window{AMD}"));
    for expected in [
        "5 paired rounds",
        ">5 paired rounds<span class=\"ci\">93.75 % intervals</span>",
        ">-11.2 %<span class=\"ci\">-11.6 % – -10.5 %</span>",
        "interleaved",
    ] {
        assert!(iso.contains(expected), "{expected}: {iso}");
    }
    let intel = row_of("host Intel Xeon Platinum 8375C · 2 cores");
    for expected in [
        "3 paired rounds",
        ">3 paired rounds<span class=\"ci\">75 % intervals</span>",
        ">not separable<span class=\"ci\">-11.7 % – +2.6 %</span>",
    ] {
        assert!(intel.contains(expected), "{expected}: {intel}");
    }
    // A change of single runs is drawn lighter.
    assert!(row_of("1,000/s").contains("<td class=\"single\""));
    let fakeflow = cost
        .split("<tr>")
        .find(|row| row.contains("fakeflow-eos"))
        .unwrap();
    assert!(fakeflow.contains("not comparable"), "{fakeflow}");
    assert!(!fakeflow.contains('%'), "{fakeflow}");
    for (name, html) in &pages {
        insta::assert_snapshot!(format!("fixture_{name}"), html);
    }
}

#[test]
fn pages_say_how_sure_each_figure_is() {
    let pages = fixture_pages();
    let workload = page(&pages, "stateless.html");
    const AMD: &str = " · host AMD EPYC · 2 cores · kernel 6.18.44-fc-v782";
    let section = |from: &str, to: &str| {
        workload
            .split(from)
            .nth(1)
            .and_then(|s| s.split(to).next())
            .unwrap_or_else(|| panic!("no section from {from}"))
            .to_string()
    };
    // The summary: the 5-round batch heads it with its n and interval.
    let summary = section(r#"<section class="summary""#, "</section>");
    for expected in [
        "rustpipe-eos 0.1.0: 29.8 ms <span class=\"certainty\">[n = 5 · 93.75 %: 28.7 – 30.6 ms]</span>",
        "<dt>cost of exactly-once, rustpipe</dt><dd>rows/s per core -11.2 %, CPU / record 7.00 → 7.90 µs",
        "[5 paired rounds · 93.75 %: -11.6 % – -10.5 %]",
    ] {
        assert!(summary.contains(expected), "{expected}: {summary}");
    }
    // The iso point's tables: n for every row with the coverage of its
    // intervals, 93.75 % at five runs and never called 95 %; an interval
    // under each headline figure; the single run marked as such; the
    // saturated line listed, not in the table.
    let latency = section(r#"<h2 id="latency">"#, r#"<h2 id="point-1">"#);
    // (the row's histograms are linked under its n)
    assert!(latency.contains(">5<span class=\"ci\">93.75 % intervals</span><span class=\"files\">"));
    assert!(
        latency.contains("<span class=\"repeat\">36.2</span><span class=\"ci\">35.1 – 37.0</span>")
    );
    let tables = latency.split("<details").next().unwrap();
    assert!(!tables.contains("95 % interval"), "{tables}");
    let intel = section(r#"<h2 id="point-4">"#, r#"<h2 id="point-5">"#);
    assert!(intel.contains(">3<span class=\"ci\">75 % intervals</span></td>"));
    assert!(latency.contains(
        "<tr><td>legacy 0.9</td><td class=\"single\" title=\"one run of batch 20261130T054500Z-batch-gggg: no median, no interval\">single run</td>"
    ));
    assert!(
        latency.contains("<td class=\"band-yellow single\""),
        "a single run's figure is lighter"
    );
    let iso = section(r#"<h2 id="point-1">"#, r#"<h2 id="point-2">"#);
    assert!(iso.contains(
        "Not in this table (efficiency only where a line kept up): fakeflow 2.0.1 (saturated, consumed 12,000/s: its capacity here; flagged brand-new-flag, host-saturated, verification-incomplete)."
    ));
    assert!(
        !iso.contains("<tr><td title=\"brand-new-flag"),
        "the saturated line heads a row"
    );
    // Older batches of the line at the point: the newest named, the spread
    // of the others' medians given.
    assert!(iso.contains(
        "rustpipe: newest batch 20261130T070000Z-batch-rrrr shown (5 runs); 2 older batches of 0.1.0 at this point, their medians: consumed/s 19,989 – 39,978, rows/s per core 143,807 – 287,615, CPU / record 6.95 – 13.91 µs."
    ), "{iso}");
    assert!(iso.contains("rustpipe-eos: newest batch 20261130T070000Z-batch-rrrr shown (5 runs); 1 older batch of 0.1.0 at this point, its medians:"));
    // The draining line leaves the table of its point, which says so.
    assert!(workload.contains("<p class=\"empty\">no line kept up here</p>\n<p class=\"note\">Not in this table (efficiency only where a line kept up): fakeflow-eos 2.0.1 (draining).</p>"));
    // Two hosts named vm: told apart by their CPU in the header, the
    // section titles and every row that mixes them.
    for expected in [
        "<dd>AMD EPYC · 2 cores · 24,105 MB · kernel 6.18.44-fc-v782 (vm)<br>Intel Xeon Platinum 8375C · 2 cores · 24,105 MB · kernel 6.18.44-fc-v782 (vm)</dd>",
        "<h2 id=\"point-4\">20,000/s · 30 s window · host Intel Xeon Platinum 8375C · 2 cores · kernel 6.18.44-fc-v782</h2>",
        &format!("<h2 id=\"point-1\">20,000/s · 30 s window{AMD} (run defaults, iso rate)</h2>"),
    ] {
        assert!(workload.contains(expected), "missing `{expected}`");
    }
    assert!(
        !workload.contains("host vm"),
        "a host named by its hostname alone"
    );
}

/// Every page rendered from the fixture results.
fn fixture_pages() -> Vec<(String, String)> {
    let results = report::load_results(&fixture().join("results"), BadLines::Fail).unwrap();
    let rig = report::load_rig_results(&fixture().join("results"), BadLines::Fail).unwrap();
    report::render_site(&suite(), &results, &rig).unwrap().pages
}

/// The page named `name`, with `/` and `'` unescaped.
fn page(pages: &[(String, String)], name: &str) -> String {
    pages
        .iter()
        .find(|(n, _)| n == name)
        .unwrap_or_else(|| panic!("no page {name}"))
        .1
        .replace("&#x2f;", "/")
        .replace("&#x27;", "'")
}

#[test]
fn the_avro_page_sets_both_rigs_side_by_side() {
    let pages = fixture_pages();
    let avro = page(&pages, "avro-pipeline.html");
    for expected in [
        // the two multiples: 167.55 / 18.42 and 21.48M / 5.09M
        ">9.1×</div>",
        "this project's target: at least 8×: met",
        ">4.2×</div>",
        "this project's target: at least 5×: not met",
        "Decode cost per event (lower is better)",
        "Pipeline stage throughput (higher is better)",
        "164.9 – 171.0",
        "End-to-end rows/s (higher is better)",
        "Sink flush p99 (lower is better)",
        "raw · RowBinary: not comparable on rows/s: one row per message, where the Avro \
         arms write up to 20 rows per message.",
        "1 failed run is left out of every figure",
        "Limit: the sink (ClickHouse).",
        "The Avro arms land within 0.7 % of each other",
        "ClickHouse used more CPU than the product (149 % against 63 % of one core",
    ] {
        assert!(avro.contains(expected), "missing `{expected}`");
    }
    // The raw arm is in the table, never in a chart.
    let charts: Vec<&str> = avro
        .split("<svg class=\"chart\"")
        .skip(1)
        .map(|s| s.split("</svg>").next().unwrap())
        .collect();
    assert_eq!(charts.len(), 4);
    for chart in &charts[2..] {
        assert!(chart.contains("fast-borrowed · Native"), "{chart}");
        assert!(!chart.contains("raw"), "{chart}");
    }
    let rows_data = avro
        .split("End-to-end rows/s (higher is better)")
        .nth(1)
        .and_then(|s| s.split("</figure>").next())
        .unwrap();
    assert!(!rows_data.contains("raw"), "{rows_data}");
    // The two rigs are linked from the index and the avro-etl page.
    for linking in ["index.html", "avro-etl.html"] {
        assert!(
            page(&pages, linking).contains("<a href=\"avro-pipeline.html\">Avro pipeline</a>"),
            "{linking}"
        );
    }
    // avro-etl's own page shows its runs without probe or histogram.
    let etl = page(&pages, "avro-etl.html");
    assert!(etl.contains("unpaced · 30 s window"), "{etl}");
}

#[test]
fn an_empty_results_folder_renders_pages_that_say_so() {
    let empty = tempfile::tempdir().unwrap();
    let results = report::load_results(empty.path(), BadLines::Fail).unwrap();
    let pages = report::render_site(&suite(), &results, &[]).unwrap().pages;
    // Every measured section is empty; only the characteristics from
    // products/ remain.
    // Both latency tables, the bench points, sanity and failed runs; the
    // cost table lists the pairs not run yet; the releases and the noise
    // floor name the check that fills them.
    assert_eq!(pages[1].1.matches("no recorded data yet").count(), 5);
    assert!(pages[1].1.contains(
        "no release check recorded yet: `suite regress LINE WORKLOAD --baseline VERSION`"
    ));
    assert!(pages[1].1.contains("no A&#x2f;A check recorded yet"));
    // The Avro page names the commands that record what it shows.
    let avro = page(&pages, "avro-pipeline.html");
    assert!(avro.contains("suite rig cpu measures"), "{avro}");
    assert!(
        avro.contains("suite run rustpipe avro-etl records"),
        "{avro}"
    );
    for (name, html) in &pages {
        insta::assert_snapshot!(format!("empty_{name}"), html);
    }
}

#[test]
fn pages_are_written_into_the_out_folder() {
    let out = tempfile::tempdir().unwrap();
    let index = report::write_site(
        &suite(),
        &fixture().join("results"),
        out.path(),
        BadLines::Fail,
    )
    .unwrap();
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
    let all = report::load_results(&fixture().join("results"), BadLines::Fail).unwrap();
    let kept = report::load_results(results.path(), BadLines::Warn).unwrap();
    assert_eq!(kept["stateless"].len(), all["stateless"].len());
    let err = format!(
        "{:#}",
        report::load_results(results.path(), BadLines::Fail).unwrap_err()
    );
    let expected = format!("{}:3: not a run record: ", path.display());
    assert!(err.starts_with(&expected), "{err}");
}

#[test]
fn tables_export_as_markdown() {
    let results = report::load_results(&fixture().join("results"), BadLines::Fail).unwrap();
    let page = report::workload_page(&suite(), "stateless", &results["stateless"]);
    insta::assert_snapshot!("stateless_markdown", export::markdown(&page));
}

/// The tidy CSV export read back gives every record's figures: one row per
/// run and figure, the value exact, with its unit, direction and run.
#[test]
fn the_tidy_csv_export_reads_back_as_the_records_figures() {
    let results = report::load_results(&fixture().join("results"), BadLines::Fail).unwrap();
    let records = &results["stateless"];
    let text = export::csv(&export::figure_rows(records)).unwrap();
    let rows: Vec<export::FigureRow> = csv::Reader::from_reader(text.as_bytes())
        .deserialize()
        .collect::<Result<_, _>>()
        .unwrap();
    let figures: usize = records.iter().map(|r| r.metrics.len()).sum();
    assert!(
        figures > 100,
        "the fixture has figures to export: {figures}"
    );
    assert_eq!(rows.len(), figures);
    for record in records {
        let of_run: Vec<&export::FigureRow> =
            rows.iter().filter(|r| r.run_id == record.run_id).collect();
        assert_eq!(of_run.len(), record.metrics.len(), "{}", record.run_id);
        for row in of_run {
            let metric = &record.metrics[&row.figure];
            assert_eq!(
                (row.value, row.unit.as_str(), row.direction),
                (metric.value, metric.unit.as_str(), metric.better),
                "{} {}",
                record.run_id,
                row.figure
            );
            assert_eq!(
                (&row.line, &row.version, row.status, row.regime),
                (&record.line, &record.version, record.status, record.regime)
            );
            assert_eq!(
                (row.rate, row.window_s, row.parallelism),
                (
                    record.config.rate,
                    record.config.window_s,
                    record.config.parallelism
                )
            );
        }
    }
    // The JSON Lines export holds the same rows.
    let jsonl = export::jsonl(&export::figure_rows(records)).unwrap();
    let from_json: Vec<export::FigureRow> = jsonl
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(from_json, rows);
    // Runs at different points never share a bench point's name.
    let point_of = |run_id: &str| {
        rows.iter()
            .find(|r| r.run_id == run_id)
            .map(|r| r.bench_point.clone())
            .unwrap()
    };
    let fast = records.iter().find(|r| r.config.rate == 20_000).unwrap();
    let slow = records.iter().find(|r| r.config.rate == 1_000).unwrap();
    assert_ne!(point_of(&fast.run_id), point_of(&slow.run_id));
}

#[test]
fn a_runs_histogram_exports_as_hgrm() {
    let results = report::load_results(&fixture().join("results"), BadLines::Fail).unwrap();
    let run = results["stateless"]
        .iter()
        .find(|r| r.run_id == "20261130T053600Z-rustpipe-eos-b001")
        .unwrap();
    let text = export::hgrm(run).unwrap();
    assert!(text.starts_with("       Value     Percentile TotalCount 1/(1-Percentile)\n\n"));
    assert!(text.contains("Total count    =       173902]"), "{text}");
    insta::assert_snapshot!("rustpipe_eos_hgrm", text);
    let failed = results["stateless"]
        .iter()
        .find(|r| r.latency_histogram.is_none())
        .unwrap();
    let err = format!("{:#}", export::hgrm(failed).unwrap_err());
    assert!(err.contains("stored no latency histogram"), "{err}");
}

#[test]
fn the_report_and_export_commands_write_pages_and_tables() {
    let out = tempfile::tempdir().unwrap();
    let suite = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_suite"))
            .arg("--config")
            .arg(fixture().join("config/bench.yaml"))
            .args(args)
            .output()
            .unwrap()
    };
    let report = suite(&["report", "--out", out.path().to_str().unwrap()]);
    assert!(report.status.success(), "{report:?}");
    assert!(String::from_utf8_lossy(&report.stdout).contains("index.html"));
    assert!(out.path().join("stateless.html").is_file());
    let markdown = suite(&["export", "stateless", "--format", "markdown"]);
    assert!(String::from_utf8_lossy(&markdown.stdout).contains("## Cost of exactly-once"));
    let tidy = suite(&["export", "stateless", "--format", "csv"]);
    assert!(tidy.status.success(), "{tidy:?}");
    assert!(String::from_utf8_lossy(&tidy.stdout).starts_with("run_id,batch_id,round,"));
    let unknown = suite(&["export", "no-such-run", "--format", "hgrm"]);
    assert_eq!(unknown.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&unknown.stderr).contains("no run `no-such-run`"),
        "{unknown:?}"
    );
}

/// Each line's latency over time, p50 and p99 per interval on a log axis,
/// is drawn beside the per-second rates of its point: only the 1,000/s
/// point's rustpipe run of the fixture has a latency series.
#[test]
fn latency_over_time_is_drawn_beside_the_rates() {
    let pages = fixture_pages();
    let workload = page(&pages, "stateless.html");
    for title in ["latency p50 over time", "latency p99 over time"] {
        let caption = format!("<figcaption>{title}</figcaption>");
        assert_eq!(workload.matches(&caption).count(), 1, "{title}");
        let chart = workload.split(&caption).nth(1).unwrap();
        let svg = chart.split("</svg>").next().unwrap();
        assert!(svg.contains("(ms, log)"), "{title}: no log axis");
        assert_eq!(svg.matches("<polyline").count(), 1, "{title}: one line");
        let charts = workload.split(&caption).next().unwrap();
        let cpu = charts
            .rfind("<figcaption>product CPU</figcaption>")
            .unwrap();
        assert!(
            !charts[cpu..].contains("<h2"),
            "{title}: not in the same point as the rates"
        );
    }
}

/// A rate sweep of two lines (one falls short at 8,000/s by saturating, the
/// other at 4,000/s by going over the bound, then bisected to 3,000/s) and
/// a parallelism sweep, crafted from a fixture run: the page draws
/// latency against rate with a curve per line and each line's mark, and
/// tables each line's maximum sustainable throughput with its bracket.
#[test]
fn a_sweep_draws_latency_against_rate_and_tables_each_lines_bracket() {
    use streamsuite::results::{Better, Metric, Regime, RunRecord, SweepKind, SweepTag};
    let fixture_runs = report::load_results(&fixture().join("results"), BadLines::Fail).unwrap();
    let template = fixture_runs["stateless"]
        .iter()
        .find(|r| r.line == "rustpipe" && r.regime == Some(Regime::KeepUp))
        .unwrap()
        .clone();
    let tag = |id: &str, kind, step| SweepTag {
        id: id.to_string(),
        kind,
        p99_bound_ms: (kind == SweepKind::Rate).then_some(250.0),
        bisect_step: step,
    };
    let run = |line: &str, rate: u64, added_p99: Option<f64>, step: Option<u32>, i: u32| {
        let mut r: RunRecord = template.clone();
        r.run_id = format!("20261202T10{i:02}00Z-{line}-sw{i:02}");
        r.batch_id = format!("sweep-batch-{}", step.unwrap_or(0));
        r.started_at = format!("2026-12-02T10:{i:02}:00Z");
        r.line = line.to_string();
        r.config.rate = rate;
        r.flags.clear();
        r.sweep = Some(tag("20261202T100000Z-sweep-aa11", SweepKind::Rate, step));
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
    let mut records = vec![
        run("rustpipe", 2000, Some(12.0), None, 1),
        run("rustpipe-eos", 2000, Some(60.0), None, 2),
        run("rustpipe", 4000, Some(18.0), None, 3),
        run("rustpipe-eos", 4000, Some(400.0), None, 4),
        run("rustpipe", 8000, None, None, 5),
        run("rustpipe-eos", 8000, None, None, 6),
        run("rustpipe", 6000, Some(30.0), Some(1), 7),
        run("rustpipe-eos", 3000, Some(120.0), Some(1), 8),
    ];
    for (i, parallelism) in [1u32, 2].into_iter().enumerate() {
        let mut r = template.clone();
        r.run_id = format!("20261202T1100{i}0Z-rustpipe-par{i}");
        r.started_at = format!("2026-12-02T11:00:{i}0Z");
        r.config.parallelism = parallelism;
        r.sweep = Some(tag(
            "20261202T110000Z-sweep-bb22",
            SweepKind::Parallelism,
            None,
        ));
        records.push(r);
    }
    let results = std::collections::BTreeMap::from([("stateless".to_string(), records)]);
    let pages = report::render_site(&suite(), &results, &[]).unwrap().pages;
    let html = page(&pages, "stateless.html");
    // Newest first: the parallelism sweep, then the rate sweep.
    let section = |id: &str| {
        html.split(&format!(r#"<h2 id="{id}">"#))
            .nth(1)
            .and_then(|s| s.split("<h2 ").next())
            .unwrap_or_else(|| panic!("no section {id}"))
            .to_string()
    };
    let rate = section("sweep-2");
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
    let parallelism = section("sweep-1");
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
    insta::assert_snapshot!("sweep_sections", format!("{rate}\n{parallelism}"));
}

/// A fixture run copied as a cluster deployment's, with three processes
/// sampled: the page gives the cluster its own section, headed so, whose
/// resources table counts the processes, and the embedded runs stay in
/// theirs, with no such column.
#[test]
fn a_cluster_deployment_has_its_own_section_with_its_process_count() {
    let fixture_runs = report::load_results(&fixture().join("results"), BadLines::Fail).unwrap();
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
    let results = std::collections::BTreeMap::from([("stateless".to_string(), records)]);
    let pages = report::render_site(&suite(), &results, &[]).unwrap().pages;
    let html = page(&pages, "stateless.html");
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
    let fixture_runs = report::load_results(&fixture().join("results"), BadLines::Fail).unwrap();
    let mut records = fixture_runs["stateless"].clone();
    let local_sections = {
        let results =
            std::collections::BTreeMap::from([("stateless".to_string(), records.clone())]);
        let pages = report::render_site(&suite(), &results, &[]).unwrap().pages;
        page(&pages, "stateless.html")
            .matches(r#"<h2 id="point-"#)
            .count()
    };
    let mut placed = records
        .iter()
        .find(|r| r.line == "rustpipe" && r.resources.is_some())
        .unwrap()
        .clone();
    placed.run_id = "20261203T110000Z-rustpipe-ssh1".into();
    placed.batch_id = "remote-batch".into();
    placed.config.hosts = vec!["ssh://bench@engine-1".into()];
    records.push(placed);
    let results = std::collections::BTreeMap::from([("stateless".to_string(), records)]);
    let pages = report::render_site(&suite(), &results, &[]).unwrap().pages;
    let html = page(&pages, "stateless.html");
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
fn histogram_of(record: &streamsuite::results::RunRecord) -> hdrhistogram::Histogram<u64> {
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
    report::write_site(
        &suite(),
        &fixture().join("results"),
        out.path(),
        BadLines::Fail,
    )
    .unwrap();
    let results = report::load_results(&fixture().join("results"), BadLines::Fail).unwrap();
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
    // The latency section: its tables link the iso point's records, and
    // each row the histograms of the runs it is the median of.
    let latency = html
        .split(r#"<h2 id="latency">"#)
        .nth(1)
        .and_then(|s| s.split(r#"<h2 id="point-1">"#).next())
        .unwrap();
    let latency_links = data_links(latency);
    assert!(
        latency_links
            .iter()
            .any(|l| l == "data/stateless/point-1.jsonl"),
        "{latency_links:?}"
    );
    let iso = streamsuite::results::read_records(&out.path().join("data/stateless/point-1.jsonl"))
        .unwrap();
    assert!(latency.contains(&format!("data: {} records (JSONL)", iso.len())));
    let iso_ids: Vec<&str> = iso.iter().map(|r| r.run_id.as_str()).collect();
    // The fixture's iso point: 20,000/s, 30 s, the default commit intervals,
    // on the AMD host.
    let newest = records
        .iter()
        .find(|r| r.run_id == "20261130T071800Z-rustpipe-eos-rrrr5")
        .unwrap();
    let at_iso: Vec<&str> = records
        .iter()
        .filter(|r| {
            r.config.rate == newest.config.rate
                && r.config.window_s == newest.config.window_s
                && r.config.commit_policy() == newest.config.commit_policy()
                && r.host.cpu_model == newest.host.cpu_model
        })
        .map(|r| r.run_id.as_str())
        .collect();
    assert_eq!(iso_ids, at_iso, "the iso point's records, in file order");
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
        let text = std::fs::read_to_string(out.path().join(link)).unwrap();
        assert_eq!(text, export::hgrm(record).unwrap());
        let h = histogram_of(record);
        for q in [0.5, 0.99] {
            let stored = h.value_at_quantile(q) as f64 / 1000.0;
            assert!(hgrm_has_at(&text, q, stored), "{run_id} at {q}");
        }
    }
    // A run whose figures were measured from its histogram: the file's
    // p50 and p99 are the record's, to the histogram's 3 digits.
    let measured = records
        .iter()
        .find(|r| r.run_id == "20261130T053600Z-rustpipe-eos-b001")
        .unwrap();
    let text = std::fs::read_to_string(
        out.path()
            .join("data/hgrm/20261130T053600Z-rustpipe-eos-b001.hgrm"),
    )
    .unwrap();
    for (q, metric) in [(0.5, "latency_p50_ms"), (0.99, "latency_p99_ms")] {
        let figure = measured.metrics[metric].value;
        assert!(hgrm_has_at(&text, q, figure), "{metric}: {figure}");
    }
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
    // The index and the Avro page link theirs.
    let index = std::fs::read_to_string(out.path().join("index.html")).unwrap();
    let avro = std::fs::read_to_string(out.path().join("avro-pipeline.html")).unwrap();
    for (page, expected) in [
        (&index, "data/stateless.jsonl"),
        (&index, "data/avro-etl.jsonl"),
        (&avro, "data/avro-etl.jsonl"),
        (&avro, "data/cpu-rig.jsonl"),
    ] {
        let links = data_links(page);
        assert!(links.iter().any(|l| l == expected), "{expected}: {links:?}");
        for link in links {
            assert!(out.path().join(&link).is_file(), "a dead link: {link}");
        }
    }
}

/// The latency section draws the CDF beside the percentile chart, one
/// curve per line, each ending at a share of 1 at the top of the plot.
#[test]
fn the_latency_cdf_rises_to_one_for_each_line() {
    let pages = fixture_pages();
    let html = page(&pages, "stateless.html");
    let latency = html
        .split(r#"<h2 id="latency">"#)
        .nth(1)
        .and_then(|s| s.split(r#"<h2 id="point-1">"#).next())
        .unwrap();
    let figure = latency
        .split("<figcaption>Latency CDF")
        .nth(1)
        .and_then(|s| s.split("</figure>").next())
        .expect("a CDF in the latency section");
    let svg = figure.split("</svg>").next().unwrap();
    let top = svg
        .split(r#"<rect class="frame" x=""#)
        .nth(1)
        .and_then(|s| s.split(r#"y=""#).nth(1))
        .and_then(|s| s.split('"').next())
        .unwrap()
        .to_string();
    let curves: Vec<&str> = svg.split("<polyline").skip(1).collect();
    assert_eq!(curves.len(), 2, "rustpipe-eos and rustpipe");
    for curve in curves {
        let points = curve.split(r#"points=""#).nth(1).unwrap();
        let last = points
            .split('"')
            .next()
            .unwrap()
            .split(' ')
            .next_back()
            .unwrap();
        let y = last.split(',').nth(1).unwrap();
        assert_eq!(
            y.parse::<f64>().unwrap(),
            top.parse::<f64>().unwrap(),
            "{last}"
        );
    }
    // The figures under it: the last row is every line's whole share.
    let data = figure.split("<tbody>").nth(1).unwrap();
    let last_row = data.rsplit("<tr>").next().unwrap();
    assert_eq!(last_row.matches("<td>1.0000</td>").count(), 2, "{last_row}");
    // Each point with keep-up histograms draws its own: at 1,000/s, the
    // rustpipe pair; a drain keeps up with nothing and has none.
    let point = |heading: &str| {
        html.split("<h2 id=\"point-")
            .skip(1)
            .find(|s| s.split("</h2>").next().unwrap().contains(heading))
            .and_then(|s| s.split("<h2 ").next())
            .unwrap_or_else(|| panic!("no section {heading}"))
            .to_string()
    };
    let slow = point("1,000/s · 30 s window");
    let cdf = slow.split("<figcaption>Latency CDF").nth(1).unwrap();
    assert_eq!(
        cdf.split("</svg>")
            .next()
            .unwrap()
            .matches("<polyline")
            .count(),
        2
    );
    assert!(!point("drain of 300,000 records").contains("Latency CDF"));
}

/// Rendering again into the same folder after runs are gone leaves no
/// file of theirs behind.
#[test]
fn a_second_render_removes_the_data_of_runs_that_are_gone() {
    let out = tempfile::tempdir().unwrap();
    report::write_site(
        &suite(),
        &fixture().join("results"),
        out.path(),
        BadLines::Fail,
    )
    .unwrap();
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
