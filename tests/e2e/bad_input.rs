//! Bad input gets one clear line naming the file or component, and exit 1.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use libtest_mimic::Trial;
use streamsuite::cache::Cache;
use streamsuite::interrupt::Interrupt;
use streamsuite::lock::{RunLock, WhenHeld};

use crate::support::{config_with_products, ensure, output, records, repo, suite, suite_with};
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
            "a_workload_file_without_an_implementation_names_file_and_line",
            a_workload_file_without_an_implementation_names_file_and_line,
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
        trial(
            "window_too_short_is_one_line_and_writes_nothing",
            window_too_short_is_one_line_and_writes_nothing,
        ),
        trial(
            "unwritable_results_folder_fails_before_anything_starts",
            unwritable_results_folder_fails_before_anything_starts,
        ),
        trial(
            "broken_results_line_costs_only_that_line_unless_strict",
            broken_results_line_costs_only_that_line_unless_strict,
        ),
        trial(
            "second_run_waits_or_refuses_naming_the_first",
            second_run_waits_or_refuses_naming_the_first,
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
        err.contains(
            "unknown workload `nosuch`; known: avro-etl, passthrough, stateless, windowed-lowcard",
        ),
        "the line must name the valid workloads",
        &out,
    )
}

/// A YAML file alone is not a workload: without an implementation the
/// suite refuses to load, rather than run it as some other workload.
fn a_workload_file_without_an_implementation_names_file_and_line() -> Result<(), String> {
    let dir = config_with_products(&[])?;
    let file = dir.path().join("workloads/sessionized.yaml");
    let stateless = std::fs::read_to_string(dir.path().join("workloads/stateless.yaml"))
        .map_err(|e| e.to_string())?;
    std::fs::write(
        &file,
        format!(
            "# sessions per user\n{}",
            stateless.replace("name: stateless", "name: sessionized")
        ),
    )
    .map_err(|e| e.to_string())?;
    let out = output(suite_with(&dir.path().join("bench.yaml")).arg("list"))?;
    ensure(out.status.code() == Some(1), "exit code 1 expected", &out)?;
    let err = stderr(&out);
    ensure(err.lines().count() == 1, "one line expected", &out)?;
    ensure(
        err.contains(&format!(
            "{}:2: workload `sessionized` has no implementation in the suite",
            file.display()
        )) && err.contains("docs/workloads.md"),
        "the error names the file, the `name:` line and where implementations go",
        &out,
    )
}

fn malformed_bench_yaml_names_file_and_line() -> Result<(), String> {
    let dir = config_with_products(&[])?;
    let bench = dir.path().join("bench.yaml");
    let text = std::fs::read_to_string(&bench).map_err(|e| e.to_string())?;
    let (good, broken) = ("  window_s: 30\n", "  window_s: [30\n");
    let broken_line = text
        .lines()
        .position(|l| format!("{l}\n") == good)
        .ok_or("bench.yaml no longer has `  window_s: 30`")?
        + 1;
    std::fs::write(&bench, text.replacen(good, broken, 1)).map_err(|e| e.to_string())?;
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
        line.abs_diff(broken_line) <= 2,
        &format!("line {line} must be near the broken line {broken_line}"),
        &out,
    )
}

fn unknown_field_in_product_yaml_names_file_and_line() -> Result<(), String> {
    let product = crate::support::rustpipe_product();
    let broken: String = product
        .lines()
        .flat_map(|l| match l.starts_with("workloads:") {
            true => vec![l, "work_loads: [x]"],
            false => vec![l],
        })
        .map(|l| format!("{l}\n"))
        .collect();
    if !broken.contains("\nwork_loads: [x]\n") {
        return Err("rustpipe's product.yaml has no `workloads:` line to follow".into());
    }
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

fn window_too_short_is_one_line_and_writes_nothing() -> Result<(), String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let results = dir.path().join("results");
    let cache = dir.path().join("cache");
    let out = output(
        suite()
            .env("STREAMSUITE_CACHE", &cache)
            .args(["run", "rustpipe", "stateless", "--window", "0", "--results"])
            .arg(&results),
    )?;
    ensure(out.status.code() == Some(1), "exit code 1 expected", &out)?;
    let err = stderr(&out);
    ensure(err.lines().count() == 1, "one line expected", &out)?;
    ensure(
        err.contains("--window 0 is too short: a window must span at least 5 samples, 5 s at bench.yaml's run.sample_interval_ms 1000; use --window 5 or more"),
        "the line must name the minimum for the sample interval",
        &out,
    )?;
    ensure(
        !results.exists() && !cache.exists(),
        "nothing may be written: no results folder, no cache",
        &out,
    )
}

fn unwritable_results_folder_fails_before_anything_starts() -> Result<(), String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    // Under a regular file: not even root can create a folder there.
    let file = dir.path().join("a-file");
    std::fs::write(&file, "").map_err(|e| e.to_string())?;
    let results = file.join("results");
    let cache = dir.path().join("cache");
    let started = Instant::now();
    let out = output(
        suite()
            .env("STREAMSUITE_CACHE", &cache)
            .args(["run", "rustpipe-eos", "stateless", "--results"])
            .arg(&results),
    )?;
    ensure(out.status.code() == Some(1), "exit code 1 expected", &out)?;
    let err = stderr(&out);
    ensure(err.lines().count() == 1, "one line expected", &out)?;
    ensure(
        err.starts_with(&format!(
            "error: results folder {} cannot be written (Not a directory",
            results.display()
        )) && err.trim_end().ends_with("; choose another with --results"),
        "the line must name the folder, the reason and what to do",
        &out,
    )?;
    // The cache is created when the run takes its lock, before installs,
    // the broker and the product: absent, nothing started.
    ensure(!cache.exists(), "nothing may have started", &out)?;
    ensure(
        started.elapsed() < Duration::from_secs(10),
        "the error must come at once",
        &out,
    )
}

/// The report fixtures' results with a broken third line, in a new folder.
fn results_with_a_broken_line(dir: &Path) -> Result<PathBuf, String> {
    let fixture = repo().join("tests/fixtures/report/results/stateless.jsonl");
    let text = std::fs::read_to_string(fixture).map_err(|e| e.to_string())?;
    let mut lines: Vec<&str> = text.lines().collect();
    lines.insert(2, "{\"schema\": 1, \"run_id\": ");
    let path = dir.join("stateless.jsonl");
    std::fs::write(&path, lines.join("\n") + "\n").map_err(|e| e.to_string())?;
    Ok(path)
}

fn broken_results_line_costs_only_that_line_unless_strict() -> Result<(), String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let results = dir.path().join("results");
    std::fs::create_dir_all(&results).map_err(|e| e.to_string())?;
    let broken = results_with_a_broken_line(&results)?;
    let bench = repo().join("tests/fixtures/report/config/bench.yaml");
    let html = dir.path().join("html");
    let report = |extra: &[&str]| {
        output(
            suite_with(&bench)
                .arg("report")
                .args(extra)
                .arg("--results")
                .arg(&results)
                .arg("--out")
                .arg(&html),
        )
    };
    let named = format!("{}:3: not a run record: ", broken.display());

    let out = report(&[])?;
    ensure(out.status.success(), "the report must succeed", &out)?;
    let err = stderr(&out);
    let warnings: Vec<&str> = err.lines().collect();
    ensure(
        warnings.len() == 1 && warnings[0].starts_with(&format!("warning: {named}")),
        "one warning naming the file and line",
        &out,
    )?;
    let page = std::fs::read_to_string(html.join("stateless.html")).map_err(|e| e.to_string())?;
    ensure(
        html.join("index.html").is_file() && page.contains("median of 3 runs"),
        "the other records must be rendered",
        &out,
    )?;

    let out = output(
        suite_with(&bench)
            .args(["export", "stateless", "--format", "markdown", "--results"])
            .arg(&results),
    )?;
    ensure(out.status.success(), "export must succeed", &out)?;
    ensure(
        stderr(&out).contains(&format!("warning: {named}"))
            && String::from_utf8_lossy(&out.stdout).contains("## Cost of exactly-once"),
        "export warns and writes the tables",
        &out,
    )?;

    std::fs::remove_dir_all(&html).map_err(|e| e.to_string())?;
    let out = report(&["--strict"])?;
    ensure(
        out.status.code() == Some(1),
        "exit code 1 expected with --strict",
        &out,
    )?;
    let err = stderr(&out);
    ensure(
        err.lines().count() == 1 && err.starts_with(&format!("error: {named}")),
        "one line naming the file and line",
        &out,
    )?;
    ensure(!html.exists(), "--strict renders no page", &out)
}

fn second_run_waits_or_refuses_naming_the_first() -> Result<(), String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let cache = dir.path().join("cache");
    std::fs::create_dir_all(&cache).map_err(|e| e.to_string())?;
    let results = dir.path().join("results");
    // This process stands for a run in progress.
    let first = RunLock::acquire(
        &Cache::at(cache.clone()),
        "rustpipe-eos stateless",
        WhenHeld::Refuse,
        &Interrupt::none(),
    )
    .map_err(|e| format!("{e:#}"))?;
    let holder = format!("rustpipe-eos stateless (pid {})", std::process::id());

    let out = output(
        suite()
            .env("STREAMSUITE_CACHE", &cache)
            .args(["run", "rustpipe", "stateless", "--no-wait", "--results"])
            .arg(&results),
    )?;
    ensure(out.status.code() == Some(1), "exit code 1 expected", &out)?;
    let err = stderr(&out);
    ensure(err.lines().count() == 1, "one line expected", &out)?;
    ensure(
        err.contains(&format!("another run is measuring on this host: {holder}")),
        "the line must name the running line and its pid",
        &out,
    )?;
    ensure(
        records(&results, "stateless")?.is_empty(),
        "no record expected",
        &out,
    )?;

    // Without --no-wait it says what it waits for, and waits.
    let mut child = suite()
        .env("STREAMSUITE_CACHE", &cache)
        .args(["run", "rustpipe", "stateless", "--results"])
        .arg(&results)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| e.to_string())?;
    // Kept open to the end: the run prints its last line after Ctrl-C.
    let mut stderr = BufReader::new(child.stderr.take().ok_or("no stderr")?);
    let mut first_line = String::new();
    stderr
        .read_line(&mut first_line)
        .map_err(|e| e.to_string())?;
    std::thread::sleep(Duration::from_millis(500));
    let still_waiting = child.try_wait().map_err(|e| e.to_string())?.is_none();
    // SAFETY: signalling a child we spawned.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let status = child.wait().map_err(|e| e.to_string())?;
    let mut rest = String::new();
    stderr
        .read_to_string(&mut rest)
        .map_err(|e| e.to_string())?;
    drop(first);
    let seen = format!("exit: {status}\n--- stderr\n{first_line}{rest}");
    if first_line.trim() != format!("waiting for another run on this host to end: {holder}") {
        return Err(format!(
            "the first line must name what it waits for\n{seen}"
        ));
    }
    if !still_waiting {
        return Err(format!("the second run must wait\n{seen}"));
    }
    if status.code() != Some(130) {
        return Err(format!("Ctrl-C while waiting must exit 130\n{seen}"));
    }
    if !records(&results, "stateless")?.is_empty() {
        return Err(format!("no record expected\n{seen}"));
    }
    Ok(())
}
