//! The charts of the workload page: latency over time beside the rates of
//! its point, and the latency CDF of each point with keep-up histograms.

use crate::support::{fixture_pages, page};

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
