//! Each role's CPUs and the kernel's account of the product: a run with
//! `isolation: auto` finds every product process on the product's CPUs (an
//! embedded run and a cluster deployment), the product's cgroup CPU agrees
//! with the /proc samples on a steady run and counts the children /proc
//! never sees, and a batch survives its binary being replaced.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use libtest_mimic::Trial;
use streamsuite::isolation::cgroup::ProductCgroup;
use streamsuite::isolation::{auto_layout, CpuSet};
use streamsuite::results::{flag, CgroupAccount, Isolation, RunRecord, Status};

use crate::support::{
    config_with_products, describe, ensure, output, records, run_suite, rustpipe_product, suite,
};
use crate::{measured, trial};

pub fn trials() -> Vec<Trial> {
    vec![
        measured(
            "isolation_places_every_product_process_on_the_products_cpus",
            isolation_places_every_product_process_on_the_products_cpus,
        ),
        trial(
            "a_cluster_deployment_is_placed_whole",
            a_cluster_deployment_is_placed_whole,
        ),
        measured(
            "the_cgroup_counts_children_too_short_lived_for_any_sample",
            the_cgroup_counts_children_too_short_lived_for_any_sample,
        ),
        trial(
            "a_batch_finishes_when_its_binary_is_replaced_midway",
            a_batch_finishes_when_its_binary_is_replaced_midway,
        ),
    ]
}

/// Whether this host lets the suite make cgroups (root, a hierarchy
/// mounted): where it does, every run must carry the account.
fn cgroups_here() -> bool {
    ProductCgroup::create(&format!("probe-{}", std::process::id())).is_ok()
}

/// The layout `auto` gives on this host's CPUs.
fn auto_product_cpus() -> Result<String, String> {
    let cpus = CpuSet::of_this_process().map_err(|e| format!("{e:#}"))?;
    auto_layout(&cpus)
        .map(|layout| layout.product)
        .map_err(|e| format!("{e:#}"))
}

/// The run's record was placed by `auto` and each product process read
/// back only the product's CPUs.
fn placed_as_auto(
    r: &RunRecord,
    product_cpus: &str,
    out: &std::process::Output,
) -> Result<(), String> {
    ensure(
        matches!(&r.config.isolation, Isolation::Pinned(l) if l.product == product_cpus),
        &format!("the record's layout: {:?}", r.config.isolation),
        out,
    )?;
    let resources = r.resources.as_ref().ok_or("no resources")?;
    ensure(
        resources.product_cpus_allowed == [product_cpus.to_string()],
        &format!(
            "every product process allowed {product_cpus} alone: {:?}",
            resources.product_cpus_allowed
        ),
        out,
    )
}

/// The cgroup's account, required where cgroups can be made.
fn account<'r>(
    r: &'r RunRecord,
    out: &std::process::Output,
) -> Result<Option<&'r CgroupAccount>, String> {
    let account = r
        .resources
        .as_ref()
        .and_then(|res| res.product_cgroup.as_ref());
    if account.is_none() {
        ensure(
            !cgroups_here(),
            &format!(
                "cgroups can be made here, yet the run has no account: {:?}",
                r.not_applicable.get("cgroup_cpu")
            ),
            out,
        )?;
        ensure(
            r.not_applicable.contains_key("cgroup_cpu"),
            "a run without a cgroup says why",
            out,
        )?;
    }
    Ok(account)
}

fn isolation_places_every_product_process_on_the_products_cpus() -> Result<(), String> {
    let product_cpus = auto_product_cpus()?;
    let results = tempfile::tempdir().map_err(|e| e.to_string())?;
    let out = output(
        suite()
            .args(["run", "rustpipe", "stateless", "--set", "isolation=auto"])
            .args(["--window", "15"])
            .arg("--results")
            .arg(results.path()),
    )?;
    ensure(out.status.success(), "the run must succeed", &out)?;
    let records = records(results.path(), "stateless")?;
    let r = records.first().ok_or("no record")?;
    ensure(r.status == Status::Ok, "status ok", &out)?;
    placed_as_auto(r, &product_cpus, &out)?;
    if let Some(account) = account(r, &out)? {
        // Steady, with no process coming and going: the two instruments
        // measure the same ticks.
        ensure(
            account.disagreement() <= 0.05 && !r.has_flag(flag::CPU_MISMATCH),
            &format!("cgroup and /proc agree within 5 %: {account:?}"),
            &out,
        )?;
        let cpu = r.metrics.get("cpu_avg_pct").map(|m| m.value);
        ensure(
            cpu == Some(account.cpu_avg_pct),
            &format!("the product's CPU is the cgroup's: {cpu:?} against {account:?}"),
            &out,
        )?;
    }
    let host = r.resources.as_ref().and_then(|res| res.host.as_ref());
    ensure(
        host.is_some_and(|h| h.steal_avg_pct.is_some() && h.outside_avg_pct.is_some()),
        &format!("the host's steal and outside CPU are recorded: {host:?}"),
        &out,
    )
}

fn a_cluster_deployment_is_placed_whole() -> Result<(), String> {
    let product_cpus = auto_product_cpus()?;
    let results = tempfile::tempdir().map_err(|e| e.to_string())?;
    let out = output(
        suite()
            .args(["run", "rustpipe", "stateless", "--deploy", "cluster"])
            .args(["--set", "workload.partitions=2", "--set", "isolation=auto"])
            .args(["--warmup", "5", "--window", "10"])
            .arg("--results")
            .arg(results.path()),
    )?;
    ensure(out.status.success(), "the cluster run must succeed", &out)?;
    let records = records(results.path(), "stateless")?;
    let r = records.first().ok_or("no record")?;
    ensure(
        r.resources
            .as_ref()
            .and_then(|res| res.product.as_ref())
            .and_then(|p| p.processes_max)
            .is_some_and(|n| n >= 2),
        "both instances were sampled",
        &out,
    )?;
    placed_as_auto(r, &product_cpus, &out)
}

fn the_cgroup_counts_children_too_short_lived_for_any_sample() -> Result<(), String> {
    if !cgroups_here() {
        eprintln!("no cgroup can be made here: the trial has nothing to check");
        return Ok(());
    }
    // rustpipe, with a shell beside it that starts a child every 0.2 s,
    // each about 30 ms of CPU and gone long before the next 1 s sample.
    let start = "start: [\"sh\", \"-c\", \"(while :; do sh -c 'i=0; while [ $i -lt 30000 ]; do \
                 i=$((i+1)); done'; sleep 0.2; done) & exec \\\"$0\\\"\", \"{bin}\"]";
    let yaml = rustpipe_product().replace("start: [\"{bin}\"]", start);
    ensure_replaced(&yaml)?;
    let config = config_with_products(&[("rustpipe", &yaml)])?;
    let results = tempfile::tempdir().map_err(|e| e.to_string())?;
    let out = run_suite(
        &config.path().join("bench.yaml"),
        &["rustpipe", "stateless", "--warmup", "5", "--window", "15"],
        results.path(),
    )?;
    ensure(out.status.success(), "the run must succeed", &out)?;
    let records = records(results.path(), "stateless")?;
    let r = records.first().ok_or("no record")?;
    let account = r
        .resources
        .as_ref()
        .and_then(|res| res.product_cgroup.as_ref())
        .ok_or_else(|| {
            format!(
                "no cgroup account: {:?}",
                r.not_applicable.get("cgroup_cpu")
            )
        })?;
    // The children's CPU is in the cgroup's figure and (nearly) none of
    // it in the samples'.
    ensure(
        account.cpu_avg_pct - account.proc_cpu_avg_pct > 5.0,
        &format!("the cgroup counts the short-lived children: {account:?}"),
        &out,
    )?;
    ensure(
        r.has_flag(flag::CPU_MISMATCH),
        &format!("the gap is flagged: {:?}", r.flags),
        &out,
    )
}

/// The product.yaml's start command was replaced (its text changed).
fn ensure_replaced(yaml: &str) -> Result<(), String> {
    if yaml.contains("start: [\"{bin}\"]") {
        return Err("rustpipe's product.yaml changed its start command".into());
    }
    Ok(())
}

fn a_batch_finishes_when_its_binary_is_replaced_midway() -> Result<(), String> {
    // A copy of the suite, so the one the other trials run stays whole.
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let binary = dir.path().join("suite");
    std::fs::copy(env!("CARGO_BIN_EXE_suite"), &binary).map_err(|e| e.to_string())?;
    let results = tempfile::tempdir().map_err(|e| e.to_string())?;
    let mut child = std::process::Command::new(&binary)
        .arg("--config")
        .arg(crate::support::repo().join("bench.yaml"))
        .args([
            "batch",
            "rustpipe",
            "--workload",
            "stateless",
            "--repeat",
            "2",
        ])
        .args(["--warmup", "3", "--window", "5"])
        .arg("--results")
        .arg(results.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| e.to_string())?;
    // As a rebuild does: a new file renamed over the old one, here one
    // that can run nothing, while the first run is under way.
    std::thread::sleep(Duration::from_secs(8));
    replace_with_a_broken_binary(&binary)?;
    let deadline = Instant::now() + Duration::from_secs(600);
    while child.try_wait().map_err(|e| e.to_string())?.is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            return Err("the batch did not finish within 10 minutes".into());
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let out = child.wait_with_output().map_err(|e| e.to_string())?;
    ensure(
        out.status.success(),
        "the batch must finish though its binary was replaced",
        &out,
    )?;
    let records = records(results.path(), "stateless")?;
    ensure(
        records.len() == 2 && records.iter().all(|r| r.status == Status::Ok),
        &format!(
            "both runs ok: {:?}",
            records
                .iter()
                .map(|r| (&r.status, &r.failure))
                .collect::<Vec<_>>()
        ),
        &out,
    )?;
    let gone = std::process::Command::new(&binary)
        .arg("--version")
        .output();
    match gone {
        Ok(o) if o.status.success() => Err(format!(
            "the replacement must not run, so that the batch's helpers could not have been it: {}",
            describe(&o)
        )),
        _ => Ok(()),
    }
}

/// Renames a script that fails over `binary`.
fn replace_with_a_broken_binary(binary: &Path) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    let new = binary.with_extension("new");
    std::fs::write(&new, "#!/bin/sh\necho replaced >&2\nexit 1\n").map_err(|e| e.to_string())?;
    std::fs::set_permissions(&new, std::fs::Permissions::from_mode(0o755))
        .map_err(|e| e.to_string())?;
    std::fs::rename(&new, binary).map_err(|e| e.to_string())
}
