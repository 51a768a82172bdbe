//! The calls a run makes on ClickHouse: a database per run, the ETL events
//! table, and the counts and rows that verification reads back.
//!
//! The `clickhouse` crate is async; each call here runs it to completion on a
//! current-thread runtime, so the runner stays a plain blocking program. The
//! client works with Debian's 18.16 server as with a current one: 18.16 knows
//! no `RowBinaryWithNamesAndTypes`, so rows are read as plain `RowBinary`
//! (validation off), and nothing is compressed.

use std::time::Duration;

use anyhow::{anyhow, bail, Result};

use crate::config::SinkConfig;
pub use crate::model::sink_rows::{EventRow, RawRow};
pub use event_model::{EVENT_COLUMNS, RAW_COLUMNS};

/// How long a ping may take before the server counts as unreachable.
const PING_TIMEOUT: Duration = Duration::from_secs(5);

/// The tables an ETL run may write, both ordered by `seq`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EtlTable {
    /// One row per event: [`EVENT_COLUMNS`].
    Events,
    /// One row per message: [`RAW_COLUMNS`].
    RawMessages,
}

impl EtlTable {
    pub fn name(self) -> &'static str {
        match self {
            EtlTable::Events => "events",
            EtlTable::RawMessages => "raw_messages",
        }
    }

    fn columns(self) -> &'static [(&'static str, &'static str)] {
        match self {
            EtlTable::Events => &EVENT_COLUMNS,
            EtlTable::RawMessages => &RAW_COLUMNS,
        }
    }
}

/// A blocking ClickHouse client over HTTP.
pub struct ClickHouseClient {
    url: String,
    client: ::clickhouse::Client,
    runtime: tokio::runtime::Runtime,
}

impl ClickHouseClient {
    /// A client of the configured sink; connects on its first call.
    pub fn from_config(config: &SinkConfig) -> Result<ClickHouseClient> {
        let url = config.url();
        let mut client = ::clickhouse::Client::default()
            .with_url(&url)
            .with_compression(::clickhouse::Compression::None)
            .with_validation(false);
        if let SinkConfig::External { user, password, .. } = config {
            if let Some(user) = user {
                client = client.with_user(user);
            }
            if let Some(password) = password {
                client = client.with_password(password);
            }
        }
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|err| anyhow!("ClickHouse client for {url}: starting its runtime: {err}"))?;
        Ok(ClickHouseClient {
            url,
            client,
            runtime,
        })
    }

    /// Whether the server answers a query within a few seconds.
    pub fn ping(&self) -> Result<()> {
        let query = self.client.query("SELECT 1").execute();
        match self
            .runtime
            .block_on(async { tokio::time::timeout(PING_TIMEOUT, query).await })
        {
            Ok(Ok(())) => Ok(()),
            Ok(Err(err)) => bail!(
                "ClickHouse at {} is not reachable: {}",
                self.url,
                one_line(&err)
            ),
            Err(_) => bail!(
                "ClickHouse at {} is not reachable: no answer within {} s",
                self.url,
                PING_TIMEOUT.as_secs()
            ),
        }
    }

    /// The server's version, such as `18.16.1`.
    pub fn version(&self) -> Result<String> {
        self.fetch_one("reading the server version", "SELECT version()")
    }

    /// Creates the database a run writes into.
    pub fn create_run_database(&self, name: &str) -> Result<()> {
        check_name(name)?;
        self.execute(
            &format!("creating database {name}"),
            &format!("CREATE DATABASE {name}"),
        )
    }

    /// Drops a database and everything in it, if it exists.
    pub fn drop_database(&self, name: &str) -> Result<()> {
        check_name(name)?;
        self.execute(
            &format!("dropping database {name}"),
            &format!("DROP DATABASE IF EXISTS {name}"),
        )
    }

    /// Creates `<db>.<table>`, ordered by `seq`.
    pub fn create_table(&self, db: &str, table: EtlTable) -> Result<()> {
        check_name(db)?;
        self.execute(
            &format!("creating {db}.{}", table.name()),
            &table_ddl(db, table),
        )
    }

    /// The number of rows in `<db>.<table>`.
    pub fn count_rows(&self, db: &str, table: EtlTable) -> Result<u64> {
        check_name(db)?;
        let table = table.name();
        self.fetch_one(
            &format!("counting the rows of {db}.{table}"),
            &format!("SELECT count() FROM {db}.{table}"),
        )
    }

    /// How many `seq` values occur more than once in `<db>.<table>`.
    pub fn duplicated_seqs(&self, db: &str, table: EtlTable) -> Result<u64> {
        check_name(db)?;
        let table = table.name();
        self.fetch_one(
            &format!("counting the duplicated seqs of {db}.{table}"),
            &format!(
                "SELECT count() FROM (SELECT seq FROM {db}.{table} GROUP BY seq HAVING count() > 1)"
            ),
        )
    }

    /// Hands every row of `<db>.raw_messages` to `each`, streaming.
    pub fn for_each_raw_row(&self, db: &str, each: impl FnMut(RawRow)) -> Result<()> {
        self.stream_rows(db, EtlTable::RawMessages, each)
    }

    /// Hands every row of `<db>.events` to `each`, in no particular order,
    /// streaming: the rows are never all in memory at once.
    pub fn for_each_row(&self, db: &str, each: impl FnMut(EventRow)) -> Result<()> {
        self.stream_rows(db, EtlTable::Events, each)
    }

    fn stream_rows<T>(&self, db: &str, table: EtlTable, mut each: impl FnMut(T)) -> Result<()>
    where
        T: ::clickhouse::RowOwned + ::clickhouse::RowRead,
    {
        check_name(db)?;
        let table = table.name();
        let doing = format!("reading the rows of {db}.{table}");
        let sql = format!("SELECT ?fields FROM {db}.{table}");
        self.runtime
            .block_on(async {
                let mut cursor = self.client.query(&sql).fetch::<T>()?;
                while let Some(row) = cursor.next().await? {
                    each(row);
                }
                Ok::<(), ::clickhouse::error::Error>(())
            })
            .map_err(|err| self.failed(&doing, &err))
    }

    fn execute(&self, doing: &str, sql: &str) -> Result<()> {
        self.runtime
            .block_on(self.client.query(sql).execute())
            .map_err(|err| self.failed(doing, &err))
    }

    /// The first row of a query's answer. The answer is read to its end:
    /// a connection closed with data unread is reset, which the server logs
    /// as an error.
    fn fetch_one<T>(&self, doing: &str, sql: &str) -> Result<T>
    where
        T: ::clickhouse::RowOwned + ::clickhouse::RowRead,
    {
        let rows = self
            .runtime
            .block_on(self.client.query(sql).fetch_all::<T>())
            .map_err(|err| self.failed(doing, &err))?;
        rows.into_iter()
            .next()
            .ok_or_else(|| anyhow!("ClickHouse at {}: {doing}: no row in the answer", self.url))
    }

    fn failed(&self, doing: &str, err: &::clickhouse::error::Error) -> anyhow::Error {
        anyhow!("ClickHouse at {}: {doing}: {}", self.url, one_line(err))
    }
}

/// `CREATE TABLE <db>.<table>`: MergeTree ordered by `seq`, in the syntax
/// both 18.16 and current servers take.
fn table_ddl(db: &str, table: EtlTable) -> String {
    let columns: Vec<String> = table
        .columns()
        .iter()
        .map(|(name, kind)| format!("{name} {kind}"))
        .collect();
    format!(
        "CREATE TABLE {db}.{} ({}) ENGINE = MergeTree() ORDER BY seq",
        table.name(),
        columns.join(", ")
    )
}

/// Database names go into SQL as they are, so only plain identifiers pass.
fn check_name(name: &str) -> Result<()> {
    let mut chars = name.chars();
    let plain = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !plain {
        bail!("`{name}` is not a ClickHouse database name the suite uses: letters, digits and _ only, not starting with a digit");
    }
    Ok(())
}

/// An error and its causes on one line. The crate's messages repeat their
/// source's, and the server's exceptions span lines.
fn one_line(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text = format!("{text}: {cause_text}");
        }
        source = cause.source();
    }
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_events_table_has_the_etl_columns_in_order() {
        assert_eq!(
            table_ddl("run_1", EtlTable::Events),
            "CREATE TABLE run_1.events (seq UInt64, event_id String, ts DateTime, ts_us Int64, \
             tenant String, region String, zone String, service String, endpoint String, \
             method String, status UInt16, latency_ms UInt32, sla_ms UInt32, bytes UInt32, \
             user_id String, session_id String, device String, os String, app_version String, \
             trace_id String) ENGINE = MergeTree() ORDER BY seq"
        );
    }

    #[test]
    fn only_plain_database_names_reach_sql() {
        for good in ["ss_run_1", "_x", "Run2"] {
            assert!(check_name(good).is_ok(), "{good}");
        }
        for bad in ["", "1run", "a.b", "a-b", "a b", "x;DROP", "`x`"] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn an_error_chain_is_one_line_without_repeats() {
        /// An error saying `text`, caused by `source`.
        #[derive(Debug)]
        struct Layer(&'static str, Option<Box<Layer>>);
        impl std::fmt::Display for Layer {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.0)
            }
        }
        impl std::error::Error for Layer {
            fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
                self.1.as_deref().map(|l| l as _)
            }
        }
        // As the crate's network errors: the outer message repeats the next one.
        let refused = Layer(
            "network error: client error (Connect)",
            Some(Box::new(Layer(
                "client error (Connect)",
                Some(Box::new(Layer(
                    "tcp connect error",
                    Some(Box::new(Layer("Connection refused (os error 111)", None))),
                ))),
            ))),
        );
        assert_eq!(
            one_line(&refused),
            "network error: client error (Connect): tcp connect error: Connection refused (os error 111)"
        );
        let exception = Layer(
            "bad response: Code: 81,\n e.displayText() = DB::Exception: Database x doesn't exist\n",
            None,
        );
        assert_eq!(
            one_line(&exception),
            "bad response: Code: 81, e.displayText() = DB::Exception: Database x doesn't exist"
        );
    }
}
