//! The pages rendered from the fixture results: the index's matrix, the
//! workload page's every kind of run, its sections per bench point and its
//! cost of exactly-once, how sure each figure is, the Avro pipeline page,
//! and the pages of an empty results folder.

use streamsuite::report::{self, BadLines};

use crate::support::{between, fixture_pages, page, suite};

/// The iso point's host, as every point of a page with two hosts names it.
const AMD: &str = " · host AMD EPYC · 2 cores · kernel 6.18.44-fc-v782";

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
    assert_the_matrix_shows_each_lines_newest_batch(&pages[0].1.replace("&#x2f;", "/"));
    let workload = &pages[2].1.replace("&#x2f;", "/");
    assert_the_workload_page_shows_every_kind_of_run(workload);
    assert_the_faults_table_marks_only_broken_claims(workload);
    assert_each_bench_point_keeps_to_its_section(workload);
    assert_the_cost_of_exactly_once_pairs_rounds(workload);
    for (name, html) in &pages {
        crate::assert_snapshot(&format!("fixture_{name}"), html, "html");
    }
}

/// The matrix: each line's newest batch at its page's compared point with
/// its n and interval, the regime of a line that did not keep up there,
/// or why there is none.
fn assert_the_matrix_shows_each_lines_newest_batch(index: &str) {
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
}

/// Repeated, saturated, draining, failed and unpaired lines, a flag no
/// product knows, release and A/A checks, a drain, the unverified runs and
/// one section per point, each where the workload page shows it.
fn assert_the_workload_page_shows_every_kind_of_run(workload: &str) {
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
    assert!(!workload.contains(">us<"), "a unit written us");
    assert!(!workload.contains("-0.0 %"), "a drift of -0.0 %");
}

/// The faults table: each line's newest run with kills and with a broker
/// restart. The exactly-once campaign that repeated records is red with
/// its counts; the at-least-once line's repeats are only counted.
fn assert_the_faults_table_marks_only_broken_claims(workload: &str) {
    let faults = between(workload, r#"<h3 id="chaos">"#, "</details>");
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
}

/// The default point's section and the latency tables at the iso point
/// show none of the newer runs at other points; the run defaults' section
/// comes first and names its commit intervals.
fn assert_each_bench_point_keeps_to_its_section(workload: &str) {
    let order = |text: &str| workload.find(text).unwrap();
    // The default point's section shows none of the newer runs at 1,000/s
    // or at a 60 s window, though they are each line's newest.
    let default_point = between(workload, r#"<h2 id="point-1">"#, r#"<h2 id="point-2">"#);
    assert!(!default_point.contains("2026-11-30 06:0"), "points mixed");
    // The latency tables are at the iso point (20,000/s in the fixture): the
    // newer eos run at 1,000/s (p50 32.3 ms) is not in them.
    let latency = between(workload, r#"<h2 id="latency">"#, r#"<h2 id="point-1">"#);
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
}

/// The eos and alos lines of one batch at 1,000/s are interleaved; at
/// 20,000/s they ran in two batches. The iso point's 5 rounds give a median
/// ratio with its interval, the Intel host's 3 decide nothing, a change of
/// single runs is drawn lighter, and a pair never run together has no ratio.
fn assert_the_cost_of_exactly_once_pairs_rounds(workload: &str) {
    let cost = between(workload, r#"<h2 id="eos">"#, "</table>");
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
}

#[test]
fn pages_say_how_sure_each_figure_is() {
    let pages = fixture_pages();
    let workload = page(&pages, "stateless.html");
    let section = |from: &str, to: &str| between(&workload, from, to).to_string();
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
        crate::assert_snapshot(&format!("empty_{name}"), html, "html");
    }
}
