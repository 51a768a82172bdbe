//! The forms a product runs in (product.yaml's `deployments:`): processes
//! started in order, each ready before the next, and how each is known
//! ready.

use serde::Deserialize;

use super::install::placeholders_in;
use crate::model::record::EMBEDDED;

/// How the orchestrator knows a started product is ready for input.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Readiness {
    /// A line on the product's standard output containing this text.
    pub stdout_contains: String,
}

/// A form the product runs in: processes started in order, each ready
/// before the next starts, and stopped in the reverse order.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Deployment {
    /// What runs, in words, for the characteristics table.
    pub summary: String,
    pub processes: Vec<DeployedProcess>,
    /// Loopback ports the processes share, by name: the suite picks free
    /// ones for each run and hands each as BENCH_PORT_<NAME> to every
    /// process, so two deployments never collide.
    #[serde(default)]
    pub ports: Vec<String>,
}

/// One role of a deployment (a JobManager, a TaskManager, an instance),
/// started `count` times. Each process gets BENCH_MEMBER_ROLE,
/// BENCH_MEMBER_INDEX (0, 1, ... within its role) and BENCH_MEMBER_COUNT,
/// BENCH_COUNT_<ROLE> for every role of the deployment, BENCH_LOG_DIR (the
/// run's log folder), and its own static member id and transactional id.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeployedProcess {
    pub role: String,
    #[serde(default = "one")]
    pub count: u32,
    /// The command; the product's `start` when absent. Placeholders as in
    /// `start`.
    #[serde(default)]
    pub start: Option<Vec<String>>,
    /// The product's `ready` when absent.
    #[serde(default)]
    pub ready: Option<Readiness>,
    /// Whether each process reads the input (an instance of the product's
    /// consumer group, a member running the job's sources): then the input
    /// needs a partition for each, as one more would wait idle for a share.
    #[serde(default)]
    pub consumes: bool,
}

fn one() -> u32 {
    1
}

/// Whether `name` may be part of an environment variable's name (a role
/// in BENCH_COUNT_<ROLE>, a port in BENCH_PORT_<NAME>).
fn is_variable_part(name: &str) -> bool {
    !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

impl Deployment {
    /// Roles named and distinct, counts at least 1, every start command's
    /// placeholders provided by the install, port names usable in a
    /// variable's name.
    pub(super) fn check(&self, name: &str, allowed: &[&str], install: &str) -> Result<(), String> {
        let at = format!("`deployments.{name}`");
        if name == EMBEDDED {
            return Err(format!(
                "{at}: `{EMBEDDED}` is the product's own `start`; name the deployment otherwise"
            ));
        }
        if self.processes.is_empty() {
            return Err(format!("{at} must list at least one process"));
        }
        let mut roles = std::collections::BTreeSet::new();
        for process in &self.processes {
            if !is_variable_part(&process.role) || !roles.insert(process.role.as_str()) {
                return Err(format!(
                    "{at}: every process needs a role of its own, in letters, digits and _ \
                     (`{}` is empty, repeated or has other characters)",
                    process.role
                ));
            }
            if process.count == 0 {
                return Err(format!("{at}: role `{}` has count 0", process.role));
            }
            for arg in process.start.iter().flatten() {
                if let Some(unknown) = placeholders_in(arg).find(|p| !allowed.contains(p)) {
                    return Err(format!(
                        "{at}: role `{}` uses {unknown}, which a `{install}` install does not provide",
                        process.role
                    ));
                }
            }
            if process.start.as_ref().is_some_and(|s| s.is_empty()) {
                return Err(format!(
                    "{at}: role `{}` has an empty `start`",
                    process.role
                ));
            }
        }
        if let Some(port) = self.ports.iter().find(|p| !is_variable_part(p)) {
            return Err(format!(
                "{at}: port name `{port}` must be letters, digits and _ (it becomes BENCH_PORT_<NAME>)"
            ));
        }
        Ok(())
    }

    /// How many processes read the input.
    pub fn consumers(&self) -> u32 {
        self.processes
            .iter()
            .filter(|p| p.consumes)
            .map(|p| p.count)
            .sum()
    }
}
