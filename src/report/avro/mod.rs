//! The Avro pipeline page: the decoders and insert formats measured twice,
//! on the CPU rig (in process, no broker and no server, where the decoders'
//! own cost shows: rig.rs) and end to end from Kafka into ClickHouse
//! (e2e.rs), then one sentence computed from both on where the bottleneck is
//! (bottleneck.rs). Every figure is formatted here; the template lays it out.

mod bottleneck;
mod e2e;
mod rig;

pub use e2e::E2eSection;
pub use rig::{Headline, RigSection};

use serde::Serialize;

use super::data::{self, DataLink};
use super::header::commits_of;
use super::svg::PALETTE;
use crate::results::{RigRecord, RunRecord, Variant};

/// The page's file name.
pub const PAGE: &str = "avro-pipeline.html";

/// The workload whose runs are the end-to-end rig.
pub const WORKLOAD: &str = "avro-etl";

/// Everything the Avro pipeline page shows.
#[derive(Debug, Serialize)]
pub struct AvroPage {
    pub rig: RigSection,
    pub e2e: E2eSection,
    /// The end-to-end workload's own page.
    pub workload_href: String,
    /// The CPU rig's records; none without any.
    pub rig_data: Option<DataLink>,
    /// The end-to-end workload's records; none without any.
    pub e2e_data: Option<DataLink>,
    /// The suite commits of the records shown, newest first.
    pub commits: Vec<String>,
}

/// A link to the Avro page, as the index and the avro-etl page show it.
#[derive(Debug, Serialize)]
pub struct PageLink {
    pub href: String,
    pub title: String,
    pub description: String,
}

/// The link to this page.
pub fn page_link() -> PageLink {
    PageLink {
        href: PAGE.to_string(),
        title: "Avro pipeline".to_string(),
        description: "Avro decoders and ClickHouse insert formats compared on the CPU rig \
                      and end to end, from Kafka into ClickHouse."
            .to_string(),
    }
}

/// Builds the page from the avro-etl runs and the CPU rig's records.
pub fn avro_page(runs: &[RunRecord], rig_records: &[RigRecord]) -> AvroPage {
    let e2e_runs = e2e::E2eRuns::from_records(runs);
    let batch = rig::newest_batch(rig_records, e2e_runs.host());
    // A multiple from another machine says nothing of this one's sink.
    let decode_multiple = batch
        .as_ref()
        .filter(|b| !b.elsewhere)
        .and_then(|b| crate::analysis::rig_multiples::multiples(&b.records).decode);
    let stamps = batch
        .iter()
        .flat_map(|b| b.records.iter())
        .map(|r| (r.started_at.as_str(), r.suite_commit.as_ref()))
        .chain(
            e2e_runs
                .shown()
                .map(|r| (r.started_at.as_str(), r.suite_commit.as_ref())),
        );
    AvroPage {
        commits: commits_of(stamps),
        rig: rig::rig_section(batch.as_ref()),
        e2e: e2e::e2e_section(&e2e_runs, decode_multiple),
        workload_href: format!("{WORKLOAD}.html"),
        rig_data: data::rig_records(rig_records.len()).map(|(_, link)| link),
        e2e_data: data::workload_records(WORKLOAD, runs.len()).map(|(_, link)| link),
    }
}

/// One arm of the Avro pipeline: a decoder, and the insert format (none for
/// the CPU rig's decode arms).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Arm {
    decoder: String,
    format: Option<String>,
}

/// The decoders in page order, each with what it does.
const DECODERS: [(&str, &str); 4] = [
    (
        "fast-borrowed",
        "serde_avro_fast into events whose strings borrow from the message",
    ),
    ("fast-owned", "serde_avro_fast into owned events"),
    (
        "apache-owned",
        "apache-avro's reader: a Value tree, then owned events",
    ),
    (
        "none",
        "no decoding: one row per message, holding its bytes",
    ),
];

/// The insert formats in page order, as the page writes them.
const FORMATS: [(&str, &str); 2] = [("rowbinary", "RowBinary"), ("native", "Native")];

impl Arm {
    fn from_variant(variant: &Variant) -> Arm {
        Arm {
            decoder: variant.decoder.clone(),
            format: variant.format.clone(),
        }
    }

    /// The raw arm: no Avro decoding, one row per message.
    fn is_raw(&self) -> bool {
        self.decoder == "none"
    }

    /// The run's arm: its variant, else its ETL settings; none for a run
    /// that has neither.
    fn from_run(record: &RunRecord) -> Option<Arm> {
        match (&record.variant, &record.config.etl) {
            (Some(variant), _) => Some(Arm::from_variant(variant)),
            (None, Some(etl)) => Some(Arm {
                decoder: etl.decoder.as_str().to_string(),
                format: Some(etl.format.as_str().to_string()),
            }),
            (None, None) => None,
        }
    }

    /// `fast-borrowed · RowBinary`, `raw · Native`.
    fn label(&self) -> String {
        let decoder = if self.is_raw() { "raw" } else { &self.decoder };
        match &self.format {
            Some(format) => {
                let shown = FORMATS
                    .iter()
                    .find(|(name, _)| name == format)
                    .map_or(format.as_str(), |(_, shown)| shown);
                format!("{decoder} · {shown}")
            }
            None => decoder.to_string(),
        }
    }

    /// What the decoder does, for hover text.
    fn description(&self) -> &'static str {
        DECODERS
            .iter()
            .find(|(name, _)| *name == self.decoder)
            .map_or("a decoder this version does not know", |(_, what)| what)
    }

    /// Page order: decoders as [`DECODERS`] lists them, RowBinary before
    /// Native; unknown names after, by name.
    fn order(&self) -> (usize, &str, usize, &str) {
        let decoder = DECODERS
            .iter()
            .position(|(name, _)| *name == self.decoder)
            .unwrap_or(DECODERS.len());
        let format = self.format.as_deref().unwrap_or("");
        let format_at = FORMATS
            .iter()
            .position(|(name, _)| *name == format)
            .unwrap_or(FORMATS.len());
        (decoder, &self.decoder, format_at, format)
    }

    /// One colour per decoder, the same in every chart of the page.
    fn colour(&self) -> &'static str {
        DECODERS
            .iter()
            .position(|(name, _)| *name == self.decoder)
            .map_or(PALETTE[PALETTE.len() - 1], |i| PALETTE[i])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arms_read_and_sort_as_the_page_shows_them() {
        let arm = |decoder: &str, format: Option<&str>| Arm {
            decoder: decoder.into(),
            format: format.map(str::to_string),
        };
        let mut arms = [
            arm("none", Some("rowbinary")),
            arm("apache-owned", Some("native")),
            arm("fast-borrowed", Some("native")),
            arm("fast-borrowed", Some("rowbinary")),
        ];
        arms.sort_by(|a, b| a.order().cmp(&b.order()));
        let labels: Vec<String> = arms.iter().map(Arm::label).collect();
        assert_eq!(
            labels,
            [
                "fast-borrowed · RowBinary",
                "fast-borrowed · Native",
                "apache-owned · Native",
                "raw · RowBinary",
            ]
        );
        assert_eq!(arm("fast-owned", None).label(), "fast-owned");
    }
}
