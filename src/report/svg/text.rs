//! The charts' text: escaped for SVG, measured for layout, and numbers
//! written as tick labels.

use crate::report::table::{grouped, number};

/// The width of one character of the charts' text, in pixels.
pub(super) const CHAR_W: f64 = 6.6;

/// Escapes text for SVG (XML) content and attributes.
pub(super) fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A tick's label: whole numbers without decimals.
pub(super) fn tick_label(t: f64) -> String {
    if t.fract() == 0.0 {
        grouped(t as i64)
    } else {
        number(t)
    }
}

/// A y tick's label: a fraction without trailing zeros (`0.2`, where a
/// figure reads `0.2000`), so a 0 to 1 axis reads as one.
pub(super) fn y_tick_label(t: f64) -> String {
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
pub(super) fn nines_label(n: i32) -> String {
    if n == 0 {
        "0%".to_string()
    } else {
        format!("{}%", 100.0 - 100.0 * 10f64.powi(-n))
    }
}
