//! Every entry's run configuration, checked with the request before
//! anything starts: the window, the deployment, the faults and the schedule
//! a workload needs.

use anyhow::Result;

use super::request::{LineEntry, LinesRequest};
use crate::config::{
    Bench, BrokerConfig, LineBench, Product, Setting, Suite, Workload, EMBEDDED, MIN_WINDOW_SAMPLES,
};
use crate::isolation::{self, CpuSet};
use crate::results::{Isolation, RunConfig};
use crate::workloads;

/// Every entry's run configuration, checked with the request before
/// anything starts.
pub(super) fn checked_configs(
    suite: &Suite,
    bench: &Bench,
    request: &LinesRequest<'_>,
) -> Result<Vec<RunConfig>> {
    let window_s = checked_window(request, bench)?;
    let configs: Vec<RunConfig> = request
        .lines
        .iter()
        .map(|entry| line_config(suite, bench, request, entry, window_s))
        .collect::<Result<_>>()?;
    check_request(request, bench, &configs, window_s)?;
    Ok(configs)
}

/// The window the request runs, checked against the samples it must span;
/// a drain run has none.
fn checked_window(request: &LinesRequest<'_>, bench: &Bench) -> Result<u64> {
    let defaults = &bench.run;
    if request.drain == Some(0) {
        anyhow::bail!(
            "--drain 0 leaves nothing to consume; give the number of records to pre-fill"
        );
    }
    // A drain run has no schedule: no rate, no warm-up, no window.
    if request.drain.is_some() {
        return Ok(0);
    }
    let window_s = request.options.window.unwrap_or(defaults.window_s);
    if let Err(min) = defaults.check_window(window_s) {
        anyhow::bail!(
            "--window {window_s} is too short: a window must span at least {MIN_WINDOW_SAMPLES} \
             samples, {min} s at bench.yaml's run.sample_interval_ms {}; use --window {min} or more",
            defaults.sample_interval_ms
        );
    }
    Ok(window_s)
}

/// One line's configuration: its product's expert profile when asked for,
/// then the batch's settings, then the line's own.
fn line_config(
    suite: &Suite,
    bench: &Bench,
    request: &LinesRequest<'_>,
    entry: &LineEntry<'_>,
    window_s: u64,
) -> Result<RunConfig> {
    let (options, workload, defaults) = (&request.options, request.workload, &bench.run);
    let drain = request.drain.is_some();
    let profile = options.profile;
    // `--deploy` first: a line's own `run.deploy` wins over it.
    let deploy = options.deploy.as_deref().map(Setting::deploy);
    let given: Vec<Setting> = deploy
        .into_iter()
        .chain(request.settings.iter().cloned())
        .chain(entry.own_settings())
        .collect();
    let LineBench {
        bench: own,
        product_settings,
    } = suite.bench.for_line(entry.line.product, profile, &given)?;
    check_deployment(entry.line.product, &own.run.deploy, workload)?;
    let delivery = entry.line.line.delivery;
    // A JVM line waits out its JIT however short the bench's warm-up.
    let least_warmup_s = defaults.warmup_s.max(entry.line.product.min_warmup_s);
    let rate = entry.rate.or(options.rate).unwrap_or(bench.default_rate());
    Ok(RunConfig {
        rate: if drain { 0 } else { rate },
        warmup_s: if drain {
            0
        } else {
            options.warmup.unwrap_or(least_warmup_s)
        },
        // The warm-up lasts until the product is steady unless `--warmup`
        // fixed it; a drain, an unpaced run (never steady against no
        // schedule) and an ETL run keep a fixed one.
        warmup_cap_s: (!drain && options.warmup.is_none() && rate > 0 && !workload.is_etl())
            .then_some(defaults.warmup_cap_s.max(least_warmup_s)),
        window_s,
        seed: defaults.seed,
        commit_interval_ms: own.run.commit_interval_ms.for_delivery(delivery),
        commit_intervals: Some(own.run.commit_interval_ms),
        client: own.client.clone(),
        settings: given.iter().map(Setting::to_string).collect(),
        profile,
        product_settings,
        parallelism: own.run.parallelism,
        deployment: own.run.deploy.clone(),
        hosts: placed_on(&own, &entry.line.product.name),
        sample_interval_ms: defaults.sample_interval_ms,
        input_partitions: workload.input.partitions,
        drain_records: request.drain,
        etl: workload.is_etl().then(|| own.etl.clone()),
        isolation: batch_isolation(bench)?,
    })
}

/// The batch's isolation on this host's CPUs: every run of a batch shares it.
pub(super) fn batch_isolation(bench: &Bench) -> Result<Isolation> {
    isolation::resolve(&bench.isolation, &CpuSet::of_the_suite()?)
}

/// The hosts bench.yaml places `product` on, as the record names them.
pub(crate) fn placed_on(bench: &Bench, product: &str) -> Vec<String> {
    bench
        .hosts
        .get(product)
        .map(|hosts| hosts.iter().map(ToString::to_string).collect())
        .unwrap_or_default()
}

/// The product offers `deploy`, and the input has a partition for each of
/// its processes that read it: one more would wait idle for a share.
fn check_deployment(product: &Product, deploy: &str, workload: &Workload) -> Result<()> {
    let deployment = product.deployment(deploy).map_err(anyhow::Error::msg)?;
    let partitions = workload.input.partition_count();
    if deploy != EMBEDDED && deployment.consumers() > partitions {
        anyhow::bail!(
            "{}: deployment `{deploy}` runs {} processes that read the input, which needs a \
             partition for each; workload `{}` has {partitions} (give --set workload.partitions={})",
            product.name,
            deployment.consumers(),
            workload.name,
            deployment.consumers()
        );
    }
    Ok(())
}

/// What the workload and the broker allow of the request: a paced run
/// where the workload needs a schedule, and faults only where they can land.
fn check_request(
    request: &LinesRequest<'_>,
    bench: &Bench,
    configs: &[RunConfig],
    window_s: u64,
) -> Result<()> {
    let workload = request.workload;
    if let Some(config) = configs.iter().find(|c| !c.is_paced()) {
        if workloads::topic_output(workload).is_some_and(|o| o.needs_schedule()) {
            anyhow::bail!(
                "workload `{}` needs a paced run: its records fall in windows by gendata's schedule, \
                 which {} has none of; give a rate above 0",
                workload.name,
                if config.drain_records.is_some() { "a drain run" } else { "rate 0" }
            );
        }
    }
    let Some(plan) = &request.chaos else {
        return Ok(());
    };
    if workloads::topic_output(workload).is_none() {
        anyhow::bail!(
            "chaos: workload `{}` writes to a table, and faults are injected into runs \
             that write a topic only",
            workload.name
        );
    }
    if let Some(fault) = plan.outside(window_s) {
        anyhow::bail!(
            "chaos: {fault} falls outside the {window_s} s window; choose a time inside it"
        );
    }
    if let Some(role) = &plan.member {
        for (entry, config) in request.lines.iter().zip(configs) {
            let product = entry.line.product;
            let deployment = product
                .deployment(&config.deployment)
                .map_err(anyhow::Error::msg)?;
            if !deployment.processes.iter().any(|p| &p.role == role) {
                let roles: Vec<&str> = deployment
                    .processes
                    .iter()
                    .map(|p| p.role.as_str())
                    .collect();
                anyhow::bail!(
                    "chaos: {} deployed `{}` has no member of role `{role}` (its roles: {}); \
                     choose a deployment with --deploy",
                    product.name,
                    config.deployment,
                    roles.join(", ")
                );
            }
        }
    }
    if plan.broker_restart_at_s.is_some() {
        if let BrokerConfig::External { bootstrap, .. } = &bench.broker {
            anyhow::bail!(
                "chaos: a broker restart needs the suite's local broker; this bench's broker \
                 is external ({bootstrap}), which the suite cannot kill or start"
            );
        }
    }
    Ok(())
}
