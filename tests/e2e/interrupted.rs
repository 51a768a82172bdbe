//! Runs that end early: a product that crashes, and Ctrl-C during a run.

use std::io::{BufRead, BufReader};
use std::process::{Child, ChildStderr, ExitStatus, Stdio};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

use libtest_mimic::Trial;
use streamsuite::results::Status;

use crate::support::{config_with_products, ensure, output, records, suite, suite_with};
use crate::trial;

pub fn trials() -> Vec<Trial> {
    vec![
        trial(
            "product_that_exits_is_recorded_failed_with_its_stderr",
            product_that_exits_is_recorded_failed_with_its_stderr,
        ),
        trial(
            "ctrl_c_stops_every_child_and_writes_no_record",
            ctrl_c_stops_every_child_and_writes_no_record,
        ),
    ]
}

/// A stand-in product (never a published result): ready, then dies mid-run.
const CRASHING_PRODUCT: &str = r#"name: crasher
description: A test double that becomes ready, then exits with an error.
version: "0"
install: {kind: builtin}
start: ["sh", "-c", "echo crasher ready; sleep 3; echo 'crasher: boom, out of luck' >&2; exit 3"]
ready: {stdout_contains: "crasher ready"}
workloads: [stateless]
lines:
  - {name: crasher, delivery: at-least-once, delivery_detail: none}
characteristics: {processing: none, engine: none, scaling: none, decode: none}
"#;

fn product_that_exits_is_recorded_failed_with_its_stderr() -> Result<(), String> {
    let dir = config_with_products(&[("crasher", CRASHING_PRODUCT)])?;
    let results = dir.path().join("results");
    let out = output(
        suite_with(&dir.path().join("bench.yaml"))
            .args([
                "run",
                "crasher",
                "stateless",
                "--rate",
                "100",
                "--warmup",
                "1",
                "--window",
                "10",
            ])
            .arg("--results")
            .arg(&results),
    )?;
    ensure(out.status.code() == Some(1), "exit code 1 expected", &out)?;
    let records = records(&results, "stateless")?;
    ensure(records.len() == 1, "one record expected", &out)?;
    let failure = records[0].failure.clone().unwrap_or_default();
    ensure(
        records[0].status == Status::Failed,
        "status failed expected",
        &out,
    )?;
    ensure(
        failure.contains("crasher exited") && failure.contains("boom, out of luck"),
        &format!("the failure must carry the product's stderr: {failure}"),
        &out,
    )
}

/// Pids whose parent is `parent`.
fn children_of(parent: u32) -> Vec<u32> {
    streamsuite::sampler::all_processes()
        .into_iter()
        .filter(|p| p.ppid == parent as i32)
        .map(|p| p.pid as u32)
        .collect()
}

/// Ctrl-C in the window: the run exits 130, stops its product, probe and
/// gendata, records nothing, and leaves the broker running.
fn ctrl_c_stops_every_child_and_writes_no_record() -> Result<(), String> {
    let results = tempfile::tempdir().map_err(|e| e.to_string())?;
    let mut child = suite()
        .args([
            "run",
            "rustpipe-eos",
            "stateless",
            "--rate",
            "1000",
            "--warmup",
            "1",
            "--window",
            "120",
        ])
        .arg("--results")
        .arg(results.path())
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .map_err(|e| e.to_string())?;
    let suite_pid = child.id();
    let lines = lines_of(child.stderr.take().ok_or("no stderr")?);
    wait_for_the_window(&mut child, &lines)?;
    let children = children_of(suite_pid);
    if children.len() < 3 {
        let _ = child.kill();
        return Err(format!(
            "expected product, probe and gendata, found {children:?}"
        ));
    }
    let status = interrupt(&mut child)?;
    let rest: Vec<String> = lines.try_iter().collect();
    if status.code() != Some(130) {
        return Err(format!(
            "exit code 130 expected, got {status}:\n{}",
            rest.join("\n")
        ));
    }
    let left: Vec<u32> = children
        .into_iter()
        .filter(|&pid| streamsuite::process::is_alive(pid))
        .collect();
    if !left.is_empty() {
        return Err(format!("children still running after Ctrl-C: {left:?}"));
    }
    if !records(results.path(), "stateless")?.is_empty() {
        return Err("an interrupted run must write no record".into());
    }
    let broker = suite()
        .args(["broker", "status"])
        .output()
        .map_err(|e| e.to_string())?;
    if !broker.status.success() {
        return Err("the broker that was already running must be left running".into());
    }
    Ok(())
}

/// The lines of a child's standard error, read on a thread of their own.
fn lines_of(stderr: ChildStderr) -> Receiver<String> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    rx
}

/// Waits up to 60 s for the run to say it is measuring; kills it if not.
fn wait_for_the_window(child: &mut Child, lines: &Receiver<String>) -> Result<(), String> {
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut seen = Vec::new();
    loop {
        match lines.recv_timeout(Duration::from_secs(1)) {
            Ok(line) if line.contains("measuring") => return Ok(()),
            Ok(line) => seen.push(line),
            Err(_) if Instant::now() > deadline => {
                let _ = child.kill();
                return Err(format!(
                    "the run never reached its window:\n{}",
                    seen.join("\n")
                ));
            }
            Err(_) => {}
        }
    }
}

/// Ctrl-C to the run, and its exit status once it stopped: an error, and
/// the run killed, if it did not stop within 60 s.
fn interrupt(child: &mut Child) -> Result<ExitStatus, String> {
    // SAFETY: signalling a child we spawned.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            return Ok(status);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            return Err("the run did not stop within 60 s of Ctrl-C".into());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}
