//! Bar charts: one figure per arm, from 0, each with its confidence
//! interval as a whisker.

use std::fmt::Write;

use super::frame::{BOTTOM, TOP};
use super::text::{escape, tick_label, CHAR_W};
use super::ticks::nice_ticks;

/// A bar chart's width: two fit side by side.
pub const BAR_WIDTH: f64 = 560.0;

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
pub(super) fn short_tick_label(t: f64) -> String {
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
