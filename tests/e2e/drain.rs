//! Drain runs (read capacity over a pre-filled input) and rustpipe built at a
//! git revision of this repository.

use std::path::Path;
use std::process::Command;

use libtest_mimic::Trial;
use streamsuite::cache::Cache;
use streamsuite::products::compiled_dependencies;
use streamsuite::results::{flag, Regime, Status};

use crate::support::{
    config_with_products, did_the_same_work, ensure, metric, output, records, run_suite,
    rustpipe_product, suite,
};
use crate::trial;

/// A commit of this repository with the rustpipe crate: built once into the
/// cache directory, then reused by every later test run. Its dependencies
/// and their features are today's, so that first build compiles only the
/// workspace's own crates (the suite seeds it with its own build); the
/// tagged-commit trial fails when it compiled any other.
pub const KNOWN_COMMIT: &str = "ce0db1710f4d99ba7936b6403b04b87e58baa0e4";

pub fn trials() -> Vec<Trial> {
    vec![
        trial(
            "drain_run_reports_read_capacity_and_verifies_the_whole_input",
            drain_run_reports_read_capacity_and_verifies_the_whole_input,
        ),
        trial(
            "a_million_record_drain_quotes_its_capacity_at_the_default_commit_cadence",
            a_million_record_drain_quotes_its_capacity_at_the_default_commit_cadence,
        ),
        trial(
            "drain_run_refuses_a_rate_and_an_empty_drain",
            drain_run_refuses_a_rate_and_an_empty_drain,
        ),
        trial(
            "rustpipe_at_a_tagged_commit_is_built_and_run",
            rustpipe_at_a_tagged_commit_is_built_and_run,
        ),
        trial(
            "rustpipe_at_an_unknown_revision_is_a_one_line_error",
            rustpipe_at_an_unknown_revision_is_a_one_line_error,
        ),
    ]
}

fn drain_run_reports_read_capacity_and_verifies_the_whole_input() -> Result<(), String> {
    let results = tempfile::tempdir().map_err(|e| e.to_string())?;
    let out = output(
        suite()
            .args(["run", "rustpipe", "stateless", "--drain", "300000"])
            // The capacity counts records after the first commit: at-least-once's
            // 1 s auto-commit could cover a sub-second drain in one step.
            .args(["--set", "run.commit_interval_ms.at-least-once=100"])
            .arg("--results")
            .arg(results.path()),
    )?;
    ensure(out.status.success(), "the drain run must succeed", &out)?;
    let records = records(results.path(), "stateless")?;
    ensure(records.len() == 1, "exactly one record expected", &out)?;
    let r = &records[0];
    ensure(r.status == Status::Ok, "status ok", &out)?;
    ensure(
        r.config.drain_records == Some(300_000) && r.config.rate == 0 && r.config.window_s == 0,
        &format!("a drain run's configuration: {:?}", r.config),
        &out,
    )?;
    ensure(
        r.regime == Some(Regime::Draining),
        "draining by nature",
        &out,
    )?;
    let capacity = metric(r, "drain_capacity_per_s")?;
    let drain_s = metric(r, "drain_s")?;
    ensure(
        capacity > 10_000.0 && drain_s > 0.0,
        &format!("capacity {capacity} records/s over {drain_s} s"),
        &out,
    )?;
    // The capacity is the records after the first commit over the drain's time.
    ensure(
        capacity * drain_s <= 300_000.0 + 1.0,
        &format!("capacity {capacity} x {drain_s} s is at most the backlog"),
        &out,
    )?;
    ensure(
        !r.metrics.keys().any(|k| k.starts_with("latency")),
        "no latency quoted",
        &out,
    )?;
    ensure(
        r.not_applicable
            .get("latency")
            .is_some_and(|why| why.contains("no schedule")),
        "the record says why there is no latency",
        &out,
    )?;
    ensure(
        !r.has_flag(flag::GENERATOR_BEHIND) && !r.has_flag(flag::PROBE_BEHIND),
        &format!("no harness flags on a drain: {:?}", r.flags),
        &out,
    )?;
    ensure(
        r.gendata
            .as_ref()
            .is_some_and(|g| g.records_acked == 300_000),
        "the pre-fill wrote every record",
        &out,
    )?;
    did_the_same_work(r, &out)?;
    ensure(
        String::from_utf8_lossy(&out.stderr).contains("drain capacity"),
        "the summary shows the capacity",
        &out,
    )
}

/// rustpipe drains a million records in two or three seconds, two or three
/// of its 1 s commits: the output's progress times it.
fn a_million_record_drain_quotes_its_capacity_at_the_default_commit_cadence() -> Result<(), String>
{
    let results = tempfile::tempdir().map_err(|e| e.to_string())?;
    let out = output(
        suite()
            .args(["run", "rustpipe", "stateless", "--drain", "1000000"])
            .arg("--results")
            .arg(results.path()),
    )?;
    ensure(out.status.success(), "the drain run must succeed", &out)?;
    let records = records(results.path(), "stateless")?;
    let r = records.first().ok_or("no record")?;
    ensure(
        r.config.commit_interval_ms == 1000,
        "the default cadence",
        &out,
    )?;
    let capacity = metric(r, "drain_capacity_per_s")?;
    ensure(
        capacity > 10_000.0,
        &format!("a capacity is quoted: {capacity} records/s"),
        &out,
    )?;
    did_the_same_work(r, &out)
}

fn drain_run_refuses_a_rate_and_an_empty_drain() -> Result<(), String> {
    let out = output(suite().args([
        "run",
        "rustpipe",
        "stateless",
        "--drain",
        "1000",
        "--rate",
        "5",
    ]))?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    ensure(
        !out.status.success() && stderr.contains("--rate"),
        "--drain with --rate is refused",
        &out,
    )?;
    let out = output(suite().args(["run", "rustpipe", "stateless", "--drain", "0"]))?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    ensure(
        !out.status.success() && stderr.contains("--drain 0") && stderr.lines().count() == 1,
        "--drain 0 is one error line",
        &out,
    )
}

/// `git -C dir ARGS...`, which must succeed.
fn git(dir: &Path, args: &[&str]) -> Result<(), String> {
    let out = output(Command::new("git").arg("-C").arg(dir).args(args))?;
    ensure(out.status.success(), &format!("git {args:?}"), &out)
}

/// A configuration whose rustpipe is built from a clone of this repository
/// carrying the lightweight tag `e2e-known` on [`KNOWN_COMMIT`].
fn tagged_clone() -> Result<(tempfile::TempDir, tempfile::TempDir), String> {
    let clone = tempfile::tempdir().map_err(|e| e.to_string())?;
    let repo = crate::support::repo();
    git(
        &repo,
        &[
            "clone",
            "-q",
            "--shared",
            &repo.to_string_lossy(),
            &clone.path().to_string_lossy(),
        ],
    )?;
    git(clone.path(), &["tag", "e2e-known", KNOWN_COMMIT])?;
    let product = rustpipe_product().replace(
        &format!("workspace: \"{}\"", repo.display()),
        &format!("workspace: \"{}\"", clone.path().display()),
    );
    let config = config_with_products(&[("rustpipe", &product)])?;
    Ok((clone, config))
}

fn rustpipe_at_a_tagged_commit_is_built_and_run() -> Result<(), String> {
    let (_clone, config) = tagged_clone()?;
    let results = config.path().join("results");
    let out = run_suite(
        &config.path().join("bench.yaml"),
        &[
            "rustpipe",
            "stateless",
            "--product-version",
            "e2e-known",
            "--rate",
            "2000",
            "--warmup",
            "2",
            "--window",
            "5",
        ],
        &results,
    )?;
    ensure(out.status.success(), "the run must succeed", &out)?;
    let records = records(&results, "stateless")?;
    ensure(records.len() == 1, "exactly one record expected", &out)?;
    let r = &records[0];
    ensure(
        r.version == format!("0.1.0+{}", &KNOWN_COMMIT[..7]),
        &format!(
            "the version names the package version and the commit: {}",
            r.version
        ),
        &out,
    )?;
    ensure(r.status == Status::Ok, "status ok", &out)?;
    did_the_same_work(r, &out)?;
    // One build per commit, in the cache, with its own target folder.
    let cache = Cache::from_settings(None).map_err(|e| e.to_string())?;
    let dir = cache.product_dir("rustpipe", KNOWN_COMMIT);
    let marker = std::fs::read_to_string(dir.join(".installed")).map_err(|e| e.to_string())?;
    ensure(
        Path::new(marker.trim()).starts_with(dir.join("target")) && dir.join("src").is_dir(),
        &format!(
            "the build of the commit lives in {}: {marker}",
            dir.display()
        ),
        &out,
    )?;
    let messages = dir.join("cargo-messages.json");
    let compiled = std::fs::read_to_string(&messages)
        .map_err(|e| format!("reading {}: {e}", messages.display()))
        .and_then(|text| compiled_dependencies(&text).map_err(|e| e.to_string()))?;
    ensure(
        compiled.is_empty(),
        &format!(
            "the seeded build of KNOWN_COMMIT compiled only the workspace's crates, not {compiled:?}: \
             its dependencies are no longer today's, so every fresh CI run builds them again \
             (about 240 s); point KNOWN_COMMIT at a commit with today's Cargo.lock"
        ),
        &out,
    )
}

fn rustpipe_at_an_unknown_revision_is_a_one_line_error() -> Result<(), String> {
    let out = output(suite().args([
        "run",
        "rustpipe",
        "stateless",
        "--product-version",
        "no-such-revision-e2e",
    ]))?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    ensure(
        !out.status.success()
            && stderr.trim().lines().count() == 1
            && stderr.contains("`no-such-revision-e2e` is no revision"),
        "an unknown revision is one error line",
        &out,
    )
}
