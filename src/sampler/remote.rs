//! /proc of another host, as a shell there prints it: the same files the
//! local sampler reads, in sections, parsed by the same parsers. One
//! sample is two round trips: every process's stat and the host's CPU
//! line, then the smaps_rollup of the product's processes alone.

use std::collections::{BTreeMap, BTreeSet};

use procfs::process::Stat;
use procfs::FromRead;

use super::{parse_host_ticks, parse_rollup, HostTicks, ProcEntry, Rollup};

/// Prints every process's /proc/PID/stat, then the host's CPU line.
pub const STAT_SCRIPT: &str =
    "echo '==> stat'; cat /proc/[0-9]*/stat 2>/dev/null; echo '==> host'; head -n 1 /proc/stat";

/// Prints the smaps_rollup of each of `pids`, each under its pid.
pub fn rollup_script(pids: &BTreeSet<i32>) -> String {
    let pids: Vec<String> = pids.iter().map(i32::to_string).collect();
    format!(
        "for pid in {}; do echo \"==> $pid\"; cat /proc/$pid/smaps_rollup 2>/dev/null; done",
        pids.join(" ")
    )
}

/// The sections of a dump: each `==> NAME` line and the text up to the
/// next one.
pub fn sections(text: &str) -> Vec<(&str, &str)> {
    let mut found = Vec::new();
    let mut rest = text;
    let mut at = next_header(rest);
    while let Some(start) = at {
        let header = &rest[start + 4..];
        let name_end = header.find('\n').unwrap_or(header.len());
        let name = &header[..name_end];
        let body = header.get(name_end + 1..).unwrap_or("");
        let end = next_header(body);
        found.push((name.trim(), &body[..end.unwrap_or(body.len())]));
        rest = body;
        at = end;
    }
    found
}

/// Where the first `==> ` at a line's start is in `text`.
fn next_header(text: &str) -> Option<usize> {
    if text.starts_with("==> ") {
        Some(0)
    } else {
        text.find("\n==> ").map(|i| i + 1)
    }
}

/// The processes (zombies left out) and the host's busy and total ticks
/// of a [`STAT_SCRIPT`] dump; a line that does not parse (a process that
/// left mid-read) is skipped.
pub fn parse_stat_dump(text: &str) -> (Vec<ProcEntry>, Option<HostTicks>) {
    let mut processes = Vec::new();
    let mut host = None;
    for (name, body) in sections(text) {
        match name {
            "stat" => processes.extend(
                body.lines()
                    .filter_map(|line| Stat::from_read(line.as_bytes()).ok())
                    .filter(|s| s.state != 'Z')
                    .map(|s| ProcEntry::from_stat(&s)),
            ),
            "host" => host = parse_host_ticks(body.as_bytes()),
            _ => {}
        }
    }
    (processes, host)
}

/// Each process's memory in a [`rollup_script`] dump; a process whose
/// file was unreadable is absent.
pub fn parse_rollup_dump(text: &str) -> BTreeMap<i32, Rollup> {
    sections(text)
        .into_iter()
        .filter_map(|(name, body)| Some((name.parse().ok()?, parse_rollup(body.as_bytes())?)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sampler::{read_members, trees_members, MemoryInstrument};

    /// Captured over SSH from a host where a Python process (3218, its
    /// own group) had started a `sleep`; a zombie, a torn line and a
    /// grandchild that left the group (with odd names) added.
    const STATS: &str = include_str!("fixtures/remote-stat-dump.txt");
    /// Captured over SSH: 3219 had exited, so its section is empty.
    const ROLLUPS: &str = include_str!("fixtures/remote-rollup-dump.txt");

    #[test]
    fn a_stat_dump_gives_every_process_and_the_host_ticks() {
        let (processes, host) = parse_stat_dump(STATS);
        let pids: Vec<i32> = processes.iter().map(|p| p.pid).collect();
        // The zombie (3221) is left out; the torn line (3222) is skipped.
        assert_eq!(pids, [1, 10, 3218, 3220, 3223]);
        let python = &processes[2];
        assert_eq!((python.ppid, python.pgrp), (1, 3218));
        assert_eq!(python.cpu_ticks, 3 + 6);
        assert_eq!(python.starttime, 47457);
        // A name with spaces and parentheses does not shift the fields.
        let worker = &processes[4];
        assert_eq!(
            (worker.ppid, worker.pgrp, worker.rss_pages),
            (3220, 3223, 421)
        );
        let HostTicks { busy, total, .. } = host.unwrap();
        assert_eq!(total, 2266 + 1792 + 90097 + 362 + 125 + 354);
        assert_eq!(busy, total - 90097 - 362);
    }

    #[test]
    fn a_rollup_dump_gives_each_readable_process_its_memory() {
        let rollups = parse_rollup_dump(ROLLUPS);
        assert_eq!(rollups.keys().copied().collect::<Vec<_>>(), [3218, 3220]);
        let python = rollups[&3218];
        assert_eq!((python.pss, python.rss), (60_901 * 1024, 62_680 * 1024));
        assert_eq!(python.uss, (4_704 + 55_836) * 1024);
        assert_eq!(rollups[&3220].pss, 300 * 1024);
    }

    #[test]
    fn a_remote_tree_reads_with_the_local_figures() {
        let (processes, _) = parse_stat_dump(STATS);
        let rollups = parse_rollup_dump(ROLLUPS);
        // The grandchild that left the group is still a descendant.
        let members = trees_members(&[3218], &processes);
        assert_eq!(
            members.iter().copied().collect::<Vec<_>>(),
            [3218, 3220, 3223]
        );
        let reading = read_members(&members, &processes, 4096, 3, |pid| {
            rollups.get(&pid).copied()
        });
        assert_eq!(reading.processes, 3);
        // 3223's smaps_rollup was not read: its RSS stands in, and says so.
        assert_eq!(reading.memory_bytes, (60_901 + 300) * 1024 + 421 * 4096);
        assert_eq!(reading.instrument, MemoryInstrument::Rss);
        assert_eq!(reading.uss_bytes, None);
        // Keyed by host 3, so it never meets this host's pids.
        assert_eq!(reading.ticks[&(3, 3218, 47457)], 9);
        // The script asks for exactly the members.
        assert_eq!(
            rollup_script(&members),
            "for pid in 3218 3220 3223; do echo \"==> $pid\"; cat /proc/$pid/smaps_rollup 2>/dev/null; done"
        );
    }

    #[test]
    fn sections_split_on_headers_only_at_a_line_start() {
        let text = "noise\n==> a\none ==> not a header\n==> b\n==> c\n\n==> d";
        assert_eq!(
            sections(text),
            [
                ("a", "one ==> not a header\n"),
                ("b", ""),
                ("c", "\n"),
                ("d", "")
            ]
        );
        assert!(sections("").is_empty());
    }
}
