//! The checks of svg.

use super::bar_chart::short_tick_label;
use super::frame::{LEFT_MIN, RIGHT};
use super::text::{nines_label, CHAR_W};
use super::ticks::{log_ticks, nice_ticks};
use super::*;

#[test]
fn ticks_are_round_and_cover_the_range() {
    assert_eq!(
        nice_ticks(0.0, 47.0, 5),
        vec![0.0, 10.0, 20.0, 30.0, 40.0, 50.0]
    );
    assert_eq!(
        nice_ticks(-10.0, 30.0, 8),
        vec![-10.0, -5.0, 0.0, 5.0, 10.0, 15.0, 20.0, 25.0, 30.0]
    );
}

#[test]
fn the_nines_axis_labels_each_nine() {
    assert_eq!(nines_label(3), "99.9%");
    assert_eq!(nines_label(4), "99.99%");
}

#[test]
fn twelve_series_are_twelve_styles_and_none_is_red_or_green() {
    let styles: Vec<SeriesStyle> = (0..24).map(SeriesStyle::nth).collect();
    for (i, a) in styles.iter().enumerate() {
        assert!(styles[i + 1..].iter().all(|b| b != a), "style {i} repeats");
    }
    for colour in PALETTE {
        assert!(!["#d62728", "#2ca02c"].contains(&colour));
    }
}

#[test]
fn the_y_title_never_overlaps_long_tick_labels() {
    let svg = line_chart(
        &[Curve {
            name: "a".into(),
            style: SeriesStyle::nth(0),
            points: vec![(0.0, 0.0), (1.0, 4_000_000.0)],
        }],
        &XAxis::Nines { max: 4.0 },
        "records/s",
        SMALL,
    );
    // "4,000,000" right-aligned at left - 6: its start is past the title.
    let left = svg
        .split(r#"<rect class="frame" x=""#)
        .nth(1)
        .and_then(|s| s.split('"').next())
        .and_then(|x| x.parse::<f64>().ok())
        .unwrap();
    let label_start = left - 6.0 - 9.0 * CHAR_W;
    assert!(label_start >= 14.0 + 8.0, "left {left}");
}

#[test]
fn bars_start_at_zero_and_the_axis_covers_every_whisker() {
    let bar = |label: &str, value: f64, interval| Bar {
        label: label.into(),
        value,
        interval,
        text: format!("{value}"),
        colour: PALETTE[0],
    };
    let svg = bar_chart(
        &[
            bar("a <fast>", 18.0, Some((17.0, 19.5))),
            bar("b", 167.0, Some((160.0, 181.0))),
        ],
        "ns/event",
        640.0,
    );
    assert_eq!(svg.matches("<rect").count(), 2);
    assert_eq!(svg.matches(r#"class="whisker""#).count(), 2);
    assert!(svg.contains("a &lt;fast&gt;"));
    // 181 is past 167: the axis runs to 200, not to 180.
    assert!(svg.contains(">200</text>") && !svg.contains(">250</text>"));
    assert_eq!(short_tick_label(20_000_000.0), "20M");
    assert_eq!(short_tick_label(250_000.0), "250k");
    assert_eq!(short_tick_label(2_500_000.0), "2.5M");
    assert_eq!(short_tick_label(5000.0), "5,000");
}

#[test]
fn a_log_axis_spans_whole_decades() {
    assert_eq!(
        log_ticks(3.0, 40.0),
        (vec![1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0], 1.0, 100.0)
    );
    // beyond three decades, decades only
    assert_eq!(
        log_ticks(0.5, 2000.0).0,
        vec![0.1, 1.0, 10.0, 100.0, 1000.0, 10000.0]
    );
    // one value: the decade around it
    assert_eq!(log_ticks(10.0, 10.0).1, 10.0);
    assert_eq!(log_ticks(10.0, 10.0).2, 100.0);
}

#[test]
fn a_log_chart_breaks_a_curve_at_each_gap() {
    let svg = log_line_chart(
        &[Curve {
            name: "a".into(),
            style: SeriesStyle::nth(0),
            points: vec![
                (1.0, 20.0),
                (2.0, f64::NAN),
                (3.0, 30.0),
                (4.0, 1000.0),
                (5.0, f64::NAN),
                (6.0, 25.0),
            ],
        }],
        &XAxis::Linear {
            label: "s".into(),
            marker: None,
        },
        "ms",
        SMALL,
    );
    // 3 and 4 joined; 1 and 6 alone, as dots
    assert_eq!(svg.matches("<polyline").count(), 1, "{svg}");
    assert_eq!(svg.matches("<circle").count(), 2, "{svg}");
    assert!(svg.contains(">1,000</text>") && svg.contains(">10</text>"));
    assert!(!svg.contains("NaN"));
    // on a log axis 100 lies halfway between 10 and 1,000
    let y_of = |label: &str| -> f64 {
        let at = svg.find(&format!(">{label}</text>")).unwrap();
        let before = &svg[..at];
        let y = before.rsplit(r#" y=""#).next().unwrap();
        y.split('"').next().unwrap().parse().unwrap()
    };
    let (y10, y100, y1000) = (y_of("10"), y_of("100"), y_of("1,000"));
    assert!(
        ((y10 - y100) - (y100 - y1000)).abs() < 0.2,
        "{y10} {y100} {y1000}"
    );
}

#[test]
fn text_is_escaped() {
    let svg = line_chart(
        &[Curve {
            name: "<b>&".into(),
            style: SeriesStyle::nth(0),
            points: vec![(0.0, 1.0), (1.0, 2.0)],
        }],
        &XAxis::Nines { max: 4.0 },
        "ms",
        SMALL,
    );
    assert!(svg.contains("&lt;b&gt;&amp;"));
    assert!(!svg.contains("<b>"));
}

#[test]
fn a_log_x_axis_spans_whole_decades_and_a_share_axis_reads_plainly() {
    let svg = line_chart(
        &[Curve {
            name: "a".into(),
            style: SeriesStyle::nth(0),
            points: vec![(2.0, 0.1), (200.0, 1.0)],
        }],
        &XAxis::Log {
            label: "latency (ms, log)".into(),
        },
        "share",
        SMALL,
    );
    for tick in [">1<", ">10<", ">100<", ">1,000<", ">0.2<", ">1<"] {
        assert!(svg.contains(tick), "{tick}: {svg}");
    }
    assert!(!svg.contains("0.2000"), "{svg}");
    // 2 and 200 lie a third and two thirds of the way across 1 to 1,000.
    let (width, left) = (SMALL.0, LEFT_MIN);
    let plot_w = width - left - RIGHT;
    let points = svg
        .split(r#"points=""#)
        .nth(1)
        .and_then(|s| s.split('"').next())
        .unwrap();
    let xs: Vec<f64> = points
        .split(' ')
        .map(|p| p.split(',').next().unwrap().parse().unwrap())
        .collect();
    let expected = |x: f64| left + x.log10() / 3.0 * plot_w;
    assert!((xs[0] - expected(2.0)).abs() < 0.1, "{xs:?}");
    assert!((xs[1] - expected(200.0)).abs() < 0.1, "{xs:?}");
}
