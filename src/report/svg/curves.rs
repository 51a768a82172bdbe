//! What a line chart draws: its curves, the x axis's layout and the marks
//! across it.

use super::style::SeriesStyle;

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
