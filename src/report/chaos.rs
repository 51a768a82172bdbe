//! The faults table: for each line, its newest run with product kills (one
//! kill or a `suite chaos` campaign) and its newest run with a broker
//! restart: faults recovered from, records lost and repeated over the whole
//! run, and recovery times. An exactly-once line that lost or repeated a
//! record under a fault is marked red with the counts: that is the claim the
//! table tests. Fault runs stay out of every comparison on the page.

use super::lines::{is_chaos, Verdict};
use super::table::{date_time, grouped, Cell, Column, Row, Table};
use crate::config::Delivery;
use crate::results::{Chaos, RunRecord, VerificationVerdict};

/// The runs the table shows for one line: its newest run with kills, and
/// its newest with a broker restart (one run when it had both).
fn fault_runs<'a>(runs: &[&'a RunRecord]) -> Vec<(&'a RunRecord, &'a Chaos)> {
    let with = |has: fn(&Chaos) -> bool| {
        runs.iter()
            .rev()
            .find_map(|r| r.chaos.as_ref().filter(|c| has(c)).map(|c| (*r, c)))
    };
    let kills = with(|c| !c.kills.is_empty());
    let broker = with(|c| c.broker_restart.is_some());
    let mut out: Vec<_> = kills.into_iter().collect();
    if let Some(broker) = broker {
        if !out.iter().any(|(r, _)| r.run_id == broker.0.run_id) {
            out.push(broker);
        }
    }
    out
}

/// An exactly-once run that lost or repeated a record: its counts.
fn broken_claim(run: &RunRecord) -> Option<(u64, u64)> {
    let v = run.verification.as_ref()?;
    (run.delivery == Delivery::ExactlyOnce && (v.missing > 0 || v.duplicated > 0))
        .then_some((v.missing, v.duplicated))
}

fn ms(value: f64) -> String {
    format!("{} ms", grouped(value.round() as i64))
}

/// The table, lines in `order`; None when no line has a fault run.
pub(super) fn chaos_table(order: &[String], records: &[RunRecord]) -> Option<Table> {
    let mut table = Table::new(
        "Faults and recovery",
        Column::plain_all(&[
            "line",
            "run",
            "faults",
            "recovered",
            "missing",
            "duplicated",
            "recovery p50",
            "recovery max",
            "broker restart",
            "verified",
        ]),
    );
    let mut any = false;
    for line in order {
        let runs: Vec<&RunRecord> = records
            .iter()
            .filter(|r| &r.line == line && is_chaos(r))
            .collect();
        for (run, chaos) in fault_runs(&runs) {
            any = true;
            table.push(row(run, chaos));
        }
    }
    any.then_some(table)
}

/// One chaos run's row: its faults, how it recovered and what its
/// verification counted.
fn row(run: &RunRecord, chaos: &Chaos) -> Row {
    let broken = broken_claim(run);
    let count = |value: Option<u64>| match (value, broken) {
        (Some(n), Some(_)) if n > 0 => Cell::text(grouped(n as i64)).with_class("bad"),
        (Some(n), _) => Cell::text(grouped(n as i64)),
        (None, _) => Cell::missing(),
    };
    let v = run.verification.as_ref();
    Row::new()
        .set("line", Cell::text(&run.line))
        .set(
            "run",
            Cell::text(date_time(&run.started_at)).with_title(run.run_id.clone()),
        )
        .set("faults", Cell::text(faults_text(chaos)))
        .set("recovered", recovered_cell(chaos))
        .set("missing", count(v.map(|v| v.missing)))
        .set("duplicated", count(v.map(|v| v.duplicated)))
        .set(
            "recovery p50",
            chaos
                .recovery_p50_ms
                .map_or_else(|| Cell::text(""), |p| Cell::text(ms(p))),
        )
        .set(
            "recovery max",
            chaos
                .recovery_max_ms
                .map_or_else(|| Cell::text(""), |p| Cell::text(ms(p))),
        )
        .set("broker restart", broker_cell(chaos))
        .set("verified", verified_cell(run, broken.is_some()))
}

/// The faults injected, in words: `3 kills, restarted + broker restart at 10 s`.
fn faults_text(chaos: &Chaos) -> String {
    let kills = chaos.kills.len();
    let mut faults = Vec::new();
    if kills > 0 {
        // Kills of single members name them: the rest of the deployment ran on.
        let members: Vec<&str> = chaos
            .kills
            .iter()
            .filter_map(|k| k.member.as_deref())
            .collect();
        let of_members = if members.is_empty() {
            String::new()
        } else {
            format!(" of one member ({})", members.join(", "))
        };
        faults.push(format!(
            "{kills} kill{}{of_members}{}",
            if kills == 1 { "" } else { "s" },
            if chaos.restart { ", restarted" } else { "" }
        ));
    }
    if let Some(b) = &chaos.broker_restart {
        faults.push(match b.node {
            Some(node) if b.was_leader => {
                format!("leader (node {node}) killed at {:.0} s", b.at_s)
            }
            Some(node) => format!("node {node} killed at {:.0} s", b.at_s),
            None => format!("broker restart at {:.0} s", b.at_s),
        });
    }
    faults.join(" + ")
}

/// How many kills the product came back from, each kill's time and
/// recovery in the title; a restarted product that did not is a warning.
fn recovered_cell(chaos: &Chaos) -> Cell {
    let kills = chaos.kills.len();
    if kills == 0 {
        return Cell::text("");
    }
    let kill_times: Vec<String> = chaos
        .kills
        .iter()
        .map(|k| {
            format!(
                "{:.1} s: {}",
                k.at_s,
                k.recovery_ms.map_or("no output after".into(), ms)
            )
        })
        .collect();
    let cell =
        Cell::text(format!("{} / {kills}", chaos.kills_survived)).with_title(kill_times.join("; "));
    if chaos.restart && chaos.kills_survived < kills {
        cell.with_class("warn")
    } else {
        cell
    }
}

/// The broker's outage and when output came again; never is a warning.
fn broker_cell(chaos: &Chaos) -> Cell {
    let Some(b) = &chaos.broker_restart else {
        return Cell::text("");
    };
    let failover = b
        .failover_ms
        .map_or(String::new(), |f| format!("leader moved after {}; ", ms(f)));
    let text = format!(
        "{failover}out {}; output again after {}",
        ms(b.outage_ms),
        b.recovery_ms.map_or("never".into(), ms)
    );
    let cell = Cell::text(text);
    if b.recovery_ms.is_none() {
        cell.with_class("warn")
    } else {
        cell
    }
}

/// The verification's verdict, or that exactly-once was broken.
fn verified_cell(run: &RunRecord, broken: bool) -> Cell {
    match run.verification.as_ref() {
        Some(v) if broken => Cell::text("exactly-once broken")
            .with_class("bad")
            .with_title(v.message.clone()),
        Some(v) => {
            let cell = Cell::text(v.verdict.as_str()).with_title(v.message.clone());
            match v.verdict {
                VerificationVerdict::Passed => cell.with_class("ok"),
                VerificationVerdict::Failed => cell.with_class("warn"),
                VerificationVerdict::Incomplete => cell.with_class("na"),
            }
        }
        None => Cell::text("not verified").with_class("na"),
    }
}

/// One line under the table: whether exactly-once held through every fault
/// on record, naming each line where it did not.
pub(super) fn chaos_verdict(order: &[String], records: &[RunRecord]) -> Verdict {
    let mut broken = Vec::new();
    let mut held = 0;
    for line in order {
        let runs: Vec<&RunRecord> = records
            .iter()
            .filter(|r| &r.line == line && is_chaos(r))
            .collect();
        for (run, _) in fault_runs(&runs) {
            match broken_claim(run) {
                Some((missing, duplicated)) => broken.push(format!(
                    "{line} ({missing} missing, {duplicated} duplicated)"
                )),
                None if run.delivery == Delivery::ExactlyOnce
                    && run
                        .verification
                        .as_ref()
                        .is_some_and(|v| v.verdict == VerificationVerdict::Passed) =>
                {
                    held += 1
                }
                None => {}
            }
        }
    }
    if !broken.is_empty() {
        Verdict {
            text: format!(
                "✗ exactly-once did not hold under faults: {}.",
                broken.join(", ")
            ),
            class: "bad".to_string(),
        }
    } else if held > 0 {
        Verdict {
            text: "✓ exactly-once held: every exactly-once fault run verified with nothing \
                   missing or duplicated."
                .to_string(),
            class: "ok".to_string(),
        }
    } else {
        Verdict {
            text: "No exactly-once fault run verified yet.".to_string(),
            class: "na".to_string(),
        }
    }
}
