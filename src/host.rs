//! What a result records about the machine it ran on.

use serde::{Deserialize, Serialize};

/// The host: CPU model, cores, memory, kernel.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct HostInfo {
    pub hostname: String,
    pub cpu_model: String,
    pub cores: usize,
    pub memory_mb: u64,
    pub kernel: String,
}

impl HostInfo {
    /// Reads the running host from /proc.
    pub fn current() -> HostInfo {
        let read = |path: &str| {
            std::fs::read_to_string(path)
                .map(|s| s.trim().to_string())
                .unwrap_or_default()
        };
        let cpuinfo = read("/proc/cpuinfo");
        HostInfo {
            hostname: read("/proc/sys/kernel/hostname"),
            cpu_model: cpu_model(&cpuinfo).unwrap_or_else(|| "unknown".into()),
            cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
            memory_mb: memory_kb(&read("/proc/meminfo")).unwrap_or(0) / 1024,
            kernel: read("/proc/sys/kernel/osrelease"),
        }
    }
}

fn cpu_model(cpuinfo: &str) -> Option<String> {
    cpuinfo
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_string())
}

fn memory_kb(meminfo: &str) -> Option<u64> {
    meminfo
        .lines()
        .find(|l| l.starts_with("MemTotal:"))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_files_are_read() {
        let cpuinfo = "processor\t: 0\nmodel name\t: AMD EPYC 7B13\nflags\t: x\n";
        assert_eq!(cpu_model(cpuinfo).as_deref(), Some("AMD EPYC 7B13"));
        assert_eq!(
            memory_kb("MemTotal:       24576000 kB\nMemFree: 1 kB\n"),
            Some(24_576_000)
        );
        assert_eq!(memory_kb("nothing"), None);
    }
}
