//! Each role's CPUs under control (bench.yaml `isolation`): the layout
//! resolved for this host's CPUs, applied by CPU affinity to every process
//! the suite starts (children and threads inherit it) and to the suite's
//! own threads, and read back from /proc to say what each process was
//! allowed. `cgroup` gives the product's tree a cgroup of its own, whose
//! CPU counter is the kernel's exact account of it.
//!
//! Affinity, not cpuset cgroups, places the roles: it needs no privilege,
//! works the same on cgroup v1 and v2 hosts, and a JVM sizes its pools
//! from it (`sched_getaffinity`) as it does from a cpuset.

pub mod cgroup;

use std::collections::BTreeSet;
use std::fmt;
use std::process::Command;
use std::sync::{OnceLock, RwLock};

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

use crate::model::isolation::{CpuLayout, Isolation};

/// A set of CPU numbers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CpuSet(BTreeSet<usize>);

impl CpuSet {
    /// From a Linux CPU list (`0-2,4`); None for a malformed or empty one.
    pub fn parse(list: &str) -> Option<CpuSet> {
        let mut cpus = BTreeSet::new();
        for part in list.trim().split(',') {
            let part = part.trim();
            match part.split_once('-') {
                Some((from, to)) => {
                    let (from, to): (usize, usize) =
                        (from.trim().parse().ok()?, to.trim().parse().ok()?);
                    if from > to {
                        return None;
                    }
                    cpus.extend(from..=to);
                }
                None => {
                    cpus.insert(part.parse().ok()?);
                }
            }
        }
        (!cpus.is_empty()).then_some(CpuSet(cpus))
    }

    /// The CPUs the suite may use: this process's, as read before any
    /// layout pinned it.
    pub fn of_the_suite() -> Result<CpuSet> {
        static FIRST: OnceLock<CpuSet> = OnceLock::new();
        if let Some(cpus) = FIRST.get() {
            return Ok(cpus.clone());
        }
        let cpus = CpuSet::of_this_process()?;
        Ok(FIRST.get_or_init(|| cpus).clone())
    }

    /// The CPUs this process may run on now.
    pub fn of_this_process() -> Result<CpuSet> {
        let status = std::fs::read_to_string("/proc/self/status")
            .context("reading /proc/self/status for the CPUs this process may use")?;
        allowed_list(&status)
            .and_then(CpuSet::parse)
            .context("/proc/self/status has no Cpus_allowed_list")
    }

    fn from_iter(cpus: impl IntoIterator<Item = usize>) -> CpuSet {
        CpuSet(cpus.into_iter().collect())
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn is_subset(&self, other: &CpuSet) -> bool {
        self.0.is_subset(&other.0)
    }

    fn union(&self, other: &CpuSet) -> CpuSet {
        CpuSet(self.0.union(&other.0).copied().collect())
    }

    /// As the kernel's `cpu_set_t`.
    fn to_libc(&self) -> libc::cpu_set_t {
        // SAFETY: cpu_set_t is plain bits; all-zero is the empty set.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        for &cpu in &self.0 {
            // SAFETY: CPU_SET bounds-checks against the set's size.
            unsafe { libc::CPU_SET(cpu, &mut set) };
        }
        set
    }
}

impl fmt::Display for CpuSet {
    /// As a Linux CPU list, runs folded: `0-2,4`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let cpus: Vec<usize> = self.0.iter().copied().collect();
        let mut parts = Vec::new();
        let mut i = 0;
        while i < cpus.len() {
            let mut j = i;
            while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
                j += 1;
            }
            parts.push(if i == j {
                cpus[i].to_string()
            } else {
                format!("{}-{}", cpus[i], cpus[j])
            });
            i = j + 1;
        }
        f.write_str(&parts.join(","))
    }
}

/// The `Cpus_allowed_list` of a /proc/PID/status text.
pub fn allowed_list(status: &str) -> Option<&str> {
    status
        .lines()
        .find_map(|line| line.strip_prefix("Cpus_allowed_list:"))
        .map(str::trim)
}

/// The CPUs process `pid` may run on, as its /proc/PID/status lists them.
pub fn allowed_cpus_of(pid: i32) -> Option<String> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    allowed_list(&status).map(str::to_string)
}

/// bench.yaml's `isolation`: how the roles are placed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "StoredSetting", into = "StoredSetting")]
pub enum IsolationSetting {
    /// Every role on every CPU.
    #[default]
    None,
    /// The layout for this host's core count ([`auto_layout`]).
    Auto,
    /// The CPUs given for each role.
    Layout(CpuLayout),
}

/// `none`, `auto`, or a layout, as bench.yaml writes them.
#[derive(Serialize, Deserialize)]
#[serde(untagged)]
enum StoredSetting {
    Named(String),
    Layout(CpuLayout),
}

impl TryFrom<StoredSetting> for IsolationSetting {
    type Error = String;

    fn try_from(stored: StoredSetting) -> Result<IsolationSetting, String> {
        match stored {
            StoredSetting::Named(name) if name == "none" => Ok(IsolationSetting::None),
            StoredSetting::Named(name) if name == "auto" => Ok(IsolationSetting::Auto),
            StoredSetting::Named(other) => Err(format!(
                "isolation `{other}` is none of none, auto or a layout \
                 {{product: \"1\", broker: \"0\", gendata: \"0\", probe: \"0\"}}"
            )),
            StoredSetting::Layout(layout) => Ok(IsolationSetting::Layout(layout)),
        }
    }
}

impl From<IsolationSetting> for StoredSetting {
    fn from(setting: IsolationSetting) -> StoredSetting {
        match setting {
            IsolationSetting::None => StoredSetting::Named("none".into()),
            IsolationSetting::Auto => StoredSetting::Named("auto".into()),
            IsolationSetting::Layout(layout) => StoredSetting::Layout(layout),
        }
    }
}

/// The layout `auto` picks from the CPUs the suite may use, by their count:
/// on 2, the product gets the second and the harness (broker, gendata,
/// probe and the suite) the first; on 3, the product the last two; from 4
/// on, gendata and the probe a CPU each, the broker a third of the rest
/// (at least one) and the product what remains.
pub fn auto_layout(cpus: &CpuSet) -> Result<CpuLayout> {
    let list: Vec<usize> = cpus.0.iter().copied().collect();
    let take = |range: std::ops::Range<usize>| CpuSet::from_iter(list[range].iter().copied());
    let n = list.len();
    let (product, broker, gendata, probe) = match n {
        0 | 1 => bail!(
            "isolation: auto needs at least 2 CPUs, and this suite may use {n} ({cpus}); \
             set `isolation: none` in bench.yaml"
        ),
        2 | 3 => {
            let harness = take(0..1);
            (take(1..n), harness.clone(), harness.clone(), harness)
        }
        _ => {
            let broker = ((n - 2) / 3).max(1);
            (
                take(2 + broker..n),
                take(2..2 + broker),
                take(0..1),
                take(1..2),
            )
        }
    };
    Ok(CpuLayout {
        product: product.to_string(),
        broker: broker.to_string(),
        gendata: gendata.to_string(),
        probe: probe.to_string(),
    })
}

/// The isolation a run records for `setting` on a host whose suite may use
/// `cpus`: a given layout must name CPUs among them, with none of the
/// product's shared with a harness role.
pub fn resolve(setting: &IsolationSetting, cpus: &CpuSet) -> Result<Isolation> {
    let layout = match setting {
        IsolationSetting::None => return Ok(Isolation::None),
        IsolationSetting::Auto => auto_layout(cpus)?,
        IsolationSetting::Layout(layout) => layout.clone(),
    };
    let placed = Placed::from_layout(&layout)?;
    for (role, set) in placed.roles() {
        if !set.is_subset(cpus) {
            bail!("isolation: the {role}'s CPUs {set} are not all among the {cpus} this suite may use");
        }
    }
    let harness = placed.harness();
    if placed.product.0.iter().any(|cpu| harness.0.contains(cpu)) {
        bail!(
            "isolation: the product's CPUs {} overlap the harness's {harness}; give the product CPUs of its own",
            placed.product
        );
    }
    Ok(Isolation::Pinned(layout))
}

/// A role the suite starts processes for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Product,
    /// The local broker's nodes and the local ClickHouse.
    Broker,
    Gendata,
    Probe,
}

/// A layout as CPU sets.
#[derive(Debug, Clone, PartialEq)]
struct Placed {
    product: CpuSet,
    broker: CpuSet,
    gendata: CpuSet,
    probe: CpuSet,
}

impl Placed {
    fn from_layout(layout: &CpuLayout) -> Result<Placed> {
        let parse = |role: &str, list: &str| {
            CpuSet::parse(list).with_context(|| {
                format!(
                    "isolation: the {role}'s CPUs `{list}` are not a CPU list such as 1 or 0-3,6"
                )
            })
        };
        Ok(Placed {
            product: parse("product", &layout.product)?,
            broker: parse("broker", &layout.broker)?,
            gendata: parse("gendata", &layout.gendata)?,
            probe: parse("probe", &layout.probe)?,
        })
    }

    fn roles(&self) -> [(&'static str, &CpuSet); 4] {
        [
            ("product", &self.product),
            ("broker", &self.broker),
            ("gendata", &self.gendata),
            ("probe", &self.probe),
        ]
    }

    /// Every CPU of a harness role: where the suite's own threads run.
    fn harness(&self) -> CpuSet {
        self.broker.union(&self.gendata).union(&self.probe)
    }

    fn of(&self, role: Role) -> &CpuSet {
        match role {
            Role::Product => &self.product,
            Role::Broker => &self.broker,
            Role::Gendata => &self.gendata,
            Role::Probe => &self.probe,
        }
    }
}

/// The layout this suite process applies to what it starts: set once per
/// batch, before the broker and anything else starts.
static PLACED: RwLock<Option<Placed>> = RwLock::new(None);

/// Applies `isolation` from now on: every process started for a role runs
/// on its CPUs, and the suite's own threads (its sampler among them) on the
/// harness's. With `none`, the suite's threads get back every CPU it had.
pub fn apply(isolation: &Isolation) -> Result<()> {
    let all = CpuSet::of_the_suite()?;
    let placed = match isolation {
        Isolation::None => None,
        Isolation::Pinned(layout) => Some(Placed::from_layout(layout)?),
    };
    let own = placed.as_ref().map_or(all, Placed::harness);
    pin_process(std::process::id() as i32, &own)
        .context("isolation: pinning the suite's own threads")?;
    *PLACED.write().unwrap_or_else(|e| e.into_inner()) = placed;
    Ok(())
}

/// The CPUs `role` is given now; None without isolation.
pub fn cpus_of(role: Role) -> Option<CpuSet> {
    let placed = PLACED.read().unwrap_or_else(|e| e.into_inner());
    placed.as_ref().map(|p| p.of(role).clone())
}

/// Makes `command` start on `role`'s CPUs, when the roles are placed.
pub fn place(command: &mut Command, role: Role) {
    use std::os::unix::process::CommandExt;
    let Some(cpus) = cpus_of(role) else {
        return;
    };
    let set = cpus.to_libc();
    // SAFETY: sched_setaffinity is async-signal-safe and touches only the child.
    unsafe {
        command.pre_exec(move || {
            if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// Moves every thread of process `pid` onto `cpus`: a process that was
/// running before the layout was applied (a broker the batch reuses).
pub fn pin_process(pid: i32, cpus: &CpuSet) -> Result<()> {
    let set = cpus.to_libc();
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task"))
        .with_context(|| format!("listing the threads of process {pid}"))?;
    for task in tasks.flatten() {
        let Some(tid) = task
            .file_name()
            .to_str()
            .and_then(|t| t.parse::<i32>().ok())
        else {
            continue;
        };
        // SAFETY: sched_setaffinity reads `set` only.
        let done =
            unsafe { libc::sched_setaffinity(tid, std::mem::size_of::<libc::cpu_set_t>(), &set) };
        // A thread that ended since the listing is no failure.
        if done != 0 && std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH) {
            return Err(std::io::Error::last_os_error())
                .with_context(|| format!("setting the CPUs of thread {tid} to {cpus}"));
        }
    }
    Ok(())
}

/// Pins the trees of `roots` (every process of each, their threads too)
/// to `role`'s CPUs; without isolation, back to every CPU the suite may
/// use, so a broker pinned by an earlier batch is let go.
pub fn pin_trees(roots: &[i32], role: Role) -> Result<()> {
    let cpus = match cpus_of(role) {
        Some(cpus) => cpus,
        None => CpuSet::of_the_suite()?,
    };
    let all = crate::sampler::all_processes();
    for pid in crate::sampler::trees_members(roots, &all) {
        pin_process(pid, &cpus)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(list: &str) -> CpuSet {
        CpuSet::parse(list).unwrap()
    }

    #[test]
    fn cpu_lists_parse_and_fold_back() {
        assert_eq!(set("0-2,4").to_string(), "0-2,4");
        assert_eq!(set(" 3, 1,2 ").to_string(), "1-3");
        assert_eq!(set("7").len(), 1);
        for bad in ["", "a", "3-1", "1,", "-1"] {
            assert_eq!(CpuSet::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn the_allowed_list_is_read_from_a_status_text() {
        let status = "Name:\tjava\nCpus_allowed:\t3\nCpus_allowed_list:\t0-1\nMems_allowed:\t1\n";
        assert_eq!(allowed_list(status), Some("0-1"));
        assert_eq!(allowed_list("Name: x\n"), None);
        assert!(!CpuSet::of_this_process().unwrap().is_empty());
    }

    #[test]
    fn auto_splits_the_cpus_by_their_count() {
        let layout = |list: &str| auto_layout(&set(list)).unwrap();
        let two = layout("0-1");
        assert_eq!((two.product.as_str(), two.broker.as_str()), ("1", "0"));
        assert_eq!((two.gendata.as_str(), two.probe.as_str()), ("0", "0"));
        assert_eq!(layout("4-6").product, "5-6");
        let four = layout("0-3");
        assert_eq!(
            [four.gendata, four.probe, four.broker, four.product],
            ["0", "1", "2", "3"]
        );
        let eight = layout("0-7");
        assert_eq!(
            (eight.broker.as_str(), eight.product.as_str()),
            ("2-3", "4-7")
        );
        let err = auto_layout(&set("0")).unwrap_err().to_string();
        assert!(err.contains("at least 2 CPUs"), "{err}");
    }

    #[test]
    fn a_given_layout_is_checked_against_the_hosts_cpus() {
        let cpus = set("0-1");
        let layout = |product: &str, harness: &str| {
            IsolationSetting::Layout(CpuLayout {
                product: product.into(),
                broker: harness.into(),
                gendata: harness.into(),
                probe: harness.into(),
            })
        };
        assert!(matches!(
            resolve(&layout("1", "0"), &cpus).unwrap(),
            Isolation::Pinned(_)
        ));
        let missing = resolve(&layout("2", "0"), &cpus).unwrap_err().to_string();
        assert!(missing.contains("the product's CPUs 2"), "{missing}");
        let shared = resolve(&layout("0-1", "0"), &cpus).unwrap_err().to_string();
        assert!(shared.contains("overlap"), "{shared}");
        let bad = resolve(&layout("x", "0"), &cpus).unwrap_err().to_string();
        assert!(bad.contains("`x`"), "{bad}");
        assert_eq!(
            resolve(&IsolationSetting::None, &cpus).unwrap(),
            Isolation::None
        );
    }

    #[test]
    fn a_placed_command_starts_on_its_roles_cpus() {
        let all = CpuSet::of_this_process().unwrap();
        let Some(&first) = all.0.iter().next() else {
            return;
        };
        let only = CpuSet::from_iter([first]);
        let isolation = Isolation::Pinned(CpuLayout {
            product: only.to_string(),
            broker: all.to_string(),
            gendata: all.to_string(),
            probe: all.to_string(),
        });
        // Straight into the static: `apply` would also pin the test runner.
        *PLACED.write().unwrap() = match &isolation {
            Isolation::Pinned(layout) => Some(Placed::from_layout(layout).unwrap()),
            Isolation::None => None,
        };
        let mut command = Command::new("grep");
        command.args(["Cpus_allowed_list", "/proc/self/status"]);
        place(&mut command, Role::Product);
        let output = command.output().unwrap();
        *PLACED.write().unwrap() = None;
        let text = String::from_utf8_lossy(&output.stdout);
        assert_eq!(
            allowed_list(&text),
            Some(only.to_string().as_str()),
            "{text}"
        );
    }
}
