//! A product as it runs: the processes of its deployment, started in order
//! (each ready before the next starts), on this host or in turn on the
//! hosts bench.yaml places it on, watched and sampled as one, stopped in
//! the reverse order, and killed whole or one member at a time.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{ChildStdin, Command};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};

use super::{expand, Installation, LaunchSettings};
use crate::config::{Deployment, Product, EMBEDDED};
use crate::interrupt::Interrupt;
use crate::isolation::{self, cgroup::ProductCgroup, Role};
use crate::process::Supervised;
use crate::remote::launch::{quote, start_script, GROUP_MARKER};
use crate::remote::RemoteHost;

/// How long a remote process may take to go once told to (SIGKILL, or
/// SIGTERM's grace over).
const REMOTE_KILL_WAIT: Duration = Duration::from_secs(5);

/// How one process of a deployment is started, kept to start it again
/// after a kill.
struct Launch {
    /// How messages name it: `flink taskmanager-1`, or the product's name.
    name: String,
    argv: Vec<String>,
    dir: PathBuf,
    environment: BTreeMap<String, String>,
    ready_marker: String,
    /// The host it runs on; this one when None.
    host: Option<Arc<RemoteHost>>,
}

impl Launch {
    /// Spawns the process, logging under `<log_prefix>-<label>` (or
    /// `log_prefix` alone for an embedded product), and waits until it is
    /// ready. On a remote host, the local process is its ssh session.
    fn spawn(&self, log_role: &str, plan: &StartPlan<'_>) -> Result<(Supervised, Option<Remote>)> {
        let (name, log_dir, marker) = (&self.name, plan.log_dir, &self.ready_marker);
        let (mut process, signals) = match &self.host {
            None => {
                let mut command = Command::new(&self.argv[0]);
                command
                    .args(&self.argv[1..])
                    .current_dir(&self.dir)
                    .envs(&self.environment);
                isolation::place(&mut command, Role::Product);
                if let Some(cgroup) = plan.cgroup {
                    cgroup
                        .join_on_spawn(&mut command)
                        .with_context(|| format!("{name}: joining its cgroup"))?;
                }
                let process = Supervised::spawn(name, command, log_dir, log_role, marker)?;
                (process, None)
            }
            Some(host) => {
                let command = host.command(&start_script(&self.dir, &self.environment, &self.argv));
                let (process, signals) =
                    Supervised::spawn_with_input(name, command, log_dir, log_role, marker)?;
                (process, Some((host.clone(), signals)))
            }
        };
        process.wait_ready(plan.ready_timeout, plan.interrupt)?;
        let Some((host, signals)) = signals else {
            return Ok((process, None));
        };
        // Printed before the process starts, so read before it was ready.
        let group = process
            .first_line()
            .and_then(|line| line.strip_prefix(GROUP_MARKER))
            .and_then(|group| group.trim().parse().ok())
            .with_context(|| format!("{name}: its start printed no process group"))?;
        let remote = Remote {
            host,
            group,
            signals,
        };
        Ok((process, Some(remote)))
    }
}

/// A process on a remote host, as the suite reaches it.
struct Remote {
    host: Arc<RemoteHost>,
    /// Its process group there.
    group: i32,
    /// The ssh session's input: a signal name per line, for the group.
    signals: ChildStdin,
}

impl Remote {
    fn signal(&mut self, name: &str) {
        // A session already gone has taken the group with it.
        let _ = writeln!(self.signals, "{name}");
    }
}

/// One process of a deployment.
struct Member {
    /// Its role in the deployment (`product` for an embedded one).
    role: String,
    /// Its place among its role's processes: 0, 1, ...
    index: u32,
    launch: Launch,
    /// The process here: the product's own, or its ssh session.
    process: Supervised,
    /// Where it runs when not here.
    remote: Option<Remote>,
    /// Killed on purpose: its absence is no failure.
    down: bool,
}

impl Member {
    /// How messages and logs name it: `taskmanager-1`, or `product`.
    fn label(&self) -> String {
        member_label(&self.role, self.index)
    }

    /// SIGKILL to its whole tree, wherever it runs; how many processes
    /// that hit.
    fn kill(&mut self) -> usize {
        self.down = true;
        let Some(remote) = &mut self.remote else {
            return self.process.kill();
        };
        let hit = remote.host.tree_size(remote.group).unwrap_or(0);
        remote.signal("KILL");
        self.process.exited_within(REMOTE_KILL_WAIT);
        self.process.kill();
        hit
    }

    /// SIGTERM to its tree, then SIGKILL after `grace`.
    fn stop(&mut self, grace: Duration) {
        if let Some(remote) = &mut self.remote {
            remote.signal("TERM");
            if !self.process.exited_within(grace) {
                remote.signal("KILL");
                self.process.exited_within(REMOTE_KILL_WAIT);
            }
        }
        self.process.stop(grace);
    }
}

fn member_label(role: &str, index: u32) -> String {
    if role == "product" {
        role.to_string()
    } else {
        format!("{role}-{index}")
    }
}

/// What starting a deployment (or one member of it) needs beside the
/// product and its settings.
pub struct StartPlan<'a> {
    pub deployment: &'a str,
    pub log_dir: &'a Path,
    /// The logs' prefix: `product`, or `product-restart-1` after a crash.
    pub log_prefix: &'a str,
    pub ready_timeout: Duration,
    pub interrupt: &'a Interrupt,
    /// The hosts the processes are placed on in turn; this one when empty.
    pub hosts: &'a [Arc<RemoteHost>],
    /// The cgroup every process started here joins, for the kernel's
    /// account of the product's CPU.
    pub cgroup: Option<&'a ProductCgroup>,
}

impl StartPlan<'_> {
    /// The log role of the member labelled `label`.
    fn log_role(&self, label: &str) -> String {
        if self.deployment == EMBEDDED {
            self.log_prefix.to_string()
        } else {
            format!("{}-{label}", self.log_prefix)
        }
    }
}

/// The environment every member of a deployment shares: the run's, each
/// member port and role count, and the run's log folder, made on every host
/// (where a member keeps what its own children log, a Spark worker's
/// executors).
fn shared_environment(
    deployment: &Deployment,
    run_environment: &BTreeMap<&'static str, String>,
    plan: &StartPlan<'_>,
) -> Result<BTreeMap<String, String>> {
    let ports = free_ports(deployment)?;
    let counts = deployment.processes.iter().map(|p| {
        let name = format!("BENCH_COUNT_{}", p.role.to_ascii_uppercase());
        (name, p.count.to_string())
    });
    let log_dir = std::path::absolute(plan.log_dir)
        .with_context(|| format!("resolving {}", plan.log_dir.display()))?;
    for host in plan.hosts {
        let script = format!("mkdir -p {}", quote(&log_dir.to_string_lossy()));
        host.run(&script, "creating the run's log folder")?;
    }
    Ok(run_environment
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .chain(ports)
        .chain(counts)
        .chain([(
            "BENCH_LOG_DIR".to_string(),
            log_dir.to_string_lossy().into_owned(),
        )])
        .collect())
}

/// A member's name in progress and errors: the product's alone when it is
/// embedded, with the member's label otherwise, and its host when remote.
fn member_name(
    product: &Product,
    deployment: &str,
    label: &str,
    host: Option<&Arc<RemoteHost>>,
) -> String {
    let name = if deployment == EMBEDDED {
        product.name.clone()
    } else {
        format!("{} {label}", product.name)
    };
    match host {
        Some(host) => format!("{name} on {}", host.address),
        None => name,
    }
}

/// A product's running processes.
pub struct Deployed {
    members: Vec<Member>,
}

impl Deployed {
    /// Starts `product`'s deployment `plan.deployment`, each process in
    /// order and ready before the next; a process that fails to start or
    /// to become ready stops the ones before it (dropped, killed) and is
    /// named with its log.
    pub fn start(
        product: &Product,
        installation: &Installation,
        settings: &LaunchSettings,
        plan: &StartPlan<'_>,
    ) -> Result<Deployed> {
        let deployment = product
            .deployment(plan.deployment)
            .map_err(anyhow::Error::msg)?;
        if !deployment.ports.is_empty() && plan.hosts.len() > 1 {
            anyhow::bail!(
                "{}: the members of deployment `{}` reach each other on loopback ports ({}), \
                 so they run on one host; bench.yaml's hosts.{} names {}",
                product.name,
                plan.deployment,
                deployment.ports.join(", "),
                product.name,
                plan.hosts.len()
            );
        }
        let run_environment = settings.environment()?;
        let shared = shared_environment(&deployment, &run_environment, plan)?;
        let mut hosts = plan.hosts.iter().cycle();
        let mut members = Vec::new();
        for spec in &deployment.processes {
            let start = spec.start.as_ref().unwrap_or(&product.start);
            let ready = spec.ready.as_ref().unwrap_or(&product.ready);
            for index in 0..spec.count {
                let argv: Vec<String> = start
                    .iter()
                    .map(|a| expand(a, product, installation))
                    .collect::<Result<_>>()?;
                let own = member_environment(
                    &run_environment,
                    plan.deployment,
                    &spec.role,
                    index,
                    spec.count,
                );
                let mut environment = shared.clone();
                environment.extend(own.into_iter().map(|(k, v)| (k.to_string(), v)));
                let label = member_label(&spec.role, index);
                let host = hosts.next().cloned();
                let launch = Launch {
                    name: member_name(product, plan.deployment, &label, host.as_ref()),
                    argv,
                    dir: std::path::absolute(product.dir())
                        .with_context(|| format!("resolving {}", product.dir().display()))?,
                    environment,
                    ready_marker: ready.stdout_contains.clone(),
                    host,
                };
                let (process, remote) = launch.spawn(&plan.log_role(&label), plan)?;
                members.push(Member {
                    role: spec.role.clone(),
                    index,
                    launch,
                    process,
                    remote,
                    down: false,
                });
            }
        }
        Ok(Deployed { members })
    }

    /// The process groups of the members still running, which the sampler
    /// reads as one tree.
    pub fn roots(&self) -> ProductRoots {
        let mut roots = ProductRoots::default();
        for member in self.members.iter().filter(|m| !m.down) {
            match &member.remote {
                None => roots.local.push(member.process.pgid() as i32),
                Some(remote) => roots.remote.push((remote.host.clone(), remote.group)),
            }
        }
        roots
    }

    /// An error naming the first member that exited, unless it was killed
    /// on purpose.
    pub fn check_alive(&mut self) -> Result<()> {
        for member in self.members.iter_mut().filter(|m| !m.down) {
            member.process.check_alive()?;
        }
        Ok(())
    }

    /// SIGKILL to every member at once, as a crash of the whole product
    /// would; returns how many processes that hit.
    pub fn kill(&mut self) -> usize {
        self.members
            .iter_mut()
            .filter(|m| !m.down)
            .map(Member::kill)
            .sum()
    }

    /// SIGKILL to the member labelled `label` alone (`taskmanager-1`);
    /// returns how many processes that hit.
    pub fn kill_member(&mut self, label: &str) -> Result<usize> {
        Ok(self.member(label)?.kill())
    }

    /// Starts the member labelled `label` again, as it was started, logging
    /// under `plan.log_prefix`, and waits until it is ready.
    pub fn restart_member(&mut self, label: &str, plan: &StartPlan<'_>) -> Result<()> {
        let member = self.member(label)?;
        (member.process, member.remote) = member.launch.spawn(&plan.log_role(label), plan)?;
        member.down = false;
        Ok(())
    }

    /// The label of the `nth` kill's member of `role` (0, 1, ...): the
    /// role's members in turn.
    pub fn nth_member(&self, role: &str, nth: usize) -> Result<String> {
        let of_role: Vec<&Member> = self.members.iter().filter(|m| m.role == role).collect();
        if of_role.is_empty() {
            anyhow::bail!("the deployment has no member of role `{role}`");
        }
        Ok(of_role[nth % of_role.len()].label())
    }

    fn member(&mut self, label: &str) -> Result<&mut Member> {
        let labels: Vec<String> = self.members.iter().map(Member::label).collect();
        self.members
            .iter_mut()
            .find(|m| m.label() == label)
            .with_context(|| format!("no member {label} (members: {})", labels.join(", ")))
    }

    /// Stops every member, the last started first (a job before the
    /// workers it runs on): SIGTERM, then SIGKILL after `grace`.
    pub fn stop(&mut self, grace: Duration) {
        for member in self.members.iter_mut().rev() {
            member.stop(grace);
        }
    }
}

/// The process groups of a product's running members, by host.
#[derive(Clone, Default)]
pub struct ProductRoots {
    /// On this host.
    pub local: Vec<i32>,
    /// On remote hosts, each group with its host.
    pub remote: Vec<(Arc<RemoteHost>, i32)>,
}

impl ProductRoots {
    /// The remote groups, gathered by host.
    pub fn by_host(&self) -> Vec<(&RemoteHost, Vec<i32>)> {
        let mut hosts: Vec<(&RemoteHost, Vec<i32>)> = Vec::new();
        for (host, group) in &self.remote {
            match hosts.iter_mut().find(|(h, _)| h.index == host.index) {
                Some((_, groups)) => groups.push(*group),
                None => hosts.push((host, vec![*group])),
            }
        }
        hosts
    }
}

/// A member's own variables: its role and place, and, in a deployment of
/// several processes, its own static member id and transactional id (the
/// run's with `-<role>-<index>` appended, the same after a restart), so
/// members of one group never fence each other.
fn member_environment(
    run: &BTreeMap<&'static str, String>,
    deployment: &str,
    role: &str,
    index: u32,
    count: u32,
) -> BTreeMap<&'static str, String> {
    let mut environment = BTreeMap::from([
        ("BENCH_DEPLOYMENT", deployment.to_string()),
        ("BENCH_MEMBER_ROLE", role.to_string()),
        ("BENCH_MEMBER_INDEX", index.to_string()),
        ("BENCH_MEMBER_COUNT", count.to_string()),
    ]);
    if deployment != EMBEDDED {
        for name in ["BENCH_GROUP_INSTANCE_ID", "BENCH_TRANSACTIONAL_ID"] {
            if let Some(value) = run.get(name) {
                environment.insert(name, format!("{value}-{role}-{index}"));
            }
        }
    }
    environment
}

/// A free loopback port for each of the deployment's `ports`, as
/// BENCH_PORT_<NAME>.
fn free_ports(deployment: &Deployment) -> Result<BTreeMap<String, String>> {
    // Held until every port is picked, so no two are the same.
    let mut listeners = Vec::new();
    let mut ports = BTreeMap::new();
    for name in &deployment.ports {
        let listener =
            std::net::TcpListener::bind("127.0.0.1:0").context("picking a free loopback port")?;
        ports.insert(
            format!("BENCH_PORT_{}", name.to_ascii_uppercase()),
            listener.local_addr()?.port().to_string(),
        );
        listeners.push(listener);
    }
    Ok(ports)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_of_a_cluster_get_ids_of_their_own_and_an_embedded_product_keeps_the_runs() {
        let run = BTreeMap::from([
            ("BENCH_GROUP_INSTANCE_ID", "g-member".to_string()),
            ("BENCH_TRANSACTIONAL_ID", "g-txn".to_string()),
        ]);
        let member = member_environment(&run, "cluster", "instance", 1, 2);
        assert_eq!(member["BENCH_GROUP_INSTANCE_ID"], "g-member-instance-1");
        assert_eq!(member["BENCH_TRANSACTIONAL_ID"], "g-txn-instance-1");
        assert_eq!(member["BENCH_MEMBER_INDEX"], "1");
        assert_eq!(member["BENCH_MEMBER_COUNT"], "2");
        assert_eq!(member["BENCH_DEPLOYMENT"], "cluster");
        let embedded = member_environment(&run, EMBEDDED, "product", 0, 1);
        assert!(!embedded.contains_key("BENCH_GROUP_INSTANCE_ID"));
        assert!(!embedded.contains_key("BENCH_TRANSACTIONAL_ID"));
        assert_eq!(embedded["BENCH_MEMBER_ROLE"], "product");
    }

    #[test]
    fn each_port_is_free_and_its_own() {
        let deployment = Deployment {
            summary: String::new(),
            processes: Vec::new(),
            ports: vec!["rest".into(), "rpc".into()],
        };
        let ports = free_ports(&deployment).unwrap();
        let rest: u16 = ports["BENCH_PORT_REST"].parse().unwrap();
        let rpc: u16 = ports["BENCH_PORT_RPC"].parse().unwrap();
        assert_ne!(rest, rpc);
        std::net::TcpListener::bind(("127.0.0.1", rest)).unwrap();
    }
}
