//! Snapshot tests of the report pages and exports, rendered from fixture
//! results: a repeated batch, keep-up, saturated and draining lines, an
//! exactly-once / at-least-once pair, a failed run, a run with an injected
//! crash (in the one-kill form of older records), a kill campaign that
//! repeated records on an exactly-once line, an at-least-once broker
//! restart, a sanity warning, a line no product describes, and an empty folder;
//! three bench points (20,000/s, 1,000/s, and another window), a two-line
//! batch at 1,000/s and a pair measured only at different points; at the
//! iso point a 5-round interleaved batch of an exactly-once / at-least-once
//! pair beside their older batches and a single run, and the same pair in 3
//! rounds on a second host of the same name with another CPU. For the
//! Avro pipeline page: a CPU rig batch of nine arms, and avro-etl runs of
//! three Avro arms (two repeated), the raw arm and a failed arm.
//!
//! One module per concept: `pages` (what each page shows of the fixture),
//! `charts`, `sections` (sweeps, a cluster and another host, crafted from a
//! fixture run), `exports`, and `files` (what the report reads and writes);
//! `support` holds the fixture and the helpers they share.

// A test crate's root looks for its modules beside it (tests/NAME.rs), as
// a main.rs does; these live in tests/report/.
#[path = "report/charts.rs"]
mod charts;
#[path = "report/exports.rs"]
mod exports;
#[path = "report/files.rs"]
mod files;
#[path = "report/pages.rs"]
mod pages;
#[path = "report/sections.rs"]
mod sections;
#[path = "report/support.rs"]
mod support;

/// Checks `text` against the snapshot `name`, tests/snapshots/report__NAME.snap,
/// whose header names it as `expression`. insta names a snapshot's file after
/// the module and the source file of its assertion, so the one assertion
/// stays here, in the crate root: the snapshots keep the files and headers
/// they had when every test lived in this file.
fn assert_snapshot(name: &str, text: &str, expression: &str) {
    insta::assert_snapshot!(name, text, expression);
}
