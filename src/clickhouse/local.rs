//! The local ClickHouse: one server listening on 127.0.0.1 only, with its
//! config, data and log in the cache directory.
//!
//! It is Debian's clickhouse-server (installed with apt when missing and the
//! suite runs as root), or a current single binary's `clickhouse server`. Its
//! config is written at every start in the `<yandex>` form that Debian's 18.16
//! and current servers both read, with long-standing settings only. It runs as
//! a daemon whose pid file lets any later `suite` command find and stop it.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

use super::client::ClickHouseClient;
use crate::cache::Cache;
use crate::config::SinkConfig;
use crate::interrupt::{Interrupt, Interrupted};
use crate::process;

const START_TIMEOUT: Duration = Duration::from_secs(60);
const STOP_GRACE: Duration = Duration::from_secs(30);
/// The server's memory bound, and each query's: the host is shared with
/// Kafka and the product under test.
const MEMORY_LIMIT_BYTES: u64 = 4 << 30;
const MARK_CACHE_BYTES: u64 = 512 << 20;
const UNCOMPRESSED_CACHE_BYTES: u64 = 256 << 20;
const APT_INSTALL: &str = "apt-get update && apt-get install -y clickhouse-server";

/// A single ClickHouse server managed by the suite.
#[derive(Debug, Clone)]
pub struct LocalClickHouse {
    http_port: u16,
    tcp_port: u16,
    home: PathBuf,
}

impl LocalClickHouse {
    /// The server described by a `kind: local` sink config.
    pub fn from_config(config: &SinkConfig, cache: &Cache) -> Result<LocalClickHouse> {
        let SinkConfig::Local {
            http_port,
            tcp_port,
        } = config
        else {
            bail!("the sink in bench.yaml is not `kind: local`");
        };
        Ok(LocalClickHouse {
            http_port: *http_port,
            tcp_port: *tcp_port,
            home: cache.clickhouse_dir(),
        })
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.http_port)
    }

    fn config_file(&self) -> PathBuf {
        self.home.join("config.xml")
    }

    fn users_file(&self) -> PathBuf {
        self.home.join("users.xml")
    }

    fn pid_file(&self) -> PathBuf {
        self.home.join("server.pid")
    }

    /// The server's own log, with what it printed before its logger started.
    pub fn log_file(&self) -> PathBuf {
        self.home.join("server.log")
    }

    fn data_dir(&self) -> PathBuf {
        self.home.join("data")
    }

    /// The pid of the server the suite started, from its pid file; a pid the
    /// system has since given to another program does not count.
    pub fn running_pid(&self) -> Option<u32> {
        let pid: u32 = fs::read_to_string(self.pid_file())
            .ok()?
            .trim()
            .parse()
            .ok()?;
        let config = self.config_file().display().to_string();
        let ours = procfs::process::Process::new(pid as i32)
            .and_then(|p| p.cmdline())
            .is_ok_and(|args| args.iter().any(|arg| arg.contains(&config)));
        (ours && process::is_alive(pid)).then_some(pid)
    }

    /// Whether a server answers at this server's address, ours or not.
    pub fn is_running(&self) -> bool {
        ClickHouseClient::from_config(&self.sink())
            .and_then(|client| client.ping())
            .is_ok()
    }

    /// Installs the server if needed, writes its config, starts it as a
    /// daemon and waits until it answers.
    pub fn start(&self, interrupt: &Interrupt) -> Result<()> {
        let mut command = server_command(interrupt)?;
        // A server of ours that runs but does not answer would hold the port.
        self.stop()?;
        fs::create_dir_all(self.data_dir())
            .with_context(|| format!("local ClickHouse: creating {}", self.home.display()))?;
        fs::write(self.config_file(), self.server_config())?;
        fs::write(self.users_file(), users_config())?;
        // Both the server's logger and its standard streams append here.
        fs::File::create(self.log_file())?;
        let log = fs::OpenOptions::new().append(true).open(self.log_file())?;
        command
            .arg(format!("--config-file={}", self.config_file().display()))
            .current_dir(&self.home)
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log);
        // A daemon: it outlives this command, and `suite clickhouse stop` ends it.
        process::isolate(&mut command, false);
        crate::isolation::place(&mut command, crate::isolation::Role::Broker);
        let child = command
            .spawn()
            .with_context(|| format!("local ClickHouse: starting {:?}", command.get_program()))?;
        fs::write(self.pid_file(), child.id().to_string())?;
        let client = ClickHouseClient::from_config(&self.sink())?;
        let deadline = Instant::now() + START_TIMEOUT;
        loop {
            if !process::is_alive(child.id()) {
                process::reap(child.id());
                self.stop()?;
                bail!(
                    "local ClickHouse exited while starting: {}; its log: {}",
                    last_line(&self.log_file()),
                    self.log_file().display()
                );
            }
            if client.ping().is_ok() {
                return Ok(());
            }
            if interrupt.is_set() {
                self.stop()?;
                return Err(Interrupted.into());
            }
            if Instant::now() > deadline {
                self.stop()?;
                bail!(
                    "local ClickHouse did not answer at {} within {} s; its log: {}",
                    self.url(),
                    START_TIMEOUT.as_secs(),
                    self.log_file().display()
                );
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// Stops the server (SIGTERM, then SIGKILL after 30 s) and removes its pid file.
    pub fn stop(&self) -> Result<()> {
        if let Some(pid) = self.running_pid() {
            process::stop_group(pid, STOP_GRACE, || process::reap(pid));
        }
        match fs::remove_file(self.pid_file()) {
            Err(err) if err.kind() != std::io::ErrorKind::NotFound => Err(err.into()),
            _ => Ok(()),
        }
    }

    /// This server as a sink config, for the client that pings it.
    fn sink(&self) -> SinkConfig {
        SinkConfig::Local {
            http_port: self.http_port,
            tcp_port: self.tcp_port,
        }
    }

    /// config.xml. Unknown keys are ignored by 18.16 as by current servers,
    /// so a newer setting such as `max_server_memory_usage` may be given.
    fn server_config(&self) -> String {
        let dir = |path: PathBuf| xml_escape(&format!("{}/", path.display()));
        let data = self.data_dir();
        format!(
            r#"<?xml version="1.0"?>
<!-- Written by the suite at every start; edit bench.yaml instead. -->
<yandex>
    <logger>
        <level>warning</level>
        <log>{log}</log>
        <size>100M</size>
        <count>2</count>
    </logger>
    <listen_host>127.0.0.1</listen_host>
    <http_port>{http_port}</http_port>
    <tcp_port>{tcp_port}</tcp_port>
    <path>{path}</path>
    <tmp_path>{tmp_path}</tmp_path>
    <user_files_path>{user_files_path}</user_files_path>
    <format_schema_path>{format_schema_path}</format_schema_path>
    <users_config>{users}</users_config>
    <default_profile>default</default_profile>
    <default_database>default</default_database>
    <!-- DateTime as text reads the same on every host. -->
    <timezone>UTC</timezone>
    <keep_alive_timeout>3</keep_alive_timeout>
    <max_concurrent_queries>100</max_concurrent_queries>
    <mark_cache_size>{MARK_CACHE_BYTES}</mark_cache_size>
    <uncompressed_cache_size>{UNCOMPRESSED_CACHE_BYTES}</uncompressed_cache_size>
    <!-- Current servers only; 18.16 has max_memory_usage per query alone. -->
    <max_server_memory_usage>{MEMORY_LIMIT_BYTES}</max_server_memory_usage>
</yandex>
"#,
            log = xml_escape(&self.log_file().display().to_string()),
            http_port = self.http_port,
            tcp_port = self.tcp_port,
            path = dir(data.clone()),
            tmp_path = dir(data.join("tmp")),
            user_files_path = dir(data.join("user_files")),
            format_schema_path = dir(data.join("format_schemas")),
            users = xml_escape(&self.users_file().display().to_string()),
        )
    }
}

/// users.xml: the default user, without a password, from this host only.
fn users_config() -> String {
    format!(
        r#"<?xml version="1.0"?>
<!-- Written by the suite at every start; edit bench.yaml instead. -->
<yandex>
    <profiles>
        <default>
            <max_memory_usage>{MEMORY_LIMIT_BYTES}</max_memory_usage>
        </default>
    </profiles>
    <users>
        <default>
            <password></password>
            <networks>
                <ip>127.0.0.1</ip>
                <ip>::1</ip>
            </networks>
            <profile>default</profile>
            <quota>default</quota>
        </default>
    </users>
    <quotas>
        <default>
            <interval>
                <duration>3600</duration>
                <queries>0</queries>
                <errors>0</errors>
                <result_rows>0</result_rows>
                <read_rows>0</read_rows>
                <execution_time>0</execution_time>
            </interval>
        </default>
    </quotas>
</yandex>
"#
    )
}

/// An exclusive hold on the host's ClickHouse install, released when dropped.
fn install_lock() -> Result<fs::File> {
    use std::os::fd::AsRawFd;
    let path = std::env::temp_dir().join("streamsuite-clickhouse-install.lock");
    let file = fs::File::create(&path).with_context(|| format!("creating {}", path.display()))?;
    // SAFETY: flock on a descriptor this function owns.
    if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } != 0 {
        bail!(
            "locking {}: {}",
            path.display(),
            std::io::Error::last_os_error()
        );
    }
    Ok(file)
}

/// The command that runs the server, installing Debian's package first when
/// there is none and the suite runs as root.
fn server_command(interrupt: &Interrupt) -> Result<Command> {
    if let Some(command) = find_server() {
        return Ok(command);
    }
    // SAFETY: geteuid only reads the process's credentials.
    if unsafe { libc::geteuid() } != 0 {
        bail!("ClickHouse is not installed; install it with `{APT_INSTALL}` as root, or set `sink: {{kind: external, url: ...}}` in bench.yaml");
    }
    // Two suites (two tests) may find it missing at once: one installs
    // while the other waits, and then finds it installed.
    let _installing = install_lock()?;
    if let Some(command) = find_server() {
        return Ok(command);
    }
    eprintln!("installing ClickHouse: {APT_INSTALL} (first use only)...");
    for args in [
        &["update", "-qq"][..],
        &["install", "-y", "-qq", "clickhouse-server"],
    ] {
        let mut apt = Command::new("apt-get");
        // Another apt (the machine's own updates) is waited for, not failed on.
        apt.args(["-o", "DPkg::Lock::Timeout=300"])
            .args(args)
            .env("DEBIAN_FRONTEND", "noninteractive")
            .stdin(Stdio::null());
        let status = process::run_tool(
            &mut apt,
            interrupt,
            "installing ClickHouse: could not run apt-get",
        )?;
        if !status.success() {
            bail!(
                "installing ClickHouse: `apt-get {}` failed ({status}); install it with `{APT_INSTALL}`",
                args.join(" ")
            );
        }
    }
    find_server()
        .context("installing ClickHouse: apt-get succeeded, yet no clickhouse-server is found")
}

/// `clickhouse-server` on PATH or in /usr/sbin (Debian's place, not on a
/// user's PATH), else a current single binary's `clickhouse server`.
fn find_server() -> Option<Command> {
    let debian = Path::new("/usr/sbin/clickhouse-server");
    let server = process::find_on_path("clickhouse-server")
        .or_else(|| process::is_executable(debian).then(|| debian.to_path_buf()));
    if let Some(server) = server {
        return Some(Command::new(server));
    }
    process::find_on_path("clickhouse").map(|binary| {
        let mut command = Command::new(binary);
        command.arg("server");
        command
    })
}

/// The last line of a log that says anything, for a one-line error.
fn last_line(path: &Path) -> String {
    let text = fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .rev()
        .map(str::trim)
        .find(|line| !line.is_empty())
        .unwrap_or("it wrote nothing")
        .to_string()
}

fn xml_escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The text of every `<tag>` in `xml`.
    fn values<'x>(xml: &'x str, tag: &str) -> Vec<&'x str> {
        let (open, close) = (format!("<{tag}>"), format!("</{tag}>"));
        xml.split(open.as_str())
            .skip(1)
            .filter_map(|rest| rest.split_once(close.as_str()).map(|(v, _)| v))
            .collect()
    }

    fn server(home: &Path) -> LocalClickHouse {
        let config = SinkConfig::Local {
            http_port: 28123,
            tcp_port: 29000,
        };
        LocalClickHouse::from_config(&config, &Cache::at(home.into())).unwrap()
    }

    #[test]
    fn the_server_listens_on_loopback_at_the_configured_ports_only() {
        let xml = server(Path::new("/cache")).server_config();
        assert_eq!(values(&xml, "listen_host"), ["127.0.0.1"]);
        assert_eq!(values(&xml, "http_port"), ["28123"]);
        assert_eq!(values(&xml, "tcp_port"), ["29000"]);
        for other in [
            "interserver_http_port",
            "mysql_port",
            "postgresql_port",
            "https_port",
            "tcp_port_secure",
            "grpc_port",
        ] {
            assert!(!xml.contains(other), "{other} in\n{xml}");
        }
        assert!(xml.contains("\n<yandex>\n") && xml.ends_with("</yandex>\n"));
    }

    #[test]
    fn everything_the_server_writes_is_inside_its_folder() {
        let xml = server(Path::new("/cache")).server_config();
        for tag in [
            "log",
            "path",
            "tmp_path",
            "user_files_path",
            "format_schema_path",
            "users_config",
        ] {
            let found = values(&xml, tag);
            assert_eq!(found.len(), 1, "{tag}");
            assert!(
                found[0].starts_with("/cache/clickhouse/"),
                "{tag}: {}",
                found[0]
            );
        }
        assert_eq!(values(&xml, "path"), ["/cache/clickhouse/data/"]);
        assert_eq!(values(&xml, "tmp_path"), ["/cache/clickhouse/data/tmp/"]);
        let xml = server(Path::new("/a&b")).server_config();
        assert_eq!(values(&xml, "path"), ["/a&amp;b/clickhouse/data/"]);
    }

    #[test]
    fn the_default_user_connects_from_this_host_only() {
        let xml = users_config();
        assert_eq!(values(&xml, "ip"), ["127.0.0.1", "::1"]);
        assert_eq!(values(&xml, "password"), [""]);
        assert!(!xml.contains("<host>") && !xml.contains("<host_regexp>"));
    }

    #[test]
    fn the_cache_folder_holds_the_server() {
        let cache = Cache::at(PathBuf::from("/c"));
        let local = LocalClickHouse::from_config(&SinkConfig::default(), &cache).unwrap();
        assert_eq!(local.url(), "http://127.0.0.1:18123");
        assert_eq!(local.log_file(), Path::new("/c/clickhouse/server.log"));
        let external = SinkConfig::External {
            url: "http://h:8123".into(),
            user: None,
            password: None,
        };
        let err = LocalClickHouse::from_config(&external, &cache).unwrap_err();
        assert_eq!(
            err.to_string(),
            "the sink in bench.yaml is not `kind: local`"
        );
    }
}
