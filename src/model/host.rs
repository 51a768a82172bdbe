//! What a result records about the machine it ran on, and whether two
//! records ran on the same one.

use serde::{Deserialize, Serialize};

/// The host: name, CPU, memory, kernel and machine.
///
/// Threads, MHz and the machine id are absent in records written before they
/// were kept; [`HostInfo::same_host`] compares them only where both records
/// have them.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct HostInfo {
    pub hostname: String,
    pub cpu_model: String,
    /// CPUs the suite may run on (its affinity mask and cgroup quota, as
    /// `available_parallelism` sees them): what a run actually gets.
    pub cores: usize,
    /// Logical CPUs the kernel has online (the processor entries of
    /// /proc/cpuinfo, hardware threads included), whatever the suite may use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads: Option<usize>,
    /// The CPU's nominal clock, MHz: cpufreq's cpuinfo_max_freq, stable under
    /// frequency scaling, where the kernel exposes it; else the highest "cpu
    /// MHz" of /proc/cpuinfo, which a virtual machine reports as a constant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_mhz: Option<u32>,
    /// MemTotal, MB.
    pub memory_mb: u64,
    pub kernel: String,
    /// A digest of /etc/machine-id (or /var/lib/dbus/machine-id), never the
    /// id itself: machine-id(5) asks that the id not be published, and
    /// records are. Absent where neither file is readable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine_id_hash: Option<String>,
}

/// The files a host's identity is read from.
pub const HOST_FILES: [&str; 7] = [
    "/proc/cpuinfo",
    "/proc/meminfo",
    "/proc/sys/kernel/hostname",
    "/proc/sys/kernel/osrelease",
    "/etc/machine-id",
    "/var/lib/dbus/machine-id",
    "/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq",
];

/// Two clocks within this share of each other are one clock: a virtual
/// machine's figure is calibrated at boot and moves by a few kHz.
const MHZ_TOLERANCE: f64 = 0.01;

impl HostInfo {
    /// Reads the running host from /proc, /sys and /etc.
    pub fn current() -> HostInfo {
        let read = |path: &str| std::fs::read_to_string(path).unwrap_or_default();
        HostInfo::from_files(
            read,
            std::thread::available_parallelism().map_or(1, |n| n.get()),
        )
    }

    /// A host from the text of its [`HOST_FILES`] (`read` gives "" for one
    /// it lacks) and the CPUs a process there may run on: how this host
    /// and one reached over SSH are read alike.
    pub fn from_files(read: impl Fn(&str) -> String, cores: usize) -> HostInfo {
        let read = |path: &str| read(path).trim().to_string();
        let cpuinfo = read("/proc/cpuinfo");
        let machine_id = Some(read("/etc/machine-id"))
            .filter(|id| !id.is_empty())
            .unwrap_or_else(|| read("/var/lib/dbus/machine-id"));
        HostInfo {
            hostname: read("/proc/sys/kernel/hostname"),
            cpu_model: cpu_model(&cpuinfo).unwrap_or_else(|| "unknown".into()),
            cores,
            threads: threads(&cpuinfo),
            cpu_mhz: nominal_mhz(&read(
                "/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq",
            ))
            .or_else(|| cpu_mhz(&cpuinfo)),
            memory_mb: memory_kb(&read("/proc/meminfo")).unwrap_or(0) / 1024,
            kernel: read("/proc/sys/kernel/osrelease"),
            machine_id_hash: machine_id_hash(&machine_id),
        }
    }

    /// Whether `other` ran on the same host: hostname, CPU model, cores,
    /// memory and kernel agree exactly, and threads, MHz (within 1 %) and
    /// machine id agree wherever both records have them.
    pub fn same_host(&self, other: &HostInfo) -> bool {
        fn agree<T>(a: &Option<T>, b: &Option<T>, same: impl Fn(&T, &T) -> bool) -> bool {
            match (a, b) {
                (Some(a), Some(b)) => same(a, b),
                _ => true,
            }
        }
        self.hostname == other.hostname
            && self.cpu_model == other.cpu_model
            && self.cores == other.cores
            && self.memory_mb == other.memory_mb
            && self.kernel == other.kernel
            && agree(&self.threads, &other.threads, |a, b| a == b)
            && agree(&self.cpu_mhz, &other.cpu_mhz, |&a, &b| {
                f64::from(a.abs_diff(b)) <= MHZ_TOLERANCE * f64::from(a.max(b))
            })
            && agree(&self.machine_id_hash, &other.machine_id_hash, |a, b| a == b)
    }

    /// What tells hosts apart on a page: CPU model, cores and kernel
    /// (`AMD EPYC 7B13 · 2 cores · kernel 6.18.44`). Never the hostname
    /// alone: every VM here is named `vm`.
    pub fn label(&self) -> String {
        self.label_with(&[])
    }

    /// This host's label among `hosts`: [`HostInfo::label`], and as many of
    /// threads, clock, memory, machine and hostname (in that order) as it
    /// takes for no two different hosts of `hosts` to read alike. Every
    /// host of `hosts` is labelled with the same fields.
    pub fn label_among(&self, hosts: &[&HostInfo]) -> String {
        let mut fields: Vec<usize> = Vec::new();
        for extra in 0..EXTRA_FIELDS {
            let clash = hosts.iter().enumerate().any(|(i, a)| {
                hosts[i + 1..]
                    .iter()
                    .any(|b| !a.same_host(b) && a.label_with(&fields) == b.label_with(&fields))
            });
            if !clash {
                break;
            }
            fields.push(extra);
        }
        self.label_with(&fields)
    }

    /// The label with the extra fields numbered `extra` (see
    /// [`HostInfo::label_among`]).
    fn label_with(&self, extra: &[usize]) -> String {
        let mut parts = vec![
            self.cpu_model.clone(),
            format!("{} cores", self.cores),
            format!("kernel {}", self.kernel),
        ];
        for field in extra {
            parts.extend(match field {
                0 => self.threads.map(|t| format!("{t} threads")),
                1 => self.cpu_mhz.map(|mhz| format!("{mhz} MHz")),
                2 => Some(format!("{} MB", self.memory_mb)),
                3 => self
                    .machine_id_hash
                    .as_deref()
                    .map(|id| format!("machine {}", id.get(..8).unwrap_or(id))),
                _ => Some(format!("hostname {}", self.hostname)),
            });
        }
        parts.join(" · ")
    }
}

/// The fields [`HostInfo::label_among`] may add to a label.
const EXTRA_FIELDS: usize = 5;

fn cpu_model(cpuinfo: &str) -> Option<String> {
    cpuinfo_values(cpuinfo, "model name")
        .next()
        .map(str::to_string)
}

/// The values of `key` in /proc/cpuinfo, one per logical CPU.
fn cpuinfo_values<'a>(cpuinfo: &'a str, key: &'a str) -> impl Iterator<Item = &'a str> {
    cpuinfo
        .lines()
        .filter_map(|l| l.split_once(':'))
        .filter(move |(k, _)| k.trim() == key)
        .map(|(_, v)| v.trim())
}

/// Logical CPUs online: /proc/cpuinfo lists one processor entry for each.
fn threads(cpuinfo: &str) -> Option<usize> {
    Some(cpuinfo_values(cpuinfo, "processor").count()).filter(|&n| n > 0)
}

/// The highest "cpu MHz" of /proc/cpuinfo, rounded: with frequency scaling
/// each CPU shows its current clock, and the busiest one is nearest nominal.
fn cpu_mhz(cpuinfo: &str) -> Option<u32> {
    cpuinfo_values(cpuinfo, "cpu MHz")
        .filter_map(|v| v.parse::<f64>().ok())
        .fold(None, |top: Option<f64>, mhz| {
            Some(top.map_or(mhz, |t| t.max(mhz)))
        })
        .map(|mhz| mhz.round() as u32)
}

/// cpufreq's cpuinfo_max_freq (kHz) in MHz.
fn nominal_mhz(khz: &str) -> Option<u32> {
    let khz: u64 = khz.trim().parse().ok()?;
    u32::try_from((khz + 500) / 1000).ok().filter(|&m| m > 0)
}

/// An application-specific FNV-1a digest of a machine id, 16 hex digits;
/// None for no id. Stable across builds, unlike std's hashers.
fn machine_id_hash(machine_id: &str) -> Option<String> {
    let id = machine_id.trim();
    if id.is_empty() {
        return None;
    }
    let hash = b"streamsuite host\n"
        .iter()
        .chain(id.as_bytes())
        .fold(0xcbf2_9ce4_8422_2325u64, |h, &byte| {
            (h ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3)
        });
    Some(format!("{hash:016x}"))
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

    fn host(kernel: &str) -> HostInfo {
        HostInfo {
            hostname: "vm".into(),
            cpu_model: "AMD EPYC".into(),
            cores: 2,
            threads: Some(2),
            cpu_mhz: Some(2445),
            memory_mb: 24105,
            kernel: kernel.into(),
            machine_id_hash: Some("00112233aabbccdd".into()),
        }
    }

    #[test]
    fn proc_files_are_read() {
        let cpuinfo = include_str!("testdata/cpuinfo.txt");
        assert_eq!(cpu_model(cpuinfo).as_deref(), Some("AMD EPYC 7B13"));
        assert_eq!(threads(cpuinfo), Some(4));
        // the highest of 1500.000, 3499.871, 2450.002 and 1799.5
        assert_eq!(cpu_mhz(cpuinfo), Some(3500));
        assert_eq!(threads("nothing"), None);
        assert_eq!(cpu_mhz("processor\t: 0\n"), None);
        assert_eq!(nominal_mhz("3400000\n"), Some(3400));
        assert_eq!(nominal_mhz(""), None);
        assert_eq!(
            memory_kb("MemTotal:       24576000 kB\nMemFree: 1 kB\n"),
            Some(24_576_000)
        );
        assert_eq!(memory_kb("nothing"), None);
    }

    #[test]
    fn the_machine_id_is_kept_as_a_stable_digest() {
        let id = "0123456789abcdef0123456789abcdef";
        let hash = machine_id_hash(&format!("{id}\n")).unwrap();
        // A digest that changed between builds would split one host in two.
        assert_eq!(hash, "77fee34c90106d57");
        assert_ne!(
            machine_id_hash("0123456789abcdef0123456789abcdee"),
            Some(hash)
        );
        assert_eq!(machine_id_hash(" \n"), None);
    }

    #[test]
    fn the_same_everything_is_the_same_host() {
        assert!(host("6.18.44").same_host(&host("6.18.44")));
        let mut calibrated = host("6.18.44");
        calibrated.cpu_mhz = Some(2446);
        assert!(host("6.18.44").same_host(&calibrated));
    }

    #[test]
    fn any_difference_is_another_host() {
        let base = host("6.18.44");
        assert!(!base.same_host(&host("6.18.45")), "two kernels");
        let changes: [fn(&mut HostInfo); 7] = [
            |h| h.hostname = "other".into(),
            |h| h.cpu_model = "Intel Xeon".into(),
            |h| h.cores = 1,
            |h| h.threads = Some(4),
            |h| h.cpu_mhz = Some(2600),
            |h| h.memory_mb += 1,
            |h| h.machine_id_hash = Some("ffeeddccbbaa9988".into()),
        ];
        for (i, change) in changes.iter().enumerate() {
            let mut other = base.clone();
            change(&mut other);
            assert!(!base.same_host(&other), "change {i}");
            assert!(!other.same_host(&base), "change {i}, other way");
        }
    }

    #[test]
    fn hosts_of_one_name_are_labelled_by_cpu_cores_and_kernel() {
        let amd = host("6.18.44");
        let mut intel = host("6.18.44");
        intel.cpu_model = "Intel Xeon Platinum 8375C".into();
        assert_eq!(amd.label(), "AMD EPYC · 2 cores · kernel 6.18.44");
        assert_ne!(amd.label(), intel.label());
        assert!(
            !amd.label().contains("vm"),
            "the hostname tells nothing here"
        );
        let hosts = [&amd, &intel];
        assert_eq!(amd.label_among(&hosts), amd.label());
        assert_eq!(
            intel.label_among(&hosts),
            "Intel Xeon Platinum 8375C · 2 cores · kernel 6.18.44"
        );
    }

    #[test]
    fn hosts_alike_in_cpu_cores_and_kernel_are_told_apart_by_more() {
        let a = host("6.18.44");
        let mut b = host("6.18.44");
        b.memory_mb = 16000;
        let hosts = [&a, &b];
        let (la, lb) = (a.label_among(&hosts), b.label_among(&hosts));
        assert_ne!(la, lb);
        assert!(
            la.ends_with(" · 24105 MB") && lb.ends_with(" · 16000 MB"),
            "{la} / {lb}"
        );
        let mut c = host("6.18.44");
        c.machine_id_hash = Some("99887766aabbccdd".into());
        let hosts = [&a, &c];
        assert!(a.label_among(&hosts).ends_with("machine 00112233"));
        assert!(c.label_among(&hosts).ends_with("machine 99887766"));
        // one host, or two records of one host: the short label
        assert_eq!(a.label_among(&[&a, &a.clone()]), a.label());
    }

    #[test]
    fn an_old_record_compares_by_what_it_has() {
        let old: HostInfo = serde_json::from_str(
            r#"{"hostname":"vm","cpu_model":"AMD EPYC","cores":2,"memory_mb":24105,"kernel":"6.18.44"}"#,
        )
        .unwrap();
        assert_eq!(
            (old.threads, old.cpu_mhz, &old.machine_id_hash),
            (None, None, &None)
        );
        assert!(old.same_host(&host("6.18.44")));
        assert!(host("6.18.44").same_host(&old));
        assert!(!old.same_host(&host("6.18.45")));
        // and an old record is written back without the fields it lacks
        let back = serde_json::to_value(&old).unwrap();
        assert!(back.get("machine_id_hash").is_none());
    }

    #[test]
    fn this_host_is_read_and_is_itself() {
        let me = HostInfo::current();
        assert!(me.cores >= 1);
        assert!(me.threads.unwrap() >= 1);
        assert!(me.same_host(&HostInfo::current()));
    }
}
