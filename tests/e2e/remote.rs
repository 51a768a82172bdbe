//! A product placed on another host over SSH (bench.yaml `hosts:`), on an
//! SSH server this test starts on loopback: Debian's sshd, with its own
//! host key, a client key and a known-hosts file, so the whole remote path
//! (connection, start, signals, /proc sampling, teardown) runs for real.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use libtest_mimic::Trial;
use streamsuite::results::{RunRecord, Status, VerificationVerdict};

use super::support::*;
use super::trial;

pub fn trials() -> Vec<Trial> {
    vec![
        trial(
            "a_product_placed_over_ssh_verifies_and_records_its_host_and_sampled_figures",
            a_product_placed_over_ssh_verifies_and_records_its_host_and_sampled_figures,
        ),
        trial(
            "a_host_that_cannot_be_reached_is_named_before_anything_runs",
            a_host_that_cannot_be_reached_is_named_before_anything_runs,
        ),
    ]
}

const SSHD: &str = "/usr/sbin/sshd";

/// An sshd on a free loopback port, and the ssh_config that reaches it.
struct SshServer {
    dir: tempfile::TempDir,
    port: u16,
    sshd: Child,
}

impl SshServer {
    fn start() -> Result<SshServer, String> {
        if !Path::new(SSHD).exists() {
            return Err(format!(
                "{SSHD} is missing: install Debian's openssh-server (.ci/run does)"
            ));
        }
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let path = |name: &str| dir.path().join(name);
        for key in ["host_key", "client_key"] {
            run(Command::new("ssh-keygen")
                .args(["-q", "-t", "ed25519", "-N", "", "-f"])
                .arg(path(key)))?;
        }
        std::fs::copy(path("client_key.pub"), path("authorized_keys"))
            .map_err(|e| e.to_string())?;
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(|e| e.to_string())?
            .port();
        std::fs::write(
            path("sshd_config"),
            format!(
                "Port {port}\nListenAddress 127.0.0.1\nHostKey {}\nAuthorizedKeysFile {}\n\
                 PidFile {}\nPermitRootLogin prohibit-password\nPasswordAuthentication no\n\
                 KbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\n",
                path("host_key").display(),
                path("authorized_keys").display(),
                path("sshd.pid").display(),
            ),
        )
        .map_err(|e| e.to_string())?;
        // Only the host key this test made is trusted.
        let host_key = std::fs::read_to_string(path("host_key.pub")).map_err(|e| e.to_string())?;
        std::fs::write(
            path("known_hosts"),
            format!("[127.0.0.1]:{port} {host_key}"),
        )
        .map_err(|e| e.to_string())?;
        std::fs::write(
            path("ssh_config"),
            format!(
                "Host *\n  IdentityFile {}\n  IdentitiesOnly yes\n  UserKnownHostsFile {}\n  \
                 StrictHostKeyChecking yes\n",
                path("client_key").display(),
                path("known_hosts").display(),
            ),
        )
        .map_err(|e| e.to_string())?;
        // sshd's privilege separation folder.
        std::fs::create_dir_all("/run/sshd").map_err(|e| format!("/run/sshd: {e}"))?;
        let log = std::fs::File::create(path("sshd.log")).map_err(|e| e.to_string())?;
        let sshd = Command::new(SSHD)
            .args(["-D", "-e", "-f"])
            .arg(path("sshd_config"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .map_err(|e| format!("starting {SSHD}: {e}"))?;
        let server = SshServer { dir, port, sshd };
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            if Instant::now() > deadline {
                return Err(format!("sshd did not listen: {}", server.log()));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(server)
    }

    fn config(&self) -> PathBuf {
        self.dir.path().join("ssh_config")
    }

    /// `ssh://me@127.0.0.1:port`: this user, whom the server lets in by key.
    fn address(&self) -> Result<String, String> {
        let me = run(Command::new("id").arg("-un"))?;
        Ok(format!("ssh://{}@127.0.0.1:{}", me.trim(), self.port))
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("sshd.log")).unwrap_or_default()
    }
}

impl Drop for SshServer {
    fn drop(&mut self) {
        let _ = self.sshd.kill();
        let _ = self.sshd.wait();
    }
}

fn run(command: &mut Command) -> Result<String, String> {
    let out = command.output().map_err(|e| format!("{command:?}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{command:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The repository's configuration with rustpipe placed on `address`.
fn placed_config(address: &str, ssh_config: &Path) -> Result<tempfile::TempDir, String> {
    let dir = config_with_products(&[("rustpipe", &rustpipe_product())])?;
    let bench = dir.path().join("bench.yaml");
    let mut text = std::fs::read_to_string(&bench).map_err(|e| e.to_string())?;
    text.push_str(&format!(
        "\nhosts:\n  rustpipe: ['{address}']\nssh:\n  config: {}\n",
        ssh_config.display()
    ));
    std::fs::write(&bench, text).map_err(|e| e.to_string())?;
    Ok(dir)
}

fn a_product_placed_over_ssh_verifies_and_records_its_host_and_sampled_figures(
) -> Result<(), String> {
    let server = SshServer::start()?;
    let address = server.address()?;
    let dir = placed_config(&address, &server.config())?;
    let results = dir.path().join("results");
    // Two instances of one group, both started over the one connection.
    let out = run_suite(
        &dir.path().join("bench.yaml"),
        &[
            "rustpipe",
            "stateless",
            "--rate",
            "2000",
            "--warmup",
            "3",
            "--window",
            "5",
            "--deploy",
            "cluster",
            "--set",
            "workload.partitions=2",
        ],
        &results,
    )?;
    let sshd = server.log();
    ensure(
        out.status.success(),
        &format!("the run must succeed; sshd said:\n{sshd}"),
        &out,
    )?;
    let all = records(&results, "stateless")?;
    ensure(all.len() == 1, "one record expected", &out)?;
    let r = &all[0];
    ensure(r.status == Status::Ok, "an ok record", &out)?;
    verified_on_the_host_it_names(r, &address, &out)?;
    sampled_and_started_both_instances_over_ssh(r, &out)?;
    let left = processes_of_run(&r.run_id);
    ensure(
        left.is_empty(),
        &format!("no process of the run is left on the host: {left:?}"),
        &out,
    )
}

/// The whole input verified, and the record places the product on
/// `address`, whose identity, read over SSH, is this machine's.
fn verified_on_the_host_it_names(r: &RunRecord, address: &str, out: &Output) -> Result<(), String> {
    let v = r.verification.as_ref().ok_or("verification missing")?;
    ensure(
        v.verdict == VerificationVerdict::Passed
            && v.missing == 0
            && v.duplicated == 0
            && v.expected > 0,
        &format!("the whole input verified: {v:?}"),
        out,
    )?;
    ensure(
        r.config.hosts == [address.to_string()],
        &format!(
            "the record places the product on {address}: {:?}",
            r.config.hosts
        ),
        out,
    )?;
    let placed = r.product_hosts.first().ok_or("no product host recorded")?;
    let here = streamsuite::model::host::HostInfo::current();
    ensure(
        placed.address == address
            && placed.identity.same_host(&here)
            && placed.identity.memory_mb > 0,
        &format!("the host's identity, read over SSH, is this machine's: {placed:?}"),
        out,
    )
}

/// Every figure of the product came over SSH: no member runs as a child of
/// the suite, so a local reading would find nothing. Each member was
/// started through the remote start.
fn sampled_and_started_both_instances_over_ssh(r: &RunRecord, out: &Output) -> Result<(), String> {
    let product = r
        .resources
        .as_ref()
        .and_then(|res| res.product.as_ref())
        .ok_or("no product resources")?;
    ensure(
        product.processes_max == Some(2) && product.cpu_avg_pct > 0.0 && product.mem_max_mb > 1.0,
        &format!("both instances sampled over SSH, with CPU and memory: {product:?}"),
        out,
    )?;
    for member in ["instance-0", "instance-1"] {
        let log = r.logs.join(format!("product-{member}.stdout.log"));
        let text = std::fs::read_to_string(&log).map_err(|e| format!("{}: {e}", log.display()))?;
        ensure(
            text.starts_with("streamsuite-remote-group "),
            &format!(
                "{member} was started through the remote start: {}",
                log.display()
            ),
            out,
        )?;
    }
    Ok(())
}

fn a_host_that_cannot_be_reached_is_named_before_anything_runs() -> Result<(), String> {
    let server = SshServer::start()?;
    // A port nothing listens on.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map_err(|e| e.to_string())?
        .port();
    let address = server
        .address()?
        .replace(&server.port.to_string(), &closed.to_string());
    let dir = placed_config(&address, &server.config())?;
    let results = dir.path().join("results");
    let out = run_suite(
        &dir.path().join("bench.yaml"),
        &[
            "rustpipe",
            "stateless",
            "--rate",
            "2000",
            "--warmup",
            "3",
            "--window",
            "5",
        ],
        &results,
    )?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    ensure(!out.status.success(), "the run must fail", &out)?;
    ensure(
        stderr.contains(&format!("{address}: cannot connect over SSH")),
        "the error names the host and what failed",
        &out,
    )?;
    ensure(
        records(&results, "stateless")?.is_empty(),
        "nothing is recorded",
        &out,
    )
}
