//! What every module of the report's tests shares: the fixture folder, its
//! configuration and results, the pages rendered from them, and reading a
//! page or a part of one.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use streamsuite::config::Suite;
use streamsuite::report::{self, BadLines};
use streamsuite::results::RunRecord;

/// The fixture folder: config/ (bench.yaml, products/, workloads/) and results/.
pub fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/report")
}

/// The fixture's configuration.
pub fn suite() -> Suite {
    Suite::load(&fixture().join("config/bench.yaml")).unwrap()
}

/// The fixture's results, by workload.
pub fn fixture_results() -> BTreeMap<String, Vec<RunRecord>> {
    report::load_results(&fixture().join("results"), BadLines::Fail).unwrap()
}

/// Every page rendered from the fixture results.
pub fn fixture_pages() -> Vec<(String, String)> {
    let results = fixture_results();
    let rig = report::load_rig_results(&fixture().join("results"), BadLines::Fail).unwrap();
    report::render_site(&suite(), &results, &rig).unwrap().pages
}

/// The site of the fixture results written into `out`: the index's path.
pub fn write_fixture_site(out: &Path) -> PathBuf {
    report::write_site(&suite(), &fixture().join("results"), out, BadLines::Fail).unwrap()
}

/// The page named `name`, with `/` and `'` unescaped.
pub fn page(pages: &[(String, String)], name: &str) -> String {
    pages
        .iter()
        .find(|(n, _)| n == name)
        .unwrap_or_else(|| panic!("no page {name}"))
        .1
        .replace("&#x2f;", "/")
        .replace("&#x27;", "'")
}

/// The stateless page rendered from `records` alone, unescaped as [`page`] does.
pub fn stateless_page(records: Vec<RunRecord>) -> String {
    let results = BTreeMap::from([("stateless".to_string(), records)]);
    let pages = report::render_site(&suite(), &results, &[]).unwrap().pages;
    page(&pages, "stateless.html")
}

/// The part of `text` after the first `from`, up to the next `to`.
pub fn between<'a>(text: &'a str, from: &str, to: &str) -> &'a str {
    text.split(from)
        .nth(1)
        .and_then(|s| s.split(to).next())
        .unwrap_or_else(|| panic!("no `{from}` in the text"))
}
