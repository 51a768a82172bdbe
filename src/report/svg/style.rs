//! How series are told apart: a palette with no red or green, and dash
//! patterns once the colours run out.

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
