//! Why an install failed: the note it left in its folder, and the line of
//! the tools' log that says why.

use std::fs;
use std::path::Path;

use super::fingerprint::fingerprint;
use super::layout::FAILED;
use crate::config::Product;

/// Why the last install of what `product` at `version` is now failed, if it did.
pub(super) fn failed_install(product: &Product, version: &str, dir: &Path) -> Option<String> {
    let text = fs::read_to_string(dir.join(FAILED)).ok()?;
    let (made, reason) = text.split_once('\n')?;
    (made == fingerprint(product, version)).then(|| reason.trim().to_string())
}

/// The line of an install's log that says why it failed: Maven's failed
/// goal (which names an artifact the registry does not have, or is a
/// compilation failure, then followed by its first error), pip's conflict
/// with the requirements that conflict (a constraint among them), else
/// pip's and Maven's last `ERROR` line with some text, else the last line.
pub(super) fn failure_reason(log: &str) -> String {
    let mut lines = log.lines().map(str::trim).filter(|l| !l.is_empty());
    let conflict = lines
        .clone()
        .position(|l| l.starts_with("ERROR: Cannot install"))
        .map(|at| {
            let mut after = lines.clone().skip(at);
            let head = after.next().unwrap_or_default().trim_end_matches('.');
            let causes: Vec<&str> = after
                .skip_while(|l| *l != "The conflict is caused by:")
                .skip(1)
                .take_while(|l| !l.starts_with("To fix") && !l.starts_with("ERROR"))
                .collect();
            format!("{head}: {}", causes.join("; "))
        });
    let goal = lines
        .clone()
        .position(|l| l.starts_with("[ERROR] Failed to execute goal"));
    let failed_goal = goal.and_then(|at| {
        let mut after = lines.clone().skip(at);
        let goal = after.next()?.trim_end_matches(" -> [Help 1]");
        Some(
            match (goal.ends_with("Compilation failure"), after.next()) {
                (true, Some(first)) => format!("{goal}: {}", first.trim_start_matches("[ERROR] ")),
                _ => goal.to_string(),
            },
        )
    });
    let reason = failed_goal
        .as_deref()
        .or(conflict.as_deref())
        .or_else(|| {
            lines.clone().rfind(|l| {
                (l.starts_with("ERROR") || l.starts_with("[ERROR]"))
                    && !l
                        .trim_start_matches(['[', 'E', 'R', 'O', ']', ':'])
                        .trim()
                        .is_empty()
            })
        })
        .or_else(|| lines.next_back())
        .unwrap_or("no output");
    let mut reason = reason.to_string();
    if reason.chars().count() > 400 {
        reason = reason.chars().take(400).collect::<String>() + " ...";
    }
    reason
}
