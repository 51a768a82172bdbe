//! The CPU rig's section: the newest `suite rig cpu` batch, the decode cost
//! and the pipeline throughput of each arm as bar charts with their figures
//! in tables, and the two headline multiples against this project's targets.

use serde::Serialize;

use super::Arm;
use crate::model::host::HostInfo;
use crate::report::charts::Chart;
use crate::report::figures::{column_of, format_of};
use crate::report::header::host_label;
use crate::report::svg::{self, Bar};
use crate::report::table::{date_time, display_unit, fixed, Cell, Column, Row, Table};
use crate::results::figure::{
    ALLOCS_PER_EVENT, BYTES_PER_EVENT, DECODE_NS_PER_EVENT, PIPELINE_RECORDS_PER_S,
};
use crate::results::{Better, Figure, Metric, RigRecord};

/// This project's target for the decode multiple: fast-borrowed at least
/// this many times faster than apache-owned to decode a datum.
const DECODE_TARGET: f64 = 8.0;

/// This project's target for the pipeline multiple, on RowBinary.
const PIPELINE_TARGET: f64 = 5.0;

/// The CPU rig's section of the page.
#[derive(Debug, Serialize)]
pub struct RigSection {
    /// Why the section is empty and which command fills it; empty when the
    /// results hold a rig batch.
    pub missing: String,
    /// When, where and how the batch ran.
    pub detail: String,
    pub notes: Vec<String>,
    /// The decode multiple, then the pipeline multiple.
    pub headlines: Vec<Headline>,
    /// Decode cost per event, then pipeline throughput.
    pub charts: Vec<Chart>,
}

/// One headline multiple, shown as a big figure.
#[derive(Debug, Serialize)]
pub struct Headline {
    /// `9.1×`, or `—` when the batch lacks an arm.
    pub value: String,
    /// Which arms the multiple sets against each other, and where.
    pub label: String,
    /// What the multiple divides by what.
    pub compares: String,
    /// The project's target and whether the multiple meets it.
    pub target: String,
    /// `ok` (met), `warn` (not met) or `na` (not measured).
    pub class: String,
}

/// The rig records of one `suite rig cpu`.
pub(super) struct RigBatch {
    pub(super) records: Vec<RigRecord>,
    /// Measured on another host than the end-to-end runs shown.
    pub(super) elsewhere: bool,
}

/// The newest batch on `host` (the end-to-end runs' host), else the newest
/// batch of any host, marked as measured elsewhere.
pub(super) fn newest_batch(records: &[RigRecord], host: Option<&HostInfo>) -> Option<RigBatch> {
    let newest = |on_host: bool| {
        records
            .iter()
            .filter(|r| !on_host || host.is_some_and(|h| h.same_host(&r.host)))
            .max_by(|a, b| a.started_at.cmp(&b.started_at))
    };
    let (newest, elsewhere) = match newest(true) {
        Some(r) => (r, false),
        None => (newest(false)?, host.is_some()),
    };
    Some(RigBatch {
        records: records
            .iter()
            .filter(|r| r.batch_id == newest.batch_id)
            .cloned()
            .collect(),
        elsewhere,
    })
}

pub(super) fn rig_section(batch: Option<&RigBatch>) -> RigSection {
    let Some(batch) = batch else {
        return RigSection {
            missing: "No CPU rig records in the results folder yet: suite rig cpu measures \
                      every arm and appends one record per arm to cpu-rig.jsonl."
                .to_string(),
            detail: String::new(),
            notes: Vec::new(),
            headlines: Vec::new(),
            charts: Vec::new(),
        };
    };
    let multiples = crate::analysis::rig_multiples::multiples(&batch.records);
    let mut notes = Vec::new();
    if batch.elsewhere {
        notes.push(
            "Measured on another host than the end-to-end runs below: the two rigs are not \
             set against each other."
                .to_string(),
        );
    }
    RigSection {
        missing: String::new(),
        detail: detail(&batch.records),
        notes,
        headlines: vec![
            headline(
                "fast-borrowed against apache-owned, decode",
                multiples.decode,
                DECODE_TARGET,
                "apache-owned's decode time per event divided by fast-borrowed's: how many \
                 times faster the borrowed decoder turns a datum into events.",
            ),
            headline(
                "fast-borrowed against apache-owned, pipeline on RowBinary",
                multiples.pipeline,
                PIPELINE_TARGET,
                "fast-borrowed's records per second through the whole in-process stage \
                 (decode, rows, filter, encode, handoff to a shard) divided by \
                 apache-owned's, both encoding RowBinary.",
            ),
        ],
        charts: [
            stage_chart(
                &batch.records,
                "decode",
                &DECODE_NS_PER_EVENT,
                "Decode cost per event",
            ),
            stage_chart(
                &batch.records,
                "pipeline",
                &PIPELINE_RECORDS_PER_S,
                "Pipeline stage throughput",
            ),
        ]
        .into_iter()
        .flatten()
        .collect(),
    }
}

/// The batch's version, size, date and host, in words.
fn detail(records: &[RigRecord]) -> String {
    let Some(first) = records.first() else {
        return String::new();
    };
    format!(
        "{} UTC · {} {} · {} events per datum · {} repetitions of {} datums, arms interleaved · \
         bench version {} · host {}",
        date_time(&first.started_at),
        first.product,
        first.version,
        first.variant.events.unwrap_or_default(),
        first.config.repetitions,
        first.config.timed_datums,
        first.bench_version,
        host_label(&first.host)
    )
}

/// `multiple` as a big figure against `target`.
fn headline(label: &str, multiple: Option<f64>, target: f64, compares: &str) -> Headline {
    let goal = format!("this project's target: at least {}×", fixed(target, 0));
    let (value, target, class) = match multiple {
        Some(m) if m >= target => (multiple_text(m, target), format!("{goal}: met"), "ok"),
        Some(m) => (multiple_text(m, target), format!("{goal}: not met"), "warn"),
        None => (
            "—".to_string(),
            format!("{goal}: not measured, the batch lacks one of the two arms"),
            "na",
        ),
    };
    Headline {
        value,
        label: label.to_string(),
        compares: compares.to_string(),
        target,
        class: class.to_string(),
    }
}

/// `7.2×`; with two decimals where one would round onto the other side of
/// the target (7.96 is not 8.0).
fn multiple_text(multiple: f64, target: f64) -> String {
    let one = format!("{multiple:.1}");
    let rounded_meets = one.parse::<f64>().is_ok_and(|r| r >= target);
    if rounded_meets == (multiple >= target) {
        format!("{one}×")
    } else {
        format!("{multiple:.2}×")
    }
}

/// One stage's arms as a bar chart of `figure`, with its table; none when
/// the batch has no arm of that stage.
fn stage_chart(records: &[RigRecord], stage: &str, figure: &Figure, title: &str) -> Option<Chart> {
    let mut arms: Vec<(Arm, &RigRecord, &Metric)> = records
        .iter()
        .filter(|r| r.variant.stage.as_deref() == Some(stage))
        .filter_map(|r| {
            Some((
                Arm::from_variant(&r.variant),
                r,
                r.metrics.get(figure.name)?,
            ))
        })
        .collect();
    arms.sort_by(|a, b| a.0.order().cmp(&b.0.order()));
    let (_, _, first) = arms.first()?;
    let unit = display_unit(&first.unit);
    let direction = match first.better {
        Better::Lower => "lower is better",
        Better::Higher => "higher is better",
    };
    let format = format_of(figure);
    let bars: Vec<Bar> = arms
        .iter()
        .map(|(arm, _, m)| Bar {
            label: arm.label(),
            value: m.value,
            interval: m.ci95.map(|[lo, hi]| (lo, hi)),
            text: format(m.value),
            colour: arm.colour(),
        })
        .collect();
    let title = format!("{title} ({direction})");
    let mut table = Table::new(
        &title,
        vec![
            Column::plain("arm"),
            column_of("median", Some(first)),
            Column {
                unit: unit.clone(),
                ..Column::plain("95 % CI")
            },
            Column::plain("n"),
            column_of(
                ALLOCS_PER_EVENT.label,
                arms.iter()
                    .find_map(|(_, r, _)| r.metrics.get(ALLOCS_PER_EVENT.name)),
            ),
            column_of(
                BYTES_PER_EVENT.label,
                arms.iter()
                    .find_map(|(_, r, _)| r.metrics.get(BYTES_PER_EVENT.name)),
            ),
        ],
    );
    for (arm, record, m) in &arms {
        let exact = |figure: &Figure| {
            record
                .metrics
                .get(figure.name)
                .map_or_else(Cell::missing, |a| Cell::text(format_of(figure)(a.value)))
        };
        table.push(
            Row::new()
                .set("arm", Cell::text(arm.label()).with_title(arm.description()))
                .set("median", Cell::text(format(m.value)))
                .set("95 % CI", interval_cell(m, format))
                .set(
                    "n",
                    m.n.map_or_else(Cell::missing, |n| Cell::text(n.to_string())),
                )
                .set(ALLOCS_PER_EVENT.label, exact(&ALLOCS_PER_EVENT))
                .set(BYTES_PER_EVENT.label, exact(&BYTES_PER_EVENT)),
        );
    }
    Some(Chart {
        svg: svg::bar_chart(&bars, &unit, svg::BAR_WIDTH),
        title,
        data: table,
    })
}

/// The 95 % interval of `m`, or `—` when the repetitions were too few to
/// give one.
fn interval_cell(m: &Metric, format: fn(f64) -> String) -> Cell {
    match (m.ci95, m.n) {
        (Some([lo, hi]), _) => Cell::text(format!("{} – {}", format(lo), format(hi))),
        (None, Some(n)) => {
            Cell::missing().with_title(format!("no 95 % interval from {n} repetitions"))
        }
        (None, None) => Cell::missing(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fixture's batch of nine arms, relabelled as batch `id` of `at`.
    fn fixture_batch(id: &str, at: &str) -> Vec<RigRecord> {
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/report/results");
        let mut records = crate::results::read_rig_records(&dir).unwrap().records;
        for r in &mut records {
            r.batch_id = id.into();
            r.started_at = at.into();
        }
        records
    }

    #[test]
    fn the_newest_batch_on_the_end_to_end_host_is_shown() {
        let mut elsewhere = fixture_batch("elsewhere", "2026-12-03T00:00:00Z");
        for r in &mut elsewhere {
            r.host.hostname = "another".into();
        }
        let all = [
            fixture_batch("older", "2026-12-01T00:00:00Z"),
            fixture_batch("newer", "2026-12-02T00:00:00Z"),
            elsewhere,
        ]
        .concat();
        let host = all[0].host.clone();
        let batch_of = |host: Option<&HostInfo>| {
            let batch = newest_batch(&all, host).unwrap();
            assert_eq!(batch.records.len(), 9);
            (batch.records[0].batch_id.clone(), batch.elsewhere)
        };
        assert_eq!(batch_of(Some(&host)), ("newer".to_string(), false));
        // Without end-to-end runs, the newest of all.
        assert_eq!(batch_of(None), ("elsewhere".to_string(), false));
        // A host the rig never ran on: the newest of all, marked.
        let mut third = host.clone();
        third.hostname = "third".into();
        assert_eq!(batch_of(Some(&third)), ("elsewhere".to_string(), true));
        assert!(newest_batch(&[], Some(&host)).is_none());
    }

    #[test]
    fn a_multiple_is_set_against_its_target() {
        let met = headline("decode", Some(9.14), DECODE_TARGET, "");
        assert_eq!((met.value.as_str(), met.class.as_str()), ("9.1×", "ok"));
        assert_eq!(met.target, "this project's target: at least 8×: met");
        let short = headline("pipeline, RowBinary", Some(4.22), PIPELINE_TARGET, "");
        assert_eq!(
            (short.value.as_str(), short.class.as_str()),
            ("4.2×", "warn")
        );
        assert!(
            short.target.ends_with("at least 5×: not met"),
            "{}",
            short.target
        );
        // 7.96 would read 8.0× beside "not met": it keeps two decimals.
        assert_eq!(headline("d", Some(7.96), 8.0, "").value, "7.96×");
        assert_eq!(headline("d", Some(8.0), 8.0, "").value, "8.0×");
        let missing = headline("d", None, 8.0, "");
        assert_eq!(
            (missing.value.as_str(), missing.class.as_str()),
            ("—", "na")
        );
    }

    #[test]
    fn an_interval_from_too_few_repetitions_reads_as_a_dash() {
        let mut m = Metric::new(18.4, "ns/event", Better::Lower);
        m.n = Some(5);
        assert_eq!(interval_cell(&m, format_of(&DECODE_NS_PER_EVENT)).text, "—");
        m.ci95 = Some([18.06, 18.91]);
        m.n = Some(9);
        assert_eq!(
            interval_cell(&m, format_of(&DECODE_NS_PER_EVENT)).text,
            "18.1 – 18.9"
        );
    }
}
