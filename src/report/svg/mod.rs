//! Inline SVG drawn in Rust: the workload's flow, line charts (latency by
//! percentile on a "nines" axis, the latency CDF on a log latency axis,
//! per-second series) and bar charts (one
//! figure per arm, with its confidence interval). No script, no external
//! resource, so a page works offline and from file://. Every text is escaped
//! here, since templates insert the markup as it is.

mod bar_chart;
mod curves;
mod draw;
mod flow;
mod frame;
mod line_chart;
mod style;
mod text;
mod ticks;

pub use bar_chart::{bar_chart, Bar, BAR_WIDTH};
pub use curves::{Curve, Mark, XAxis};
pub use flow::{flow, FlowBox};
pub use frame::{SMALL, WIDE};
pub use line_chart::{line_chart, log_line_chart, points_chart};
pub use style::{SeriesStyle, PALETTE};

#[cfg(test)]
mod tests;
