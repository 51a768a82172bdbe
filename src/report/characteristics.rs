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
    let mut table = Table::new(
        "Bench characteristics",
        Column::plain_all(&[
            "line",
            "delivery",
            "processing",
            "engine",
            "scaling on one partition",
            "decode",
            "status",
        ]),
    );
    let mut described = BTreeSet::new();
    for line in suite.lines() {
        let shown = line.product.workloads.iter().any(|w| w == workload)
            || lines.iter().any(|l| l.name == line.line.name);
        if !shown {
            continue;
        }
        described.insert(line.line.name.clone());
        let c = &line.product.characteristics;
        table.push(
            Row::new()
                .set("line", Cell::text(&line.line.name))
                .set("delivery", Cell::text(&line.line.delivery_detail))
                .set("processing", Cell::text(&c.processing))
                .set("engine", Cell::text(&c.engine))
                .set("scaling on one partition", Cell::text(&c.scaling))
                .set("decode", Cell::text(&c.decode))
                .set("status", availability_cell(line.product)),
        );
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
