//! `suite rig cpu`: the Avro pipeline's CPU rig. The suite writes a ring of
//! gendata's own Avro batch datums, has rustpipe's rig binary replay them
//! through every arm (in process: no broker, no server), and turns the
//! repetitions into one record per arm, each figure a median with its 95 %
//! confidence interval and n, appended to the results folder's cpu-rig.jsonl.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{bail, Context, Result};
use messages::rig::{Arm, Measurement, DECODE};

use crate::cache::Cache;
use crate::config::Suite;
use crate::gendata::avro::AvroEncoder;
use crate::interrupt::Interrupt;
use crate::model::host::HostInfo;
use crate::results::figure::{
    ALLOCS_PER_EVENT, BYTES_PER_EVENT, DECODE_NS_PER_EVENT, PIPELINE_RECORDS_PER_S,
};
use crate::results::{Figure, Metric, RigConfig, RigRecord, Variant, SCHEMA_VERSION};
use crate::stats::median_interval;

/// The product whose package holds the rig, and the rig's binary.
const RIG_PRODUCT: &str = "rustpipe";
const RIG_BIN: &str = "rustpipe-rig";

/// What `suite rig cpu` is to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuRigPlan {
    /// Events per batch datum.
    pub events: u32,
    /// Distinct datums in the ring the source replays.
    pub distinct_datums: usize,
    pub warmup_datums: usize,
    pub timed_datums: usize,
    pub counted_datums: usize,
    pub repetitions: usize,
    pub block_rows: usize,
    pub shards: usize,
}

/// Runs the rig and appends its records to `results_dir`; returns them.
pub fn run_cpu(
    suite: &Suite,
    plan: &CpuRigPlan,
    cache: &Cache,
    results_dir: &Path,
    interrupt: &Interrupt,
) -> Result<(Vec<RigRecord>, PathBuf)> {
    let product = suite
        .products
        .get(RIG_PRODUCT)
        .with_context(|| format!("the CPU rig needs products/{RIG_PRODUCT}/product.yaml"))?;
    let built = crate::products::build_companion(product, RIG_BIN, cache, interrupt)?;
    let batch_id = crate::results::new_run_id("cpu-rig");
    let dir = cache.run_dir(&batch_id);
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let datums = dir.join("datums.bin");
    write_datums(&datums, suite.bench.run.seed, plan)?;
    let started_at = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);

    let measurements = measure(&built.bin, &datums, &dir, plan, interrupt)?;
    let header = RecordHeader {
        batch_id,
        started_at,
        bench_version: suite.bench.bench_version,
        host: HostInfo::current(),
        version: built.version,
        config: RigConfig {
            seed: suite.bench.run.seed,
            distinct_datums: plan.distinct_datums,
            warmup_datums: plan.warmup_datums,
            timed_datums: plan.timed_datums,
            counted_datums: plan.counted_datums,
            repetitions: plan.repetitions,
            block_rows: plan.block_rows,
            shards: plan.shards,
        },
        events: plan.events,
        logs: dir,
        suite_commit: crate::provenance::suite_commit(&suite.root),
    };
    let records = records(&header, &measurements);
    let path = crate::results::append_rig_records(results_dir, &records)?;
    Ok((records, path))
}

/// Runs the rig's binary over `datums`; its measurements, one per arm and
/// repetition.
fn measure(
    bin: &Path,
    datums: &Path,
    dir: &Path,
    plan: &CpuRigPlan,
    interrupt: &Interrupt,
) -> Result<Vec<Measurement>> {
    let out = dir.join("measurements.jsonl");
    let log = dir.join("rig.log");
    let mut command = Command::new(bin);
    command.arg("--datums").arg(datums);
    for (flag, value) in [
        ("--warmup", plan.warmup_datums),
        ("--timed", plan.timed_datums),
        ("--counted", plan.counted_datums),
        ("--repetitions", plan.repetitions),
        ("--block-rows", plan.block_rows),
        ("--shards", plan.shards),
    ] {
        command.arg(flag).arg(value.to_string());
    }
    command
        .stdin(Stdio::null())
        .stdout(File::create(&out).with_context(|| format!("creating {}", out.display()))?)
        .stderr(File::create(&log).with_context(|| format!("creating {}", log.display()))?);
    eprintln!(
        "cpu rig: every decoder and format, {} repetitions of {} datums of {} events ...",
        plan.repetitions, plan.timed_datums, plan.events
    );
    let status = crate::process::run_tool(
        &mut command,
        interrupt,
        &format!("could not start {}", bin.display()),
    )?;
    if !status.success() {
        bail!(
            "{RIG_BIN} failed ({status}): {}",
            crate::process::tail(&log, 5)
        );
    }
    let text =
        std::fs::read_to_string(&out).with_context(|| format!("reading {}", out.display()))?;
    text.lines()
        .map(serde_json::from_str)
        .collect::<Result<Vec<Measurement>, _>>()
        .with_context(|| format!("{}: not a rig measurement", out.display()))
}

/// The rig's result as text: each arm's figures, then the two multiples.
pub fn summary(records: &[RigRecord]) -> String {
    let mut text = String::new();
    for record in records {
        let arm = match &record.variant.format {
            Some(format) => format!(
                "{} {} {format}",
                record.variant.stage.as_deref().unwrap_or(""),
                record.variant.decoder
            ),
            None => format!(
                "{} {}",
                record.variant.stage.as_deref().unwrap_or(""),
                record.variant.decoder
            ),
        };
        let figures: Vec<String> = record
            .metrics
            .iter()
            .map(|(name, m)| match m.ci95 {
                Some([lo, hi]) => format!(
                    "{name} {:.4} [{lo:.4}, {hi:.4}] n={}",
                    m.value,
                    m.n.unwrap_or(0)
                ),
                None => format!("{name} {:.4} n={}", m.value, m.n.unwrap_or(0)),
            })
            .collect();
        text.push_str(&format!("{arm:<34} {}\n", figures.join("  ")));
    }
    let multiples = crate::analysis::rig_multiples::multiples(records);
    let shown = |m: Option<f64>| m.map_or("n/a".to_string(), |m| format!("{m:.1}x"));
    text.push_str(&format!(
        "fast-borrowed vs apache-owned: decode {}, pipeline (RowBinary) {}\n",
        shown(multiples.decode),
        shown(multiples.pipeline)
    ));
    text
}

/// Writes `plan.distinct_datums` datums, messages 0.. of the run's seed,
/// each a little-endian u32 length then its bytes.
fn write_datums(path: &Path, seed: u64, plan: &CpuRigPlan) -> Result<()> {
    let mut encoder = AvroEncoder::new(plan.events);
    let mut file = std::io::BufWriter::new(
        File::create(path).with_context(|| format!("creating {}", path.display()))?,
    );
    let ts_us = crate::clock::now_us();
    let mut datum = Vec::new();
    for message in 0..plan.distinct_datums as u64 {
        encoder.encode(seed, message, ts_us, &mut datum)?;
        file.write_all(&(datum.len() as u32).to_le_bytes())?;
        file.write_all(&datum)?;
    }
    file.flush()
        .with_context(|| format!("writing {}", path.display()))
}

/// What every record of one rig run shares.
struct RecordHeader {
    batch_id: String,
    started_at: String,
    bench_version: u32,
    host: HostInfo,
    version: String,
    config: RigConfig,
    events: u32,
    logs: PathBuf,
    suite_commit: Option<String>,
}

/// One record per arm, its figures summarised over the repetitions.
fn records(header: &RecordHeader, measurements: &[Measurement]) -> Vec<RigRecord> {
    let mut by_arm: BTreeMap<&Arm, Vec<&Measurement>> = BTreeMap::new();
    for m in measurements {
        by_arm.entry(&m.arm).or_default().push(m);
    }
    by_arm
        .into_iter()
        .map(|(arm, reps)| arm_record(header, arm, arm_metrics(arm, &reps)))
        .collect()
}

/// An arm's figures, each the median of its repetitions with its interval:
/// decode time or pipeline rate, and allocations and bytes per event.
fn arm_metrics(arm: &Arm, reps: &[&Measurement]) -> BTreeMap<String, Metric> {
    let figure = |of: &Figure, f: &dyn Fn(&Measurement) -> f64| {
        let values: Vec<f64> = reps.iter().map(|m| f(m)).collect();
        let metric = Metric::of_repetitions(median_interval(&values)?, of.unit, of.better);
        Some((of.name.to_string(), metric))
    };
    let timed = if arm.stage == DECODE {
        figure(&DECODE_NS_PER_EVENT, &|m| {
            m.seconds * 1e9 / m.events.max(1) as f64
        })
    } else {
        figure(&PIPELINE_RECORDS_PER_S, &|m| {
            m.events as f64 / m.seconds.max(f64::MIN_POSITIVE)
        })
    };
    let per_counted = |count: fn(&Measurement) -> u64| {
        move |m: &Measurement| count(m) as f64 / m.counted_events.max(1) as f64
    };
    [
        timed,
        figure(&ALLOCS_PER_EVENT, &per_counted(|m| m.allocations)),
        figure(&BYTES_PER_EVENT, &per_counted(|m| m.allocated_bytes)),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// The record of one arm.
fn arm_record(header: &RecordHeader, arm: &Arm, metrics: BTreeMap<String, Metric>) -> RigRecord {
    let variant = Variant {
        decoder: arm.decoder.clone(),
        format: arm.format.clone(),
        events: Some(header.events),
        payload: None,
        stage: Some(arm.stage.clone()),
    };
    RigRecord {
        schema: SCHEMA_VERSION,
        run_id: format!(
            "{}-{}-{}{}",
            header.batch_id,
            arm.stage,
            arm.decoder,
            arm.format
                .as_deref()
                .map(|f| format!("-{f}"))
                .unwrap_or_default()
        ),
        batch_id: header.batch_id.clone(),
        started_at: header.started_at.clone(),
        bench_version: header.bench_version,
        host: header.host.clone(),
        product: RIG_PRODUCT.to_string(),
        version: header.version.clone(),
        workload: "cpu-rig".to_string(),
        variant,
        config: header.config.clone(),
        metrics,
        logs: header.logs.clone(),
        suite_commit: header.suite_commit.clone(),
    }
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    use super::*;
    use crate::results::Better;

    fn measurement(stage: &str, decoder: &str, repetition: usize, seconds: f64) -> Measurement {
        Measurement {
            arm: Arm {
                stage: stage.into(),
                decoder: decoder.into(),
                format: (stage == "pipeline").then(|| "rowbinary".to_string()),
            },
            repetition,
            events: 1_000_000,
            seconds,
            rows: 0,
            counted_events: 10_000,
            allocations: 130_000,
            allocated_bytes: 2_600_000,
        }
    }

    fn header() -> RecordHeader {
        RecordHeader {
            batch_id: "20261130T000000Z-cpu-rig-0001".into(),
            started_at: "2026-11-30T00:00:00Z".into(),
            bench_version: 3,
            host: HostInfo::current(),
            version: "0.1.0".into(),
            config: RigConfig {
                seed: 42,
                distinct_datums: 64,
                warmup_datums: 10,
                timed_datums: 100,
                counted_datums: 10,
                repetitions: 9,
                block_rows: 8192,
                shards: 2,
            },
            events: 50,
            logs: PathBuf::from("/tmp/rig"),
            suite_commit: None,
        }
    }

    #[test]
    fn each_arm_becomes_one_record_of_medians_with_intervals() {
        let mut measurements = Vec::new();
        for rep in 0..9 {
            // 10..18 ms for a million events: 10..18 ns/event.
            measurements.push(measurement(
                "decode",
                "fast-borrowed",
                rep,
                0.010 + rep as f64 * 0.001,
            ));
            measurements.push(measurement("pipeline", "apache-owned", rep, 0.5));
        }
        let records = records(&header(), &measurements);
        assert_eq!(records.len(), 2);
        let decode = records
            .iter()
            .find(|r| r.variant.stage.as_deref() == Some("decode"))
            .unwrap();
        let ns = &decode.metrics[DECODE_NS_PER_EVENT.name];
        assert!((ns.value - 14.0).abs() < 1e-9, "{}", ns.value);
        let [lo, hi] = ns.ci95.unwrap();
        assert!(
            (lo - 11.0).abs() < 1e-9 && (hi - 17.0).abs() < 1e-9,
            "{lo} {hi}"
        );
        assert_eq!(ns.n, Some(9));
        assert_eq!(decode.metrics[ALLOCS_PER_EVENT.name].value, 13.0);
        assert_eq!(decode.metrics[BYTES_PER_EVENT.name].value, 260.0);
        assert_eq!(decode.variant.events, Some(50));
        let pipeline = records
            .iter()
            .find(|r| r.variant.stage.as_deref() == Some("pipeline"))
            .unwrap();
        assert_eq!(
            pipeline.metrics[PIPELINE_RECORDS_PER_S.name].value,
            2_000_000.0
        );
        assert_eq!(
            pipeline.metrics[PIPELINE_RECORDS_PER_S.name].better,
            Better::Higher
        );
        assert!(!pipeline.metrics.contains_key(DECODE_NS_PER_EVENT.name));
        assert_eq!(pipeline.variant.format.as_deref(), Some("rowbinary"));
    }

    #[test]
    fn the_datums_file_holds_length_prefixed_datums_of_the_seed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("datums.bin");
        let plan = CpuRigPlan {
            events: 5,
            distinct_datums: 3,
            warmup_datums: 0,
            timed_datums: 0,
            counted_datums: 0,
            repetitions: 0,
            block_rows: 1,
            shards: 1,
        };
        write_datums(&path, 7, &plan).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        let mut rest = &bytes[..];
        let mut count = 0;
        while !rest.is_empty() {
            let length = u32::from_le_bytes(rest[..4].try_into().unwrap()) as usize;
            let datum = &rest[4..4 + length];
            #[derive(Deserialize)]
            struct Seqs {
                events: Vec<Seq>,
            }
            #[derive(Deserialize)]
            struct Seq {
                seq: u64,
            }
            let decoded: Seqs =
                serde_avro_fast::from_datum_slice(datum, crate::gendata::avro::schema()).unwrap();
            let seqs: Vec<u64> = decoded.events.iter().map(|e| e.seq).collect();
            assert_eq!(seqs, (count * 5..count * 5 + 5).collect::<Vec<u64>>());
            rest = &rest[4 + length..];
            count += 1;
        }
        assert_eq!(count, 3);
    }
}
