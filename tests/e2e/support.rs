//! Shared helpers: the suite binary, the repository's configuration, a
//! temporary configuration folder, and the broker for the whole test run.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use streamsuite::config::{ClientProfile, Delivery, Suite, COMMIT_INTERVAL_KEY};
use streamsuite::gendata::event::Core;
use streamsuite::results::{
    read_records, RunRecord, SanityVerdict, Status, Verification, VerificationVerdict,
};

/// The repository root (bench.yaml, products/, workloads/).
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The repository's rustpipe product.yaml, for configurations built from it
/// in a temporary folder: built from this repository's workspace, which the
/// temporary folder is not inside.
pub fn rustpipe_product() -> String {
    let yaml = include_str!("../../products/rustpipe/product.yaml");
    let package = "  package: rustpipe\n";
    assert!(
        yaml.contains(package),
        "rustpipe's product.yaml changed its install"
    );
    yaml.replace(
        package,
        &format!("{package}  workspace: \"{}\"\n", repo().display()),
    )
}

/// The `suite` command with the repository's bench.yaml.
pub fn suite() -> Command {
    suite_with(&repo().join("bench.yaml"))
}

/// The `suite` command with the given bench.yaml.
pub fn suite_with(bench: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_suite"));
    command.arg("--config").arg(bench);
    command
}

/// `suite run ARGS... --results RESULTS` with `bench`, and its output.
pub fn run_suite(bench: &Path, args: &[&str], results: &Path) -> Result<Output, String> {
    output(
        suite_with(bench)
            .arg("run")
            .args(args)
            .arg("--results")
            .arg(results),
    )
}

/// One run of rustpipe with `settings` (product.yaml `settings:` lines) in a
/// copy of the repository's configuration: `suite run ARGS...`, its output and
/// the records it wrote.
pub fn run_rustpipe_with(
    settings: &str,
    args: &[&str],
) -> Result<(Output, Vec<RunRecord>), String> {
    let product = format!("{}settings:\n{settings}", rustpipe_product());
    let dir = config_with_products(&[("rustpipe", &product)])?;
    let results = dir.path().join("results");
    let out = run_suite(&dir.path().join("bench.yaml"), args, &results)?;
    Ok((out, records(&results, "stateless")?))
}

/// Runs a command and returns its output, or an error that shows it all.
pub fn output(command: &mut Command) -> Result<Output, String> {
    command
        .output()
        .map_err(|e| format!("running {command:?}: {e}"))
}

/// Describes a command's outcome for assertion messages.
pub fn describe(output: &Output) -> String {
    format!(
        "exit: {}\n--- stdout\n{}\n--- stderr\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// Fails with `message` and the command's output unless `condition` holds.
pub fn ensure(condition: bool, message: &str, output: &Output) -> Result<(), String> {
    if condition {
        Ok(())
    } else {
        Err(format!("{message}\n{}", describe(output)))
    }
}

/// The product's standard error in a run's folder of the cache, titled, for
/// a failure's message: what the product said of its own waits.
pub fn product_log(run_id: &str) -> String {
    match run_log_file(run_id, "product.stderr.log") {
        Ok(path) => match std::fs::read_to_string(&path) {
            Ok(text) => format!("--- {}\n{text}", path.display()),
            Err(err) => format!("--- {}: {err}", path.display()),
        },
        Err(err) => format!("--- {err}"),
    }
}

/// A file of a run's log folder in the cache (settle.json, the product's
/// logs).
pub fn run_log_file(run_id: &str, name: &str) -> Result<PathBuf, String> {
    streamsuite::cache::Cache::from_settings(None)
        .map(|cache| cache.run_dir(run_id).join(name))
        .map_err(|err| format!("no cache: {err:#}"))
}

/// A record's figure, or an error that says why it is absent: the record's
/// regime, flags and what it withheld and why (a latency withheld names
/// its cause, as gendata falling behind its schedule).
pub fn metric(record: &RunRecord, name: &str) -> Result<f64, String> {
    record.metrics.get(name).map(|m| m.value).ok_or_else(|| {
        format!(
            "metric {name} missing from {} (regime {:?}, flags {:?}, not applicable: {:?})",
            record.run_id, record.regime, record.flags, record.not_applicable
        )
    })
}

/// The records of `workload` in a results folder (none if the file is absent).
pub fn records(results: &Path, workload: &str) -> Result<Vec<RunRecord>, String> {
    let path = results.join(format!("{workload}.jsonl"));
    if !path.exists() {
        return Ok(Vec::new());
    }
    read_records(&path).map_err(|e| format!("{e:#}"))
}

/// `suite run LINE stateless` with the repository's configuration at `rate`
/// records/s, `warmup_s` and `window_s`, into a temporary results folder:
/// the command's output and its one record, checked to be ok and of `line`
/// and `delivery`.
pub fn stateless_run(
    line: &str,
    delivery: Delivery,
    rate: u64,
    warmup_s: u64,
    window_s: u64,
    settings: &[&str],
) -> Result<(Output, RunRecord), String> {
    workload_run(
        line,
        "stateless",
        delivery,
        rate,
        warmup_s,
        window_s,
        settings,
    )
}

/// `suite run LINE WORKLOAD`, as [`stateless_run`] does for stateless.
pub fn workload_run(
    line: &str,
    workload: &str,
    delivery: Delivery,
    rate: u64,
    warmup_s: u64,
    window_s: u64,
    settings: &[&str],
) -> Result<(Output, RunRecord), String> {
    let results = tempfile::tempdir().map_err(|e| e.to_string())?;
    let (rate, warmup, window) = (rate.to_string(), warmup_s.to_string(), window_s.to_string());
    let out = output(
        suite()
            .args(["run", line, workload, "--rate", &rate])
            .args(["--warmup", &warmup, "--window", &window])
            .args(settings.iter().flat_map(|s| ["--set", s]))
            .arg("--json")
            .arg("--results")
            .arg(results.path()),
    )?;
    ensure(out.status.success(), "the run must succeed", &out)?;
    let mut records = records(results.path(), workload)?;
    ensure(records.len() == 1, "exactly one record expected", &out)?;
    let record = records.remove(0);
    ensure(record.status == Status::Ok, "status ok expected", &out)?;
    ensure(
        record.line == line && record.delivery == delivery && record.workload == workload,
        "line, delivery and workload recorded",
        &out,
    )?;
    printed_the_record(&out, &record, results.path())?;
    Ok((out, record))
}

/// `suite run --json` printed one document on standard output: the run as
/// its record holds it, every figure with its unit, and the results file.
fn printed_the_record(out: &Output, record: &RunRecord, results: &Path) -> Result<(), String> {
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout)
        .map_err(|e| format!("--json prints one JSON document on stdout: {e}"))?;
    let run = &doc["runs"][0];
    let figures_match = record.metrics.iter().all(|(name, metric)| {
        run["metrics"][name]["value"].as_f64() == Some(metric.value)
            && run["metrics"][name]["unit"] == metric.unit.as_str()
    });
    ensure(
        doc["runs"].as_array().map(Vec::len) == Some(1)
            && run["run_id"] == record.run_id.as_str()
            && run["status"] == "ok"
            && doc["exit_code"] == 0
            && doc["results_file"]
                == results
                    .join(format!("{}.jsonl", record.workload))
                    .to_string_lossy()
                    .as_ref()
            && figures_match,
        "the JSON document is the run as recorded",
        out,
    )
}

/// A client profile unlike bench.yaml's in every number, and an
/// at-least-once commit interval of its own: a product that ignored the
/// profile, or hard-coded a value, reports something else.
pub const PROFILE_SETTINGS: [&str; 9] = [
    "client.fetch_min_bytes=512",
    "client.fetch_max_wait_ms=20",
    "client.max_partition_fetch_bytes=4194304",
    "client.linger_ms=3",
    "client.fetch_queue_backoff_ms=5",
    "client.session_timeout_ms=12000",
    "client.transaction_retry_backoff_ms=3",
    "client.transaction_timeout_ms=9000",
    "run.commit_interval_ms.at-least-once=500",
];

/// Engine settings outside `settings:` that a product must report as
/// applied: FastStream's manual acknowledgement (commits on the line's
/// interval, not after every batch) and Hazelcast's observation commits
/// (no oftener than every 100 ms).
fn engine_rule_holds(product: &str, engine: Option<&serde_json::Value>) -> Result<(), String> {
    let get = |key: &str| engine.and_then(|e| e.get(key)).cloned();
    match product {
        "faststream" => match get("ack_policy") {
            Some(policy) if policy == "manual" => Ok(()),
            other => Err(format!("reported ack_policy {other:?}, not manual")),
        },
        "hazelcast" => match get("observation_commit_interval_ms").and_then(|v| v.as_u64()) {
            Some(ms) if ms >= 100 => Ok(()),
            other => Err(format!(
                "reported observation commits every {other:?} ms, not at least 100"
            )),
        },
        _ => Ok(()),
    }
}

/// The product's `effective client config:` line, read from its log, holds
/// the run's client profile and commit interval, less the keys its
/// product.yaml excuses.
pub fn applied_the_client_profile(r: &RunRecord, out: &Output) -> Result<(), String> {
    let log = r.logs.join("product.stdout.log");
    let text = std::fs::read_to_string(&log).map_err(|e| format!("{}: {e}", log.display()))?;
    let prefix = "effective client config: ";
    let lines: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix(prefix))
        .collect();
    ensure(
        lines.len() == 1,
        &format!(
            "one `{prefix}` line in {}, found {}",
            log.display(),
            lines.len()
        ),
        out,
    )?;
    let reported: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(lines[0]).map_err(|e| format!("{}: {e}", lines[0]))?;
    let suite = Suite::load(&repo().join("bench.yaml")).map_err(|e| e.to_string())?;
    let product = suite
        .products
        .get(&r.product)
        .ok_or(format!("no product {}", r.product))?;
    let mut expected = r.config.client.to_json_map();
    expected.retain(|key, _| {
        !product.client_exceptions.contains_key(key) && ClientProfile::applies_to(key, r.delivery)
    });
    let mut profile_part = reported.clone();
    // A key the product excuses is its engine's own, reported or not (Flink
    // and Hazelcast report the longer transaction timeout their two-phase
    // commits keep).
    profile_part.retain(|key, _| !product.client_exceptions.contains_key(key));
    let commit = profile_part.remove("commit_interval_ms");
    // The engine settings it applied: every key of the run's product
    // settings, as handed over.
    let engine = profile_part.remove("engine");
    let handed = streamsuite::products::product_settings(product, &r.config.product_settings)
        .map_err(|e| e.to_string())?;
    for (key, value) in &handed {
        let applied = engine.as_ref().and_then(|e| e.get(key));
        ensure(
            applied == Some(value),
            &format!(
                "{} reported engine setting {key} {} for the {} it was handed",
                r.line,
                applied.map_or("none".to_string(), |v| v.to_string()),
                value
            ),
            out,
        )?;
    }
    if let Err(broken) = engine_rule_holds(&r.product, engine.as_ref()) {
        return ensure(false, &format!("{}: {broken}", r.line), out);
    }
    ensure(
        profile_part
            .into_iter()
            .collect::<std::collections::BTreeMap<_, _>>()
            == expected,
        &format!(
            "{} reported {} for the profile {}",
            r.line,
            lines[0],
            serde_json::to_string(&expected).unwrap_or_default()
        ),
        out,
    )?;
    match commit {
        Some(ms) => ensure(
            ms.as_u64() == Some(r.config.commit_interval_ms),
            &format!(
                "{} commits every {ms} ms, the run's interval is {} ms",
                r.line, r.config.commit_interval_ms
            ),
            out,
        ),
        None => ensure(
            product.client_exceptions.contains_key(COMMIT_INTERVAL_KEY),
            &format!(
                "{} reported no commit_interval_ms and its product.yaml does not excuse it",
                r.line
            ),
            out,
        ),
    }
}

/// Sanity ✓ and a passed verification: the same work, all of it, and once on
/// an exactly-once line (a run without a crash duplicates nothing anyway).
pub fn did_the_same_work(r: &RunRecord, out: &Output) -> Result<(), String> {
    let sanity = r.sanity.as_ref().ok_or("sanity missing")?;
    ensure(
        sanity.verdict == SanityVerdict::Ok
            && sanity.selectivity_ok
            && sanity.content_mismatched == 0,
        &format!("sanity ok: {}", sanity.message),
        out,
    )?;
    let spec = match streamsuite::workloads::find(&r.workload).map(|w| w.output()) {
        Some(streamsuite::workloads::Output::Topic(output)) => output.sanity(),
        _ => return Err(format!("{} writes no topic", r.workload)),
    };
    ensure(
        sanity.content_checked >= spec.min_content_sample.max(1),
        &format!(
            "{} checked on at least {} {}",
            spec.content, spec.min_content_sample, spec.unit
        ),
        out,
    )?;
    let v = r.verification.as_ref().ok_or("verification missing")?;
    ensure(
        v.verdict == VerificationVerdict::Passed
            && (v.missing, v.duplicated, v.unexpected, v.corrupted) == (0, 0, 0, 0)
            && v.expected > 0,
        &format!("verification passed with nothing off: {v:?}"),
        out,
    )?;
    covers_the_whole_input(r, out)?;
    ensure(
        String::from_utf8_lossy(&out.stderr).contains("sanity         ✓"),
        "the summary shows the sanity verdict",
        out,
    )
}

/// After the settle phase the product had committed all the input it owed
/// output for, so verification owed the output of the whole input, not of a
/// prefix.
pub fn covers_the_whole_input(r: &RunRecord, out: &Output) -> Result<(), String> {
    let v = r.verification.as_ref().ok_or("verification missing")?;
    let n = v.input_records;
    let (covered, owed) = match r.workload.as_str() {
        // every kept event of the whole input
        "stateless" => (
            v.committed_offset == n,
            (0..n)
                .filter(|&seq| Core::generate(r.config.seed, seq).is_kept())
                .count() as u64
                == v.expected,
        ),
        // every record
        "passthrough" => (v.committed_offset == n, v.expected == n),
        // the commit may rest at the last window's first record (at most a
        // second of input short of the end); every closed window owes 35 to
        // 42 panes at the rates the tests run; windows start on the second
        // and the input does not, so it touches up to two windows more than
        // its whole seconds
        "windowed-lowcard" => {
            let rate = r.config.rate.max(1);
            let (whole, touched) = (n / rate, n.div_ceil(rate) + 1);
            (
                n - v.committed_offset.min(n) <= r.config.rate,
                v.expected >= 35 * whole.saturating_sub(2) && v.expected <= 42 * touched,
            )
        }
        other => return Err(format!("no coverage rule for workload {other}")),
    };
    ensure(
        covered && owed,
        &format!(
            "verification covers the whole input: committed {} of {n}, expected {}",
            v.committed_offset, v.expected
        ),
        out,
    )
}

/// A copy of the repository's configuration in a temporary folder, with
/// extra product folders: `(name, product.yaml text)`.
pub fn config_with_products(extra: &[(&str, &str)]) -> Result<tempfile::TempDir, String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let copy = |from: &Path, to: &Path| -> Result<(), String> {
        std::fs::create_dir_all(to.parent().unwrap()).map_err(|e| e.to_string())?;
        std::fs::copy(from, to)
            .map(|_| ())
            .map_err(|e| e.to_string())
    };
    copy(&repo().join("bench.yaml"), &dir.path().join("bench.yaml"))?;
    for entry in std::fs::read_dir(repo().join("workloads")).map_err(|e| e.to_string())? {
        let path = entry.map_err(|e| e.to_string())?.path();
        // The workload files; the Avro schema beside them is compiled in.
        if !path.is_file() {
            continue;
        }
        copy(
            &path,
            &dir.path().join("workloads").join(path.file_name().unwrap()),
        )?;
    }
    std::fs::create_dir_all(dir.path().join("products")).map_err(|e| e.to_string())?;
    for (name, yaml) in extra {
        let folder = dir.path().join("products").join(name);
        std::fs::create_dir_all(&folder).map_err(|e| e.to_string())?;
        std::fs::write(folder.join("product.yaml"), yaml).map_err(|e| e.to_string())?;
    }
    Ok(dir)
}

/// The local broker for the whole test run; stopped at the end if started here.
pub struct BrokerGuard {
    started: bool,
}

impl BrokerGuard {
    pub fn start() -> BrokerGuard {
        let running = suite()
            .args(["broker", "status"])
            .output()
            .is_ok_and(|o| o.status.success());
        if running {
            eprintln!("using the local broker that is already running");
            return BrokerGuard { started: false };
        }
        // `suite broker start` warms the broker it starts (broker.warmup_s)
        // before it returns, as any command that starts it does.
        let started = suite().args(["broker", "start"]).status();
        match started {
            Ok(status) if status.success() => BrokerGuard { started: true },
            other => panic!("could not start the local broker: {other:?}"),
        }
    }
}

impl Drop for BrokerGuard {
    fn drop(&mut self) {
        if self.started {
            let _ = suite().args(["broker", "stop"]).status();
        }
    }
}

/// Every record read is accounted for exactly once: distinct owed records
/// seen, correct records past the commit, extra copies, and strays.
pub fn accounting_holds(v: &Verification) -> bool {
    v.output_records == v.expected - v.missing + v.beyond_commit + v.duplicated + v.unexpected
}

/// The repository's configuration with rustpipe, its broker block swapped
/// for `broker` (YAML, one line): the harness's broker used as an external
/// one. Returns the folder and its bench.yaml.
pub fn config_with_broker(broker: &str) -> Result<(tempfile::TempDir, PathBuf), String> {
    let dir = config_with_products(&[("rustpipe", &rustpipe_product())])?;
    let bench = dir.path().join("bench.yaml");
    let text = std::fs::read_to_string(&bench).map_err(|e| e.to_string())?;
    let local = "broker:\n  kind: local\n  version: 4.4.0\n  port: 19092\n  heap_mb: 1024\n  \
                 nodes: 1\n  replication: 1\n  min_insync_replicas: 1\n";
    if !text.contains(local) {
        return Err(format!(
            "bench.yaml no longer holds the expected broker block:\n{text}"
        ));
    }
    std::fs::write(&bench, text.replace(local, broker)).map_err(|e| e.to_string())?;
    Ok((dir, bench))
}

/// Processes of this host whose environment names the run's consumer group:
/// every process the suite started for the run has it.
pub fn processes_of_run(run_id: &str) -> Vec<i32> {
    let marker = format!("BENCH_GROUP_ID=ss-{run_id}");
    let Ok(all) = procfs::process::all_processes() else {
        return Vec::new();
    };
    all.filter_map(|p| p.ok())
        .filter(|p| {
            p.environ().is_ok_and(|env| {
                env.iter().any(|(k, v)| {
                    format!("{}={}", k.to_string_lossy(), v.to_string_lossy()) == marker
                })
            })
        })
        .map(|p| p.pid)
        .collect()
}
