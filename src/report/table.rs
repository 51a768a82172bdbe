//! The table model every report section is built from: columns with the unit
//! and direction the records give, and cells of already formatted text with
//! their colour and hover. Templates render it; export writes it as CSV or
//! Markdown.

use serde::Serialize;

use crate::results::Better;

/// One column: its label, the unit from the records, and which way is better.
#[derive(Debug, Clone, Serialize)]
pub struct Column {
    pub label: String,
    /// Empty when the column has no unit (names, dates, verdicts).
    pub unit: String,
    /// "lower is better", "higher is better", or empty.
    pub direction: String,
}

impl Column {
    /// A column without unit or direction.
    pub fn plain(label: &str) -> Column {
        Column {
            label: label.to_string(),
            unit: String::new(),
            direction: String::new(),
        }
    }

    /// Columns without unit or direction.
    pub fn plain_all(labels: &[&str]) -> Vec<Column> {
        labels.iter().map(|l| Column::plain(l)).collect()
    }

    /// A column of times, all in UTC.
    pub fn utc(label: &str) -> Column {
        Column {
            unit: "UTC".to_string(),
            ..Column::plain(label)
        }
    }
}

/// One formatted cell.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Cell {
    pub text: String,
    /// A CSS class: a colour band, `na`, `ok`, `warn`, ...
    pub class: String,
    /// Shown on hover.
    pub title: String,
    /// The median of repeats: drawn with a dotted underline.
    pub repeat: bool,
    /// The median's interval with its coverage (`75 %: 24.6 – 28.0`), shown
    /// under the value; empty below three runs.
    pub interval: String,
    /// Files beside the pages the cell's figures come from (a run's
    /// histogram), shown after its text.
    pub links: Vec<Link>,
}

/// A link from a cell to a file beside the pages.
#[derive(Debug, Clone, Serialize)]
pub struct Link {
    pub text: String,
    /// Relative to the page.
    pub href: String,
    /// Shown on hover.
    pub title: String,
}

impl Cell {
    pub fn text(text: impl Into<String>) -> Cell {
        Cell {
            text: text.into(),
            ..Cell::default()
        }
    }

    pub fn with_class(mut self, class: &str) -> Cell {
        self.class = class.to_string();
        self
    }

    pub fn with_title(mut self, title: impl Into<String>) -> Cell {
        self.title = title.into();
        self
    }

    /// The cell with its interval on hover only: for a column that is not
    /// a headline figure.
    pub fn without_interval(mut self) -> Cell {
        self.interval.clear();
        self
    }

    pub fn with_links(mut self, links: Vec<Link>) -> Cell {
        self.links = links;
        self
    }

    /// A figure not measured in this run.
    pub fn missing() -> Cell {
        Cell::text("—").with_class("na")
    }

    /// A figure that does not apply, with the reason on hover.
    pub fn not_applicable(reason: &str) -> Cell {
        Cell::text("n/a").with_class("na").with_title(reason)
    }

    /// Two cells shown as one (`a / b`).
    pub fn pair(a: Cell, b: Cell) -> Cell {
        let title = if a.title == b.title {
            a.title.clone()
        } else {
            joined(&a.title, &b.title, "; ")
        };
        Cell {
            text: format!("{} / {}", a.text, b.text),
            class: if a.class == b.class {
                a.class
            } else {
                String::new()
            },
            title,
            repeat: a.repeat || b.repeat,
            interval: joined(&a.interval, &b.interval, " / "),
            links: [a.links, b.links].concat(),
        }
    }
}

/// `a` and `b` joined by `separator`, or the one that is not empty.
pub(super) fn joined(a: &str, b: &str, separator: &str) -> String {
    match (a.is_empty(), b.is_empty()) {
        (false, false) => format!("{a}{separator}{b}"),
        (false, true) => a.to_string(),
        (true, false) => b.to_string(),
        (true, true) => String::new(),
    }
}

/// A table of one section; `rows` empty shows `empty` instead.
#[derive(Debug, Clone, Serialize)]
pub struct Table {
    pub title: String,
    pub columns: Vec<Column>,
    pub rows: Vec<Vec<Cell>>,
    /// Lines of text shown under the table.
    pub notes: Vec<String>,
    /// What the page says of a table without rows.
    pub empty: String,
}

impl Table {
    pub fn new(title: &str, columns: Vec<Column>) -> Table {
        Table {
            title: title.to_string(),
            columns,
            rows: Vec::new(),
            notes: Vec::new(),
            empty: "no recorded data yet".to_string(),
        }
    }

    /// Adds `row`, each cell under the column of its label; a column the row
    /// does not set is left blank.
    pub fn push(&mut self, row: Row) {
        let cells = self
            .columns
            .iter()
            .map(|column| {
                row.cells
                    .iter()
                    .find(|(label, _)| *label == column.label)
                    .map(|(_, cell)| cell.clone())
                    .unwrap_or_default()
            })
            .collect();
        debug_assert!(
            row.cells
                .iter()
                .all(|(label, _)| self.columns.iter().any(|c| c.label == *label)),
            "a cell names a column the table does not have"
        );
        self.rows.push(cells);
    }

    /// The position of the column labelled `label`.
    pub fn column_index(&self, label: &str) -> Option<usize> {
        self.columns.iter().position(|c| c.label == label)
    }
}

/// A row under construction: cells keyed by their column's label, so a row
/// never depends on the order or number of the table's columns.
#[derive(Debug, Default)]
pub struct Row {
    cells: Vec<(String, Cell)>,
}

impl Row {
    pub fn new() -> Row {
        Row::default()
    }

    /// Sets the cell of column `label`.
    pub fn set(mut self, label: &str, cell: Cell) -> Row {
        self.cells.push((label.to_string(), cell));
        self
    }
}

/// The colour band of `ratio` against the best of a column.
pub fn band(ratio: f64) -> &'static str {
    if ratio < 2.0 {
        "band-green"
    } else if ratio < 5.0 {
        "band-yellow"
    } else if ratio < 10.0 {
        "band-orange"
    } else {
        "band-red"
    }
}

/// Colours the cells of the column labelled `label` against the best value
/// of the column; `values[i]` is row i's value (None: left uncoloured), and
/// `may_lead[i]` whether it may be that best (a flagged run may not; it is
/// still coloured against the others).
pub fn colour_column(
    table: &mut Table,
    label: &str,
    values: &[Option<f64>],
    may_lead: &[bool],
    better: Better,
) {
    let Some(col) = table.column_index(label) else {
        return;
    };
    let known = values
        .iter()
        .zip(may_lead)
        .filter(|(_, lead)| **lead)
        .filter_map(|(v, _)| *v);
    let best = match better {
        Better::Lower => known.fold(f64::INFINITY, f64::min),
        Better::Higher => known.fold(f64::NEG_INFINITY, f64::max),
    };
    if !best.is_finite() {
        return;
    }
    for (row, value) in table.rows.iter_mut().zip(values) {
        let Some(value) = *value else { continue };
        let ratio = match better {
            Better::Lower if best > 0.0 => value / best,
            Better::Higher if value > 0.0 => best / value,
            _ => 1.0,
        };
        let cell = &mut row[col];
        // A band beside the class a cell has (a single run's lighter text).
        cell.class = joined(band(ratio), &cell.class, " ");
        let hover = format!("{ratio:.1}× the best of the column");
        cell.title = if cell.title.is_empty() {
            hover
        } else {
            format!("{hover}; {}", cell.title)
        };
    }
}

/// A number for a table: grouped digits from 1,000, fewer decimals as it grows.
pub fn number(value: f64) -> String {
    let a = value.abs();
    if !value.is_finite() {
        value.to_string()
    } else if a == 0.0 {
        "0".to_string()
    } else if a >= 1000.0 || (value.fract() == 0.0 && a >= 1.0) {
        grouped(value.round() as i64)
    } else if a >= 10.0 {
        format!("{value:.1}")
    } else if a >= 1.0 {
        format!("{value:.2}")
    } else if a >= 0.0001 {
        format!("{value:.4}")
    } else {
        format!("{value:.1e}")
    }
}

/// An integer with thousands separators.
pub fn grouped(value: i64) -> String {
    let digits = value.unsigned_abs().to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    if value < 0 {
        format!("-{out}")
    } else {
        out
    }
}

/// A ratio as a signed percentage with one decimal (`+1.2 %`); a value that
/// rounds to zero reads `+0.0 %`, never `-0.0 %`.
pub fn signed_percent(ratio: f64) -> String {
    let tenths = (ratio * 1000.0).round();
    if tenths == 0.0 || !tenths.is_finite() {
        return if tenths.is_finite() {
            "+0.0 %".to_string()
        } else {
            format!("{ratio}")
        };
    }
    format!("{:+.1} %", tenths / 10.0)
}

/// `value` with exactly `decimals` decimals and grouped thousands
/// (`1,552.9`): one column always shows the same number of decimals.
pub fn fixed(value: f64, decimals: usize) -> String {
    if !value.is_finite() {
        return value.to_string();
    }
    let text = format!("{:.*}", decimals, value.abs());
    let (whole, fraction) = text.split_once('.').unwrap_or((text.as_str(), ""));
    let whole: i64 = whole.parse().unwrap_or(0);
    let negative = value < 0.0 && text.chars().any(|c| c.is_ascii_digit() && c != '0');
    let sign = if negative { "-" } else { "" };
    if fraction.is_empty() {
        format!("{sign}{}", grouped(whole))
    } else {
        format!("{sign}{}.{fraction}", grouped(whole))
    }
}

/// A unit as the page writes it: the records' ASCII `us` is `µs`, as a word
/// of its own only (`pauses` keeps its letters).
pub fn display_unit(unit: &str) -> String {
    let mut out = String::with_capacity(unit.len() + 1);
    let mut rest = unit;
    while let Some(start) = rest.find(|c: char| c.is_ascii_alphabetic()) {
        out.push_str(&rest[..start]);
        rest = &rest[start..];
        let end = rest
            .find(|c: char| !c.is_ascii_alphabetic())
            .unwrap_or(rest.len());
        out.push_str(match &rest[..end] {
            "us" => "µs",
            word => word,
        });
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// An RFC 3339 time as `2026-11-30 05:31` (UTC); other text unchanged.
pub fn date_time(rfc3339: &str) -> String {
    match chrono::DateTime::parse_from_rfc3339(rfc3339) {
        Ok(t) => t
            .with_timezone(&chrono::Utc)
            .format("%Y-%m-%d %H:%M")
            .to_string(),
        Err(_) => rfc3339.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_keep_three_or_four_significant_digits() {
        assert_eq!(number(0.0), "0");
        assert_eq!(number(172635.4), "172,635");
        assert_eq!(number(-1234.0), "-1,234");
        assert_eq!(number(131.94), "131.9");
        assert_eq!(number(5.789), "5.79");
        assert_eq!(number(30.0), "30");
        assert_eq!(number(0.28791), "0.2879");
        assert_eq!(grouped(1_147_515), "1,147,515");
        assert_eq!(signed_percent(-0.143), "-14.3 %");
        assert_eq!(fixed(1552.94, 1), "1,552.9");
        assert_eq!(fixed(5.0, 2), "5.00");
        assert_eq!(fixed(19782.4, 0), "19,782");
        assert_eq!(fixed(-0.04, 1), "0.0");
        assert_eq!(fixed(-12.5, 1), "-12.5");
        assert_eq!(display_unit("us"), "µs");
        assert_eq!(display_unit("records/s"), "records/s");
        assert_eq!(display_unit("us/record"), "µs/record");
        assert_eq!(display_unit("pauses"), "pauses");
        assert_eq!(date_time("2026-11-30T05:31:43Z"), "2026-11-30 05:31");
    }

    #[test]
    fn a_drift_that_rounds_to_zero_is_plus_zero() {
        assert_eq!(signed_percent(-0.00004), "+0.0 %");
        assert_eq!(signed_percent(0.0), "+0.0 %");
        assert_eq!(signed_percent(-0.0), "+0.0 %");
        assert_eq!(signed_percent(0.00049), "+0.0 %");
        assert_eq!(signed_percent(-0.0005), "-0.1 %");
        assert_eq!(signed_percent(0.002), "+0.2 %");
    }

    #[test]
    fn a_row_fills_its_cells_by_column_label() {
        let mut table = Table::new("t", Column::plain_all(&["line", "p50", "p99"]));
        table.push(
            Row::new()
                .set("p99", Cell::text("9"))
                .set("line", Cell::text("a")),
        );
        let texts: Vec<&str> = table.rows[0].iter().map(|c| c.text.as_str()).collect();
        assert_eq!(texts, ["a", "", "9"]);
    }

    #[test]
    fn bands_follow_the_ratio_to_the_best() {
        let mut table = Table::new("t", vec![Column::plain("a")]);
        for _ in 0..5 {
            table.rows.push(vec![Cell::text("x")]);
        }
        let values = [Some(10.0), Some(25.0), Some(50.0), Some(100.0), None];
        let all = [true; 5];
        colour_column(&mut table, "a", &values, &all, Better::Lower);
        let classes: Vec<&str> = table.rows.iter().map(|r| r[0].class.as_str()).collect();
        assert_eq!(
            classes,
            ["band-green", "band-yellow", "band-orange", "band-red", ""]
        );
        assert_eq!(table.rows[1][0].title, "2.5× the best of the column");
        for row in &mut table.rows {
            row[0].class.clear();
        }
        colour_column(&mut table, "a", &values, &all, Better::Higher);
        assert_eq!(table.rows[0][0].class, "band-red");
    }

    #[test]
    fn a_run_that_may_not_lead_is_coloured_against_the_others() {
        let mut table = Table::new("t", vec![Column::plain("a")]);
        for _ in 0..2 {
            table.rows.push(vec![Cell::text("x").with_class("single")]);
        }
        // the flagged run is lowest, but the best of the column is 20
        colour_column(
            &mut table,
            "a",
            &[Some(5.0), Some(20.0)],
            &[false, true],
            Better::Lower,
        );
        assert_eq!(table.rows[1][0].class, "band-green single");
        assert_eq!(table.rows[1][0].title, "1.0× the best of the column");
        assert_eq!(table.rows[0][0].class, "band-green single");
        assert_eq!(table.rows[0][0].title, "0.2× the best of the column");
    }
}
