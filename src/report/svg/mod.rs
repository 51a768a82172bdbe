//! Inline SVG drawn in Rust: the workload's flow, line charts (latency by
//! percentile on a "nines" axis, the latency CDF on a log latency axis,
//! per-second series) and bar charts (one
//! figure per arm, with its confidence interval). No script, no external
//! resource, so a page works offline and from file://. Every text is escaped
//! here, since templates insert the markup as it is.

use std::fmt::Write;

mod flow;

pub use flow::{flow, FlowBox};

/// The width of one character of the charts' text, in pixels.
const CHAR_W: f64 = 6.6;

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
    /// Whole decades around the data (all positive), ticks as a log y
    /// axis's: a latency CDF, where the body and the tail both read.
    Log { label: String },
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

/// A line drawn across a chart to mark a value.
#[derive(Debug, Clone)]
pub enum Mark {
    /// A dashed vertical line at `x` in a curve's style, labelled at the
    /// top (where a line stopped keeping up).
    AtX {
        x: f64,
        style: SeriesStyle,
        label: String,
    },
    /// A dashed horizontal line at `y`, labelled at its right end (a
    /// bound); the y axis reaches it.
    AtY { y: f64, label: String },
}

/// A line chart of `curves`, with `y_label` on the y axis (from 0 up).
pub fn line_chart(curves: &[Curve], x_axis: &XAxis, y_label: &str, size: Size) -> String {
    plot(curves, &[], false, x_axis, YScale::Linear, y_label, size)
}

/// A chart of figures against a setting (latency against offered rate,
/// capacity against parallelism): each curve with a dot at every point, on
/// a log y axis when `log`, with `marks` across it.
pub fn points_chart(
    curves: &[Curve],
    marks: &[Mark],
    x_label: &str,
    y_label: &str,
    log: bool,
    size: Size,
) -> String {
    let scale = if log { YScale::Log } else { YScale::Linear };
    let x_axis = XAxis::Linear {
        label: x_label.to_string(),
        marker: None,
    };
    plot(curves, marks, true, &x_axis, scale, y_label, size)
}

/// A line chart of `curves` on a log y axis, for figures spanning orders of
/// magnitude (latency over time, where a stall stands far above the rest).
/// A point whose y is not a positive number is a gap: the curve breaks there.
pub fn log_line_chart(curves: &[Curve], x_axis: &XAxis, y_label: &str, size: Size) -> String {
    plot(curves, &[], false, x_axis, YScale::Log, y_label, size)
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

/// Where a chart's plot area lies and how values map into it.
struct Frame {
    scale: YScale,
    width: f64,
    height: f64,
    /// The plot area's left edge: right of the y axis's title and labels.
    left: f64,
    /// Whether x maps on a log scale (x_min and x_max whole decades).
    x_log: bool,
    plot_w: f64,
    plot_h: f64,
    x_min: f64,
    x_max: f64,
    /// The y axis's bottom (a log axis's lowest decade) and top.
    y_low: f64,
    y_max: f64,
}

/// The y axis title's x, left of the tick labels.
const Y_TITLE_X: f64 = 14.0;

impl Frame {
    fn px(&self, x: f64) -> f64 {
        let share = if self.x_log {
            (x / self.x_min).log10() / (self.x_max / self.x_min).log10()
        } else {
            (x - self.x_min) / (self.x_max - self.x_min)
        };
        self.left + share * self.plot_w
    }

    fn py(&self, y: f64) -> f64 {
        let share = match self.scale {
            YScale::Linear => y / self.y_max,
            YScale::Log => (y / self.y_low).log10() / (self.y_max / self.y_low).log10(),
        };
        TOP + self.plot_h - share * self.plot_h
    }

    /// Whether a point at `y` is drawn: on a log axis, only a positive one.
    fn drawn(scale: YScale, y: f64) -> bool {
        match scale {
            YScale::Linear => y.is_finite(),
            YScale::Log => y.is_finite() && y > 0.0,
        }
    }
}

/// The x range the chart spans: the nines' axis from 0, a linear one over
/// the data and the marks across x (0..1 when there is none), a log one
/// the whole decades around the data's positive x.
fn x_range(curves: &[Curve], marks: &[Mark], x_axis: &XAxis) -> (f64, f64) {
    let xs = curves
        .iter()
        .flat_map(|c| c.points.iter().map(|p| p.0))
        .chain(marks.iter().filter_map(|m| match m {
            Mark::AtX { x, .. } => Some(*x),
            Mark::AtY { .. } => None,
        }));
    let (x_min, x_max) = match x_axis {
        XAxis::Nines { max } => (0.0, *max),
        XAxis::Linear { .. } => xs.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), x| {
            (lo.min(x), hi.max(x))
        }),
        XAxis::Log { .. } => {
            let (lo, hi) = xs
                .filter(|x| *x > 0.0)
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), x| {
                    (lo.min(x), hi.max(x))
                });
            let (_, low, high) = if lo.is_finite() {
                log_ticks(lo, hi)
            } else {
                log_ticks(1.0, 10.0)
            };
            (low, high)
        }
    };
    if x_min.is_finite() && x_max > x_min {
        (x_min, x_max)
    } else {
        (0.0, 1.0)
    }
}

/// The y axis's ticks, bottom and top for the points drawn and the marks
/// across y.
fn y_axis(curves: &[Curve], marks: &[Mark], scale: YScale) -> (Vec<f64>, f64, f64) {
    let ys = || {
        curves
            .iter()
            .flat_map(|c| c.points.iter().map(|p| p.1))
            .chain(marks.iter().filter_map(|m| match m {
                Mark::AtY { y, .. } => Some(*y),
                Mark::AtX { .. } => None,
            }))
            .filter(|y| Frame::drawn(scale, *y))
    };
    let y_top = ys().fold(0.0, f64::max);
    match scale {
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
    }
}

/// A line chart of `curves` on the y axis `scale`, with `marks` across it
/// and, with `dots`, a dot at every point.
fn plot(
    curves: &[Curve],
    marks: &[Mark],
    dots: bool,
    x_axis: &XAxis,
    scale: YScale,
    y_label: &str,
    (width, height): Size,
) -> String {
    let (x_min, x_max) = x_range(curves, marks, x_axis);
    let (y_ticks, y_low, y_max) = y_axis(curves, marks, scale);
    // The y axis title sits left of the widest tick label, never on it.
    let widest_tick = y_ticks
        .iter()
        .map(|t| y_tick_label(*t).chars().count())
        .max()
        .unwrap_or(1) as f64
        * CHAR_W;
    let left = (Y_TITLE_X + 10.0 + widest_tick + 10.0).max(LEFT_MIN);
    let frame = Frame {
        scale,
        width,
        height,
        left,
        x_log: matches!(x_axis, XAxis::Log { .. }),
        plot_w: width - left - RIGHT,
        plot_h: height - TOP - BOTTOM,
        x_min,
        x_max,
        y_low,
        y_max,
    };
    let mut body = String::new();
    draw_y_ticks(&mut body, &frame, &y_ticks);
    let x_label = draw_x_axis(&mut body, &frame, x_axis);
    draw_frame(&mut body, &frame, &x_label, y_label);
    for (i, curve) in curves.iter().enumerate() {
        draw_curve(&mut body, &frame, curve, i);
    }
    if dots {
        for curve in curves {
            draw_dots(&mut body, &frame, curve);
        }
    }
    draw_marks(&mut body, &frame, marks);
    format!(
        r#"<svg class="chart" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img">{body}</svg>"#
    )
}

/// The y ticks' grid lines and labels.
fn draw_y_ticks(body: &mut String, f: &Frame, y_ticks: &[f64]) {
    for t in y_ticks {
        let _ = write!(
            body,
            r#"<line class="grid" x1="{left:.1}" y1="{y:.1}" x2="{x2:.1}" y2="{y:.1}"/><text x="{tx:.1}" y="{ty:.1}" text-anchor="end">{}</text>"#,
            y_tick_label(*t),
            left = f.left,
            y = f.py(*t),
            x2 = f.left + f.plot_w,
            tx = f.left - 6.0,
            ty = f.py(*t) + 4.0,
        );
    }
}

/// The x ticks' grid lines and labels, and the window's marker; the x
/// axis's title.
fn draw_x_axis(body: &mut String, f: &Frame, x_axis: &XAxis) -> String {
    let x_ticks: Vec<(f64, String)> = match x_axis {
        XAxis::Nines { max } => (0..=max.floor() as i32)
            .map(|n| (f64::from(n), nines_label(n)))
            .collect(),
        XAxis::Linear { .. } => nice_ticks(f.x_min, f.x_max, 8)
            .into_iter()
            .filter(|t| *t >= f.x_min && *t <= f.x_max)
            .map(|t| (t, tick_label(t)))
            .collect(),
        XAxis::Log { .. } => log_ticks(f.x_min, f.x_max)
            .0
            .into_iter()
            .map(|t| (t, tick_label(t)))
            .collect(),
    };
    for (t, label) in &x_ticks {
        let _ = write!(
            body,
            r#"<line class="grid" x1="{x:.1}" y1="{TOP}" x2="{x:.1}" y2="{y2:.1}"/><text x="{x:.1}" y="{ty:.1}" text-anchor="middle">{}</text>"#,
            escape(label),
            x = f.px(*t),
            y2 = TOP + f.plot_h,
            ty = TOP + f.plot_h + 16.0,
        );
    }
    match x_axis {
        XAxis::Nines { .. } => "percentile".to_string(),
        XAxis::Log { label } => label.clone(),
        XAxis::Linear { label, marker } => {
            if let Some(m) = marker.filter(|m| *m >= f.x_min && *m <= f.x_max) {
                let _ = write!(
                    body,
                    r#"<line class="marker" x1="{x:.1}" y1="{TOP}" x2="{x:.1}" y2="{y2:.1}"/><text class="marker-label" x="{tx:.1}" y="{ty}">window</text>"#,
                    x = f.px(m),
                    y2 = TOP + f.plot_h,
                    tx = f.px(m) + 4.0,
                    ty = TOP + 12.0,
                );
            }
            label.clone()
        }
    }
}

/// The plot area's frame and the two axes' titles.
fn draw_frame(body: &mut String, f: &Frame, x_label: &str, y_label: &str) {
    let _ = write!(
        body,
        r#"<rect class="frame" x="{left:.1}" y="{TOP}" width="{plot_w:.1}" height="{plot_h:.1}"/><text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text><text transform="translate({Y_TITLE_X},{:.1}) rotate(-90)" text-anchor="middle">{}</text>"#,
        f.left + f.plot_w / 2.0,
        f.height - 6.0,
        escape(x_label),
        TOP + f.plot_h / 2.0,
        escape(y_label),
        left = f.left,
        plot_w = f.plot_w,
        plot_h = f.plot_h,
    );
}

/// One curve (on a log axis, broken at its gaps; a lone point a dot) and
/// its entry in the legend, the `index`th.
fn draw_curve(body: &mut String, f: &Frame, curve: &Curve, index: usize) {
    let dash = if curve.style.dash.is_empty() {
        String::new()
    } else {
        format!(r#" stroke-dasharray="{}""#, curve.style.dash)
    };
    let runs: Vec<&[(f64, f64)]> = match f.scale {
        YScale::Linear => vec![&curve.points[..]],
        YScale::Log => curve
            .points
            .split(|(_, y)| !Frame::drawn(f.scale, *y))
            .filter(|run| !run.is_empty())
            .collect(),
    };
    for run in runs {
        let points: Vec<String> = run
            .iter()
            .map(|(x, y)| format!("{:.1},{:.1}", f.px(*x), f.py(*y)))
            .collect();
        let _ = match run {
            [(x, y)] if f.scale == YScale::Log => write!(
                body,
                r#"<circle class="dot" cx="{:.1}" cy="{:.1}" r="2" fill="{c}"><title>{}</title></circle>"#,
                f.px(*x),
                f.py(*y),
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
        lx = f.width - RIGHT + 12.0,
        lx2 = f.width - RIGHT + 30.0,
        ly = TOP + 10.0 + index as f64 * 18.0,
        tx = f.width - RIGHT + 36.0,
        ty = TOP + 14.0 + index as f64 * 18.0,
    );
}

/// A dot at each drawn point of `curve`, its value on hover.
fn draw_dots(body: &mut String, f: &Frame, curve: &Curve) {
    for (x, y) in curve.points.iter().filter(|p| Frame::drawn(f.scale, p.1)) {
        let _ = write!(
            body,
            r#"<circle class="dot" cx="{:.1}" cy="{:.1}" r="3" fill="{c}"><title>{}: {} at {}</title></circle>"#,
            f.px(*x),
            f.py(*y),
            escape(&curve.name),
            tick_label(*y),
            tick_label(*x),
            c = curve.style.colour,
        );
    }
}

/// The marks across the plot area; vertical marks' labels stacked from
/// the top, so two at one x stay readable.
fn draw_marks(body: &mut String, f: &Frame, marks: &[Mark]) {
    let mut stacked = 0.0;
    for mark in marks {
        match mark {
            Mark::AtX { x, style, label } if *x >= f.x_min && *x <= f.x_max => {
                let _ = write!(
                    body,
                    r#"<line class="stop" x1="{x:.1}" y1="{TOP}" x2="{x:.1}" y2="{y2:.1}" stroke="{c}" stroke-dasharray="4 3"><title>{l}</title></line><text class="marker-label" x="{tx:.1}" y="{ty:.1}" text-anchor="end" fill="{c}">{l}</text>"#,
                    x = f.px(*x),
                    y2 = TOP + f.plot_h,
                    c = style.colour,
                    l = escape(label),
                    tx = f.px(*x) - 4.0,
                    ty = TOP + 12.0 + stacked,
                );
                stacked += 12.0;
            }
            Mark::AtY { y, label } if Frame::drawn(f.scale, *y) => {
                let _ = write!(
                    body,
                    r#"<line class="marker" x1="{left:.1}" y1="{y:.1}" x2="{x2:.1}" y2="{y:.1}"><title>{l}</title></line><text class="marker-label" x="{tx:.1}" y="{ty:.1}" text-anchor="end">{l}</text>"#,
                    left = f.left,
                    y = f.py(*y),
                    x2 = f.left + f.plot_w,
                    l = escape(label),
                    tx = f.left + f.plot_w - 4.0,
                    ty = f.py(*y) - 4.0,
                );
            }
            _ => {}
        }
    }
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

/// A y tick's label: a fraction without trailing zeros (`0.2`, where a
/// figure reads `0.2000`), so a 0 to 1 axis reads as one.
fn y_tick_label(t: f64) -> String {
    let label = tick_label(t);
    if label.contains('.') && !label.contains('e') {
        label
            .trim_end_matches('0')
            .trim_end_matches('.')
            .to_string()
    } else {
        label
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
mod tests;
