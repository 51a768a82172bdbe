//! The batch's lines: every entry installed before any run, and a later
//! batch's entries again, each at the rate it asks for.

use anyhow::Result;

use super::request::{LineEntry, LinesRequest, NextBatch};
use crate::cache::Cache;
use crate::interrupt::Interrupt;
use crate::products::{self, Installation};
use crate::results::RunConfig;
use crate::runner::batch::BatchLine;

/// Installs every line first: a missing product fails before any run.
/// Entries of one product and version (a sweep's) share one install.
pub(super) fn install_lines<'s>(
    request: &LinesRequest<'s>,
    configs: Vec<RunConfig>,
    cache: &Cache,
    interrupt: &Interrupt,
) -> Result<Vec<BatchLine<'s>>> {
    let mut installed: Vec<(&str, Option<&str>, Installation)> = Vec::new();
    let mut lines = Vec::new();
    for (entry, config) in request.lines.iter().zip(configs) {
        let product = entry.line.product;
        let known = installed
            .iter()
            .find(|(name, version, _)| *name == product.name && *version == entry.version);
        let installation = match known {
            Some((_, _, installation)) => installation.clone(),
            None => {
                let installation =
                    products::ensure_installed(product, entry.version, cache, interrupt)?;
                installed.push((&product.name, entry.version, installation.clone()));
                installation
            }
        };
        lines.push(BatchLine {
            line: entry.line,
            label: entry.label(),
            installation,
            config,
        });
    }
    Ok(lines)
}

/// A later batch's lines: entries of the first (installed as `lines`), each
/// at the rate `batch` gives it.
pub(super) fn later_lines<'s>(
    batch: &NextBatch,
    request: &LinesRequest<'s>,
    lines: &[BatchLine<'s>],
) -> Vec<BatchLine<'s>> {
    batch
        .entries
        .iter()
        .map(|&(i, rate)| BatchLine {
            line: lines[i].line,
            label: LineEntry {
                rate: Some(rate),
                settings: request.lines[i].settings.clone(),
                parallelism: request.lines[i].parallelism,
                ..LineEntry::of(lines[i].line)
            }
            .label(),
            installation: lines[i].installation.clone(),
            config: RunConfig {
                rate,
                ..lines[i].config.clone()
            },
        })
        .collect()
}
