//! The ClickHouse sink against the real local server: the session starts it
//! in a temporary cache on ports of its own, the client writes and reads an
//! ETL events table, and the server is gone when the session closes.

use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Output};

use streamsuite::cache::Cache;
use streamsuite::clickhouse::client::EtlTable;
use streamsuite::clickhouse::{ClickHouseClient, EventRow, LocalClickHouse, SinkSession};
use streamsuite::config::SinkConfig;
use streamsuite::interrupt::Interrupt;
use streamsuite::process;

/// A port nothing listens on at the moment.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A local sink on two free ports, so that no other server is reused.
fn local_sink() -> SinkConfig {
    SinkConfig::Local {
        http_port: free_port(),
        tcp_port: free_port(),
    }
}

fn event(seq: u64, tenant: &str) -> EventRow {
    EventRow {
        seq,
        event_id: format!("ev-{seq}"),
        ts: 1_700_000_000 + seq as u32,
        ts_us: 1_700_000_000_000_000 + seq as i64 * 1000 + 7,
        tenant: tenant.into(),
        region: "eu-west".into(),
        zone: "eu-west-1b".into(),
        service: "checkout".into(),
        endpoint: "/api/v1/pay".into(),
        method: "POST".into(),
        status: 200 + seq as u16,
        latency_ms: 40 + seq as u32,
        sla_ms: 250,
        bytes: 1_234_567,
        user_id: format!("u-{seq}"),
        session_id: "s-€".into(),
        device: "mobile".into(),
        os: "android".into(),
        app_version: "5.2.1".into(),
        trace_id: String::new(),
    }
}

/// `row` as RowBinary, written by hand in the table's column order, as the
/// pipeline writes it.
fn row_binary(row: &EventRow, out: &mut Vec<u8>) {
    fn string(out: &mut Vec<u8>, s: &str) {
        let mut len = s.len();
        loop {
            let byte = (len & 0x7f) as u8;
            len >>= 7;
            if len == 0 {
                out.push(byte);
                break;
            }
            out.push(byte | 0x80);
        }
        out.extend_from_slice(s.as_bytes());
    }
    out.extend_from_slice(&row.seq.to_le_bytes());
    string(out, &row.event_id);
    out.extend_from_slice(&row.ts.to_le_bytes());
    out.extend_from_slice(&row.ts_us.to_le_bytes());
    for s in [
        &row.tenant,
        &row.region,
        &row.zone,
        &row.service,
        &row.endpoint,
        &row.method,
    ] {
        string(out, s);
    }
    out.extend_from_slice(&row.status.to_le_bytes());
    out.extend_from_slice(&row.latency_ms.to_le_bytes());
    out.extend_from_slice(&row.sla_ms.to_le_bytes());
    out.extend_from_slice(&row.bytes.to_le_bytes());
    for s in [
        &row.user_id,
        &row.session_id,
        &row.device,
        &row.os,
        &row.app_version,
        &row.trace_id,
    ] {
        string(out, s);
    }
}

/// Inserts `rows` into `<db>.events` as one RowBinary body.
fn insert(url: &str, db: &str, rows: &[EventRow]) {
    let mut body = Vec::new();
    for row in rows {
        row_binary(row, &mut body);
    }
    let client = clickhouse::Client::default()
        .with_url(url)
        .with_validation(false);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime
        .block_on(async {
            let mut insert =
                client.insert_formatted_with(format!("INSERT INTO {db}.events FORMAT RowBinary"));
            insert.send(body.into()).await?;
            insert.end().await
        })
        .unwrap();
}

fn all_rows(client: &ClickHouseClient, db: &str) -> Vec<EventRow> {
    let mut rows = Vec::new();
    client.for_each_row(db, |row| rows.push(row)).unwrap();
    rows.sort_by_key(|row| row.seq);
    rows
}

#[test]
fn a_run_database_holds_exactly_the_rows_written_and_the_server_stops_at_the_end() {
    let cache_dir = tempfile::tempdir().unwrap();
    let cache = Cache::at(cache_dir.path().to_path_buf());
    let sink = local_sink();
    let session = SinkSession::open(&sink, &cache, &Interrupt::none()).unwrap();
    let pid = session.pid().expect("the session started the local server");
    assert_eq!(session.url(), sink.url());
    let client = session.client().unwrap();
    client.ping().unwrap();

    // A second session finds the server running: it uses it and leaves it be.
    let again = SinkSession::open(&sink, &cache, &Interrupt::none()).unwrap();
    assert_eq!(again.pid(), Some(pid));
    again.close().unwrap();
    assert!(process::is_alive(pid));
    client.ping().unwrap();

    let db = "ss_run_test";
    client.create_run_database(db).unwrap();
    client.create_table(db, EtlTable::Events).unwrap();
    let rows = vec![event(0, "acme"), event(1, "globex"), event(2, "initech")];
    insert(session.url(), db, &rows);
    assert_eq!(client.count_rows(db, EtlTable::Events).unwrap(), 3);
    assert_eq!(client.duplicated_seqs(db, EtlTable::Events).unwrap(), 0);
    assert_eq!(all_rows(&client, db), rows);

    // A row written twice: one more row, one duplicated seq.
    insert(session.url(), db, &rows[1..2]);
    assert_eq!(client.count_rows(db, EtlTable::Events).unwrap(), 4);
    assert_eq!(client.duplicated_seqs(db, EtlTable::Events).unwrap(), 1);
    let mut expected = rows.clone();
    expected.insert(2, rows[1].clone());
    assert_eq!(all_rows(&client, db), expected);

    client.drop_database(db).unwrap();
    let err = client
        .count_rows(db, EtlTable::Events)
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with(&format!(
            "ClickHouse at {}: counting the rows of {db}.events: ",
            sink.url()
        )),
        "{err}"
    );
    assert!(!err.contains('\n'), "{err}");

    session.close().unwrap();
    assert!(!process::is_alive(pid), "the server outlived its session");
    assert!(client.ping().is_err());
}

#[test]
fn a_client_of_a_port_where_nothing_listens_says_so_in_one_line() {
    let url = format!("http://127.0.0.1:{}", free_port());
    let sink = SinkConfig::External {
        url: url.clone(),
        user: None,
        password: None,
    };
    let err = ClickHouseClient::from_config(&sink)
        .unwrap()
        .ping()
        .unwrap_err()
        .to_string();
    let expected = format!("ClickHouse at {url} is not reachable: ");
    assert!(err.starts_with(&expected), "{err}");
    assert!(err.len() > expected.len() && !err.contains('\n'), "{err}");

    let cache_dir = tempfile::tempdir().unwrap();
    let cache = Cache::at(cache_dir.path().to_path_buf());
    let err = SinkSession::open(&sink, &cache, &Interrupt::none())
        .err()
        .expect("an external server that does not answer is an error")
        .to_string();
    assert!(err.starts_with(&expected), "{err}");
}

/// Stops the local server of a configuration when a test ends, however it ends.
struct StopOnDrop(LocalClickHouse);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        let _ = self.0.stop();
    }
}

fn suite(config: &Path, cache: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_suite"))
        .arg("--config")
        .arg(config)
        .args(args)
        .env("STREAMSUITE_CACHE", cache)
        .output()
        .unwrap()
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn suite_clickhouse_starts_reports_and_stops_the_local_server() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let sink = local_sink();
    let SinkConfig::Local {
        http_port,
        tcp_port,
    } = sink
    else {
        unreachable!()
    };
    let bench = dir.path().join("bench.yaml");
    let repo_bench = include_str!("../bench.yaml");
    let own_ports = format!("http_port: {http_port}\n  tcp_port: {tcp_port}\n");
    assert!(repo_bench.contains("http_port: 18123\n  tcp_port: 19000\n"));
    std::fs::write(
        &bench,
        repo_bench.replace("http_port: 18123\n  tcp_port: 19000\n", &own_ports),
    )
    .unwrap();
    std::fs::create_dir(dir.path().join("products")).unwrap();
    std::fs::create_dir(dir.path().join("workloads")).unwrap();
    let _guard =
        StopOnDrop(LocalClickHouse::from_config(&sink, &Cache::at(cache.clone())).unwrap());

    let status = suite(&bench, &cache, &["clickhouse", "status"]);
    assert_eq!(status.status.code(), Some(3), "{status:?}");
    assert_eq!(stdout(&status), "not running\n");

    let start = suite(&bench, &cache, &["clickhouse", "start"]);
    assert!(start.status.success(), "{start:?}");
    assert!(
        stdout(&start).starts_with("local ClickHouse "),
        "{}",
        stdout(&start)
    );
    assert!(
        stdout(&start).contains(&format!("running at {}", sink.url())),
        "{}",
        stdout(&start)
    );

    let status = suite(&bench, &cache, &["clickhouse", "status"]);
    assert_eq!(status.status.code(), Some(0), "{status:?}");
    let text = stdout(&status);
    let pid: u32 = text
        .strip_prefix("running: pid ")
        .and_then(|rest| rest.split(',').next())
        .and_then(|pid| pid.parse().ok())
        .unwrap_or_else(|| panic!("{text}"));
    assert!(process::is_alive(pid));

    let stop = suite(&bench, &cache, &["clickhouse", "stop"]);
    assert_eq!(stdout(&stop), "local ClickHouse stopped\n", "{stop:?}");
    assert!(!process::is_alive(pid));
    let stop = suite(&bench, &cache, &["clickhouse", "stop"]);
    assert_eq!(
        stdout(&stop),
        "no ClickHouse started by the suite is running\n"
    );
}
