//! The local broker: Apache Kafka 4.x in KRaft mode, one node that is both
//! controller and broker, listening on 127.0.0.1 only.
//!
//! Its jars are resolved from Maven Central with Maven on first use (the pom
//! is kept beside this file) and cached; its storage is formatted once; it runs
//! as a daemon whose pid file lets any later `suite` command find and stop it.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

use super::admin;
use crate::cache::Cache;
use crate::config::BrokerConfig;
use crate::interrupt::{Interrupt, Interrupted};
use crate::process;

const POM: &str = include_str!("kafka-pom.xml");
const LOG4J2: &str = "Configuration:
  Appenders:
    Console:
      name: STDOUT
      PatternLayout:
        pattern: \"[%d] %p %m (%c)%n\"
  Loggers:
    Root:
      level: INFO
      AppenderRef:
        - ref: STDOUT
";
const START_TIMEOUT: Duration = Duration::from_secs(90);

/// The warm-up a running broker has had, kept beside it so that later
/// commands know the process they find is warm.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
struct WarmUpNote {
    pid: u32,
    seconds: f64,
}

/// A single-node Kafka broker managed by the suite.
#[derive(Debug, Clone)]
pub struct LocalBroker {
    version: String,
    port: u16,
    heap_mb: u32,
    jars: PathBuf,
    home: PathBuf,
}

impl LocalBroker {
    /// The broker described by a `kind: local` broker config.
    pub fn from_config(config: &BrokerConfig, cache: &Cache) -> Result<LocalBroker> {
        let BrokerConfig::Local {
            version,
            port,
            heap_mb,
            ..
        } = config
        else {
            bail!("the broker in bench.yaml is not `kind: local`");
        };
        Ok(LocalBroker {
            version: version.clone(),
            port: *port,
            heap_mb: *heap_mb,
            jars: cache.kafka_dir(version),
            home: cache.broker_dir(),
        })
    }

    pub fn version(&self) -> &str {
        &self.version
    }

    pub fn bootstrap(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    fn pid_file(&self) -> PathBuf {
        self.home.join("broker.pid")
    }

    pub fn log_file(&self) -> PathBuf {
        self.home.join("broker.log")
    }

    fn data_dir(&self) -> PathBuf {
        self.home.join(format!("data-{}", self.version))
    }

    /// The pid of the running broker, from its pid file.
    pub fn running_pid(&self) -> Option<u32> {
        let pid: u32 = fs::read_to_string(self.pid_file())
            .ok()?
            .trim()
            .parse()
            .ok()?;
        process::is_alive(pid).then_some(pid)
    }

    /// Where the warm-up of the running broker is noted: its pid and seconds.
    fn warm_up_file(&self) -> PathBuf {
        self.home.join("warm-up.json")
    }

    /// Seconds of warm-up load the running broker has had, when a warm-up
    /// of this very process was noted.
    pub fn warmed_s(&self) -> Option<f64> {
        let pid = self.running_pid()?;
        let text = fs::read_to_string(self.warm_up_file()).ok()?;
        let noted: WarmUpNote = serde_json::from_str(&text).ok()?;
        (noted.pid == pid).then_some(noted.seconds)
    }

    /// Notes that the running broker has had `seconds` of warm-up load.
    pub fn note_warm_up(&self, seconds: f64) -> Result<()> {
        let Some(pid) = self.running_pid() else {
            bail!("the local broker is not running; there is no warm-up to note");
        };
        let note = serde_json::to_string(&WarmUpNote { pid, seconds })?;
        fs::write(self.warm_up_file(), note)
            .with_context(|| format!("writing {}", self.warm_up_file().display()))
    }

    /// Seconds since the running broker's process started.
    pub fn uptime_s(&self) -> Option<f64> {
        let pid = self.running_pid()?;
        let started = procfs::process::Process::new(pid as i32)
            .ok()?
            .stat()
            .ok()?
            .starttime;
        let host_up = <procfs::Uptime as procfs::Current>::current().ok()?.uptime;
        Some(host_up - started as f64 / procfs::ticks_per_second() as f64)
    }

    /// Whether our broker runs, or something already answers on its port.
    pub fn is_running(&self) -> bool {
        self.running_pid().is_some()
            || admin::wait_until_reachable(
                &self.bootstrap(),
                Duration::from_secs(1),
                &Interrupt::none(),
            )
            .is_ok()
    }

    /// Resolves the jars if needed, formats the storage once, starts the broker
    /// as a daemon and waits until it answers.
    pub fn start(&self, interrupt: &Interrupt) -> Result<()> {
        self.resolve_jars(interrupt)?;
        fs::create_dir_all(&self.home)?;
        let properties = self.home.join("server.properties");
        fs::write(&properties, self.server_properties())?;
        let log4j = self.home.join("log4j2.yaml");
        fs::write(&log4j, LOG4J2)?;
        if !self.data_dir().join("meta.properties").exists() {
            self.format_storage(&properties)?;
        }
        // The previous start's log stays beside the new one: after a crash
        // (a chaos broker restart) it holds what the broker did last.
        if self.log_file().exists() {
            fs::rename(self.log_file(), self.log_file().with_extension("log.1"))?;
        }
        let log = fs::File::create(self.log_file())?;
        let mut command = Command::new("java");
        command
            .arg(format!("-Xms{}m", self.heap_mb))
            .arg(format!("-Xmx{}m", self.heap_mb))
            .args(["-XX:+UseG1GC", "-Djava.awt.headless=true"])
            .arg(format!("-Dlog4j2.configurationFile={}", log4j.display()))
            .arg("-cp")
            .arg(self.classpath())
            .arg("kafka.Kafka")
            .arg(&properties)
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log);
        // A daemon: it outlives this command, and `suite broker stop` ends it.
        process::isolate(&mut command, false);
        let child = command
            .spawn()
            .context("local broker: starting java (is a JDK 17+ on PATH?)")?;
        fs::write(self.pid_file(), child.id().to_string())?;
        let deadline = Instant::now() + START_TIMEOUT;
        loop {
            if !process::is_alive(child.id()) {
                bail!(
                    "local broker exited while starting; last lines of {}:\n{}",
                    self.log_file().display(),
                    process::tail(&self.log_file(), 20)
                );
            }
            if admin::wait_until_reachable(&self.bootstrap(), Duration::from_secs(1), interrupt)
                .is_ok()
            {
                return Ok(());
            }
            if interrupt.is_set() {
                self.stop()?;
                return Err(Interrupted.into());
            }
            if Instant::now() > deadline {
                self.stop()?;
                bail!(
                    "local broker did not answer on {} within {}s; last lines of {}:\n{}",
                    self.bootstrap(),
                    START_TIMEOUT.as_secs(),
                    self.log_file().display(),
                    process::tail(&self.log_file(), 20)
                );
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// SIGKILL to the broker's process group, as a crash would: no clean
    /// shutdown, its data left as it lies on disk for the next start to
    /// recover. Returns once the process is gone.
    pub fn kill(&self) -> Result<()> {
        let pid = self.running_pid().ok_or_else(|| {
            anyhow::anyhow!(
                "local broker: no running broker in {} to kill",
                self.pid_file().display()
            )
        })?;
        process::signal_group(pid, libc::SIGKILL);
        let deadline = Instant::now() + Duration::from_secs(10);
        while process::is_alive(pid) {
            if Instant::now() > deadline {
                bail!("local broker: pid {pid} still alive 10 s after SIGKILL");
            }
            process::reap(pid);
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(())
    }

    /// Stops the broker (SIGTERM, then SIGKILL after 30 s) and removes its pid file.
    pub fn stop(&self) -> Result<()> {
        if let Some(pid) = self.running_pid() {
            process::stop_group(pid, Duration::from_secs(30), || process::reap(pid));
        }
        match fs::remove_file(self.pid_file()) {
            Err(err) if err.kind() != std::io::ErrorKind::NotFound => Err(err.into()),
            _ => Ok(()),
        }
    }

    fn classpath(&self) -> String {
        format!("{}/*", self.jars.join("libs").display())
    }

    /// Copies the broker's jars from Maven Central into the cache, once.
    fn resolve_jars(&self, interrupt: &Interrupt) -> Result<()> {
        let done = self.jars.join(".resolved");
        if done.exists() {
            return Ok(());
        }
        fs::create_dir_all(&self.jars)?;
        let pom = self.jars.join("pom.xml");
        fs::write(&pom, POM)?;
        eprintln!(
            "resolving Apache Kafka {} from Maven Central into {} (first use only)...",
            self.version,
            self.jars.display()
        );
        let output_log = self.jars.join("mvn.log");
        let mut command = Command::new("mvn");
        command
            .args(["-B", "-q", "-Dstyle.color=never", "-f"])
            .arg(&pom)
            .arg("dependency:copy-dependencies")
            .arg(format!("-Dkafka.version={}", self.version))
            .arg(format!(
                "-DoutputDirectory={}",
                self.jars.join("libs").display()
            ))
            .arg("-DincludeScope=runtime")
            .stdin(Stdio::null())
            .stdout(fs::File::create(&output_log)?)
            .stderr(Stdio::inherit());
        let status = process::run_tool(
            &mut command,
            interrupt,
            "resolving the broker's jars: could not run `mvn` (is Maven installed?)",
        )?;
        if !status.success() {
            bail!(
                "Maven could not resolve Apache Kafka {}; last lines of {}:\n{}",
                self.version,
                output_log.display(),
                process::tail(&output_log, 20)
            );
        }
        fs::File::create(done)?.write_all(self.version.as_bytes())?;
        Ok(())
    }

    fn format_storage(&self, properties: &Path) -> Result<()> {
        let output = Command::new("java")
            .arg("-cp")
            .arg(self.classpath())
            .args(["kafka.tools.StorageTool", "format", "--standalone", "-t"])
            .arg(cluster_id()?)
            .arg("-c")
            .arg(properties)
            .output()
            .context("local broker: running the storage formatter")?;
        if !output.status.success() {
            bail!(
                "local broker: formatting {} failed:\n{}{}",
                self.data_dir().display(),
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            );
        }
        Ok(())
    }

    fn server_properties(&self) -> String {
        let port = self.port;
        let controller = u32::from(port) + 1;
        format!(
            "# Written by the suite at every start; edit bench.yaml instead.
process.roles=broker,controller
node.id=1
controller.quorum.bootstrap.servers=127.0.0.1:{controller}
listeners=PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{controller}
advertised.listeners=PLAINTEXT://127.0.0.1:{port}
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs={data}
num.partitions=1
offsets.topic.replication.factor=1
offsets.topic.num.partitions=4
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=4
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
# A transactional id, or an idempotent producer's id, idle for 10 minutes
# is forgotten (Kafka: 7 days and 1 day), checked every minute: an engine
# that names a new transactional id per commit leaves 100 a second.
transactional.id.expiration.ms=600000
transaction.remove.expired.transaction.cleanup.interval.ms=60000
producer.id.expiration.ms=600000
delete.topic.enable=true
auto.create.topics.enable=false
",
            data = self.data_dir().display()
        )
    }
}

/// A random KRaft cluster id: 16 bytes, URL-safe base64 without padding.
/// Like Kafka's own ids, never one starting with `-`, which the storage
/// tool's command line would take for an option.
fn cluster_id() -> Result<String> {
    use base64::Engine;
    use std::io::Read;
    let mut urandom = fs::File::open("/dev/urandom")?;
    loop {
        let mut bytes = [0u8; 16];
        urandom.read_exact(&mut bytes)?;
        let id = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes);
        if !id.starts_with('-') {
            return Ok(id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cluster_ids_never_look_like_options() {
        // One id in 64 would start with `-` if nothing prevented it.
        for _ in 0..2000 {
            let id = cluster_id().unwrap();
            assert_eq!(id.len(), 22);
            assert!(!id.starts_with('-'), "{id}");
        }
    }
}
