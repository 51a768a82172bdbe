//! The checks of eos_cost.

use super::*;
use crate::results::figure::ROWS_PER_S_PER_CORE;

fn line(product: &str, name: &str, delivery: Delivery) -> (String, String, Delivery) {
    (product.into(), name.into(), delivery)
}

#[test]
fn lines_pair_by_product_and_delivery_not_by_name() {
    let lines = [
        line("turbine", "turbine-tx", Delivery::ExactlyOnce),
        line("flink", "flink-eos", Delivery::ExactlyOnce),
        line("turbine", "turbine-plain", Delivery::AtLeastOnce),
        // named like flink's pair, but another product's line
        line("other", "flink", Delivery::AtLeastOnce),
        line("legacy", "legacy", Delivery::AtLeastOnce),
    ];
    let pairs = pair_lines(&lines);
    assert_eq!(
        pairs,
        [LinePair {
            product: "turbine".into(),
            eos: "turbine-tx".into(),
            alos: "turbine-plain".into(),
        }]
    );
}

#[test]
fn one_batch_is_interleaved_two_are_separately() {
    let a = crate::report::fixture_record();
    let mut b = a.clone();
    assert_eq!(measured(&[&a], &[&b]), "interleaved");
    b.batch_id = "another".into();
    assert_eq!(measured(&[&a], &[&b]), "separately");
}

fn run(round: u32, value: f64) -> RunRecord {
    let mut r = crate::report::fixture_record();
    r.round = Some(round);
    r.metrics.insert(
        ROWS_PER_S_PER_CORE.name.into(),
        crate::results::Metric::new(value, "records/s per core", crate::results::Better::Higher),
    );
    r
}

fn refs(runs: &[RunRecord]) -> Vec<&RunRecord> {
    runs.iter().collect()
}

#[test]
fn an_interleaved_change_is_the_median_of_its_rounds_with_its_interval() {
    let alos: Vec<RunRecord> = (1..=5).map(|i| run(i, 100.0 * f64::from(i))).collect();
    // -10 %, -20 %, -15 %, -12 %, -5 %: worse in every round, p = 1/32
    let eos: Vec<RunRecord> = [90.0, 160.0, 255.0, 352.0, 475.0]
        .iter()
        .zip(1..)
        .map(|(v, i)| run(i, *v))
        .collect();
    let cell = change(&refs(&alos), &refs(&eos), &ROWS_PER_S_PER_CORE, 0.01);
    assert_eq!(cell.text, signed_percent(-0.12));
    assert_eq!(cell.interval, "-20.0 % – -5.0 %");
    assert!(
        cell.title.contains("93.75 % interval -20.0 % – -5.0 %"),
        "{}",
        cell.title
    );
    assert!(cell.title.contains("p = 0.031"), "{}", cell.title);
    assert_eq!(Matched::Rounds(5).cell().interval, "93.75 % intervals");
    // three rounds: the interval at its 75 %, and p = 0.125 decides nothing
    let cell = change(
        &refs(&alos[..3]),
        &refs(&eos[..3]),
        &ROWS_PER_S_PER_CORE,
        0.01,
    );
    assert_eq!(cell.text, "not separable");
    assert_eq!(cell.interval, "-20.0 % – -10.0 %");
    assert!(cell.title.contains("75 % interval"), "{}", cell.title);
    // measured separately: the ratio of the medians, no interval
    let mut apart = eos.clone();
    for r in &mut apart {
        r.batch_id = "another".into();
    }
    let cell = change(&refs(&alos), &refs(&apart), &ROWS_PER_S_PER_CORE, 0.01);
    assert_eq!(cell.text, signed_percent(255.0 / 300.0 - 1.0));
    assert!(cell.interval.is_empty());
    assert_eq!(
        Matched::of(&refs(&alos), &refs(&apart)),
        Matched::Medians(5, 5)
    );
    assert_eq!(Matched::of(&refs(&alos), &refs(&eos)), Matched::Rounds(5));
}

#[test]
fn a_change_of_single_runs_is_marked() {
    let (alos, mut eos) = (run(1, 100.0), run(1, 90.0));
    eos.batch_id = "another".into();
    let cell = change(&[&alos], &[&eos], &ROWS_PER_S_PER_CORE, 0.01);
    assert_eq!(cell.class, SINGLE_RUN);
    assert_eq!(Matched::of(&[&alos], &[&eos]).cell().text, "1 → 1 runs");
    assert_eq!(Matched::of(&[&alos], &[&eos]).cell().class, SINGLE_RUN);
}
