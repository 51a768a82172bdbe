//! `suite list`: products, lines and workloads, what is runnable here, and
//! which line implements which workload; as aligned text or one JSON
//! document.

use anyhow::Result;
use serde::Serialize;

use super::cache;
use crate::cli::ListArgs;
use crate::config::Suite;
use crate::exit;
use crate::products::{self, Availability};

/// `suite list`.
pub(super) fn list(suite: &Suite, args: &ListArgs) -> Result<i32> {
    let listing = Listing::of(suite)?;
    if args.json {
        crate::outln!("{}", serde_json::to_string_pretty(&listing)?);
    } else {
        crate::out!("{}", listing.text(suite));
    }
    Ok(exit::OK)
}

/// What `suite list` shows; `--json` prints it as is.
#[derive(Debug, Serialize)]
struct Listing<'s> {
    lines: Vec<LineListing<'s>>,
    workloads: Vec<WorkloadListing<'s>>,
}

/// One line and whether it runs here.
#[derive(Debug, Serialize)]
struct LineListing<'s> {
    line: &'s str,
    product: &'s str,
    /// exactly-once or at-least-once.
    delivery: &'static str,
    /// The version a run uses when none is asked for.
    version: String,
    /// runnable, installed, installable, buildable or not-installed.
    status: &'static str,
    /// Whether `suite run` can run it here (installing it first if need be).
    runnable: bool,
    /// How to install it, when it cannot run here.
    #[serde(skip_serializing_if = "Option::is_none")]
    hint: Option<String>,
    /// The workloads its product implements.
    workloads: &'s [String],
    #[serde(skip)]
    availability: Availability,
}

#[derive(Debug, Serialize)]
struct WorkloadListing<'s> {
    name: &'s str,
    description: &'s str,
}

impl<'s> Listing<'s> {
    fn of(suite: &'s Suite) -> Result<Listing<'s>> {
        let cache = cache(suite)?;
        let lines = suite
            .lines()
            .map(|line| {
                let availability = products::availability(line.product, None, &cache);
                let (status, hint) = match &availability {
                    Availability::Runnable => ("runnable", None),
                    Availability::Installed => ("installed", None),
                    Availability::Installable => ("installable", None),
                    Availability::Buildable => ("buildable", None),
                    Availability::NotInstalled { hint } => ("not-installed", Some(hint.clone())),
                };
                LineListing {
                    line: &line.line.name,
                    product: &line.product.name,
                    delivery: line.line.delivery.as_str(),
                    version: line.product.resolved_version(),
                    status,
                    runnable: hint.is_none(),
                    hint,
                    workloads: &line.product.workloads,
                    availability,
                }
            })
            .collect();
        let workloads = suite
            .workloads
            .values()
            .map(|w| WorkloadListing {
                name: &w.name,
                description: &w.description,
            })
            .collect();
        Ok(Listing { lines, workloads })
    }

    /// The listing as aligned text: lines, the workload matrix, workloads.
    fn text(&self, suite: &Suite) -> String {
        let mut out = format!(
            "{:<18} {:<14} {:<15} status\n",
            "line", "product", "delivery"
        );
        for line in &self.lines {
            let version = &line.version;
            let status = match &line.availability {
                Availability::Runnable => "runnable here".to_string(),
                Availability::Installed => format!("runnable here (installed {version})"),
                Availability::Installable => {
                    format!("runnable here (installs {version} on first run)")
                }
                Availability::Buildable => "runnable here (cargo builds it as a run starts)".into(),
                Availability::NotInstalled { hint } => format!("not installed here: {hint}"),
            };
            out.push_str(&format!(
                "{:<18} {:<14} {:<15} {status}\n",
                line.line, line.product, line.delivery,
            ));
        }
        out.push('\n');
        out.push_str(&workload_matrix(suite));
        out.push('\n');
        out.push_str(&format!("{:<18} description\n", "workload"));
        for workload in &self.workloads {
            out.push_str(&format!("{:<18} {}\n", workload.name, workload.description));
        }
        out
    }
}

/// Lines against workloads: `yes` where the line's product implements the
/// workload, `not supported` where it does not.
fn workload_matrix(suite: &Suite) -> String {
    let names: Vec<&String> = suite.workloads.keys().collect();
    let width = |name: &str| name.len().max("not supported".len()) + 2;
    let mut out = format!("{:<19}", "line");
    for name in &names {
        out.push_str(&format!("{:<w$}", name, w = width(name)));
    }
    out = out.trim_end().to_string() + "\n";
    for line in suite.lines() {
        let mut row = format!("{:<19}", line.line.name);
        for name in &names {
            let cell = if line.product.workloads.contains(name) {
                "yes"
            } else {
                "not supported"
            };
            row.push_str(&format!("{:<w$}", cell, w = width(name)));
        }
        out.push_str(row.trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    /// Every line of the suite is listed once, with a status the docs name,
    /// and runnable exactly when no install hint is given.
    #[test]
    fn the_listing_holds_every_line_and_workload() {
        let suite = Suite::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("bench.yaml")).unwrap();
        let listing = Listing::of(&suite).unwrap();
        let doc = serde_json::to_value(&listing).unwrap();
        let lines = doc["lines"].as_array().unwrap();
        assert_eq!(lines.len(), suite.lines().count());
        for (json, line) in lines.iter().zip(suite.lines()) {
            assert_eq!(json["line"], line.line.name.as_str());
            assert_eq!(json["delivery"], line.line.delivery.as_str());
            let status = json["status"].as_str().unwrap();
            assert!(
                [
                    "runnable",
                    "installed",
                    "installable",
                    "buildable",
                    "not-installed"
                ]
                .contains(&status),
                "{status}"
            );
            assert_eq!(json["runnable"], json.get("hint").is_none());
            assert_eq!(json["runnable"], status != "not-installed");
        }
        let rustpipe = lines.iter().find(|l| l["line"] == "rustpipe").unwrap();
        assert_eq!(rustpipe["status"], "buildable");
        assert!(rustpipe["workloads"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w == "stateless"));
        assert_eq!(
            doc["workloads"].as_array().unwrap().len(),
            suite.workloads.len()
        );
        // The text lists the same lines, one row each.
        let text = listing.text(&suite);
        for line in suite.lines() {
            assert!(text
                .lines()
                .any(|l| l.starts_with(&format!("{} ", line.line.name))));
        }
    }
}
