//! A batch of two lines interleaved round by round in rotated order, and
//! the paired comparison of its runs.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Output;

use libtest_mimic::Trial;
use streamsuite::config::{Profile, Suite};
use streamsuite::results::{RunRecord, Status};

use crate::support::{ensure, output, records, repo, suite};
use crate::trial;

pub fn trials() -> Vec<Trial> {
    vec![
        trial(
            "batch_rotates_two_lines_and_compare_pairs_their_rounds",
            batch_rotates_two_lines_and_compare_pairs_their_rounds,
        ),
        trial(
            "the_expert_profile_is_recorded_as_its_own_point",
            the_expert_profile_is_recorded_as_its_own_point,
        ),
        trial(
            "regress_holds_the_current_build_against_a_commit",
            regress_holds_the_current_build_against_a_commit,
        ),
        trial(
            "regress_refuses_fewer_than_five_rounds",
            regress_refuses_fewer_than_five_rounds,
        ),
    ]
}

/// `suite batch rustpipe rustpipe-eos --repeat 3` runs A B, B A, A B under
/// one batch id, each record keeping its round and position, and `suite
/// compare` prints each ratio's n, median, interval with its coverage and
/// sign-test p for its paired rounds.
fn batch_rotates_two_lines_and_compare_pairs_their_rounds() -> Result<(), String> {
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
                "--repeat", "3", "--rate", "1000", "--warmup", "1", "--window", "5", "--json",
            ])
            .arg("--results")
            .arg(results.path()),
    )?;
    ensure(out.status.success(), "the batch must succeed", &out)?;
    let runs = records(results.path(), "stateless")?;
    the_batch_rotated_its_lines(&out, &runs)?;
    the_batch_json_lists_its_runs(&out, &runs)?;
    // Three rounds never reach p <= 0.05: no figure separates the lines,
    // which compare's exit code says apart from success and error.
    let out = compare(results.path(), "1000", &[])?;
    compare_names_the_batch_and_its_columns(&out, &runs)?;
    let ratios = the_cpu_row_shows_the_rounds_ratios(&out, &runs)?;
    let json = compare(results.path(), "1000", &["--json"])?;
    compare_json_holds_the_cpu_ratio(&json, &runs, ratios[1])?;
    let missing = compare(results.path(), "2000", &[])?;
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

/// A progress line per run names its round, line and time left; the order
/// rotates each round, each record keeps its place, both lines ran first
/// and second, all under one batch id.
fn the_batch_rotated_its_lines(out: &Output, runs: &[RunRecord]) -> Result<(), String> {
    let stderr = String::from_utf8_lossy(&out.stderr);
    ensure(
        stderr.contains("round 1 of 3 · rustpipe · run 1 of 6 · at least")
            && stderr.contains("round 2 of 3 · rustpipe-eos · run 3 of 6 · about")
            && stderr.contains("round 3 of 3 · rustpipe-eos · run 6 of 6 · about"),
        "a progress line names round, line and time left, in rotated order",
        out,
    )?;
    let order: Vec<(&str, Option<u32>, Option<u32>)> = runs
        .iter()
        .map(|r| (r.line.as_str(), r.round, r.position))
        .collect();
    ensure(
        order
            == [
                ("rustpipe", Some(1), Some(1)),
                ("rustpipe-eos", Some(1), Some(2)),
                ("rustpipe-eos", Some(2), Some(1)),
                ("rustpipe", Some(2), Some(2)),
                ("rustpipe", Some(3), Some(1)),
                ("rustpipe-eos", Some(3), Some(2)),
            ],
        &format!("the order rotates each round, each record keeps its place: {order:?}"),
        out,
    )?;
    for line in ["rustpipe", "rustpipe-eos"] {
        let places: BTreeSet<Option<u32>> = runs
            .iter()
            .filter(|r| r.line == line)
            .map(|r| r.position)
            .collect();
        ensure(
            places == BTreeSet::from([Some(1), Some(2)]),
            &format!("{line} ran first and second: {places:?}"),
            out,
        )?;
    }
    ensure(
        runs.iter().all(|r| r.batch_id == runs[0].batch_id),
        "one batch id",
        out,
    )
}

/// `batch --json` prints one document naming the batch and each run with
/// its figures, as the records hold them; every run is ok.
fn the_batch_json_lists_its_runs(out: &Output, runs: &[RunRecord]) -> Result<(), String> {
    let batch: serde_json::Value = serde_json::from_slice(&out.stdout)
        .map_err(|e| format!("--json prints one JSON document on stdout: {e}"))?;
    let listed: Vec<(&str, f64)> = batch["runs"]
        .as_array()
        .map(|runs| {
            runs.iter()
                .map(|r| {
                    let id = r["run_id"].as_str().unwrap_or_default();
                    (
                        id,
                        r["metrics"]["us_cpu_per_record"]["value"]
                            .as_f64()
                            .unwrap_or(-1.0),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    let recorded: Vec<(&str, f64)> = runs
        .iter()
        .map(|r| {
            let cpu = r.metrics.get("us_cpu_per_record").map_or(-2.0, |m| m.value);
            (r.run_id.as_str(), cpu)
        })
        .collect();
    ensure(
        batch["batch_id"] == runs[0].batch_id.as_str()
            && batch["failed"] == 0
            && batch["exit_code"] == 0
            && listed == recorded,
        &format!("the JSON lists the batch's runs and figures: {listed:?} against {recorded:?}"),
        out,
    )?;
    ensure(
        runs.iter().all(|r| r.status == Status::Ok),
        "every run ok",
        out,
    )
}

/// `suite compare rustpipe rustpipe-eos` over the runs in `results` at
/// `rate` and a 5 s window, with `extra` arguments.
fn compare(results: &Path, rate: &str, extra: &[&str]) -> Result<Output, String> {
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
            .args(extra)
            .arg("--results")
            .arg(results),
    )
}

/// Compare exits 5 when no figure separates the lines, names the batch and
/// its paired rounds, heads its interval and p columns, and has a row for
/// each figure.
fn compare_names_the_batch_and_its_columns(out: &Output, runs: &[RunRecord]) -> Result<(), String> {
    ensure(
        out.status.code() == Some(5)
            && String::from_utf8_lossy(&out.stderr).contains("not separable: no figure tells"),
        "compare exits 5 when no figure separates the lines",
        out,
    )?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    ensure(
        stdout.contains(&format!("batch {} · 3 round(s) paired", runs[0].batch_id)),
        "the batch and its paired rounds are named",
        out,
    )?;
    ensure(
        stdout.lines().any(|l| {
            l.starts_with("figure") && l.contains("interval (coverage)") && l.contains(" p ")
        }),
        "the table heads its interval and p columns",
        out,
    )?;
    for label in ["µs CPU/record", "added p50", "added p99", "consumed/s"] {
        ensure(
            stdout.lines().any(|l| l.starts_with(label)),
            &format!("a row for {label}"),
            out,
        )?;
    }
    Ok(())
}

/// Both lines used CPU in every round: the CPU figure is a ratio, never
/// "not comparable". Its row shows n, the median of the rounds' ratios
/// (B's run over A's of the same round, whatever their order), [min, max]
/// at its 75 % coverage, and the sign test's p over the rounds outside the
/// tie band; three rounds never reach p <= 0.05. The rounds' ratios, sorted.
fn the_cpu_row_shows_the_rounds_ratios(
    out: &Output,
    runs: &[RunRecord],
) -> Result<Vec<f64>, String> {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let cpu_row = stdout
        .lines()
        .find(|l| l.starts_with("µs CPU/record"))
        .unwrap_or_default();
    let tie_band = Suite::load(&repo().join("bench.yaml"))
        .map_err(|e| e.to_string())?
        .bench
        .tolerances
        .tie_band;
    let cpu = |line: &str, round: u32| {
        runs.iter()
            .find(|r| r.line == line && r.round == Some(round))
            .and_then(|r| r.metrics.get("us_cpu_per_record"))
            .map(|m| m.value)
            .ok_or_else(|| format!("{line} round {round}: us_cpu_per_record missing"))
    };
    let mut ratios = Vec::new();
    for round in 1..=3 {
        ratios.push(cpu("rustpipe-eos", round)? / cpu("rustpipe", round)?);
    }
    let (worse, better) = (
        ratios.iter().filter(|r| **r > 1.0 + tie_band).count(),
        ratios.iter().filter(|r| **r < 1.0 - tie_band).count(),
    );
    let p = sign_test_p(worse.max(better), worse + better);
    ratios.sort_by(f64::total_cmp);
    let expected = [
        format!("{:.3}", ratios[1]),
        format!("{:.3} – {:.3} (75 %)", ratios[0], ratios[2]),
        format!("{p:.3}"),
        format!("{worse}/{better}/{}", 3 - worse - better),
        "not separable".to_string(),
    ];
    ensure(
        cpu_row.split_whitespace().nth(2) == Some("3")
            && expected.iter().all(|part| cpu_row.contains(part.as_str())),
        &format!("the CPU row shows n 3 and {expected:?}: {cpu_row}"),
        out,
    )?;
    Ok(ratios)
}

/// `compare --json` holds the batch, its paired rounds, its verdict and
/// exit code, and the CPU ratio with its n, `median` and standing.
fn compare_json_holds_the_cpu_ratio(
    json: &Output,
    runs: &[RunRecord],
    median: f64,
) -> Result<(), String> {
    let doc: serde_json::Value = serde_json::from_slice(&json.stdout)
        .map_err(|e| format!("compare --json prints one JSON document: {e}"))?;
    let cpu = doc["figures"]
        .as_array()
        .and_then(|f| f.iter().find(|f| f["figure"] == "us_cpu_per_record"))
        .cloned()
        .unwrap_or_default();
    ensure(
        json.status.code() == Some(5)
            && doc["batch_id"] == runs[0].batch_id.as_str()
            && doc["rounds_paired"] == 3
            && doc["separable"] == false
            && doc["exit_code"] == 5
            && cpu["n"] == 3
            && cpu["median_ratio"]
                .as_f64()
                .is_some_and(|m| (m - median).abs() < 1e-9)
            && cpu["standing"] == "not-separable",
        &format!("compare --json holds the batch, its rounds and the CPU ratio: {cpu}"),
        json,
    )
}

/// P(X >= k) for X ~ Binomial(n, 1/2), by hand: the sign test's p.
fn sign_test_p(k: usize, n: usize) -> f64 {
    let choose = |n: usize, i: usize| (0..i).fold(1.0, |c, j| c * (n - j) as f64 / (j + 1) as f64);
    (k..=n).map(|i| choose(n, i)).sum::<f64>() / 2f64.powi(n as i32)
}

/// `suite regress rustpipe --baseline COMMIT` runs the build of that commit
/// (cached by the drain tests' revision build) and the current one over
/// five rounds in rotated order (baseline first in odd rounds, current first
/// in even ones), and judges the paired figures: its exit code and verdict
/// line follow from the table it prints. The two builds run different loops,
/// so which figures differ is the machine's to say.
fn regress_holds_the_current_build_against_a_commit() -> Result<(), String> {
    let results = tempfile::tempdir().map_err(|e| e.to_string())?;
    let baseline = crate::drain::KNOWN_COMMIT;
    let out = output(
        suite()
            .args(["regress", "rustpipe", "stateless", "--baseline", baseline])
            .args([
                "--threshold",
                "50",
                "--rate",
                "1000",
                "--warmup",
                "1",
                "--window",
                "5",
            ])
            .arg("--results")
            .arg(results.path()),
    )?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let old = format!("0.1.0+{}", &baseline[..7]);
    // The current build is HEAD's, `-dirty` when one of its files changed
    // (the unit tests of the version say which do).
    let head = format!("0.1.0+{}", &git_head()?[..7]);
    let all = records(results.path(), "stateless")?;
    let Some(new) = all
        .iter()
        .map(|r| r.version.clone())
        .find(|v| *v == head || *v == format!("{head}-dirty"))
    else {
        return Err(format!("no run of the current build {head}: {stdout}"));
    };
    ensure(
        stdout.contains(&format!(
            "B = rustpipe {new} (current) against A = {old} (baseline)"
        )) && stdout.contains("5 round(s) paired"),
        "five rounds by default, each build named by its commit, and the pairs are printed",
        &out,
    )?;
    let regressed = regressed_figures(&stdout, 0.5)?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    let verdict = if regressed.is_empty() {
        out.status.code() == Some(0)
            && stdout.contains("no regression: no paired figure is worse by more than 50 %")
    } else {
        out.status.code() == Some(4)
            && stderr.lines().any(|l| {
                l.starts_with(
                    "REGRESSION: worse by more than 50 % at the median, interval on the worse \
                     side, p <= 0.05: ",
                ) && regressed.iter().all(|figure| l.contains(figure.as_str()))
            })
    };
    ensure(
        verdict,
        &format!("exit code and verdict follow the table (regressed: {regressed:?})"),
        &out,
    )?;
    let (old, new) = ((old.as_str(), Some(1)), (new.as_str(), Some(2)));
    type Slot<'a> = (&'a str, Option<u32>, Option<u32>, Option<u32>);
    let order: Vec<Slot<'_>> = all
        .iter()
        .map(|r| (r.version.as_str(), r.entry, r.round, r.position))
        .collect();
    let expected: Vec<Slot<'_>> = (1..=5)
        .flat_map(|round| {
            let (first, second) = if round % 2 == 1 {
                (old, new)
            } else {
                (new, old)
            };
            [
                (first.0, first.1, Some(round), Some(1)),
                (second.0, second.1, Some(round), Some(2)),
            ]
        })
        .collect();
    ensure(
        order == expected && all.iter().all(|r| r.batch_id == all[0].batch_id),
        &format!("baseline and current take turns going first, one batch: {order:?}"),
        &out,
    )
}

/// The commit the repository's HEAD names.
fn git_head() -> Result<String, String> {
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(repo())
        .args(["rev-parse", "HEAD"])
        .output()
        .map_err(|e| format!("git: {e}"))?;
    let head = String::from_utf8_lossy(&out.stdout).trim().to_string();
    (out.status.success() && head.len() == 40)
        .then_some(head)
        .ok_or_else(|| "git rev-parse HEAD named no commit".to_string())
}

/// The figures of `suite regress`'s table that B is separably worse on, by
/// more than `threshold` (a fraction) at the median.
fn regressed_figures(stdout: &str, threshold: f64) -> Result<Vec<String>, String> {
    let mut regressed = Vec::new();
    for figure in ["µs CPU/record", "added p50", "added p99", "consumed/s"] {
        let row = stdout
            .lines()
            .find_map(|l| l.strip_prefix(figure))
            .ok_or_else(|| format!("no row for {figure} in:\n{stdout}"))?;
        let worse = row.trim_end().ends_with("B worse");
        // n, then the median
        let median = row.split_whitespace().nth(1).unwrap_or_default();
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

/// A gate decided by fewer than five rounds could never find a regression:
/// a sign test over four rounds never reaches p <= 0.05.
fn regress_refuses_fewer_than_five_rounds() -> Result<(), String> {
    let results = tempfile::tempdir().map_err(|e| e.to_string())?;
    let out = output(
        suite()
            .args(["regress", "rustpipe", "stateless", "--baseline", "HEAD"])
            .args(["--repeat", "4", "--results"])
            .arg(results.path()),
    )?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    ensure(
        out.status.code() == Some(1)
            && stderr.lines().count() == 1
            && stderr.contains("--repeat 4 is too few"),
        "one clear line",
        &out,
    )?;
    ensure(
        records(results.path(), "stateless")?.is_empty(),
        "nothing recorded",
        &out,
    )
}

/// A uniform and an expert batch of rustpipe into one results folder: the
/// expert run records its profile and its experts' linger.ms, its product
/// applied it, and the page shows it in a section of its own. An unknown
/// profile and an unknown product setting are each one clear error.
fn the_expert_profile_is_recorded_as_its_own_point() -> Result<(), String> {
    let results = tempfile::tempdir().map_err(|e| e.to_string())?;
    let out = rustpipe_batch(results.path(), &[])?;
    ensure(out.status.success(), "the uniform batch must succeed", &out)?;
    let out = rustpipe_batch(results.path(), &["--profile", "expert"])?;
    ensure(out.status.success(), "the expert batch must succeed", &out)?;
    let runs = records(results.path(), "stateless")?;
    ensure(runs.len() == 2, "two records", &out)?;
    the_expert_run_has_its_experts_settings(&out, &runs[0], &runs[1])?;
    let page = std::fs::read_to_string(results.path().join("html/stateless.html"))
        .map_err(|e| format!("the stateless page: {e}"))?;
    ensure(
        page.contains("expert profile") && page.contains("Expert profile"),
        "the page names the expert point and lists the expert settings",
        &out,
    )?;
    an_unknown_profile_or_setting_is_refused(results.path())
}

/// `suite batch rustpipe` of one 5 s run at 1000/s into `results`, with
/// `extra` arguments.
fn rustpipe_batch(results: &Path, extra: &[&str]) -> Result<Output, String> {
    output(
        suite()
            .args(["batch", "rustpipe", "--workload", "stateless"])
            .args([
                "--repeat", "1", "--rate", "1000", "--warmup", "1", "--window", "5",
            ])
            .args(extra)
            .arg("--results")
            .arg(results),
    )
}

/// Each run records its profile; the expert run has its experts' linger_ms,
/// the uniform run bench.yaml's, and its product applied the expert profile.
fn the_expert_run_has_its_experts_settings(
    out: &Output,
    uniform: &RunRecord,
    expert: &RunRecord,
) -> Result<(), String> {
    ensure(
        uniform.config.profile == Profile::Uniform && expert.config.profile == Profile::Expert,
        &format!(
            "profiles recorded: {:?}, {:?}",
            uniform.config.profile, expert.config.profile
        ),
        out,
    )?;
    let suite_config = Suite::load(&repo().join("bench.yaml")).map_err(|e| e.to_string())?;
    let experts = suite_config.products["rustpipe"]
        .expert
        .clone()
        .ok_or("rustpipe has no expert profile")?;
    let linger = experts.client["linger_ms"].as_u64().ok_or("linger_ms")?;
    ensure(
        expert.config.client.linger_ms == linger
            && uniform.config.client.linger_ms == suite_config.bench.client.linger_ms
            && linger != suite_config.bench.client.linger_ms,
        "the expert run has its experts' linger_ms, the uniform run bench.yaml's",
        out,
    )?;
    crate::support::applied_the_client_profile(expert, out)
}

/// An unknown profile is refused on the first line of a usage error, an
/// unknown product setting in one line naming it; the records in `results`
/// stay as they were.
fn an_unknown_profile_or_setting_is_refused(results: &Path) -> Result<(), String> {
    let out = rustpipe_batch(results, &["--profile", "guru"])?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    ensure(
        out.status.code() == Some(2)
            && stderr
                .lines()
                .next()
                .is_some_and(|l| l.contains("invalid value 'guru'")),
        "an unknown profile is refused on its first line",
        &out,
    )?;
    let out = output(
        suite()
            .args([
                "batch",
                "rustpipe@product.nope=1",
                "--workload",
                "stateless",
            ])
            .args(["--repeat", "1", "--no-wait"])
            .arg("--results")
            .arg(results),
    )?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    ensure(
        !out.status.success()
            && stderr.lines().count() == 1
            && stderr.contains("rustpipe has no setting `nope`"),
        "an unknown product setting is one error naming it",
        &out,
    )?;
    ensure(
        records(results, "stateless")?.len() == 2,
        "refused batches leave the records as they were",
        &out,
    )
}
