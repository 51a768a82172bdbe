//! The local broker: Apache Kafka 4.x in KRaft mode on 127.0.0.1 only. One
//! node that is both controller and broker, or a small cluster whose nodes
//! are each both (Kafka's combined mode, the shape it gives small clusters
//! on few machines: separate controllers would be three more JVMs on the
//! same cores).
//!
//! Its jars are resolved from Maven Central with Maven on first use (the pom
//! is kept beside this file) and cached; its storage is formatted once; each
//! node runs as a daemon whose pid file lets any later `suite` command find
//! and stop it.

use std::fs;
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

use super::admin;
use crate::cache::Cache;
use crate::config::{BrokerConfig, Replicas};
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

/// A Kafka broker, or cluster of brokers, managed by the suite.
#[derive(Debug, Clone)]
pub struct LocalBroker {
    version: String,
    port: u16,
    heap_mb: u32,
    nodes: u32,
    replicas: Replicas,
    jars: PathBuf,
    home: PathBuf,
}

/// One node of the local broker: node ids count from 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NodeId(pub u32);

impl LocalBroker {
    /// The broker described by a `kind: local` broker config.
    pub fn from_config(config: &BrokerConfig, cache: &Cache) -> Result<LocalBroker> {
        let BrokerConfig::Local {
            version,
            port,
            heap_mb,
            nodes,
            ..
        } = config
        else {
            bail!("the broker in bench.yaml is not `kind: local`");
        };
        // A single node keeps the layout it always had; a cluster's nodes
        // each get a folder of their own, apart from any other shape's.
        let home = match nodes {
            1 => cache.broker_dir(),
            n => cache.broker_dir().join(format!("cluster-{port}-of-{n}")),
        };
        Ok(LocalBroker {
            version: version.clone(),
            port: *port,
            heap_mb: *heap_mb,
            nodes: *nodes,
            replicas: config.replicas(),
            jars: cache.kafka_dir(version),
            home,
        })
    }

    pub fn version(&self) -> &str {
        &self.version
    }

    pub fn nodes(&self) -> u32 {
        self.nodes
    }

    /// How the run topics on this broker are replicated.
    pub fn replicas(&self) -> Replicas {
        self.replicas
    }

    /// Every node's client address, so a client finds the cluster while
    /// any one node is down.
    pub fn bootstrap(&self) -> String {
        self.node_ids()
            .map(|node| format!("127.0.0.1:{}", self.client_port(node)))
            .collect::<Vec<_>>()
            .join(",")
    }

    fn node_ids(&self) -> impl Iterator<Item = NodeId> {
        (1..=self.nodes).map(NodeId)
    }

    fn client_port(&self, node: NodeId) -> u32 {
        u32::from(self.port) + 2 * (node.0 - 1)
    }

    fn controller_port(&self, node: NodeId) -> u32 {
        self.client_port(node) + 1
    }

    fn node_dir(&self, node: NodeId) -> PathBuf {
        match self.nodes {
            1 => self.home.clone(),
            _ => self.home.join(format!("node-{}", node.0)),
        }
    }

    fn pid_file(&self, node: NodeId) -> PathBuf {
        self.node_dir(node).join("broker.pid")
    }

    /// The first node's log (the only one's, on a single node).
    pub fn log_file(&self) -> PathBuf {
        self.node_log(NodeId(1))
    }

    /// The log a node writes from its latest start.
    pub fn node_log(&self, node: NodeId) -> PathBuf {
        self.node_dir(node).join("broker.log")
    }

    fn data_dir(&self, node: NodeId) -> PathBuf {
        self.node_dir(node).join(format!("data-{}", self.version))
    }

    fn node_pid(&self, node: NodeId) -> Option<u32> {
        let pid: u32 = fs::read_to_string(self.pid_file(node))
            .ok()?
            .trim()
            .parse()
            .ok()?;
        process::is_alive(pid).then_some(pid)
    }

    /// The pid of the running broker (its first node), from its pid file.
    pub fn running_pid(&self) -> Option<u32> {
        self.node_pid(NodeId(1))
    }

    /// The pids of every running node, sampled together as the broker.
    pub fn running_pids(&self) -> Vec<u32> {
        self.node_ids().filter_map(|n| self.node_pid(n)).collect()
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

    /// Seconds since the running broker's (first node's) process started.
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

    /// Fails unless the broker answering on the configured ports has as
    /// many brokers as the configured cluster has nodes: a single node left
    /// running must not stand in for a cluster, nor a cluster for one node.
    pub fn check_shape(&self) -> Result<()> {
        let brokers = admin::broker_ids(&self.bootstrap())?;
        if brokers.len() != self.nodes as usize {
            bail!(
                "the broker answering at {} has {} broker{} but bench.yaml's local broker \
                 has {} node{}; stop it with `suite broker stop` under the configuration \
                 that started it",
                self.bootstrap(),
                brokers.len(),
                if brokers.len() == 1 { "" } else { "s" },
                self.nodes,
                if self.nodes == 1 { "" } else { "s" },
            );
        }
        Ok(())
    }

    /// Resolves the jars if needed, formats the storage once, starts every
    /// node that is not running as a daemon, and waits until each answers.
    pub fn start(&self, interrupt: &Interrupt) -> Result<()> {
        self.resolve_jars(interrupt)?;
        for node in self.node_ids() {
            fs::create_dir_all(self.node_dir(node))?;
            fs::write(self.properties(node), self.server_properties(node))?;
        }
        fs::write(self.home.join("log4j2.yaml"), LOG4J2)?;
        if !self
            .node_ids()
            .all(|n| self.data_dir(n).join("meta.properties").exists())
        {
            self.format_storage()?;
        }
        let starting: Vec<(NodeId, u32)> = self
            .node_ids()
            .filter(|&n| self.node_pid(n).is_none())
            .map(|n| Ok((n, self.spawn_node(n)?)))
            .collect::<Result<_>>()?;
        let deadline = Instant::now() + START_TIMEOUT;
        loop {
            if let Some((node, _)) = starting.iter().find(|(_, pid)| !process::is_alive(*pid)) {
                let log = self.node_log(*node);
                self.stop()?;
                let which = if self.nodes == 1 {
                    "local broker".to_string()
                } else {
                    format!("local broker node {}", node.0)
                };
                bail!(
                    "{which} exited while starting; last lines of {}:\n{}",
                    log.display(),
                    process::tail(&log, 20)
                );
            }
            // Each started node on its own port: a killed node stays in the
            // cluster's list until its session times out, so the count
            // alone would pass before it is back.
            let answering = starting.iter().all(|&(node, _)| {
                admin::wait_until_reachable(
                    &format!("127.0.0.1:{}", self.client_port(node)),
                    Duration::from_secs(1),
                    interrupt,
                )
                .is_ok()
            });
            if answering
                && admin::broker_ids(&self.bootstrap())
                    .is_ok_and(|ids| ids.len() == self.nodes as usize)
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
                    "local broker: not all {} node(s) answered on {} within {}s; last lines \
                     of {}:\n{}",
                    self.nodes,
                    self.bootstrap(),
                    START_TIMEOUT.as_secs(),
                    self.log_file().display(),
                    process::tail(&self.log_file(), 20)
                );
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    fn properties(&self, node: NodeId) -> PathBuf {
        self.node_dir(node).join("server.properties")
    }

    /// Starts one node's JVM as a daemon; returns its pid.
    fn spawn_node(&self, node: NodeId) -> Result<u32> {
        // The previous start's log stays beside the new one: after a crash
        // (a chaos broker restart) it holds what the broker did last.
        let log_file = self.node_log(node);
        if log_file.exists() {
            fs::rename(&log_file, log_file.with_extension("log.1"))?;
        }
        let log = fs::File::create(&log_file)?;
        let mut command = Command::new("java");
        command
            .arg(format!("-Xms{}m", self.heap_mb))
            .arg(format!("-Xmx{}m", self.heap_mb))
            .args(["-XX:+UseG1GC", "-Djava.awt.headless=true"])
            .arg(format!(
                "-Dlog4j2.configurationFile={}",
                self.home.join("log4j2.yaml").display()
            ))
            .arg("-cp")
            .arg(self.classpath())
            .arg("kafka.Kafka")
            .arg(self.properties(node))
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log);
        // A daemon: it outlives this command, and `suite broker stop` ends it.
        process::isolate(&mut command, false);
        crate::isolation::place(&mut command, crate::isolation::Role::Broker);
        let child = command
            .spawn()
            .context("local broker: starting java (is a JDK 17+ on PATH?)")?;
        fs::write(self.pid_file(node), child.id().to_string())?;
        Ok(child.id())
    }

    /// SIGKILL to a node's process group, as a crash would: no clean
    /// shutdown, its data left as it lies on disk for the next start to
    /// recover. Returns once the process is gone.
    pub fn kill(&self, node: NodeId) -> Result<()> {
        let pid = self.node_pid(node).ok_or_else(|| {
            anyhow::anyhow!(
                "local broker: no running node in {} to kill",
                self.pid_file(node).display()
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

    /// Stops every node (SIGTERM, then SIGKILL after 30 s) and removes their
    /// pid files. The nodes stop together: one by one, each would move its
    /// partitions' leadership to the others first.
    pub fn stop(&self) -> Result<()> {
        let pids: Vec<u32> = self.running_pids();
        std::thread::scope(|scope| {
            for pid in pids {
                scope.spawn(move || {
                    process::stop_group(pid, Duration::from_secs(30), || process::reap(pid))
                });
            }
        });
        for node in self.node_ids() {
            match fs::remove_file(self.pid_file(node)) {
                Err(err) if err.kind() != std::io::ErrorKind::NotFound => return Err(err.into()),
                _ => {}
            }
        }
        Ok(())
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

    /// Formats every node's storage with one new cluster id. A cluster
    /// whose nodes were only partly formatted starts over: nodes of two
    /// cluster ids never form one cluster.
    fn format_storage(&self) -> Result<()> {
        let cluster = cluster_id()?;
        for node in self.node_ids() {
            let data = self.data_dir(node);
            if data.exists() {
                fs::remove_dir_all(&data)
                    .with_context(|| format!("local broker: clearing {}", data.display()))?;
            }
            let mut command = Command::new("java");
            command
                .arg("-cp")
                .arg(self.classpath())
                .args(["kafka.tools.StorageTool", "format"]);
            // A single node is its own quorum (a dynamic one, as Kafka
            // formats it standalone); a cluster's voters are fixed in its
            // properties.
            if self.nodes == 1 {
                command.arg("--standalone");
            }
            let output = command
                .arg("-t")
                .arg(&cluster)
                .arg("-c")
                .arg(self.properties(node))
                .output()
                .context("local broker: running the storage formatter")?;
            if !output.status.success() {
                bail!(
                    "local broker: formatting {} failed:\n{}{}",
                    data.display(),
                    String::from_utf8_lossy(&output.stdout),
                    String::from_utf8_lossy(&output.stderr)
                );
            }
        }
        Ok(())
    }

    fn server_properties(&self, node: NodeId) -> String {
        let port = self.client_port(node);
        let controller = self.controller_port(node);
        let quorum = if self.nodes == 1 {
            format!("controller.quorum.bootstrap.servers=127.0.0.1:{controller}")
        } else {
            let voters: Vec<String> = self
                .node_ids()
                .map(|n| format!("{}@127.0.0.1:{}", n.0, self.controller_port(n)))
                .collect();
            format!("controller.quorum.voters={}", voters.join(","))
        };
        let session = if self.nodes == 1 {
            SINGLE_NODE_SESSION
        } else {
            ""
        };
        // Kafka's own defaults for its internal topics (3 replicas, 2 in
        // sync), as far as the cluster has nodes.
        let internal_replicas = self.nodes.min(3);
        let internal_isr = self.nodes.min(2);
        let Replicas {
            replication,
            min_insync_replicas,
        } = self.replicas;
        format!(
            "# Written by the suite at every start; edit bench.yaml instead.
process.roles=broker,controller
node.id={id}
{quorum}
listeners=PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{controller}
advertised.listeners=PLAINTEXT://127.0.0.1:{port}
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs={data}
num.partitions=1
# Topics a product makes for itself (changelogs, repartition topics) are
# replicated as the run's own.
default.replication.factor={replication}
min.insync.replicas={min_insync_replicas}
offsets.topic.replication.factor={internal_replicas}
offsets.topic.num.partitions=4
transaction.state.log.replication.factor={internal_replicas}
transaction.state.log.min.isr={internal_isr}
transaction.state.log.num.partitions=4
share.coordinator.state.topic.replication.factor={internal_replicas}
share.coordinator.state.topic.min.isr={internal_isr}
group.initial.rebalance.delay.ms=0
# A transactional id, or an idempotent producer's id, idle for 10 minutes
# is forgotten (Kafka: 7 days and 1 day), checked every minute: an engine
# that names a new transactional id per commit leaves 100 a second.
transactional.id.expiration.ms=600000
transaction.remove.expired.transaction.cleanup.interval.ms=60000
# A transaction open past its transaction.timeout.ms is aborted at the next
# check, every second (Kafka: 10 s): a killed process whose restart takes a
# new transactional id fences nothing, and read_committed readers wait for
# that abort, so the check would add up to 10 s to such a line's recovery.
transaction.abort.timed.out.transaction.cleanup.interval.ms=1000
producer.id.expiration.ms=600000
delete.topic.enable=true
auto.create.topics.enable=false
{session}",
            id = node.0,
            data = self.data_dir(node).display()
        )
    }
}

/// A single node is its own controller, so a node killed and started again
/// cannot register until the registration it left expires; the controller
/// then fences it, and every partition is without a leader for a moment.
/// Kafka's transaction coordinator drops the markers it is sending to a
/// partition without a leader ("likely deleted already"), and a restarted
/// coordinator sends them at once for the transactions that timed out
/// during the outage: the records of such a transaction stay unmarked, and
/// the same producer's next commit takes them in, duplicated. Seen at
/// Kafka's 9 s session, where the fence came 5 s after the coordinator had
/// loaded. At 3 s the fence came before the load, or within a second of
/// it, in the restarts measured, and the outage (6 to 9 s) mostly ends
/// before a 10 s transaction timeout runs out; the record names any
/// markers still dropped (`broker_restart.dropped_markers`).
const SINGLE_NODE_SESSION: &str = "\
# One node: a restarted node is fenced early, near its coordinators' load (Kafka: 9 s).
broker.session.timeout.ms=3000
broker.heartbeat.interval.ms=500
";

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
mod tests;
