use std::collections::BTreeMap;

use super::*;

/// Each figure docs/results-schema.md's figure tables (those headed `name`
/// or `metric`, then `unit` and `better`) list, with its unit and
/// direction as written there. A row may name several figures, with one
/// unit for all or one each.
fn documented() -> BTreeMap<String, (String, String)> {
    let text = include_str!("../../../docs/results-schema.md");
    let mut found: BTreeMap<String, (String, String)> = BTreeMap::new();
    let mut in_table = false;
    for line in text.lines() {
        let cells: Vec<&str> = line.trim().split('|').map(str::trim).collect();
        if cells.len() < 5 || !line.trim().starts_with('|') {
            in_table = false;
            continue;
        }
        if matches!(cells[1], "name" | "metric") {
            in_table = cells[2] == "unit" && cells[3] == "better";
            continue;
        }
        if !in_table || cells[1].starts_with("---") {
            continue;
        }
        let names: Vec<&str> = cells[1].split('`').skip(1).step_by(2).collect();
        let each = |cell: &str| -> Vec<String> {
            let parts: Vec<String> = cell.split(", ").map(str::to_string).collect();
            if parts.len() == names.len() {
                parts
            } else {
                vec![cell.to_string(); names.len()]
            }
        };
        let (units, betters) = (each(cells[2]), each(cells[3]));
        for ((name, unit), better) in names.iter().zip(units).zip(betters) {
            let entry = (unit, better);
            let earlier = found.insert(name.to_string(), entry.clone());
            assert!(
                earlier.is_none_or(|e| e == entry),
                "{name} is documented twice, differently"
            );
        }
    }
    found
}

#[test]
fn the_schema_documents_every_figure_with_its_unit_and_direction() {
    let documented = documented();
    for figure in ALL {
        let Some((unit, better)) = documented.get(figure.name) else {
            panic!("{} is not in docs/results-schema.md", figure.name);
        };
        assert_eq!(unit, figure.unit, "the unit of {}", figure.name);
        // `—`: a setting recorded as a figure, better neither way.
        if better != "—" {
            let direction = serde_json::to_value(figure.better).unwrap();
            assert_eq!(better, direction.as_str().unwrap(), "{}", figure.name);
        }
    }
    for name in documented.keys() {
        assert!(
            Figure::named(name).is_some(),
            "docs/results-schema.md lists {name}, which is not a figure of ALL"
        );
    }
}

#[test]
fn every_figure_is_found_by_its_name_once() {
    for figure in ALL {
        assert_eq!(Figure::named(figure.name), Some(figure));
        assert_eq!(ALL.iter().filter(|f| f.name == figure.name).count(), 1);
    }
    assert_eq!(Figure::named("latency"), None);
}

#[test]
fn the_flow_withholds_the_consumed_rate_and_what_is_per_record_consumed() {
    let leaning: Vec<&str> = ALL
        .iter()
        .filter(|f| f.flow_dependent)
        .map(|f| f.name)
        .collect();
    assert_eq!(
        leaning,
        [
            CONSUMED_PER_S.name,
            ROWS_PER_S_PER_CORE.name,
            US_CPU_PER_RECORD.name,
            ROWS_PER_S_PER_GB.name
        ]
    );
}

#[test]
fn a_metric_carries_the_definitions_unit_and_direction() {
    let metric = US_CPU_PER_RECORD.metric(52.5);
    let json = serde_json::to_value(&metric).unwrap();
    assert_eq!(json["unit"], "us");
    assert_eq!(json["better"], "lower");
    assert_eq!(json["value"], 52.5);
}
