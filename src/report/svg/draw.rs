//! The parts of a line chart, each written into its SVG body: ticks and
//! grid, frame and titles, curves with their legend, dots and marks.

use std::fmt::Write;

use super::curves::{Curve, Mark, XAxis};
use super::frame::{Frame, YScale, RIGHT, TOP, Y_TITLE_X};
use super::text::{escape, nines_label, tick_label, y_tick_label};
use super::ticks::{log_ticks, nice_ticks};

/// The y ticks' grid lines and labels.
pub(super) fn draw_y_ticks(body: &mut String, f: &Frame, y_ticks: &[f64]) {
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
pub(super) fn draw_x_axis(body: &mut String, f: &Frame, x_axis: &XAxis) -> String {
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
pub(super) fn draw_frame(body: &mut String, f: &Frame, x_label: &str, y_label: &str) {
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
pub(super) fn draw_curve(body: &mut String, f: &Frame, curve: &Curve, index: usize) {
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
pub(super) fn draw_dots(body: &mut String, f: &Frame, curve: &Curve) {
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
pub(super) fn draw_marks(body: &mut String, f: &Frame, marks: &[Mark]) {
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
