//! The judgement: from a run's samples, its helpers' summaries, the verify
//! phase's findings and bench.yaml's tolerances to a record's regime, flags
//! and figures. Pure functions, so every rule is tested on crafted series.
//!
//! Each run kind has its own judge (a topic run's window, a drain, an ETL
//! run's table); the steps they share are here, each judge taking the ones
//! its run has.

mod drain;
mod etl;
mod topic;

#[cfg(test)]
mod tests;

use std::collections::BTreeMap;

use crate::config::Tolerances;
use crate::model::gendata::GendataSummary;
use crate::results::figure::{
    self, Figure, CPU_AVG_PCT, CPU_P95_PCT, MEM_AVG_MB, MEM_MAX_MB, ROWS_PER_S_PER_CORE,
    ROWS_PER_S_PER_GB, RSS_AVG_MB, SAMPLES, SETTLE_S, USS_AVG_MB, US_CPU_PER_RECORD,
};
use crate::results::{
    flag, Metric, Regime, ResourceSummary, Resources, RunConfig, Sanity, SanityVerdict, Series,
    Verification, VerificationVerdict,
};

use super::sanity::{judge_sanity, SanityInputs};
use super::window::{self, OffsetRead, Sample};
use super::{classify, rows_per_s_per_core, rows_per_s_per_gb, us_cpu_per_record};
use crate::sampler::TreeReading;
use crate::workloads::Checked;

pub use drain::{
    drain_capacity, drain_span, judge_drain, output_capacity, DrainInputs, DrainSpan,
    MIN_DRAIN_COMMITS,
};
pub use etl::{judge_etl, EtlInputs};
pub use topic::{judge, JudgeInputs};

/// What the verify phase found, or why the output could not be verified.
#[derive(Debug, Clone)]
pub enum Verified {
    Checked(Checked),
    Skipped(String),
}

/// How the settle phase after the window went.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settle {
    /// From the window's end until the product had committed the whole
    /// input, or until the bound ran out.
    pub seconds: f64,
    /// Whether the product committed the whole input in that time.
    pub reached_end: bool,
}

/// A run's regime, flags and figures.
#[derive(Debug, Clone, Default)]
pub struct Judgement {
    /// Why the run failed, when it did.
    pub failure: Option<String>,
    pub regime: Option<Regime>,
    /// In the order they were set.
    pub flags: Vec<&'static str>,
    pub metrics: BTreeMap<String, Metric>,
    pub not_applicable: BTreeMap<String, String>,
    pub sanity: Option<Sanity>,
    pub verification: Option<Verification>,
    pub resources: Option<Resources>,
    pub series: Option<Series>,
}

impl Judgement {
    pub(super) fn put(&mut self, figure: &Figure, value: f64) {
        self.metrics
            .insert(figure.name.into(), figure.metric(value));
    }

    /// Puts `value`, or notes why the figure does not apply.
    pub(super) fn maybe(&mut self, figure: &Figure, value: Option<f64>, why: &str) {
        match value {
            Some(value) => self.put(figure, value),
            None => self.not_applies(figure, why),
        }
    }

    pub(super) fn not_applies(&mut self, figure: &Figure, why: &str) {
        self.not_applies_to(figure.name, why);
    }

    /// Notes why a part of the record that is no one figure does not apply:
    /// `latency` (all the latency figures), `flow`, `verification`.
    pub(super) fn not_applies_to(&mut self, key: &str, why: &str) {
        self.not_applicable.insert(key.into(), why.into());
    }
}

/// A window's samples, the input's flow over them and the regime the flow
/// shows.
pub(super) struct Windowed<'s> {
    pub window: &'s [Sample],
    pub flow: window::Flow,
    pub regime: Regime,
}

/// The window's samples (from `window_start` on), the input's flow over
/// them and its regime, or why the window cannot be judged.
pub(super) fn windowed<'s>(
    samples: &'s [Sample],
    window_start: usize,
    offset_polls: &[OffsetRead],
    window_s: f64,
    tolerances: &Tolerances,
) -> Result<Windowed<'s>, String> {
    let window = &samples[window_start.min(samples.len())..];
    let reads = window::offset_reads(window, offset_polls);
    match window::flow(&reads, window_s) {
        Some(flow) => Ok(Windowed {
            window,
            regime: classify(flow.drift, tolerances.lag_drift),
            flow,
        }),
        None => Err(format!(
            "the window held {} sample(s); at least 2 are needed to judge it",
            window.len()
        )),
    }
}

/// Which of the harness's processes a run had beside the product and the
/// broker.
#[derive(Debug, Clone, Copy)]
pub(super) struct Helpers {
    pub gendata: bool,
    pub probe: bool,
    pub sink: bool,
}

/// CPU and memory of each process tree over `window`, and the host's load.
pub(super) fn resources(window: &[Sample], ticks_per_s: f64, helpers: Helpers) -> Resources {
    let summarize = |present: bool, part: fn(&Sample) -> Option<&TreeReading>| {
        if present {
            window::summarize(window, ticks_per_s, part)
        } else {
            None
        }
    };
    let mut product = window::summarize(window, ticks_per_s, |r| Some(&r.product));
    // The kernel's account, where there is one, is the product's CPU: it
    // misses nothing between samples.
    let product_cgroup = product.as_mut().and_then(|p| {
        let account = window::cgroup_account(window, p.cpu_avg_pct)?;
        p.cpu_avg_pct = account.cpu_avg_pct;
        Some(account)
    });
    let mut product_cpus_allowed: Vec<String> = window
        .iter()
        .flat_map(|s| s.product_cpus.iter().cloned())
        .collect();
    product_cpus_allowed.sort();
    product_cpus_allowed.dedup();
    Resources {
        product,
        broker: window::summarize(window, ticks_per_s, |r| r.broker.as_ref()),
        gendata: summarize(helpers.gendata, |r| Some(&r.gendata)),
        probe: summarize(helpers.probe, |r| Some(&r.probe)),
        sink: summarize(helpers.sink, |r| r.sink.as_ref()),
        host: window::host_load(window, ticks_per_s),
        product_cgroup,
        product_cpus_allowed,
    }
}

/// `host-saturated` when the host was busier than bench.yaml allows,
/// `noisy-host` when steal or processes that are none of the run's took
/// more than it allows, and `cpu-mismatch` when the product's cgroup and
/// its /proc samples disagree on its CPU.
pub(super) fn flag_host(j: &mut Judgement, resources: &Resources, tolerances: &Tolerances) {
    let host = resources.host.as_ref();
    if host.is_some_and(|h| h.busy_avg_pct > tolerances.host_busy_pct) {
        j.flags.push(flag::HOST_SATURATED);
    }
    let beyond = |share: Option<f64>, bound: f64| share.is_some_and(|s| s > bound);
    if host.is_some_and(|h| {
        beyond(h.steal_avg_pct, tolerances.steal_pct)
            || beyond(h.outside_avg_pct, tolerances.outside_pct)
    }) {
        j.flags.push(flag::NOISY_HOST);
    }
    match &resources.product_cgroup {
        Some(account) if account.disagreement() > tolerances.cpu_mismatch => {
            j.flags.push(flag::CPU_MISMATCH)
        }
        Some(_) => {}
        None => j.not_applies_to(
            "cgroup_cpu",
            "the product's cgroup was not read at both ends of the window; its CPU is the /proc samples'",
        ),
    }
}

/// `slow-samples` when any sample came late; the count.
pub(super) fn flag_slow_samples(j: &mut Judgement, window: &[Sample]) -> usize {
    let slow_samples = window::slow_samples(window);
    if slow_samples > 0 {
        j.flags.push(flag::SLOW_SAMPLES);
    }
    slow_samples
}

/// `generator-behind` when paced gendata fell behind its schedule at p99;
/// whether it did. Unpaced (rate 0), gendata has no schedule to fall
/// behind: its lateness is send-to-acknowledgement time under a full queue.
pub(super) fn flag_generator_behind(
    j: &mut Judgement,
    gendata: &GendataSummary,
    config: &RunConfig,
    tolerances: &Tolerances,
) -> bool {
    let behind = config.is_paced() && gendata.behind_p99_ms > tolerances.generator_behind_ms;
    if behind {
        j.flags.push(flag::GENERATOR_BEHIND);
    }
    behind
}

/// A run whose input lost records at gendata's hand failed.
pub(super) fn fail_on_delivery_errors(j: &mut Judgement, gendata: &GendataSummary) {
    if gendata.delivery_errors > 0 {
        j.failure = Some(format!(
            "gendata: {} records were not delivered to the input topic",
            gendata.delivery_errors
        ));
    }
}

/// How long the product took to finish its input after the window.
pub(super) fn put_settle(j: &mut Judgement, settle: Option<Settle>) {
    match settle {
        Some(settle) if settle.reached_end => j.put(&SETTLE_S, settle.seconds),
        Some(settle) => j.not_applies(
            &SETTLE_S,
            &format!(
                "the product had not finished its input when the settle phase ended after {:.0} s",
                settle.seconds
            ),
        ),
        None => j.not_applies(&SETTLE_S, "the product was down at the window's end"),
    }
}

/// The sanity checks' verdict, `sanity-warning` when they found a fault.
pub(super) fn put_sanity(j: &mut Judgement, inputs: SanityInputs<'_>) {
    let sanity = judge_sanity(inputs);
    if sanity.verdict != SanityVerdict::Ok {
        j.flags.push(flag::SANITY_WARNING);
    }
    j.sanity = Some(sanity);
}

/// The regime, the per-interval series from `samples` and the resources:
/// what every judgement ends with.
pub(super) fn close(
    j: &mut Judgement,
    regime: Regime,
    samples: &[Sample],
    start_us: i64,
    ticks_per_s: f64,
    resources: Resources,
) {
    j.regime = Some(regime);
    j.series = Some(window::series(samples, start_us, ticks_per_s));
    j.resources = Some(resources);
}

/// Flags `inconsistent-flow` and takes out the figures that lean on the
/// flow, each with the disagreements as its reason.
pub(super) fn withhold_if_inconsistent(j: &mut Judgement, disagreements: &[String]) {
    if disagreements.is_empty() {
        return;
    }
    let why = format!("the flow figures disagree: {}", disagreements.join("; "));
    j.flags.push(flag::INCONSISTENT_FLOW);
    let latency: Vec<String> = j
        .metrics
        .keys()
        .filter(|name| name.starts_with("latency_") || name.starts_with("added_"))
        .cloned()
        .collect();
    let quoted_latency = !latency.is_empty();
    let flow_dependent = figure::ALL.iter().filter(|f| f.flow_dependent);
    for name in flow_dependent.map(|f| f.name.to_string()).chain(latency) {
        j.metrics.remove(&name);
        j.not_applies_to(&name, &why);
    }
    // Latency withheld here, not for a reason already given (a saturated
    // run's), and not on a run that times none (an ETL run).
    if quoted_latency {
        j.not_applies_to("latency", &why);
    }
    j.not_applies_to("flow", &disagreements.join("; "));
}

/// CPU, memory and the efficiency figures of the product's tree, with
/// `consumed_per_s` as the rate the efficiency is of.
pub(super) fn put_efficiency(j: &mut Judgement, p: &ResourceSummary, consumed_per_s: f64) {
    j.put(&CPU_AVG_PCT, p.cpu_avg_pct);
    j.put(&CPU_P95_PCT, p.cpu_p95_pct);
    j.put(&MEM_AVG_MB, p.mem_avg_mb);
    j.put(&MEM_MAX_MB, p.mem_max_mb);
    if let Some(rss) = p.rss_avg_mb {
        j.put(&RSS_AVG_MB, rss);
    }
    j.maybe(
        &USS_AVG_MB,
        p.uss_avg_mb,
        "the product's smaps_rollup could not be read at every sample",
    );
    j.put(&SAMPLES, p.samples as f64);
    j.maybe(
        &ROWS_PER_S_PER_CORE,
        rows_per_s_per_core(consumed_per_s, p.cpu_avg_pct),
        "the product used no measurable CPU",
    );
    j.maybe(
        &US_CPU_PER_RECORD,
        us_cpu_per_record(consumed_per_s, p.cpu_avg_pct),
        "the product consumed no records",
    );
    j.maybe(
        &ROWS_PER_S_PER_GB,
        rows_per_s_per_gb(consumed_per_s, p.mem_avg_mb),
        "the product's memory could not be read",
    );
}

/// The verification, and its verdict as a flag.
pub(super) fn put_verification(j: &mut Judgement, verified: &Verified) {
    match verified {
        Verified::Checked(Checked { verification, .. }) => {
            match verification.verdict {
                VerificationVerdict::Passed => {}
                VerificationVerdict::Failed => j.flags.push(flag::VERIFICATION_FAILED),
                VerificationVerdict::Incomplete => j.flags.push(flag::VERIFICATION_INCOMPLETE),
            }
            j.verification = Some(verification.clone());
        }
        Verified::Skipped(why) => j.not_applies_to("verification", why),
    }
}
