//! Line charts: latency by percentile, the CDF, per-second series, and
//! figures against a setting, each laid out from its data and drawn part
//! by part.

use super::curves::{Curve, Mark, XAxis};
use super::draw::{draw_curve, draw_dots, draw_frame, draw_marks, draw_x_axis, draw_y_ticks};
use super::frame::{Frame, Size, YScale, BOTTOM, LEFT_MIN, RIGHT, TOP, Y_TITLE_X};
use super::text::{y_tick_label, CHAR_W};
use super::ticks::{log_ticks, nice_ticks};

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
