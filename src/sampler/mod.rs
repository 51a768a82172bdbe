//! /proc readers: CPU and memory of a whole process tree, and of the host.
//!
//! CPU is the delta of utime+stime over the delta of wall time (100 = one
//! core busy). Memory is PSS from /proc/PID/smaps_rollup summed over the tree,
//! so pages shared between a tree's processes count once; RSS only where PSS
//! cannot be read, and the sample says which. RSS (every resident page, shared
//! ones once per process) and USS (private pages only) are read beside it from
//! the same file: the bounds PSS lies between. The tree is found again at every
//! sample, so forked workers and JVM children count.

use std::collections::{BTreeMap, BTreeSet};
use std::io::BufRead;

use procfs::process::Stat;
use procfs::{FromBufRead, FromRead};

pub use crate::model::resources::MemoryInstrument;

pub mod remote;

/// One process as a sample sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct ProcEntry {
    pub pid: i32,
    pub ppid: i32,
    pub pgrp: i32,
    /// Start time in ticks since boot: with the pid, it names a process uniquely.
    pub starttime: u64,
    /// utime + stime, in clock ticks.
    pub cpu_ticks: u64,
    pub rss_pages: u64,
}

impl ProcEntry {
    /// From a parsed /proc/PID/stat.
    pub fn from_stat(stat: &Stat) -> ProcEntry {
        ProcEntry {
            pid: stat.pid,
            ppid: stat.ppid,
            pgrp: stat.pgrp,
            starttime: stat.starttime,
            cpu_ticks: stat.utime + stat.stime,
            rss_pages: stat.rss,
        }
    }
}

/// Parses a /proc/PID/stat file's text.
pub fn parse_stat(text: &[u8]) -> Option<ProcEntry> {
    Stat::from_read(text).ok().map(|s| ProcEntry::from_stat(&s))
}

/// One process's memory from its /proc/PID/smaps_rollup, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rollup {
    /// Proportional set size: each resident page divided by the processes mapping it.
    pub pss: u64,
    /// Resident set size: every resident page, shared or not.
    pub rss: u64,
    /// Unique set size: Private_Clean + Private_Dirty, the pages only this
    /// process maps. Private_Hugetlb is left out, as the kernel leaves
    /// hugetlbfs pages out of Rss and Pss too: counting them here alone
    /// could put USS above PSS.
    pub uss: u64,
}

/// The memory figures of a /proc/PID/smaps_rollup file's text; None when it
/// lacks one of their lines (every kernel with the file writes them all).
pub fn parse_rollup(text: &[u8]) -> Option<Rollup> {
    let maps = procfs::process::SmapsRollup::from_buf_read(text).ok()?;
    let figures = &maps.memory_map_rollup.0.first()?.extension.map;
    let get = |key: &str| figures.get(key).copied();
    Some(Rollup {
        pss: get("Pss")?,
        rss: get("Rss")?,
        uss: get("Private_Clean")? + get("Private_Dirty")?,
    })
}

/// The host's CPU ticks since boot, summed over its CPUs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HostTicks {
    /// Every tick but idle and iowait.
    pub busy: u64,
    pub total: u64,
    /// Ticks the hypervisor gave to another guest (in `busy` too).
    pub steal: u64,
}

/// The host's ticks from the first line of /proc/stat (idle and iowait
/// count as not busy).
pub fn parse_host_ticks(text: impl BufRead) -> Option<HostTicks> {
    let first = text.lines().next()?.ok()?;
    let mut fields = first.split_whitespace();
    if fields.next()? != "cpu" {
        return None;
    }
    let values: Vec<u64> = fields.filter_map(|f| f.parse().ok()).collect();
    if values.len() < 4 {
        return None;
    }
    // user nice system idle iowait irq softirq steal (guest time is in user)
    let total: u64 = values.iter().take(8).sum();
    let idle = values[3] + values.get(4).copied().unwrap_or(0);
    Some(HostTicks {
        busy: total - idle,
        total,
        steal: values.get(7).copied().unwrap_or(0),
    })
}

/// Every process on the host, read from /proc.
pub fn all_processes() -> Vec<ProcEntry> {
    let Ok(processes) = procfs::process::all_processes() else {
        return Vec::new();
    };
    processes
        .filter_map(|p| p.ok()?.stat().ok())
        .filter(|s| s.state != 'Z')
        .map(|s| ProcEntry::from_stat(&s))
        .collect()
}

/// The pids of `root`'s tree: its descendants, and every process of its
/// process group (a child that re-parented itself is still in the group).
pub fn tree_members(root: i32, all: &[ProcEntry]) -> BTreeSet<i32> {
    let mut children: BTreeMap<i32, Vec<i32>> = BTreeMap::new();
    for p in all {
        children.entry(p.ppid).or_default().push(p.pid);
    }
    let mut members: BTreeSet<i32> = all
        .iter()
        .filter(|p| p.pgrp == root)
        .map(|p| p.pid)
        .collect();
    if all.iter().any(|p| p.pid == root) {
        members.insert(root);
    }
    let mut visited = BTreeSet::new();
    let mut stack = vec![root];
    while let Some(pid) = stack.pop() {
        if !visited.insert(pid) {
            continue;
        }
        for &kid in children.get(&pid).into_iter().flatten() {
            members.insert(kid);
            stack.push(kid);
        }
    }
    members
}

/// Names a process among every host a run samples: the host (0 for this
/// one, then a product's remote hosts from 1), the pid, and the start time
/// in ticks since boot (a pid reused by a new process is a new key).
pub type ProcKey = (u16, i32, u64);

/// CPU ticks per process of a tree at one instant.
pub type TickMap = BTreeMap<ProcKey, u64>;

/// The CPU a tree used between two samples, in percent of one core.
/// A process new since `before` counts with all its ticks: it started inside
/// the interval. One that left takes its last ticks with it (unseen).
pub fn cpu_pct(before: &TickMap, after: &TickMap, wall_s: f64, ticks_per_s: f64) -> f64 {
    if wall_s <= 0.0 {
        return 0.0;
    }
    let ticks: u64 = after
        .iter()
        .map(|(key, &now)| now.saturating_sub(before.get(key).copied().unwrap_or(0)))
        .sum();
    ticks as f64 / ticks_per_s / wall_s * 100.0
}

/// One reading of a process tree.
#[derive(Debug, Clone)]
pub struct TreeReading {
    pub ticks: TickMap,
    /// PSS summed over the tree (RSS for the processes whose PSS was unreadable).
    pub memory_bytes: u64,
    pub instrument: MemoryInstrument,
    /// RSS summed over the tree: from smaps_rollup, the same walk as PSS, or
    /// from stat where smaps_rollup was unreadable.
    pub rss_bytes: u64,
    /// USS summed over the tree; None when any process's smaps_rollup was
    /// unreadable, as a partial sum would understate it.
    pub uss_bytes: Option<u64>,
    pub processes: usize,
}

impl TreeReading {
    /// A reading of no process.
    pub fn empty() -> TreeReading {
        TreeReading {
            ticks: TickMap::new(),
            memory_bytes: 0,
            instrument: MemoryInstrument::Pss,
            rss_bytes: 0,
            uss_bytes: Some(0),
            processes: 0,
        }
    }

    /// Adds `other`'s processes (another host's part of one product).
    pub fn add(&mut self, other: TreeReading) {
        self.ticks.extend(other.ticks);
        self.memory_bytes += other.memory_bytes;
        if other.instrument == MemoryInstrument::Rss {
            self.instrument = MemoryInstrument::Rss;
        }
        self.rss_bytes += other.rss_bytes;
        self.uss_bytes = self.uss_bytes.zip(other.uss_bytes).map(|(a, b)| a + b);
        self.processes += other.processes;
    }
}

/// Reads the tree of `root` among `all`: its ticks and its memory.
pub fn read_tree(root: i32, all: &[ProcEntry], page_size: u64) -> TreeReading {
    read_trees(&[root], all, page_size)
}

/// Reads the trees of `roots` among `all` as one (a cluster's nodes).
pub fn read_trees(roots: &[i32], all: &[ProcEntry], page_size: u64) -> TreeReading {
    let members = trees_members(roots, all);
    read_members(&members, all, page_size, 0, |pid| {
        std::fs::read(format!("/proc/{pid}/smaps_rollup"))
            .ok()
            .and_then(|text| parse_rollup(&text))
    })
}

/// The ticks of every process of `all` outside the trees of `roots` and
/// the kernel's own threads (kthreadd's tree): what else ran on the host.
pub fn outside_ticks(roots: &[i32], all: &[ProcEntry]) -> TickMap {
    /// The kernel's thread starter: its children work for every process.
    const KTHREADD: i32 = 2;
    let mut inside = trees_members(roots, all);
    inside.extend(tree_members(KTHREADD, all));
    all.iter()
        .filter(|p| !inside.contains(&p.pid))
        .map(|p| ((0, p.pid, p.starttime), p.cpu_ticks))
        .collect()
}

/// The pids of the trees of `roots` among `all`.
pub fn trees_members(roots: &[i32], all: &[ProcEntry]) -> BTreeSet<i32> {
    roots
        .iter()
        .flat_map(|&root| tree_members(root, all))
        .collect()
}

/// Reads `members` among `all`, the processes of host `host`, with their
/// memory from `rollup` (None where a process's smaps_rollup is unreadable).
pub fn read_members(
    members: &BTreeSet<i32>,
    all: &[ProcEntry],
    page_size: u64,
    host: u16,
    rollup: impl Fn(i32) -> Option<Rollup>,
) -> TreeReading {
    let mut ticks = TickMap::new();
    let mut memory_bytes = 0;
    let mut instrument = MemoryInstrument::Pss;
    let mut rss_bytes = 0;
    let mut uss_bytes = Some(0);
    for p in all.iter().filter(|p| members.contains(&p.pid)) {
        ticks.insert((host, p.pid, p.starttime), p.cpu_ticks);
        match rollup(p.pid) {
            Some(r) => {
                memory_bytes += r.pss;
                rss_bytes += r.rss;
                uss_bytes = uss_bytes.map(|sum| sum + r.uss);
            }
            None => {
                let rss = p.rss_pages * page_size;
                instrument = MemoryInstrument::Rss;
                memory_bytes += rss;
                rss_bytes += rss;
                uss_bytes = None;
            }
        }
    }
    TreeReading {
        ticks,
        memory_bytes,
        instrument,
        rss_bytes,
        uss_bytes,
        processes: members.len(),
    }
}

/// The host's ticks now.
pub fn read_host_ticks() -> Option<HostTicks> {
    let file = std::fs::File::open("/proc/stat").ok()?;
    parse_host_ticks(std::io::BufReader::new(file))
}

/// Clock ticks per second and the page size of this kernel.
pub fn kernel_units() -> (f64, u64) {
    // SAFETY: sysconf has no memory effects.
    let (ticks, page) = unsafe {
        (
            libc::sysconf(libc::_SC_CLK_TCK),
            libc::sysconf(libc::_SC_PAGESIZE),
        )
    };
    (
        if ticks > 0 { ticks as f64 } else { 100.0 },
        if page > 0 { page as u64 } else { 4096 },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(pid: i32, ppid: i32, pgrp: i32, ticks: u64) -> ProcEntry {
        ProcEntry {
            pid,
            ppid,
            pgrp,
            starttime: pid as u64 * 10,
            cpu_ticks: ticks,
            rss_pages: 10,
        }
    }

    #[test]
    fn stat_fixtures_parse() {
        let java = parse_stat(include_bytes!("fixtures/stat.txt")).unwrap();
        assert_eq!((java.pid, java.ppid, java.pgrp), (4242, 4240, 4240));
        assert_eq!(java.cpu_ticks, 1500 + 250);
        assert_eq!(java.starttime, 123456);
        assert_eq!(java.rss_pages, 51200);
        // A command name with spaces and parentheses does not shift the fields.
        let odd = parse_stat(include_bytes!("fixtures/stat-odd-name.txt")).unwrap();
        assert_eq!((odd.pid, odd.ppid, odd.cpu_ticks), (4243, 4242, 10));
        assert!(parse_stat(b"garbage").is_none());
    }

    #[test]
    fn pss_rss_and_uss_are_read_in_bytes() {
        let r = parse_rollup(include_bytes!("fixtures/smaps_rollup.txt")).unwrap();
        assert_eq!(r.pss, 501 * 1024);
        assert_eq!(r.rss, 1672 * 1024);
        // Private_Clean 68 + Private_Dirty 112; Private_Hugetlb's 2048 left out.
        assert_eq!(r.uss, (68 + 112) * 1024);
        assert!(r.uss <= r.pss && r.pss <= r.rss);
    }

    #[test]
    fn a_rollup_missing_a_figure_is_none() {
        let head = "5605d40b8000-7ffe6375f000 ---p 00000000 00:00 0   [rollup]\n";
        let no_pss = format!("{head}Rss: 1672 kB\nPrivate_Clean: 1 kB\nPrivate_Dirty: 1 kB\n");
        assert_eq!(parse_rollup(no_pss.as_bytes()), None);
        let no_private = format!("{head}Rss: 1672 kB\nPss: 501 kB\n");
        assert_eq!(parse_rollup(no_private.as_bytes()), None);
        let all = format!("{head}Rss: 3 kB\nPss: 2 kB\nPrivate_Clean: 0 kB\nPrivate_Dirty: 1 kB\n");
        assert_eq!(
            parse_rollup(all.as_bytes()),
            Some(Rollup {
                pss: 2048,
                rss: 3072,
                uss: 1024
            })
        );
        assert_eq!(parse_rollup(b""), None);
    }

    #[test]
    fn host_ticks_leave_out_idle_and_iowait() {
        let HostTicks { busy, total, steal } =
            parse_host_ticks(&include_bytes!("fixtures/proc-stat.txt")[..]).unwrap();
        assert_eq!(total, 116952 + 2644 + 9762 + 195360 + 1320 + 1424 + 409);
        assert_eq!(busy, total - 195360 - 1320);
        assert_eq!(steal, 409);
        let stolen = parse_host_ticks(&b"cpu  10 0 10 70 0 0 0 10 0 0\n"[..]).unwrap();
        assert_eq!((stolen.busy, stolen.total, stolen.steal), (30, 100, 10));
        assert!(parse_host_ticks(&b"intr 1 2 3\n"[..]).is_none());
    }

    #[test]
    fn the_tree_holds_descendants_and_the_group() {
        let all = vec![
            entry(1, 0, 1, 0),
            entry(100, 1, 100, 5),   // root
            entry(101, 100, 100, 5), // child
            entry(102, 101, 100, 5), // grandchild
            entry(103, 1, 100, 5),   // re-parented, still in the group
            entry(104, 101, 104, 5), // child that left the group: still a descendant
            entry(200, 1, 200, 5),   // unrelated
        ];
        let members: Vec<i32> = tree_members(100, &all).into_iter().collect();
        assert_eq!(members, vec![100, 101, 102, 103, 104]);
        assert!(tree_members(999, &all).is_empty());
    }

    #[test]
    fn outside_ticks_leave_out_the_runs_trees_and_the_kernels_threads() {
        let all = vec![
            entry(1, 0, 1, 7),
            entry(2, 0, 0, 1),     // kthreadd
            entry(3, 2, 0, 50),    // ksoftirqd
            entry(100, 1, 100, 5), // the suite
            entry(101, 100, 101, 5),
            entry(300, 1, 300, 9), // a broker left by an earlier suite
            entry(400, 1, 400, 40),
        ];
        let outside = outside_ticks(&[100, 300], &all);
        let pids: Vec<i32> = outside.keys().map(|k| k.1).collect();
        assert_eq!(pids, vec![1, 400]);
        assert_eq!(outside.values().sum::<u64>(), 47);
    }

    #[test]
    fn cpu_counts_deltas_and_new_processes() {
        let before = TickMap::from([((0, 1, 10), 100), ((0, 2, 20), 50)]);
        // pid 1 used 50 ticks, pid 2 left, pid 3 is new with 25 ticks, and
        // pid 1 reused by a new process would be a new key.
        let after = TickMap::from([((0, 1, 10), 150), ((0, 3, 30), 25)]);
        let pct = cpu_pct(&before, &after, 1.0, 100.0);
        assert!((pct - 75.0).abs() < 1e-9, "{pct}");
        assert_eq!(cpu_pct(&before, &after, 0.0, 100.0), 0.0);
        let reused = TickMap::from([((0, 1, 99), 5)]);
        assert!((cpu_pct(&before, &reused, 0.5, 100.0) - 10.0).abs() < 1e-9);
        // The same pid on another host is another process.
        let elsewhere = TickMap::from([((0, 1, 10), 150), ((1, 1, 10), 40)]);
        assert!((cpu_pct(&before, &elsewhere, 1.0, 100.0) - 90.0).abs() < 1e-9);
    }

    #[test]
    fn this_process_is_readable() {
        let me = std::process::id() as i32;
        let all = all_processes();
        let (_, page) = kernel_units();
        let reading = read_tree(me, &all, page);
        assert!(reading.processes >= 1);
        assert_eq!(reading.instrument, MemoryInstrument::Pss);
        let uss = reading.uss_bytes.unwrap();
        assert!(uss > 0, "{reading:?}");
        assert!(uss <= reading.memory_bytes, "{reading:?}");
        assert!(reading.memory_bytes <= reading.rss_bytes, "{reading:?}");
    }
}
