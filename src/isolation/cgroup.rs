//! A cgroup of the product's own: every process of its tree joins it as it
//! starts (before it runs a line of its own code), so the kernel's CPU
//! counter holds every nanosecond the tree used, a child that lived between
//! two /proc samples included, and its memory counter the tree's peak.
//!
//! cgroup v1's cpuacct (and memory) hierarchies are used where they are
//! mounted, else the v2 hierarchy, whose `cpu.stat` every cgroup has. The
//! cgroup is made under the suite's own, and removed when dropped.

use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Which hierarchy a cgroup lives in, and its folders there.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Hierarchy {
    /// cpuacct's folder, and memory's where that controller is mounted.
    V1 {
        cpuacct: PathBuf,
        memory: Option<PathBuf>,
    },
    V2 {
        dir: PathBuf,
    },
}

/// One reading of the cgroup's counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CgroupReading {
    /// `v1` or `v2`: the hierarchy the counters are read from.
    pub hierarchy: &'static str,
    /// CPU time used by every process that has been in it, ns.
    pub cpu_ns: u64,
    /// The most memory charged at once, bytes; None where none is kept.
    pub mem_peak_bytes: Option<u64>,
}

/// The product's cgroup for one run.
#[derive(Debug)]
pub struct ProductCgroup {
    hierarchy: Hierarchy,
}

/// A mount of /proc/self/mountinfo: its root within the hierarchy, where it
/// is mounted, its file system type and its super options.
struct Mount<'t> {
    root: &'t str,
    point: &'t str,
    fstype: &'t str,
    options: &'t str,
}

fn mounts(mountinfo: &str) -> Vec<Mount<'_>> {
    mountinfo
        .lines()
        .filter_map(|line| {
            let (before, after) = line.split_once(" - ")?;
            let fields: Vec<&str> = before.split(' ').collect();
            let mut rest = after.split(' ');
            let fstype = rest.next()?;
            let _source = rest.next()?;
            Some(Mount {
                root: fields.get(3)?,
                point: fields.get(4)?,
                fstype,
                options: rest.next().unwrap_or(""),
            })
        })
        .collect()
}

/// The folder of this process's cgroup in the v1 hierarchy of
/// `controller`, from the texts of /proc/self/mountinfo and
/// /proc/self/cgroup.
fn v1_folder(mountinfo: &str, own: &str, controller: &str) -> Option<PathBuf> {
    let mount = mounts(mountinfo).into_iter().find(|m| {
        m.fstype == "cgroup" && m.options.split(',').any(|option| option == controller)
    })?;
    let path = own.lines().find_map(|line| {
        let mut fields = line.splitn(3, ':');
        let (_, controllers, path) = (fields.next()?, fields.next()?, fields.next()?);
        controllers
            .split(',')
            .any(|c| c == controller)
            .then_some(path)
    })?;
    Some(inside(mount.point, mount.root, path))
}

/// The folder of this process's cgroup in the v2 hierarchy.
fn v2_folder(mountinfo: &str, own: &str) -> Option<PathBuf> {
    let mount = mounts(mountinfo)
        .into_iter()
        .find(|m| m.fstype == "cgroup2")?;
    let path = own.lines().find_map(|line| line.strip_prefix("0::"))?;
    Some(inside(mount.point, mount.root, path))
}

/// `path` of the hierarchy as a folder under a mount of its `root` at `point`.
fn inside(point: &str, root: &str, path: &str) -> PathBuf {
    let relative = path.strip_prefix(root).unwrap_or(path);
    Path::new(point).join(relative.trim_start_matches('/'))
}

/// Where this process's cgroups are: v1's cpuacct first, else v2.
fn own_hierarchy() -> Result<Hierarchy, String> {
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo")
        .map_err(|e| format!("reading /proc/self/mountinfo: {e}"))?;
    let own = std::fs::read_to_string("/proc/self/cgroup")
        .map_err(|e| format!("reading /proc/self/cgroup: {e}"))?;
    if let Some(cpuacct) = v1_folder(&mountinfo, &own, "cpuacct") {
        return Ok(Hierarchy::V1 {
            cpuacct,
            memory: v1_folder(&mountinfo, &own, "memory"),
        });
    }
    match v2_folder(&mountinfo, &own) {
        Some(dir) if dir.join("cpu.stat").exists() => Ok(Hierarchy::V2 { dir }),
        _ => Err("neither cgroup v1's cpuacct nor a cgroup v2 hierarchy is mounted".into()),
    }
}

impl ProductCgroup {
    /// Makes the cgroup `streamsuite-<name>` under the suite's own; the
    /// reason, in words, when it cannot (no cgroup hierarchy mounted, no
    /// permission to write there).
    pub fn create(name: &str) -> Result<ProductCgroup, String> {
        let leaf = format!("streamsuite-{name}");
        let make = |parent: &Path| -> Result<PathBuf, String> {
            let dir = parent.join(&leaf);
            std::fs::create_dir(&dir)
                .map_err(|e| format!("cannot make the cgroup {}: {e}", dir.display()))?;
            Ok(dir)
        };
        let hierarchy = match own_hierarchy()? {
            Hierarchy::V1 { cpuacct, memory } => {
                let cpuacct = make(&cpuacct)?;
                // Without memory's, the CPU account still stands.
                let memory = memory.and_then(|m| make(&m).ok());
                Hierarchy::V1 { cpuacct, memory }
            }
            Hierarchy::V2 { dir } => Hierarchy::V2 { dir: make(&dir)? },
        };
        let cgroup = ProductCgroup { hierarchy };
        if cgroup.read().is_none() {
            return Err(format!(
                "the cgroup {} has no readable CPU counter",
                cgroup.folders()[0].display()
            ));
        }
        Ok(cgroup)
    }

    /// `v1` or `v2`.
    pub fn hierarchy_name(&self) -> &'static str {
        match self.hierarchy {
            Hierarchy::V1 { .. } => "v1",
            Hierarchy::V2 { .. } => "v2",
        }
    }

    fn folders(&self) -> Vec<&Path> {
        match &self.hierarchy {
            Hierarchy::V1 { cpuacct, memory } => std::iter::once(cpuacct.as_path())
                .chain(memory.as_deref())
                .collect(),
            Hierarchy::V2 { dir } => vec![dir.as_path()],
        }
    }

    /// Makes `command`'s process join the cgroup between its fork and its
    /// exec, so that nothing it starts runs outside it.
    pub fn join_on_spawn(&self, command: &mut Command) -> std::io::Result<()> {
        use std::os::unix::process::CommandExt;
        let files: Vec<File> = self
            .folders()
            .iter()
            .map(|dir| {
                OpenOptions::new()
                    .write(true)
                    .open(dir.join("cgroup.procs"))
            })
            .collect::<std::io::Result<_>>()?;
        // SAFETY: getpid and write are async-signal-safe; the closure
        // allocates nothing, and the files stay open in it until the
        // command is dropped.
        unsafe {
            command.pre_exec(move || {
                let mut digits = [0u8; 20];
                let text = pid_text(libc::getpid(), &mut digits);
                for file in &files {
                    let fd = file.as_raw_fd();
                    if libc::write(fd, text.as_ptr().cast(), text.len()) < 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                }
                Ok(())
            });
        }
        Ok(())
    }

    /// The counters now; None when the CPU counter cannot be read.
    pub fn read(&self) -> Option<CgroupReading> {
        let read = |path: PathBuf| std::fs::read_to_string(path).ok();
        match &self.hierarchy {
            Hierarchy::V1 { cpuacct, memory } => Some(CgroupReading {
                hierarchy: "v1",
                cpu_ns: read(cpuacct.join("cpuacct.usage"))?.trim().parse().ok()?,
                mem_peak_bytes: memory
                    .as_ref()
                    .and_then(|m| read(m.join("memory.max_usage_in_bytes")))
                    .and_then(|t| t.trim().parse().ok()),
            }),
            Hierarchy::V2 { dir } => Some(CgroupReading {
                hierarchy: "v2",
                cpu_ns: usage_usec(&read(dir.join("cpu.stat"))?)? * 1000,
                mem_peak_bytes: read(dir.join("memory.peak")).and_then(|t| t.trim().parse().ok()),
            }),
        }
    }
}

impl Drop for ProductCgroup {
    /// Removes the cgroup; a process still in it (the product failed to
    /// stop) goes back to the suite's own first.
    fn drop(&mut self) {
        for dir in self.folders() {
            if std::fs::remove_dir(dir).is_ok() {
                continue;
            }
            let (Some(parent), Ok(procs)) = (
                dir.parent(),
                std::fs::read_to_string(dir.join("cgroup.procs")),
            ) else {
                continue;
            };
            for pid in procs.lines() {
                let _ = std::fs::write(parent.join("cgroup.procs"), pid);
            }
            let _ = std::fs::remove_dir(dir);
        }
    }
}

/// `usage_usec` of a cgroup v2 `cpu.stat` text.
fn usage_usec(text: &str) -> Option<u64> {
    text.lines()
        .find_map(|line| line.strip_prefix("usage_usec "))
        .and_then(|v| v.trim().parse().ok())
}

/// `pid` in decimal, written into `digits` without allocating.
fn pid_text(pid: i32, digits: &mut [u8; 20]) -> &[u8] {
    let mut value = pid.unsigned_abs();
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (value % 10) as u8;
        value /= 10;
        if value == 0 {
            break;
        }
    }
    &digits[at..]
}

#[cfg(test)]
mod tests {
    use super::*;

    const MOUNTINFO: &str = "\
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct
35 31 0:32 /outer /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
";
    const OWN: &str = "4:memory:/outer/job/7\n1:cpu,cpuacct:/\n0::/session.scope\n";

    #[test]
    fn the_suites_own_cgroups_are_found_in_each_hierarchy() {
        assert_eq!(
            v1_folder(MOUNTINFO, OWN, "cpuacct"),
            Some(PathBuf::from("/sys/fs/cgroup/cpu,cpuacct"))
        );
        // A mount of part of the hierarchy: its root is left out of the path.
        assert_eq!(
            v1_folder(MOUNTINFO, OWN, "memory"),
            Some(PathBuf::from("/sys/fs/cgroup/memory/job/7"))
        );
        assert_eq!(v1_folder(MOUNTINFO, OWN, "cpuset"), None);
        assert_eq!(
            v2_folder(MOUNTINFO, OWN),
            Some(PathBuf::from("/sys/fs/cgroup/unified/session.scope"))
        );
    }

    #[test]
    fn v2_usage_and_pids_are_read_and_written() {
        let stat = "usage_usec 123456\nuser_usec 100000\nsystem_usec 23456\n";
        assert_eq!(usage_usec(stat), Some(123456));
        assert_eq!(usage_usec("user_usec 1\n"), None);
        let mut digits = [0u8; 20];
        assert_eq!(pid_text(4242, &mut digits), b"4242");
        assert_eq!(pid_text(0, &mut digits), b"0");
        assert_eq!(pid_text(i32::MAX, &mut digits), b"2147483647");
    }

    /// Needs a writable cgroup hierarchy (root, as CI runs): elsewhere it
    /// says so and checks that the reason names what failed.
    #[test]
    fn a_short_lived_child_is_counted_in_the_cgroup() {
        let cgroup = match ProductCgroup::create(&format!("unit-{}", std::process::id())) {
            Ok(cgroup) => cgroup,
            Err(why) => {
                assert!(why.contains("cgroup"), "{why}");
                eprintln!("no cgroup here: {why}");
                return;
            }
        };
        let before = cgroup.read().unwrap();
        // A child that burns CPU for a while and is gone long before any
        // sampler would look.
        let mut command = Command::new("sh");
        command.args(["-c", "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done"]);
        cgroup.join_on_spawn(&mut command).unwrap();
        assert!(command.status().unwrap().success());
        let after = cgroup.read().unwrap();
        assert!(
            after.cpu_ns > before.cpu_ns + 10_000_000,
            "{before:?} -> {after:?}"
        );
        drop(cgroup);
    }
}
