//! Bad input gets one clear line naming the file or component, and exit 1.

use std::path::PathBuf;

use libtest_mimic::Trial;

use crate::support::{config_with_products, ensure, output, records, suite, suite_with};
use crate::trial;

pub fn trials() -> Vec<Trial> {
    vec![
        trial(
            "unknown_product_is_a_clear_error",
            unknown_product_is_a_clear_error,
        ),
        trial(
            "unknown_workload_is_a_clear_error",
            unknown_workload_is_a_clear_error,
        ),
        trial(
            "malformed_bench_yaml_names_file_and_line",
            malformed_bench_yaml_names_file_and_line,
        ),
        trial(
            "unknown_field_in_product_yaml_names_file_and_line",
            unknown_field_in_product_yaml_names_file_and_line,
        ),
        trial(
            "broker_that_fails_to_start_shows_its_log",
            broker_that_fails_to_start_shows_its_log,
        ),
    ]
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).to_string()
}

fn unknown_product_is_a_clear_error() -> Result<(), String> {
    let results = tempfile::tempdir().map_err(|e| e.to_string())?;
    let out = output(
        suite()
            .args(["run", "nosuch", "stateless", "--results"])
            .arg(results.path()),
    )?;
    ensure(out.status.code() == Some(1), "exit code 1 expected", &out)?;
    let err = stderr(&out);
    ensure(err.lines().count() == 1, "one line expected", &out)?;
    ensure(
        err.contains("unknown product line `nosuch`") && err.contains("rustpipe, rustpipe-eos"),
        "the line must name the valid lines",
        &out,
    )?;
    ensure(
        records(results.path(), "stateless")?.is_empty(),
        "no record expected",
        &out,
    )
}

fn unknown_workload_is_a_clear_error() -> Result<(), String> {
    let out = output(suite().args(["run", "rustpipe", "nosuch"]))?;
    ensure(out.status.code() == Some(1), "exit code 1 expected", &out)?;
    let err = stderr(&out);
    ensure(err.lines().count() == 1, "one line expected", &out)?;
    ensure(
        err.contains("unknown workload `nosuch`; known: stateless"),
        "the line must name the valid workloads",
        &out,
    )
}

fn malformed_bench_yaml_names_file_and_line() -> Result<(), String> {
    let dir = config_with_products(&[])?;
    let bench = dir.path().join("bench.yaml");
    let text = std::fs::read_to_string(&bench).map_err(|e| e.to_string())?;
    std::fs::write(&bench, text.replace("  rate: 20000", "  rate: [20000"))
        .map_err(|e| e.to_string())?;
    let out = output(suite_with(&bench).arg("list"))?;
    ensure(out.status.code() == Some(1), "exit code 1 expected", &out)?;
    let err = stderr(&out);
    let expected = format!("error: {}:", bench.display());
    ensure(
        err.starts_with(&expected),
        "the error must name the file",
        &out,
    )?;
    let line: usize = err[expected.len()..]
        .split(':')
        .next()
        .and_then(|n| n.parse().ok())
        .ok_or_else(|| format!("no line number in {err}"))?;
    ensure(
        (20..=30).contains(&line),
        "the line must be near the broken one",
        &out,
    )
}

fn unknown_field_in_product_yaml_names_file_and_line() -> Result<(), String> {
    let broken = crate::support::rustpipe_product().replace(
        "workloads: [stateless]",
        "workloads: [stateless]\nwork_loads: [x]",
    );
    let dir = config_with_products(&[("rustpipe", &broken)])?;
    let out = output(suite_with(&dir.path().join("bench.yaml")).arg("list"))?;
    ensure(out.status.code() == Some(1), "exit code 1 expected", &out)?;
    let path = dir.path().join("products/rustpipe/product.yaml");
    let line = broken
        .lines()
        .position(|l| l.starts_with("work_loads"))
        .unwrap_or(0)
        + 1;
    ensure(
        stderr(&out).contains(&format!(
            "{}:{line}: unknown field `work_loads`",
            path.display()
        )),
        "the error must name the file, the line and the field",
        &out,
    )
}

/// The cache the harness's broker uses, whose resolved jars a test may borrow.
fn shared_cache() -> PathBuf {
    match std::env::var("STREAMSUITE_CACHE") {
        Ok(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => PathBuf::from(std::env::var("HOME").unwrap_or_default()).join(".cache/streamsuite"),
    }
}

fn broker_that_fails_to_start_shows_its_log() -> Result<(), String> {
    let dir = config_with_products(&[("rustpipe", &crate::support::rustpipe_product())])?;
    let bench = dir.path().join("bench.yaml");
    let text = std::fs::read_to_string(&bench).map_err(|e| e.to_string())?;
    // A heap too small for the JVM to start: the broker dies at once.
    let text = text
        .replace("port: 19092", "port: 19392")
        .replace("heap_mb: 1024", "heap_mb: 1");
    std::fs::write(&bench, text).map_err(|e| e.to_string())?;
    let cache = dir.path().join("cache");
    std::fs::create_dir_all(&cache).map_err(|e| e.to_string())?;
    std::os::unix::fs::symlink(shared_cache().join("kafka"), cache.join("kafka"))
        .map_err(|e| e.to_string())?;
    let results = dir.path().join("results");
    let out = output(
        suite_with(&bench)
            .env("STREAMSUITE_CACHE", &cache)
            .args(["run", "rustpipe", "stateless", "--results"])
            .arg(&results),
    )?;
    ensure(out.status.code() == Some(1), "exit code 1 expected", &out)?;
    let err = stderr(&out);
    ensure(
        err.contains("local broker exited while starting; last lines of") && err.contains("heap"),
        "the error must say the broker died and show its log",
        &out,
    )?;
    ensure(
        records(&results, "stateless")?.is_empty(),
        "no record expected",
        &out,
    )
}
