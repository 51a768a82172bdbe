//! A batch of two lines interleaved round by round, and the paired
//! comparison of its runs.

use libtest_mimic::Trial;
use streamsuite::results::Status;

use crate::support::{ensure, output, records, suite};
use crate::trial;

pub fn trials() -> Vec<Trial> {
    vec![
        trial(
            "batch_interleaves_two_lines_and_compare_pairs_their_rounds",
            batch_interleaves_two_lines_and_compare_pairs_their_rounds,
        ),
        trial(
            "regress_holds_the_current_build_against_a_commit",
            regress_holds_the_current_build_against_a_commit,
        ),
        trial(
            "regress_refuses_fewer_than_three_rounds",
            regress_refuses_fewer_than_three_rounds,
        ),
    ]
}

/// `suite batch rustpipe rustpipe-eos --repeat 2` runs A B A B under one
/// batch id, and `suite compare` prints the ratios of its paired rounds.
fn batch_interleaves_two_lines_and_compare_pairs_their_rounds() -> Result<(), String> {
    let results = tempfile::tempdir().map_err(|e| e.to_string())?;
    let out = output(
        suite()
            .args([
                "batch",
                "rustpipe",
                "rustpipe-eos",
                "--workload",
                "stateless",
            ])
            .args([
                "--repeat", "2", "--rate", "1000", "--warmup", "2", "--window", "5",
            ])
            .arg("--results")
            .arg(results.path()),
    )?;
    ensure(out.status.success(), "the batch must succeed", &out)?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    ensure(
        stderr.contains("round 1 of 2 · rustpipe · run 1 of 4 · at least")
            && stderr.contains("round 2 of 2 · rustpipe-eos · run 4 of 4 · about"),
        "a progress line names round, line and time left",
        &out,
    )?;
    let runs = records(results.path(), "stateless")?;
    let order: Vec<(&str, Option<u32>)> = runs.iter().map(|r| (r.line.as_str(), r.round)).collect();
    ensure(
        order
            == [
                ("rustpipe", Some(1)),
                ("rustpipe-eos", Some(1)),
                ("rustpipe", Some(2)),
                ("rustpipe-eos", Some(2)),
            ],
        &format!("interleaved order with rounds, got {order:?}"),
        &out,
    )?;
    ensure(
        runs.iter().all(|r| r.batch_id == runs[0].batch_id),
        "one batch id",
        &out,
    )?;
    ensure(
        runs.iter().all(|r| r.status == Status::Ok),
        "every run ok",
        &out,
    )?;

    let compare = |rate: &str| {
        output(
            suite()
                .args([
                    "compare",
                    "rustpipe",
                    "rustpipe-eos",
                    "--workload",
                    "stateless",
                ])
                .args(["--rate", rate, "--window", "5"])
                .arg("--results")
                .arg(results.path()),
        )
    };
    let out = compare("1000")?;
    ensure(out.status.success(), "compare must succeed", &out)?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    ensure(
        stdout.contains(&format!("batch {} · 2 round(s) paired", runs[0].batch_id)),
        "the batch and its paired rounds are named",
        &out,
    )?;
    for label in ["µs CPU/record", "added p50", "added p99", "consumed/s"] {
        ensure(
            stdout.lines().any(|l| l.starts_with(label)),
            &format!("a row for {label}"),
            &out,
        )?;
    }
    // Both lines used CPU in both rounds: the CPU figure is a ratio, never
    // "not comparable", and its median is the median of the two rounds'.
    let cpu_row = stdout
        .lines()
        .find(|l| l.starts_with("µs CPU/record"))
        .unwrap_or_default();
    let ratio = |round: usize| {
        let value = |i: usize| runs[i].metrics.get("us_cpu_per_record").map(|m| m.value);
        match (value(2 * round), value(2 * round + 1)) {
            (Some(a), Some(b)) => Ok(b / a),
            _ => Err("us_cpu_per_record missing".to_string()),
        }
    };
    let (r1, r2) = (ratio(0)?, ratio(1)?);
    if (r1 > 1.0) == (r2 > 1.0) {
        let median = format!("{:.3}", (r1 + r2) / 2.0);
        let standing = if r1 > 1.0 { "B worse" } else { "B better" };
        ensure(
            cpu_row.contains(&median) && cpu_row.contains(&format!("{standing} in every round")),
            &format!("CPU row shows median {median} and `{standing}`: {cpu_row}"),
            &out,
        )?;
    } else {
        ensure(
            cpu_row.contains("not separable"),
            &format!("a flipped sign is not separable: {cpu_row}"),
            &out,
        )?;
    }

    let missing = compare("2000")?;
    let stderr = String::from_utf8_lossy(&missing.stderr);
    ensure(
        !missing.status.success()
            && stderr.contains("no batch in")
            && stderr.contains(
                "rustpipe: 0 batch(es) at this point, runs elsewhere (rate 1000 window 5 s)",
            ),
        "no batch at another rate is a clear error naming what exists",
        &missing,
    )
}

/// `suite regress rustpipe --baseline COMMIT` runs the build of that commit
/// (cached by the drain tests' revision build) and the current one, baseline
/// first in each of three rounds, and judges the paired figures: its exit
/// code and verdict line follow from the table it prints. The two builds run
/// different loops, so which figures differ is the machine's to say.
fn regress_holds_the_current_build_against_a_commit() -> Result<(), String> {
    let results = tempfile::tempdir().map_err(|e| e.to_string())?;
    let baseline = crate::drain::KNOWN_COMMIT;
    let out = output(
        suite()
            .args(["regress", "rustpipe", "stateless", "--baseline", baseline])
            .args([
                "--repeat",
                "3",
                "--threshold",
                "50",
                "--rate",
                "1000",
                "--warmup",
                "2",
                "--window",
                "5",
            ])
            .arg("--results")
            .arg(results.path()),
    )?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    ensure(
        stdout.contains(&format!(
            "B = rustpipe 0.1.0 (current) against A = {} (baseline)",
            &baseline[..10]
        )) && stdout.contains("3 round(s) paired"),
        "the pairs are printed",
        &out,
    )?;
    let regressed = regressed_figures(&stdout, 0.5)?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    let verdict = if regressed.is_empty() {
        out.status.code() == Some(0)
            && stdout.contains("no regression: no paired figure is worse in every round")
    } else {
        out.status.code() == Some(1)
            && stderr.lines().any(|l| {
                l.starts_with(
                    "REGRESSION: worse in every round and by more than 50 % at the median: ",
                ) && regressed.iter().all(|figure| l.contains(figure.as_str()))
            })
    };
    ensure(
        verdict,
        &format!("exit code and verdict follow the table (regressed: {regressed:?})"),
        &out,
    )?;
    let all = records(results.path(), "stateless")?;
    let versions: Vec<&str> = all.iter().map(|r| r.version.as_str()).collect();
    let rounds: Vec<Option<u32>> = all.iter().map(|r| r.round).collect();
    ensure(
        versions
            == [
                &baseline[..10],
                "0.1.0",
                &baseline[..10],
                "0.1.0",
                &baseline[..10],
                "0.1.0",
            ]
            && rounds == [Some(1), Some(1), Some(2), Some(2), Some(3), Some(3)]
            && all.iter().all(|r| r.batch_id == all[0].batch_id),
        &format!("baseline then current in each round, one batch: {versions:?} {rounds:?}"),
        &out,
    )
}

/// The figures of `suite regress`'s table that B is worse on in every round,
/// by more than `threshold` (a fraction) at the median.
fn regressed_figures(stdout: &str, threshold: f64) -> Result<Vec<String>, String> {
    let mut regressed = Vec::new();
    for figure in ["µs CPU/record", "added p50", "added p99", "consumed/s"] {
        let row = stdout
            .lines()
            .find_map(|l| l.strip_prefix(figure))
            .ok_or_else(|| format!("no row for {figure} in:\n{stdout}"))?;
        let worse = row.trim_end().ends_with("B worse in every round");
        let median = row.split_whitespace().next().unwrap_or_default();
        if worse {
            let median: f64 = median
                .parse()
                .map_err(|_| format!("{figure}: median {median:?} is not a ratio"))?;
            if (median - 1.0).abs() > threshold {
                regressed.push(figure.to_string());
            }
        }
    }
    Ok(regressed)
}

/// A gate decided by fewer than three rounds would follow one noisy run.
fn regress_refuses_fewer_than_three_rounds() -> Result<(), String> {
    let results = tempfile::tempdir().map_err(|e| e.to_string())?;
    let out = output(
        suite()
            .args(["regress", "rustpipe", "stateless", "--baseline", "HEAD"])
            .args(["--repeat", "2", "--results"])
            .arg(results.path()),
    )?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    ensure(
        out.status.code() == Some(1)
            && stderr.lines().count() == 1
            && stderr.contains("--repeat 2 is too few"),
        "one clear line",
        &out,
    )?;
    ensure(
        records(results.path(), "stateless")?.is_empty(),
        "nothing recorded",
        &out,
    )
}
