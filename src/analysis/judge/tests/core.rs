//! The steps every judge shares, each on its own.

use super::*;
use crate::analysis::judge::{
    fail_on_delivery_errors, flag_generator_behind, put_settle, resources, windowed, Helpers,
};
use crate::analysis::window::tests::row;
use crate::results::figure::SETTLE_S;
use crate::results::{flag, Regime};

/// `seconds + 1` samples a second apart, 1000/s offered, the commit
/// `behind` records back.
fn samples(seconds: usize, behind: i64) -> Vec<Sample> {
    (0..=seconds)
        .map(|i| {
            let t = i as f64;
            row(
                t,
                (1000.0 * t) as i64 - behind,
                (1000.0 * t) as i64,
                50 * i as u64,
                10,
            )
        })
        .collect()
}

#[test]
fn a_window_needs_two_samples_and_reads_its_regime_from_the_flow() {
    let one = samples(0, 0);
    let why = windowed(&one, 0, &[], 1.0, &tolerances()).err().unwrap();
    assert!(why.contains("held 1 sample(s)"), "{why}");
    let ten = samples(10, 10);
    let w = windowed(&ten, 2, &[], 8.0, &tolerances()).unwrap();
    assert_eq!(w.window.len(), 9);
    assert_eq!(w.regime, Regime::KeepUp);
    let growing: Vec<Sample> = (0..=10)
        .map(|i| row(i as f64, 800 * i, 1000 * i, 50 * i as u64, 10))
        .collect();
    let w = windowed(&growing, 0, &[], 10.0, &tolerances()).unwrap();
    assert_eq!(w.regime, Regime::Saturated);
}

#[test]
fn only_the_helpers_a_run_had_are_summarized() {
    let rows = samples(4, 0);
    let none = Helpers {
        gendata: false,
        probe: false,
        sink: false,
    };
    let r = resources(&rows, 100.0, none);
    assert!(r.product.is_some());
    assert!(r.gendata.is_none() && r.probe.is_none() && r.sink.is_none());
    let topic = Helpers {
        gendata: true,
        probe: true,
        sink: false,
    };
    let r = resources(&rows, 100.0, topic);
    assert!(r.gendata.is_some() && r.probe.is_some() && r.sink.is_none());
}

#[test]
fn a_paced_generator_behind_is_flagged_and_an_unpaced_one_never() {
    let mut j = Judgement::default();
    let late = gendata(1000, 500.0, 600.0);
    assert!(flag_generator_behind(
        &mut j,
        &late,
        &config(10),
        &tolerances()
    ));
    assert_eq!(j.flags, [flag::GENERATOR_BEHIND]);
    let mut unpaced = config(10);
    unpaced.rate = 0;
    let mut j = Judgement::default();
    assert!(!flag_generator_behind(
        &mut j,
        &late,
        &unpaced,
        &tolerances()
    ));
    assert!(j.flags.is_empty());
}

#[test]
fn undelivered_input_fails_the_run() {
    let mut j = Judgement::default();
    fail_on_delivery_errors(&mut j, &gendata(1000, 1.0, 1.0));
    assert!(j.failure.is_none());
    let mut lost = gendata(1000, 1.0, 1.0);
    lost.delivery_errors = 3;
    fail_on_delivery_errors(&mut j, &lost);
    assert_eq!(
        j.failure.as_deref(),
        Some("gendata: 3 records were not delivered to the input topic")
    );
}

#[test]
fn the_settle_time_is_quoted_only_when_the_product_finished() {
    let mut j = Judgement::default();
    put_settle(
        &mut j,
        Some(Settle {
            seconds: 1.5,
            reached_end: true,
        }),
    );
    assert_eq!(value(&j, SETTLE_S.name), 1.5);
    let mut j = Judgement::default();
    put_settle(
        &mut j,
        Some(Settle {
            seconds: 30.0,
            reached_end: false,
        }),
    );
    assert!(j.not_applicable[SETTLE_S.name].contains("had not finished its input"));
    let mut j = Judgement::default();
    put_settle(&mut j, None);
    assert!(j.not_applicable[SETTLE_S.name].contains("down at the window's end"));
}
