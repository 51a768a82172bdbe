//! The characteristics section: how each line delivers, processes, runs and
//! decodes, as its product.yaml describes it, whether it runs here, and the
//! products' notes. Descriptions, not measurements.

use std::collections::BTreeSet;

use serde::Serialize;

use super::lines::LineRuns;
use super::table::{Cell, Column, Row, Table};
use crate::config::{Product, Suite};
use crate::products::{self, Availability};

/// A product's notes from its product.yaml.
#[derive(Debug, Serialize)]
pub struct ProductNote {
    pub product: String,
    pub text: String,
}

/// Whether a product runs here; a product that is not installed says how.
pub(super) fn availability_cell(product: &Product) -> Cell {
    match products::capability(product) {
        Availability::Runnable
        | Availability::Installed
        | Availability::Installable
        | Availability::Buildable => Cell::text("runnable here").with_class("ok"),
        Availability::NotInstalled { hint } => {
            Cell::text(format!("not installed here: {hint}")).with_class("na")
        }
    }
}

pub(super) fn characteristics_table(
    suite: &Suite,
    workload: &str,
    lines: &[LineRuns<'_>],
) -> Table {
    // The state column, on a workload some product keeps state for.
    let stateful = suite
        .products
        .values()
        .any(|p| p.characteristics.state.contains_key(workload));
    let mut columns = vec![
        "line",
        "delivery",
        "processing",
        "engine",
        "scaling on one partition",
        "decode",
    ];
    if stateful {
        columns.push("state");
    }
    columns.push("status");
    let mut table = Table::new("Bench characteristics", Column::plain_all(&columns));
    let mut described = BTreeSet::new();
    for line in suite.lines() {
        let shown = line.product.workloads.iter().any(|w| w == workload)
            || lines.iter().any(|l| l.name == line.line.name);
        if !shown {
            continue;
        }
        described.insert(line.line.name.clone());
        let c = &line.product.characteristics;
        let mut row = Row::new()
            .set("line", Cell::text(&line.line.name))
            .set("delivery", Cell::text(&line.line.delivery_detail))
            .set("processing", Cell::text(&c.processing))
            .set("engine", Cell::text(&c.engine))
            .set("scaling on one partition", Cell::text(&c.scaling))
            .set("decode", Cell::text(&c.decode))
            .set("status", availability_cell(line.product));
        if stateful {
            row = row.set(
                "state",
                c.state.get(workload).map_or_else(
                    || Cell::text("not described in its product.yaml").with_class("na"),
                    Cell::text,
                ),
            );
        }
        table.push(row);
    }
    for line in lines.iter().filter(|l| !described.contains(&l.name)) {
        table.push(Row::new().set("line", Cell::text(&line.name)).set(
            "delivery",
            Cell::text("not described in products/").with_class("na"),
        ));
    }
    table
}

pub(super) fn product_notes(
    suite: &Suite,
    workload: &str,
    lines: &[LineRuns<'_>],
) -> Vec<ProductNote> {
    suite
        .products
        .values()
        .filter(|p| {
            p.workloads.iter().any(|w| w == workload)
                || lines
                    .iter()
                    .any(|l| p.lines.iter().any(|pl| pl.name == l.name))
        })
        .filter(|p| !p.notes.trim().is_empty())
        .map(|p| ProductNote {
            product: p.name.clone(),
            text: p.notes.trim().to_string(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::repo_suite;

    #[test]
    fn a_stateful_workload_shows_where_each_line_keeps_its_state() {
        let suite = repo_suite();
        let table = characteristics_table(&suite, "windowed-lowcard", &[]);
        let state = table.column_index("state").expect("a state column");
        let line = table.column_index("line").unwrap();
        let described: Vec<(&str, &str)> = table
            .rows
            .iter()
            .map(|row| (row[line].text.as_str(), row[state].text.as_str()))
            .collect();
        assert!(!described.is_empty());
        for (name, text) in &described {
            assert!(
                !text.is_empty() && !text.starts_with("not described"),
                "{name}: {text}"
            );
        }
        let rustpipe = described.iter().find(|(name, _)| *name == "rustpipe-eos");
        assert!(rustpipe.is_some_and(|(_, text)| text.starts_with("memory only")));
    }

    #[test]
    fn a_stateless_workload_has_no_state_column() {
        let suite = repo_suite();
        let table = characteristics_table(&suite, "stateless", &[]);
        assert!(table.column_index("state").is_none());
        assert!(table.column_index("decode").is_some());
    }
}
