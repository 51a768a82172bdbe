//! Inline SVG drawn in Rust: the workload's flow, line charts (latency by
//! percentile on a "nines" axis, per-second series) and bar charts (one
//! figure per arm, with its confidence interval). No script, no external
//! resource, so a page works offline and from file://. Every text is escaped
//! here, since templates insert the markup as it is.

use std::fmt::Write;

/// Colours of the curves, in page order: none of them red or green, so a
/// curve's colour never reads as good or bad.
pub const PALETTE: [&str; 8] = [
    "#1f77b4", "#ff7f0e", "#9467bd", "#17becf", "#8c564b", "#e377c2", "#7f7f7f", "#393b79",
];

/// Dash patterns (SVG `stroke-dasharray`), one per round of the palette, so
/// 24 curves read apart.
pub const DASHES: [&str; 3] = ["", "7 4", "2 3"];

/// How one series is drawn: a colour and a dash pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SeriesStyle {
    pub colour: &'static str,
    /// Empty for a solid line.
    pub dash: &'static str,
}

impl SeriesStyle {
    /// The style of the `index`-th series: every colour solid, then dashed,
    /// then dotted.
    pub fn nth(index: usize) -> SeriesStyle {
        SeriesStyle {
            colour: PALETTE[index % PALETTE.len()],
            dash: DASHES[(index / PALETTE.len()) % DASHES.len()],
        }
    }
}

/// Escapes text for SVG (XML) content and attributes.
pub fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// One box of a flow: a title and a detail line.
pub struct FlowBox {
    pub title: String,
    pub detail: String,
}

const CHAR_W: f64 = 6.6;

/// source topic -> operators -> sink, `edge_label` (the delivery modes) on the
/// edge into the sink, and the probe reading the sink.
pub fn flow(source: &FlowBox, operators: &[FlowBox], sink: &FlowBox, edge_label: &str) -> String {
    let width_of = |b: &FlowBox| {
        (b.title.chars().count().max(b.detail.chars().count()) as f64 * CHAR_W + 24.0).max(90.0)
    };
    let gap = |i: usize, last: usize| {
        if i == last {
            (edge_label.chars().count() as f64 * CHAR_W + 30.0).max(60.0)
        } else {
            40.0
        }
    };
    let boxes: Vec<(&FlowBox, bool)> = std::iter::once((source, true))
        .chain(operators.iter().map(|b| (b, false)))
        .chain(std::iter::once((sink, true)))
        .collect();
    let (y, h) = (20.0, 44.0);
    let mut x = 10.0;
    let mut body = String::new();
    let last = boxes.len() - 1;
    let mut sink_centre = 0.0;
    for (i, (b, topic)) in boxes.iter().enumerate() {
        let w = width_of(b);
        let class = if *topic { "topic" } else { "op" };
        let rx = if *topic { 16 } else { 4 };
        let _ = write!(
            body,
            r#"<rect class="{class}" x="{x:.1}" y="{y}" width="{w:.1}" height="{h}" rx="{rx}"/><text x="{cx:.1}" y="{ty}" text-anchor="middle" font-weight="bold">{}</text><text x="{cx:.1}" y="{dy}" text-anchor="middle">{}</text>"#,
            escape(&b.title),
            escape(&b.detail),
            cx = x + w / 2.0,
            ty = y + 18.0,
            dy = y + 34.0,
        );
        if i == last {
            sink_centre = x + w / 2.0;
        }
        x += w;
        if i < last {
            let g = gap(i + 1, last);
            let _ = write!(
                body,
                r#"<line class="edge" x1="{x:.1}" y1="{my}" x2="{x2:.1}" y2="{my}" marker-end="url(#arrow)"/>"#,
                my = y + h / 2.0,
                x2 = x + g - 2.0,
            );
            if i + 1 == last && !edge_label.is_empty() {
                let _ = write!(
                    body,
                    r#"<text class="edge-label" x="{:.1}" y="{}" text-anchor="middle">{}</text>"#,
                    x + g / 2.0,
                    y + h / 2.0 - 6.0,
                    escape(edge_label)
                );
            }
            x += g;
        }
    }
    let probe_y = y + h + 36.0;
    let probe = "latency probe: arrival − timestamp";
    let probe_w = probe.chars().count() as f64 * CHAR_W + 24.0;
    let _ = write!(
        body,
        r#"<line class="edge dashed" x1="{sink_centre:.1}" y1="{}" x2="{sink_centre:.1}" y2="{}" marker-end="url(#arrow)"/><rect class="probe" x="{:.1}" y="{probe_y}" width="{probe_w:.1}" height="36" rx="4"/><text x="{sink_centre:.1}" y="{}" text-anchor="middle">{probe}</text>"#,
        y + h,
        probe_y - 2.0,
        sink_centre - probe_w / 2.0,
        probe_y + 22.0,
    );
    let width = (x + 10.0).max(sink_centre + probe_w / 2.0 + 10.0);
    format!(
        r##"<svg class="flow" xmlns="http://www.w3.org/2000/svg" width="{width:.0}" height="{height:.0}" viewBox="0 0 {width:.0} {height:.0}" role="img" aria-label="workload flow"><defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="#555"/></marker></defs>{body}</svg>"##,
        height = probe_y + 46.0,
    )
}

/// One curve of a chart.
pub struct Curve {
    pub name: String,
    pub style: SeriesStyle,
    pub points: Vec<(f64, f64)>,
}

/// How the x axis is laid out.
pub enum XAxis {
    /// Linear in the data, with a dashed mark at `marker` (the window's start).
    Linear { label: String, marker: Option<f64> },
    /// Percentiles on a log scale of nines: x = log10(1 / (1 - q)), 0..=max.
    Nines { max: f64 },
}

/// The least room left of the plot; more when tick labels are long.
const LEFT_MIN: f64 = 64.0;
const RIGHT: f64 = 170.0;
const TOP: f64 = 16.0;
const BOTTOM: f64 = 42.0;

/// A chart's width and height in pixels.
pub type Size = (f64, f64);

/// The latency chart's size: wide enough to read the tail.
pub const WIDE: Size = (760.0, 320.0);
/// The per-second charts' size: three fit side by side.
pub const SMALL: Size = (440.0, 240.0);
/// A bar chart's width: two fit side by side.
pub const BAR_WIDTH: f64 = 560.0;

/// How the y axis is laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum YScale {
    /// From 0 up, round ticks.
    Linear,
    /// Whole decades around the data, ticks at 1, 2 and 5 times a power of
    /// ten (decades only when the data spans more than three).
    Log,
}

/// A line chart of `curves`, with `y_label` on the y axis (from 0 up).
pub fn line_chart(curves: &[Curve], x_axis: &XAxis, y_label: &str, size: Size) -> String {
    plot(curves, x_axis, YScale::Linear, y_label, size)
}

/// A line chart of `curves` on a log y axis, for figures spanning orders of
/// magnitude (latency over time, where a stall stands far above the rest).
/// A point whose y is not a positive number is a gap: the curve breaks there.
pub fn log_line_chart(curves: &[Curve], x_axis: &XAxis, y_label: &str, size: Size) -> String {
    plot(curves, x_axis, YScale::Log, y_label, size)
}

/// The ticks of a log axis covering `min..=max` (both positive), and the
/// axis's bounds: whole decades.
fn log_ticks(min: f64, max: f64) -> (Vec<f64>, f64, f64) {
    let low = 10f64.powf(min.log10().floor());
    let mut high = 10f64.powf(max.log10().ceil());
    if high <= low {
        high = low * 10.0;
    }
    let decades = (high / low).log10().round() as i32;
    let steps: &[f64] = if decades > 3 {
        &[1.0]
    } else {
        &[1.0, 2.0, 5.0]
    };
    let mut ticks = Vec::new();
    for d in 0..=decades {
        let decade = low * 10f64.powi(d);
        for step in steps {
            let tick = decade * step;
            if tick <= high * 1.000_001 {
                // 0.1 x 3 is 0.30000000000000004: keep the digits a label shows
                ticks.push(format!("{tick:.6e}").parse().unwrap_or(tick));
            }
        }
    }
    (ticks, low, high)
}

/// A line chart of `curves` on the y axis `scale`.
fn plot(
    curves: &[Curve],
    x_axis: &XAxis,
    scale: YScale,
    y_label: &str,
    (width, height): Size,
) -> String {
    let xs = curves.iter().flat_map(|c| c.points.iter().map(|p| p.0));
    let (x_min, x_max) = match x_axis {
        XAxis::Nines { max } => (0.0, *max),
        XAxis::Linear { .. } => xs.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), x| {
            (lo.min(x), hi.max(x))
        }),
    };
    let (x_min, x_max) = if x_min.is_finite() && x_max > x_min {
        (x_min, x_max)
    } else {
        (0.0, 1.0)
    };
    let drawn = |y: f64| match scale {
        YScale::Linear => y.is_finite(),
        YScale::Log => y.is_finite() && y > 0.0,
    };
    let ys = || {
        curves
            .iter()
            .flat_map(|c| c.points.iter().map(|p| p.1))
            .filter(|y| drawn(*y))
    };
    let y_top = ys().fold(0.0, f64::max);
    let (y_ticks, y_low, y_max) = match scale {
        YScale::Linear => {
            let ticks = nice_ticks(0.0, if y_top > 0.0 { y_top } else { 1.0 }, 5);
            let max = ticks.last().copied().unwrap_or(1.0);
            (ticks, 0.0, max)
        }
        YScale::Log => {
            let bottom = ys().fold(f64::INFINITY, f64::min);
            if bottom.is_finite() {
                log_ticks(bottom, y_top)
            } else {
                log_ticks(1.0, 10.0)
            }
        }
    };
    // The y axis title sits left of the widest tick label, never on it.
    let widest_tick = y_ticks
        .iter()
        .map(|t| tick_label(*t).chars().count())
        .max()
        .unwrap_or(1) as f64
        * CHAR_W;
    let y_title_x = 14.0;
    let left = (y_title_x + 10.0 + widest_tick + 10.0).max(LEFT_MIN);
    let plot_w = width - left - RIGHT;
    let plot_h = height - TOP - BOTTOM;
    let px = |x: f64| left + (x - x_min) / (x_max - x_min) * plot_w;
    let py = |y: f64| {
        let share = match scale {
            YScale::Linear => y / y_max,
            YScale::Log => (y / y_low).log10() / (y_max / y_low).log10(),
        };
        TOP + plot_h - share * plot_h
    };
    let mut body = String::new();
    for t in &y_ticks {
        let _ = write!(
            body,
            r#"<line class="grid" x1="{left:.1}" y1="{y:.1}" x2="{x2:.1}" y2="{y:.1}"/><text x="{tx:.1}" y="{ty:.1}" text-anchor="end">{}</text>"#,
            tick_label(*t),
            y = py(*t),
            x2 = left + plot_w,
            tx = left - 6.0,
            ty = py(*t) + 4.0,
        );
    }
    let x_ticks: Vec<(f64, String)> = match x_axis {
        XAxis::Nines { max } => (0..=max.floor() as i32)
            .map(|n| (f64::from(n), nines_label(n)))
            .collect(),
        XAxis::Linear { .. } => nice_ticks(x_min, x_max, 8)
            .into_iter()
            .filter(|t| *t >= x_min && *t <= x_max)
            .map(|t| (t, tick_label(t)))
            .collect(),
    };
    for (t, label) in &x_ticks {
        let _ = write!(
            body,
            r#"<line class="grid" x1="{x:.1}" y1="{TOP}" x2="{x:.1}" y2="{y2:.1}"/><text x="{x:.1}" y="{ty:.1}" text-anchor="middle">{}</text>"#,
            escape(label),
            x = px(*t),
            y2 = TOP + plot_h,
            ty = TOP + plot_h + 16.0,
        );
    }
    let x_label = match x_axis {
        XAxis::Nines { .. } => "percentile".to_string(),
        XAxis::Linear { label, marker } => {
            if let Some(m) = marker.filter(|m| *m >= x_min && *m <= x_max) {
                let _ = write!(
                    body,
                    r#"<line class="marker" x1="{x:.1}" y1="{TOP}" x2="{x:.1}" y2="{y2:.1}"/><text class="marker-label" x="{tx:.1}" y="{ty}">window</text>"#,
                    x = px(m),
                    y2 = TOP + plot_h,
                    tx = px(m) + 4.0,
                    ty = TOP + 12.0,
                );
            }
            label.clone()
        }
    };
    let _ = write!(
        body,
        r#"<rect class="frame" x="{left:.1}" y="{TOP}" width="{plot_w:.1}" height="{plot_h:.1}"/><text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text><text transform="translate({y_title_x},{:.1}) rotate(-90)" text-anchor="middle">{}</text>"#,
        left + plot_w / 2.0,
        height - 6.0,
        escape(&x_label),
        TOP + plot_h / 2.0,
        escape(y_label),
    );
    for (i, curve) in curves.iter().enumerate() {
        let dash = if curve.style.dash.is_empty() {
            String::new()
        } else {
            format!(r#" stroke-dasharray="{}""#, curve.style.dash)
        };
        // On a log axis, a gap (a point not drawn) breaks the curve into runs.
        let runs: Vec<&[(f64, f64)]> = match scale {
            YScale::Linear => vec![&curve.points[..]],
            YScale::Log => curve
                .points
                .split(|(_, y)| !drawn(*y))
                .filter(|run| !run.is_empty())
                .collect(),
        };
        for run in runs {
            let points: Vec<String> = run
                .iter()
                .map(|(x, y)| format!("{:.1},{:.1}", px(*x), py(*y)))
                .collect();
            let _ = match run {
                [(x, y)] if scale == YScale::Log => write!(
                    body,
                    r#"<circle class="dot" cx="{:.1}" cy="{:.1}" r="2" fill="{c}"><title>{}</title></circle>"#,
                    px(*x),
                    py(*y),
                    escape(&curve.name),
                    c = curve.style.colour,
                ),
                _ => write!(
                    body,
                    r#"<polyline class="curve" stroke="{c}"{dash} points="{}"><title>{}</title></polyline>"#,
                    points.join(" "),
                    escape(&curve.name),
                    c = curve.style.colour,
                ),
            };
        }
        let _ = write!(
            body,
            r#"<line x1="{lx:.1}" y1="{ly:.1}" x2="{lx2:.1}" y2="{ly:.1}" stroke="{c}"{dash} stroke-width="3"/><text x="{tx:.1}" y="{ty:.1}">{}</text>"#,
            escape(&curve.name),
            c = curve.style.colour,
            lx = width - RIGHT + 12.0,
            lx2 = width - RIGHT + 30.0,
            ly = TOP + 10.0 + i as f64 * 18.0,
            tx = width - RIGHT + 36.0,
            ty = TOP + 14.0 + i as f64 * 18.0,
        );
    }
    format!(
        r#"<svg class="chart" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img">{body}</svg>"#
    )
}

/// One bar of a bar chart.
pub struct Bar {
    pub label: String,
    pub value: f64,
    /// The 95 % confidence interval, drawn as a whisker; none when unknown.
    pub interval: Option<(f64, f64)>,
    /// The value as written at the bar's end.
    pub text: String,
    pub colour: &'static str,
}

/// Height of one bar's row, in pixels.
const BAR_ROW: f64 = 26.0;

/// Horizontal bars from 0, labels on the left, each value (and whisker) at
/// the bar's end, `x_label` under the axis. One axis, one unit: a figure in
/// another unit gets a chart of its own.
pub fn bar_chart(bars: &[Bar], x_label: &str, width: f64) -> String {
    let widest = |texts: &mut dyn Iterator<Item = &String>| {
        texts.map(|t| t.chars().count()).max().unwrap_or(0) as f64 * CHAR_W
    };
    let left = widest(&mut bars.iter().map(|b| &b.label)) + 16.0;
    let right = widest(&mut bars.iter().map(|b| &b.text)) + 16.0;
    let top_value = bars
        .iter()
        .map(|b| b.interval.map_or(b.value, |(_, hi)| hi.max(b.value)))
        .fold(0.0, f64::max);
    let ticks = nice_ticks(0.0, if top_value > 0.0 { top_value } else { 1.0 }, 4);
    let x_max = ticks.last().copied().unwrap_or(1.0);
    let plot_w = (width - left - right).max(80.0);
    let plot_h = bars.len().max(1) as f64 * BAR_ROW;
    let height = TOP + plot_h + BOTTOM;
    let px = |x: f64| left + x.clamp(0.0, x_max) / x_max * plot_w;
    let mut body = String::new();
    for t in &ticks {
        let _ = write!(
            body,
            r#"<line class="grid" x1="{x:.1}" y1="{TOP}" x2="{x:.1}" y2="{y2:.1}"/><text x="{x:.1}" y="{ty:.1}" text-anchor="middle">{}</text>"#,
            short_tick_label(*t),
            x = px(*t),
            y2 = TOP + plot_h,
            ty = TOP + plot_h + 16.0,
        );
    }
    for (i, bar) in bars.iter().enumerate() {
        let y = TOP + i as f64 * BAR_ROW;
        let mid = y + BAR_ROW / 2.0;
        let _ = write!(
            body,
            r#"<text x="{lx:.1}" y="{ty:.1}" text-anchor="end">{label}</text><rect x="{left:.1}" y="{by:.1}" width="{w:.1}" height="{bh:.1}" fill="{c}"><title>{label}: {text}</title></rect>"#,
            label = escape(&bar.label),
            text = escape(&bar.text),
            lx = left - 8.0,
            ty = mid + 4.0,
            by = y + 5.0,
            w = px(bar.value) - left,
            bh = BAR_ROW - 10.0,
            c = bar.colour,
        );
        let mut end = px(bar.value);
        if let Some((lo, hi)) = bar.interval {
            let (x1, x2) = (px(lo), px(hi));
            let _ = write!(
                body,
                r#"<path class="whisker" d="M{x1:.1},{mid:.1} H{x2:.1} M{x1:.1},{a:.1} V{b:.1} M{x2:.1},{a:.1} V{b:.1}"/>"#,
                a = mid - 5.0,
                b = mid + 5.0,
            );
            end = end.max(x2);
        }
        let _ = write!(
            body,
            r#"<text x="{:.1}" y="{:.1}">{}</text>"#,
            end + 6.0,
            mid + 4.0,
            escape(&bar.text)
        );
    }
    let _ = write!(
        body,
        r#"<line class="axis" x1="{left:.1}" y1="{TOP}" x2="{left:.1}" y2="{y2:.1}"/><text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
        left + plot_w / 2.0,
        height - 6.0,
        escape(x_label),
        y2 = TOP + plot_h,
    );
    format!(
        r#"<svg class="chart" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img">{body}</svg>"#
    )
}

/// A bar chart's tick: millions and thousands shortened (`20M`, `250k`), so
/// large rates fit between the ticks.
fn short_tick_label(t: f64) -> String {
    let trimmed = |v: f64| {
        let text = format!("{v:.2}");
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    };
    if t >= 1e6 {
        format!("{}M", trimmed(t / 1e6))
    } else if t >= 1e4 {
        format!("{}k", trimmed(t / 1e3))
    } else {
        tick_label(t)
    }
}

/// A tick's label: whole numbers without decimals.
fn tick_label(t: f64) -> String {
    if t.fract() == 0.0 {
        super::table::grouped(t as i64)
    } else {
        super::table::number(t)
    }
}

/// `0%`, `90%`, `99%`, `99.9%`, ... for n nines.
fn nines_label(n: i32) -> String {
    if n == 0 {
        "0%".to_string()
    } else {
        format!("{}%", 100.0 - 100.0 * 10f64.powi(-n))
    }
}

/// Round tick values (1, 2 or 5 times a power of ten) covering min..=max.
fn nice_ticks(min: f64, max: f64, count: usize) -> Vec<f64> {
    let range = (max - min).max(f64::MIN_POSITIVE);
    let raw = range / count.max(1) as f64;
    let power = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * power)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * power);
    let first = (min / step).floor() * step;
    let mut ticks = Vec::new();
    let mut t = first;
    while t < max + step * 0.999 && ticks.len() < 50 {
        ticks.push((t / step).round() * step);
        t += step;
    }
    ticks
}

#[cfg(test)]
mod tests {
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
}
