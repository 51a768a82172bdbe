//! The client settings section: what each line is handed (bench.yaml's
//! client profile and its delivery mode's commit interval), and where its
//! product cannot apply a setting, "≠ config" with the reason from its
//! product.yaml. Configuration, not measurement: a run made with other
//! settings (`--set`) is its own bench point, named so in its heading.

use std::collections::BTreeSet;

use super::lines::LineRuns;
use super::table::{grouped, Cell, Column, Row, Table};
use crate::config::{ClientProfile, LineRef, Suite, COMMIT_INTERVAL_KEY};

/// One row per line shown on `workload`'s page.
pub(super) fn client_settings_table(
    suite: &Suite,
    workload: &str,
    lines: &[LineRuns<'_>],
) -> Table {
    let profile = suite.bench.client.entries();
    let mut labels = vec!["line", "commit interval"];
    labels.extend(profile.iter().map(|(key, _)| *key));
    labels.push("vs the profile");
    let mut table = Table::new("Client settings", Column::plain_all(&labels));
    let mut shown = BTreeSet::new();
    for line in suite.lines() {
        let on_page = line.product.workloads.iter().any(|w| w == workload)
            || lines.iter().any(|l| l.name == line.line.name);
        if on_page && shown.insert(line.line.name.clone()) {
            table.push(line_row(suite, line));
        }
    }
    table
}

/// The expert profile: one row per setting a product on `workload`'s page
/// sets otherwise for `--profile expert`, its uniform and expert values
/// and the documentation it follows. Runs at that profile are bench points
/// of their own, never in a table with the uniform profile's.
pub(super) fn expert_settings_table(suite: &Suite, workload: &str) -> Table {
    let mut table = Table::new(
        "Expert profile",
        Column::plain_all(&["product", "setting", "uniform", "expert", "source"]),
    );
    let text = |value: &yaml_serde::Value| match value {
        yaml_serde::Value::String(text) => text.clone(),
        other => yaml_serde::to_string(other)
            .unwrap_or_default()
            .trim()
            .to_string(),
    };
    for product in suite.products.values() {
        let Some(expert) = &product.expert else {
            continue;
        };
        if !product.workloads.iter().any(|w| w == workload) {
            continue;
        }
        if let Some(why) = &expert.unchanged {
            table.push(
                Row::new()
                    .set("product", Cell::text(&product.name))
                    .set("setting", Cell::text("—"))
                    .set("uniform", Cell::text("—"))
                    .set("expert", Cell::text("the uniform profile"))
                    .set("source", Cell::text(why)),
            );
            continue;
        }
        let uniform_client: std::collections::BTreeMap<&str, String> =
            suite.bench.client.entries().into_iter().collect();
        let changes = expert
            .client
            .iter()
            .map(|(key, value)| {
                let uniform = uniform_client
                    .get(key.as_str())
                    .cloned()
                    .unwrap_or_default();
                (format!("client.{key}"), key, uniform, text(value))
            })
            .chain(expert.settings.iter().map(|(key, value)| {
                let uniform = product.settings.get(key).map(text).unwrap_or_default();
                (key.clone(), key, uniform, text(value))
            }));
        for (setting, key, uniform, value) in changes {
            let source = expert.sources.get(key).cloned().unwrap_or_default();
            table.push(
                Row::new()
                    .set("product", Cell::text(&product.name))
                    .set("setting", Cell::text(setting))
                    .set("uniform", Cell::text(uniform))
                    .set("expert", Cell::text(value))
                    .set("source", Cell::text(source)),
            );
        }
    }
    table
}

fn line_row(suite: &Suite, line: LineRef<'_>) -> Row {
    let exceptions = &line.product.client_exceptions;
    let differs = |key: &str| {
        exceptions.get(key).map(|why| {
            Cell::text("≠ config")
                .with_class("warn")
                .with_title(why.clone())
        })
    };
    let interval = suite
        .bench
        .run
        .commit_interval_ms
        .for_delivery(line.line.delivery);
    let mut row = Row::new().set("line", Cell::text(&line.line.name)).set(
        "commit interval",
        differs(COMMIT_INTERVAL_KEY).unwrap_or_else(|| {
            Cell::text(format!("{} ms", grouped(interval as i64)))
                .with_title(format!("{}: bench.yaml's interval", line.line.delivery))
        }),
    );
    for (key, value) in suite.bench.client.entries() {
        let cell = if ClientProfile::applies_to(key, line.line.delivery) {
            differs(key).unwrap_or_else(|| Cell::text(value))
        } else {
            Cell::text("—").with_title(format!("{}: not applied", line.line.delivery))
        };
        row = row.set(key, cell);
    }
    let excused: Vec<&str> = exceptions.keys().map(String::as_str).collect();
    row.set(
        "vs the profile",
        if excused.is_empty() {
            Cell::text("as the profile").with_class("ok")
        } else {
            Cell::text(format!("≠ config: {}", excused.join(", "))).with_class("warn")
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_line_shows_the_profile_and_its_own_interval() {
        let mut suite =
            Suite::load(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("bench.yaml"))
                .unwrap();
        let product = suite.products.get_mut("rustpipe").unwrap();
        product
            .client_exceptions
            .insert("linger_ms".into(), "no linger here".into());
        let table = client_settings_table(&suite, "stateless", &[]);
        let cell = |line: &str, label: &str| {
            let column = table.column_index(label).unwrap();
            table
                .rows
                .iter()
                .find(|r| r[0].text == line)
                .map(|r| r[column].clone())
                .unwrap()
        };
        assert_eq!(cell("rustpipe", "commit interval").text, "1,000 ms");
        assert_eq!(cell("rustpipe-eos", "commit interval").text, "10 ms");
        assert_eq!(cell("rustpipe", "fetch_min_bytes").text, "1");
        let linger = cell("rustpipe", "linger_ms");
        assert_eq!(linger.text, "≠ config");
        assert_eq!(linger.title, "no linger here");
        assert_eq!(
            cell("rustpipe", "vs the profile").text,
            "≠ config: linger_ms"
        );
        assert_eq!(cell("kafka-streams", "linger_ms").text, "1");
    }
}
