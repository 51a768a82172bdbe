//! A chart's size and margins, and the frame of its plot area: where it
//! lies and how values map into it.

/// The least room left of the plot; more when tick labels are long.
pub(super) const LEFT_MIN: f64 = 64.0;
pub(super) const RIGHT: f64 = 170.0;
pub(super) const TOP: f64 = 16.0;
pub(super) const BOTTOM: f64 = 42.0;

/// A chart's width and height in pixels.
pub type Size = (f64, f64);

/// The latency chart's size: wide enough to read the tail.
pub const WIDE: Size = (760.0, 320.0);
/// The per-second charts' size: three fit side by side.
pub const SMALL: Size = (440.0, 240.0);

/// How the y axis is laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum YScale {
    /// From 0 up, round ticks.
    Linear,
    /// Whole decades around the data, ticks at 1, 2 and 5 times a power of
    /// ten (decades only when the data spans more than three).
    Log,
}

/// Where a chart's plot area lies and how values map into it.
pub(super) struct Frame {
    pub(super) scale: YScale,
    pub(super) width: f64,
    pub(super) height: f64,
    /// The plot area's left edge: right of the y axis's title and labels.
    pub(super) left: f64,
    /// Whether x maps on a log scale (x_min and x_max whole decades).
    pub(super) x_log: bool,
    pub(super) plot_w: f64,
    pub(super) plot_h: f64,
    pub(super) x_min: f64,
    pub(super) x_max: f64,
    /// The y axis's bottom (a log axis's lowest decade) and top.
    pub(super) y_low: f64,
    pub(super) y_max: f64,
}

/// The y axis title's x, left of the tick labels.
pub(super) const Y_TITLE_X: f64 = 14.0;

impl Frame {
    pub(super) fn px(&self, x: f64) -> f64 {
        let share = if self.x_log {
            (x / self.x_min).log10() / (self.x_max / self.x_min).log10()
        } else {
            (x - self.x_min) / (self.x_max - self.x_min)
        };
        self.left + share * self.plot_w
    }

    pub(super) fn py(&self, y: f64) -> f64 {
        let share = match self.scale {
            YScale::Linear => y / self.y_max,
            YScale::Log => (y / self.y_low).log10() / (self.y_max / self.y_low).log10(),
        };
        TOP + self.plot_h - share * self.plot_h
    }

    /// Whether a point at `y` is drawn: on a log axis, only a positive one.
    pub(super) fn drawn(scale: YScale, y: f64) -> bool {
        match scale {
            YScale::Linear => y.is_finite(),
            YScale::Log => y.is_finite() && y > 0.0,
        }
    }
}
