use super::*;
use crate::report::lines::group_lines;
use crate::report::points::{BenchPoint, PointRole};
use crate::results::figure::{ADDED_P50_MS, CONSUMED_PER_S, US_CPU_PER_RECORD};
use crate::results::Metric;

/// A run of `version` as entry `entry` of `batch` in `round`, with its
/// CPU per record and added p50.
fn run(batch: &str, entry: u32, version: &str, round: u32, cpu: f64, p50: f64) -> RunRecord {
    let mut r = crate::report::fixture_record();
    r.line = "kafka-streams".into();
    r.version = version.into();
    r.batch_id = batch.into();
    r.round = Some(round);
    r.entry = Some(entry);
    r.flags.clear();
    r.regime = Some(Regime::KeepUp);
    r.started_at = format!("2026-12-01T0{round}:0{entry}:00Z");
    r.metrics.clear();
    r.metrics.insert(
        US_CPU_PER_RECORD.name.into(),
        Metric::new(cpu, "µs", Better::Lower),
    );
    r.metrics.insert(
        ADDED_P50_MS.name.into(),
        Metric::new(p50, "ms", Better::Lower),
    );
    r.metrics.insert(
        CONSUMED_PER_S.name.into(),
        Metric::new(10_000.0, "records/s", Better::Higher),
    );
    r
}

/// Five rounds of `baseline` against `current` in one batch, the current
/// version's CPU per record `cpu[i]` (the baseline's 10 µs) and added p50
/// 2 ms against 2 ms.
fn batch(id: &str, baseline: &str, current: &str, cpu: [f64; 5]) -> Vec<RunRecord> {
    (1..=5)
        .flat_map(|round| {
            [
                run(id, 1, baseline, round, 10.0, 2.0),
                run(id, 2, current, round, cpu[round as usize - 1], 2.0),
            ]
        })
        .collect()
}

fn tables(records: &[RunRecord]) -> (Table, Table) {
    let all: Vec<&RunRecord> = records.iter().collect();
    let point = PointRuns {
        point: BenchPoint::from_record(&records[0]),
        name: "10,000/s · 20 s window".into(),
        role: PointRole::Other,
        records: all.clone(),
        lines: group_lines(&crate::report::repo_suite(), &[], &all),
    };
    releases_tables(&[point])
}

fn cell<'t>(table: &'t Table, row: usize, column: &str) -> &'t Cell {
    &table.rows[row][table.column_index(column).unwrap()]
}

#[test]
fn a_release_check_pairs_two_versions_of_one_batch_round_by_round() {
    let records = batch("b1", "4.1.1", "4.4.0", [10.8, 10.6, 11.2, 10.7, 10.9]);
    let (releases, noise) = tables(&records);
    assert_eq!(releases.rows.len(), 1);
    assert!(noise.rows.is_empty());
    assert_eq!(
        cell(&releases, 0, "baseline → current").text,
        "4.1.1 → 4.4.0"
    );
    assert_eq!(cell(&releases, 0, "rounds").text, "5");
    // Worse in every round, by 8 % at the median: marked.
    let cpu = cell(&releases, 0, "Δ CPU / record");
    assert_eq!(cpu.text, "⚠ +8.0 % [+6.0 % … +12.0 %]");
    assert_eq!(cpu.class, "warn");
    // Equal in every round: a tie, unmarked.
    let p50 = cell(&releases, 0, "Δ added p50");
    assert_eq!(p50.text, "+0.0 % [+0.0 % … +0.0 %]");
    assert_eq!(p50.class, "");
    // Runs that kept up measured no capacity.
    assert!(cell(&releases, 0, "Δ capacity").title.contains("kept up"));
}

#[test]
fn a_change_is_marked_only_when_worse_in_every_round_and_beyond_the_threshold() {
    // Worse by 8 % at the median, but better in one round.
    let one_better = batch("b1", "1", "2", [10.8, 9.5, 11.2, 10.7, 10.9]);
    let (releases, _) = tables(&one_better);
    assert_eq!(cell(&releases, 0, "Δ CPU / record").class, "");
    // Worse in every round, but by 3 %: within the threshold.
    let small = batch("b1", "1", "2", [10.3, 10.2, 10.4, 10.35, 10.6]);
    let (releases, _) = tables(&small);
    assert_eq!(cell(&releases, 0, "Δ CPU / record").class, "");
    // Better in every round, by far.
    let better = batch("b1", "1", "2", [5.0, 5.1, 5.2, 4.9, 5.0]);
    let (releases, _) = tables(&better);
    let cpu = cell(&releases, 0, "Δ CPU / record");
    assert_eq!(
        (cpu.class.as_str(), cpu.text.starts_with("-50")),
        ("", true)
    );
}

#[test]
fn an_a_a_check_is_the_noise_floor_and_a_change_inside_it_reads_within_noise() {
    let mut records = batch("aa", "4.4.0", "4.4.0", [9.0, 10.5, 11.0, 9.8, 10.2]);
    records.extend(batch(
        "rel",
        "4.1.1",
        "4.4.0",
        [10.8, 10.6, 10.7, 10.75, 10.9],
    ));
    let (releases, noise) = tables(&records);
    assert_eq!(noise.rows.len(), 1);
    assert_eq!(cell(&noise, 0, "version").text, "4.4.0");
    assert_eq!(
        cell(&noise, 0, "Δ CPU / record").text,
        "+2.0 % [-10.0 % … +10.0 %]"
    );
    // +7.5 % worse in every round, beyond 5 %, yet inside the A/A's
    // spread of -10 % to +10 %.
    let cpu = cell(&releases, 0, "Δ CPU / record");
    assert_eq!(cpu.text, "⚠ +7.5 % [+6.0 % … +9.0 %] · within noise");
    assert!(cpu
        .title
        .contains("A/A spread of kafka-streams: -10.0 % … +10.0 %"));
    // Without the A/A check the same change is not within noise.
    let alone: Vec<RunRecord> = records
        .into_iter()
        .filter(|r| r.batch_id == "rel")
        .collect();
    let (releases, _) = tables(&alone);
    assert!(!cell(&releases, 0, "Δ CPU / record").text.contains("noise"));
}

#[test]
fn versions_of_different_batches_are_never_paired() {
    let mut records: Vec<RunRecord> = batch("b1", "1", "1", [10.0; 5])
        .into_iter()
        .filter(|r| r.entry == Some(1))
        .collect();
    records.extend(
        batch("b2", "2", "2", [10.0; 5])
            .into_iter()
            .filter(|r| r.entry == Some(2)),
    );
    let (releases, noise) = tables(&records);
    assert!(releases.rows.is_empty() && noise.rows.is_empty());
}

#[test]
fn saturated_runs_compare_their_capacity() {
    let mut records = batch("b1", "1", "2", [10.0; 5]);
    for r in &mut records {
        r.regime = Some(Regime::Saturated);
        let consumed = if r.entry == Some(2) {
            9_000.0
        } else {
            10_000.0
        };
        r.metrics.get_mut(CONSUMED_PER_S.name).unwrap().value = consumed;
    }
    let (releases, _) = tables(&records);
    let capacity = cell(&releases, 0, "Δ capacity");
    assert_eq!(capacity.text, "⚠ -10.0 % [-10.0 % … -10.0 %]");
}

#[test]
fn a_round_without_a_figure_is_left_out_of_that_figure_only() {
    let mut records = batch("b1", "1", "2", [10.8, 10.6, 11.2, 10.7, 10.9]);
    // Round 4's current run had its latency withheld.
    let withheld = records
        .iter_mut()
        .find(|r| r.round == Some(4) && r.entry == Some(2))
        .unwrap();
    withheld.metrics.remove(ADDED_P50_MS.name);
    let (releases, _) = tables(&records);
    let p50 = cell(&releases, 0, "Δ added p50");
    assert!(
        p50.title.starts_with("median of 4 paired round(s)"),
        "{}",
        p50.title
    );
    let cpu = cell(&releases, 0, "Δ CPU / record");
    assert!(
        cpu.title.starts_with("median of 5 paired round(s)"),
        "{}",
        cpu.title
    );
    // Without the figure in any round, the cell says why.
    for r in &mut records {
        r.metrics.remove(ADDED_P50_MS.name);
    }
    let (releases, _) = tables(&records);
    assert_eq!(cell(&releases, 0, "Δ added p50").text, "n/a");
}
