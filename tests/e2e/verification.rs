//! Exact verification on real runs: a crash mid-window with a restart, and a
//! pipeline broken on purpose.

use libtest_mimic::Trial;
use streamsuite::gendata::event::Core;
use streamsuite::results::{RunRecord, SanityVerdict, Verification, VerificationVerdict};

use crate::support::{
    accounting_holds, config_with_products, ensure, records, repo, run_rustpipe_with, run_suite,
    rustpipe_product,
};
use crate::trial;

pub fn trials() -> Vec<Trial> {
    vec![
        trial(
            "eos_line_loses_and_duplicates_nothing_through_a_kill",
            eos_line_loses_and_duplicates_nothing_through_a_kill,
        ),
        trial(
            "eos_line_with_four_shards_loses_and_duplicates_nothing_through_a_kill",
            eos_line_with_four_shards_loses_and_duplicates_nothing_through_a_kill,
        ),
        trial(
            "four_shards_keep_every_keys_order",
            four_shards_keep_every_keys_order,
        ),
        trial(
            "alos_line_counts_what_a_kill_duplicated",
            alos_line_counts_what_a_kill_duplicated,
        ),
        trial(
            "broken_pipeline_is_caught_with_the_right_counts",
            broken_pipeline_is_caught_with_the_right_counts,
        ),
        trial(
            "product_that_never_commits_is_not_verified",
            product_that_never_commits_is_not_verified,
        ),
        trial(
            "chaos_outside_the_window_is_a_clear_error",
            chaos_outside_the_window_is_a_clear_error,
        ),
    ]
}

/// One run of `line` at 2000 records/s with a kill 4 s into a 10 s window,
/// then a restart, with `settings` given to `--set`; returns its record.
fn run_with_kill(
    line: &str,
    settings: &[&str],
) -> Result<(RunRecord, std::process::Output, tempfile::TempDir), String> {
    let results = tempfile::tempdir().map_err(|e| e.to_string())?;
    let args = [
        line,
        "stateless",
        "--rate",
        "2000",
        "--warmup",
        "3",
        "--window",
        "10",
    ];
    let chaos = ["--chaos", "kill-at=4s,restart"];
    let sets: Vec<&str> = settings.iter().flat_map(|s| ["--set", s]).collect();
    let out = run_suite(
        &repo().join("bench.yaml"),
        &[&args[..], &chaos, &sets].concat(),
        results.path(),
    )?;
    let mut all = records(results.path(), "stateless")?;
    ensure(all.len() == 1, "exactly one record expected", &out)?;
    Ok((all.remove(0), out, results))
}

/// Checks common to both lines' kill runs.
fn crash_was_injected_and_timed(
    r: &RunRecord,
    out: &std::process::Output,
) -> Result<Verification, String> {
    let chaos = r.chaos.as_ref().ok_or("chaos missing from the record")?;
    let [kill] = chaos.kills.as_slice() else {
        return Err(format!("one kill expected, got {:?}", chaos.kills));
    };
    ensure(
        chaos.restart && (kill.at_s - 4.0).abs() < 0.5 && kill.killed_processes >= 1,
        "the kill is recorded",
        out,
    )?;
    let recovery = kill
        .recovery_ms
        .ok_or("no recovery time: output never resumed")?;
    ensure(
        recovery > 0.0 && recovery < 6000.0,
        &format!("recovery {recovery} ms within what was left of the window"),
        out,
    )?;
    ensure(r.flags.iter().any(|f| f == "chaos"), "flagged chaos", out)?;
    ensure(
        String::from_utf8_lossy(&out.stderr).contains("output resumed"),
        "the summary tells the recovery",
        out,
    )?;
    let v = r.verification.clone().ok_or("verification missing")?;
    ensure(
        v.committed_offset > 0 && v.expected > 0,
        "input was committed",
        out,
    )?;
    ensure(
        accounting_holds(&v),
        &format!("every output record accounted for: {v:?}"),
        out,
    )?;
    Ok(v)
}

fn eos_line_loses_and_duplicates_nothing_through_a_kill() -> Result<(), String> {
    eos_through_a_kill(&[])
}

/// Four stage workers: one transaction still covers every worker's output
/// and the input offsets.
fn eos_line_with_four_shards_loses_and_duplicates_nothing_through_a_kill() -> Result<(), String> {
    eos_through_a_kill(&["run.parallelism=4"])
}

fn eos_through_a_kill(settings: &[&str]) -> Result<(), String> {
    let (r, out, _results) = run_with_kill("rustpipe-eos", settings)?;
    ensure(out.status.success(), "the run must succeed", &out)?;
    let parallelism = if settings.is_empty() { 1 } else { 4 };
    ensure(
        r.config.parallelism == parallelism,
        &format!("the record carries parallelism {parallelism}"),
        &out,
    )?;
    let v = crash_was_injected_and_timed(&r, &out)?;
    ensure(
        (v.missing, v.duplicated, v.unexpected, v.corrupted) == (0, 0, 0, 0),
        &format!("0 missing, duplicated, unexpected, corrupted: {v:?}"),
        &out,
    )?;
    ensure(
        v.verdict == VerificationVerdict::Passed,
        "verification passed",
        &out,
    )
}

/// At-least-once may duplicate through a kill (the output of input after the
/// last commit is written again); the count must be the real one, which the
/// accounting identity pins down, and nothing may be lost.
fn alos_line_counts_what_a_kill_duplicated() -> Result<(), String> {
    let (r, out, _results) = run_with_kill("rustpipe", &[])?;
    ensure(out.status.success(), "the run must succeed", &out)?;
    let v = crash_was_injected_and_timed(&r, &out)?;
    ensure(
        (v.missing, v.unexpected, v.corrupted) == (0, 0, 0),
        &format!("nothing lost or wrong: {v:?}"),
        &out,
    )?;
    ensure(
        v.verdict == VerificationVerdict::Passed,
        "duplicates do not fail at-least-once",
        &out,
    )?;
    ensure(
        String::from_utf8_lossy(&out.stderr).contains(&format!("{} duplicated", v.duplicated)),
        "the summary reports the duplicates",
        &out,
    )
}

/// rustpipe with 4 stage workers, each dealt chunks in turn: the
/// output read back keeps every key's input order, and nothing is lost.
fn four_shards_keep_every_keys_order() -> Result<(), String> {
    let results = tempfile::tempdir().map_err(|e| e.to_string())?;
    let args = [
        "rustpipe",
        "stateless",
        "--rate",
        "20000",
        "--warmup",
        "2",
        "--window",
        "6",
        "--set",
        "run.parallelism=4",
    ];
    let out = run_suite(&repo().join("bench.yaml"), &args, results.path())?;
    ensure(out.status.success(), "the run must succeed", &out)?;
    let all = records(results.path(), "stateless")?;
    let r = all.first().ok_or("no record")?;
    ensure(r.config.parallelism == 4, "parallelism 4 recorded", &out)?;
    let v = r.verification.clone().ok_or("verification missing")?;
    ensure(
        v.output_records > 20_000 && v.verdict == VerificationVerdict::Passed,
        &format!("a verified run with output to order: {v:?}"),
        &out,
    )?;
    ensure(
        v.out_of_order == 0,
        &format!("every key's records in input order: {v:?}"),
        &out,
    )
}

/// rustpipe with faults put in: kept records with an even sequence number
/// are dropped, and those divisible by 7 (and odd) get a wrong ratio.
fn broken_pipeline_is_caught_with_the_right_counts() -> Result<(), String> {
    let args = [
        "rustpipe-eos",
        "stateless",
        "--rate",
        "2000",
        "--warmup",
        "2",
        "--window",
        "6",
    ];
    let (out, all) = run_rustpipe_with("  drop_every: 2\n  corrupt_every: 7\n", &args)?;
    ensure(
        out.status.code() == Some(1),
        "a failed verification exits 1",
        &out,
    )?;
    ensure(all.len() == 1, "the run is still recorded", &out)?;
    let r = &all[0];
    let v = r.verification.as_ref().ok_or("verification missing")?;
    let kept = |range: std::ops::Range<u64>| {
        range
            .filter(|&s| Core::generate(r.config.seed, s).is_kept())
            .collect::<Vec<u64>>()
    };
    let owed = kept(0..v.committed_offset);
    let dropped = owed.iter().filter(|&&s| s % 2 == 0).count() as u64;
    let corrupted_owed = owed.iter().filter(|&&s| s % 7 == 0 && s % 2 == 1).count() as u64;
    ensure(
        v.expected == owed.len() as u64 && v.missing == dropped,
        &format!(
            "missing {} = the {dropped} dropped of {} owed",
            v.missing,
            owed.len()
        ),
        &out,
    )?;
    // Corrupted records past the commit count too; there are few of those.
    ensure(
        v.corrupted >= corrupted_owed && v.corrupted <= corrupted_owed + v.beyond_commit,
        &format!(
            "corrupted {} = the {corrupted_owed} owed ones (+ up to {} past the commit)",
            v.corrupted, v.beyond_commit
        ),
        &out,
    )?;
    ensure(
        (v.duplicated, v.unexpected) == (0, 0),
        "nothing duplicated or unexpected",
        &out,
    )?;
    ensure(
        v.verdict == VerificationVerdict::Failed,
        "verdict failed",
        &out,
    )?;
    let sanity = r.sanity.as_ref().ok_or("sanity missing")?;
    ensure(
        sanity.verdict == SanityVerdict::Warning
            && !sanity.selectivity_ok
            && sanity.content_mismatched > 0,
        &format!("sanity warns on half the output and wrong ratios: {sanity:?}"),
        &out,
    )?;
    ensure(
        r.flags.iter().any(|f| f == "verification-failed")
            && r.flags.iter().any(|f| f == "sanity-warning"),
        "both flagged",
        &out,
    )?;
    ensure(
        String::from_utf8_lossy(&out.stderr).contains("VERIFICATION FAILED"),
        "the console says so loudly",
        &out,
    )
}

fn chaos_outside_the_window_is_a_clear_error() -> Result<(), String> {
    let results = tempfile::tempdir().map_err(|e| e.to_string())?;
    let args = [
        "rustpipe",
        "stateless",
        "--window",
        "5",
        "--chaos",
        "kill-at=9s",
    ];
    let out = run_suite(&repo().join("bench.yaml"), &args, results.path())?;
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    ensure(
        out.status.code() == Some(1) && err.lines().count() == 1,
        "one line, exit 1",
        &out,
    )?;
    ensure(
        err.contains("a kill at 9 s falls outside the 5 s window"),
        "the line says why",
        &out,
    )?;
    ensure(
        records(results.path(), "stateless")?.is_empty(),
        "no record expected",
        &out,
    )
}

/// A product that consumes and writes but never commits an offset owns no
/// output the suite could check: its verification is incomplete, never
/// "passed: all 0 expected records present".
fn product_that_never_commits_is_not_verified() -> Result<(), String> {
    let product = format!("{}settings:\n  never_commit: true\n", rustpipe_product());
    let dir = config_with_products(&[("rustpipe", &product)])?;
    let bench = dir.path().join("bench.yaml");
    let text = std::fs::read_to_string(&bench).map_err(|e| e.to_string())?;
    let settle = "settle_s: 30\n";
    if !text.contains(settle) {
        return Err(format!("bench.yaml no longer holds `{settle}`:\n{text}"));
    }
    std::fs::write(&bench, text.replace(settle, "settle_s: 3\n")).map_err(|e| e.to_string())?;
    let results = dir.path().join("results");
    let args = [
        "rustpipe",
        "stateless",
        "--rate",
        "1000",
        "--warmup",
        "2",
        "--window",
        "5",
    ];
    let out = run_suite(&bench, &args, &results)?;
    let all = records(&results, "stateless")?;
    ensure(all.len() == 1, "the run is recorded", &out)?;
    let r = &all[0];
    let v = r.verification.as_ref().ok_or("verification missing")?;
    ensure(
        v.verdict == VerificationVerdict::Incomplete && v.committed_offset == 0,
        &format!("incomplete with nothing committed: {v:?}"),
        &out,
    )?;
    ensure(
        v.output_records > 0 && v.input_records >= 7000,
        "it did consume and write",
        &out,
    )?;
    ensure(
        r.has_flag(streamsuite::results::flag::VERIFICATION_INCOMPLETE)
            && !r.has_flag(streamsuite::results::flag::VERIFICATION_FAILED),
        "flagged verification-incomplete",
        &out,
    )?;
    ensure(
        r.not_applicable.contains_key("settle_s"),
        "the settle phase ran out",
        &out,
    )?;
    ensure(
        String::from_utf8_lossy(&out.stderr).contains("NOT VERIFIED (incomplete)"),
        "the summary says it is not verified",
        &out,
    )
}
