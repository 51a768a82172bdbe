//! Peer products: each runnable line installs through `suite install` (cached
//! in the cache directory by version, so only the first test run pays for it)
//! and makes a short real run at a low rate; installs are not redone; a
//! product whose binary is missing is listed with its hint and refused.

use libtest_mimic::Trial;
use streamsuite::cache::Cache;
use streamsuite::config::{Delivery, Install, Product, Suite};
use streamsuite::gendata::event::eu_share;
use streamsuite::products::{capability, Availability};
use streamsuite::results::Regime;

use crate::support::{
    config_with_products, did_the_same_work, ensure, output, records, repo, stateless_run, suite,
    suite_with,
};
use crate::trial;

pub fn trials() -> Vec<Trial> {
    let mut trials = line_trials();
    trials.extend(vec![
        trial(
            "an_installed_version_is_not_installed_again",
            an_installed_version_is_not_installed_again,
        ),
        trial(
            "a_missing_binary_is_listed_with_its_hint_and_refused_by_run",
            a_missing_binary_is_listed_with_its_hint_and_refused_by_run,
        ),
        trial(
            "a_failed_install_is_listed_as_not_installed_here_with_its_reason",
            a_failed_install_is_listed_as_not_installed_here_with_its_reason,
        ),
    ]);
    trials
}

/// Warm-up and window, in seconds, of the products whose lines need more
/// than a JVM's 6 s of warm-up and a 6 s window: Spark's lines commit once
/// a batch. Its micro-batches come every few hundred ms (8 and 10 s; its
/// JVM behind Python starts slower than the others); spark-rt's every 5 s,
/// and the regime needs more than a 10 s window's two commits (15 and 20 s).
const LONGER_RUNS: [(&str, u64, u64); 2] = [("spark", 8, 10), ("spark-rt", 15, 20)];

/// One trial per line of every peer product that runs the stateless
/// workload, made from its product.yaml: a product added is a product
/// tested. Each is measured (see [`crate::measured`]). rustpipe, built from the workspace, is the subject of the other
/// trials. A line whose binary is not on this machine is listed, ignored.
fn line_trials() -> Vec<Trial> {
    let suite = Suite::load(&repo().join("bench.yaml")).expect("the repository's bench.yaml loads");
    let mut trials = Vec::new();
    for product in suite.products.values() {
        if matches!(product.install, Install::Cargo { .. } | Install::Builtin)
            || !product.workloads.iter().any(|w| w == "stateless")
        {
            continue;
        }
        // Only a binary may be missing: a product installed from a registry
        // whose tools are missing fails its trial.
        let missing = matches!(product.install, Install::Binary { .. })
            && matches!(capability(product), Availability::NotInstalled { .. });
        let (warmup_s, window_s) = LONGER_RUNS
            .iter()
            .find(|(name, _, _)| *name == product.name)
            .map_or((default_warmup_s(product), 6), |&(_, warmup, window)| {
                (warmup, window)
            });
        for line in &product.lines {
            let (name, delivery) = (line.name.clone(), line.delivery);
            let trial_name = format!(
                "{}_line_runs_the_stateless_workload",
                name.replace('-', "_")
            );
            let label = trial_name.clone();
            trials.push(
                crate::timed_trial(trial_name, move || {
                    crate::retried_once(&label, || {
                        installed_line_keeps_up_over(&name, delivery, warmup_s, window_s)
                    })
                })
                .with_ignored_flag(missing),
            );
        }
    }
    trials
}

/// The least warm-up of a line trial: 6 s for a JVM built with Maven,
/// whose JIT still takes the host's cores after 4 s (a Flink line's
/// generator fell 101 ms behind its schedule at 4 s); 4 s for an
/// interpreter, steady by then in every run here.
fn default_warmup_s(product: &Product) -> u64 {
    match product.install {
        Install::Maven { .. } => 6,
        _ => 4,
    }
}

/// `suite install LINE`, then at least `warmup_s` of warm-up, lasting until
/// the line is steady (a JVM or a Python interpreter still settling), and a
/// `window_s` window at 1000 records/s with a client profile unlike
/// bench.yaml's: one ok record of the version product.yaml names, keep-up,
/// the eu-* share kept, and the profile applied.
fn installed_line_keeps_up_over(
    line: &str,
    delivery: Delivery,
    warmup_s: u64,
    window_s: u64,
) -> Result<(), String> {
    let install = output(suite().args(["install", line]))?;
    ensure(
        install.status.success(),
        "the install must succeed",
        &install,
    )?;
    let (out, record) = stateless_run(
        line,
        delivery,
        1000,
        warmup_s,
        window_s,
        &crate::support::PROFILE_SETTINGS,
    )?;
    let r = &record;
    crate::support::applied_the_client_profile(r, &out)?;
    ensure(
        r.version == default_version(line)?,
        &format!("the version run is product.yaml's, got {}", r.version),
        &out,
    )?;
    ensure(r.regime == Some(Regime::KeepUp), "keep-up expected", &out)?;
    let figure = |name: &str| crate::support::metric(r, name);
    let offered = figure("offered_per_s")?;
    let consumed = figure("consumed_per_s")?;
    ensure(
        (consumed - offered).abs() / offered < 0.1,
        &format!("consumed {consumed} within 10% of offered {offered}"),
        &out,
    )?;
    let share = figure("output_per_s")? / consumed;
    ensure(
        (share / eu_share() - 1.0).abs() < 0.1,
        &format!(
            "output/consumed {share:.4} within 10% of the eu-* share {}",
            eu_share()
        ),
        &out,
    )?;
    ensure(figure("latency_count")? > 0.0, "records timed", &out)?;
    ensure(figure("cpu_avg_pct")? > 0.0, "product CPU sampled", &out)?;
    did_the_same_work(r, &out)
}

/// The version `suite run LINE` runs when no --product-version is given.
pub fn default_version(line: &str) -> Result<String, String> {
    let suite = Suite::load(&repo().join("bench.yaml")).map_err(|e| e.to_string())?;
    let found = suite.line(line, None).map_err(|e| e.to_string())?;
    Ok(found.product.resolved_version())
}

/// A second `suite install` of the same version finds the first one's marker
/// and returns at once; `suite list` says it is installed.
fn an_installed_version_is_not_installed_again() -> Result<(), String> {
    let first = output(suite().args(["install", "faststream"]))?;
    ensure(first.status.success(), "the install must succeed", &first)?;
    let version = default_version("faststream")?;
    let cache = Cache::from_settings(None).map_err(|e| e.to_string())?;
    let log = cache
        .product_dir("faststream", &version)
        .join("install.log");
    let modified = || {
        std::fs::metadata(&log)
            .and_then(|m| m.modified())
            .map_err(|e| e.to_string())
    };
    let before = modified()?;
    let again = output(suite().args(["install", "faststream"]))?;
    ensure(
        again.status.success()
            && String::from_utf8_lossy(&again.stdout).contains("is already installed in"),
        "the second install must find the first",
        &again,
    )?;
    ensure(
        modified()? == before,
        "pip did not run again: the install log is untouched",
        &again,
    )?;
    let list = output(suite().arg("list"))?;
    ensure(
        String::from_utf8_lossy(&list.stdout)
            .lines()
            .any(|l| l.starts_with("faststream ") && l.contains(&format!("(installed {version})"))),
        "suite list says which version is installed",
        &list,
    )?;
    let json = output(suite().args(["list", "--json"]))?;
    let doc: serde_json::Value = serde_json::from_slice(&json.stdout)
        .map_err(|e| format!("list --json prints one JSON document: {e}"))?;
    let faststream = doc["lines"]
        .as_array()
        .and_then(|lines| lines.iter().find(|l| l["line"] == "faststream"))
        .cloned()
        .unwrap_or_default();
    ensure(
        json.status.success()
            && faststream["status"] == "installed"
            && faststream["version"] == version.as_str()
            && faststream["runnable"] == true
            && doc["workloads"]
                .as_array()
                .is_some_and(|w| w.iter().any(|w| w["name"] == "stateless")),
        &format!("list --json says faststream {version} is installed: {faststream}"),
        &json,
    )
}

/// A stand-in product (never a published result) whose binary is nowhere.
const ABSENT_PRODUCT: &str = r#"name: absent
description: A test double whose binary this machine does not have.
version: "1.0"
install:
  kind: binary
  env: SS_TEST_ABSENT_BIN
  command: ss-test-absent-command
  hint: "get ss-test-absent-command from its vendor"
start: ["{bin}"]
ready: {stdout_contains: "absent ready"}
workloads: [stateless]
lines:
  - {name: absent, delivery: at-least-once, delivery_detail: none}
  - {name: absent-eos, delivery: exactly-once, delivery_detail: none}
characteristics: {processing: none, engine: none, scaling: none, decode: none}
"#;

fn a_missing_binary_is_listed_with_its_hint_and_refused_by_run() -> Result<(), String> {
    let dir = config_with_products(&[("absent", ABSENT_PRODUCT)])?;
    let bench = dir.path().join("bench.yaml");
    let list = output(suite_with(&bench).arg("list"))?;
    let hint = "not installed here: get ss-test-absent-command from its vendor";
    let text = String::from_utf8_lossy(&list.stdout).to_string();
    ensure(
        list.status.success()
            && ["absent ", "absent-eos "].iter().all(|line| {
                text.lines()
                    .any(|l| l.starts_with(line) && l.ends_with(hint))
            }),
        "both lines are listed as not installed, with the hint",
        &list,
    )?;
    let results = dir.path().join("results");
    let run = output(
        suite_with(&bench)
            .args(["run", "absent-eos", "stateless", "--results"])
            .arg(&results),
    )?;
    let err = String::from_utf8_lossy(&run.stderr).to_string();
    ensure(run.status.code() == Some(1), "exit code 1 expected", &run)?;
    ensure(
        err.lines().count() == 1
            && err.contains("absent is not installed here: get ss-test-absent-command"),
        "one line with the hint",
        &run,
    )?;
    ensure(
        records(&results, "stateless")?.is_empty(),
        "no record for a product that is not installed",
        &run,
    )
}

/// A stand-in pip product (never a published result) whose package pip
/// cannot install, as with a package that has no wheel for this Python.
const UNINSTALLABLE_PRODUCT: &str = r#"name: uninstallable
description: A test double whose package pip cannot install.
version: "1.0"
install:
  kind: pip
  packages: ["ss-test-uninstallable @ file:///nonexistent/ss-test-uninstallable"]
start: ["{install}/venv/bin/python"]
ready: {stdout_contains: "uninstallable ready"}
workloads: [stateless]
lines:
  - {name: uninstallable, delivery: at-least-once, delivery_detail: none}
characteristics: {processing: none, engine: none, scaling: none, decode: none}
"#;

/// Installable until an install fails; then `suite list` and `batch --all`
/// say it is not installed here, with pip's reason and how to retry.
fn a_failed_install_is_listed_as_not_installed_here_with_its_reason() -> Result<(), String> {
    let dir = config_with_products(&[("uninstallable", UNINSTALLABLE_PRODUCT)])?;
    let bench = dir.path().join("bench.yaml");
    let cache = Cache::from_settings(None).map_err(|e| e.to_string())?;
    let folder = cache.product_dir("uninstallable", "1.0");
    if folder.exists() {
        std::fs::remove_dir_all(&folder).map_err(|e| e.to_string())?;
    }
    let listed = |out: &std::process::Output| {
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .find(|l| l.starts_with("uninstallable "))
            .map(str::to_string)
            .unwrap_or_default()
    };
    let before = output(suite_with(&bench).arg("list"))?;
    ensure(
        listed(&before).ends_with("runnable here (installs 1.0 on first run)"),
        "installable before any install",
        &before,
    )?;
    let install = output(suite_with(&bench).args(["install", "uninstallable"]))?;
    let err = String::from_utf8_lossy(&install.stderr).to_string();
    let reason = "ERROR: Could not install packages due to an OSError";
    ensure(
        !install.status.success()
            && err.lines().any(|l| {
                l.contains("installing uninstallable 1.0 (pip) failed") && l.contains(reason)
            }),
        "the install fails with pip's reason on one line",
        &install,
    )?;
    let after = output(suite_with(&bench).arg("list"))?;
    let line = listed(&after);
    ensure(
        line.contains(&format!(
            "not installed here: installing 1.0 failed: {reason}"
        )) && line.ends_with("`suite install uninstallable` tries again"),
        "listed as not installed here, with the reason and the retry",
        &after,
    )?;
    let batch = output(
        suite_with(&bench)
            .args(["batch", "--all", "--workload", "stateless", "--results"])
            .arg(dir.path().join("results")),
    )?;
    ensure(
        !batch.status.success()
            && String::from_utf8_lossy(&batch.stderr).contains(&format!(
                "note: skipping uninstallable: not installed here: installing 1.0 failed: {reason}"
            )),
        "batch --all skips it with the reason, and has nothing else to run",
        &batch,
    )
}
