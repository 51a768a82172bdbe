//! One open SSH connection per remote host: an ssh master process that
//! every later session shares (its ControlMaster socket), so nothing pays
//! a new handshake. Each product process is a session of its own; every
//! other command (the host's identity, /proc reads) goes to one shell
//! kept open on the host, which runs a sample's read in a few
//! milliseconds where a new session would take a hundred.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

use super::SshAddress;
use crate::model::host::{HostInfo, HOST_FILES};
use crate::process::{isolate, signal_group};
use crate::sampler::remote::{
    parse_rollup_dump, parse_stat_dump, rollup_script, sections, STAT_SCRIPT,
};
use crate::sampler::{read_members, trees_members, ProcEntry, TreeReading};

/// How long the connection may take to open.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(20);

/// What the shell prints after each script, with the script's exit status.
const END_MARKER: &str = "==> streamsuite-end ";

/// A host a product runs on, connected.
pub struct RemoteHost {
    pub address: SshAddress,
    /// Its place among the product's hosts, from 1 (0 is this host): keys
    /// its processes apart from every other host's in a sample.
    pub index: u16,
    /// What the host is, read over the connection when it opened.
    pub identity: HostInfo,
    /// Its kernel's clock ticks per second and page size.
    ticks_per_s: f64,
    page_size: u64,
    /// ssh_config(5) file given with -F, if bench.yaml names one.
    config: Option<PathBuf>,
    /// The folder of the master's socket, removed with it.
    socket_dir: PathBuf,
    master: Child,
    /// The shell commands run in; opened once connected.
    shell: Mutex<Option<Shell>>,
}

/// A shell on the host reading scripts from its input, one at a time.
struct Shell {
    process: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
}

impl RemoteHost {
    /// Opens the connection (no password prompt: keys or an agent) and
    /// reads the host's identity over it.
    pub fn connect(address: &SshAddress, index: u16, config: Option<&Path>) -> Result<RemoteHost> {
        let socket_dir = std::env::temp_dir().join(format!(
            "streamsuite-ssh-{}-{index}-{}",
            std::process::id(),
            crate::clock::now_us()
        ));
        std::fs::create_dir_all(&socket_dir)
            .with_context(|| format!("creating {}", socket_dir.display()))?;
        let mut master = Command::new("ssh");
        master
            .args(options(config, &socket_dir.join("control"), address))
            .args(["-M", "-N", "-o", "ControlPersist=no"])
            .args(["-o", "ServerAliveInterval=5", "-o", "ServerAliveCountMax=3"])
            .arg(address.destination())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        isolate(&mut master, true);
        let master = master
            .spawn()
            .with_context(|| format!("{address}: starting ssh (is openssh-client installed?)"))?;
        let mut host = RemoteHost {
            address: address.clone(),
            index,
            identity: HostInfo::from_files(|_| String::new(), 0),
            ticks_per_s: 100.0,
            page_size: 4096,
            config: config.map(Path::to_path_buf),
            socket_dir,
            master,
            shell: Mutex::new(None),
        };
        host.wait_connected()?;
        host.open_shell()?;
        host.read_identity()?;
        Ok(host)
    }

    /// Waits until the master is up, or fails with what ssh said.
    fn wait_connected(&mut self) -> Result<()> {
        let deadline = Instant::now() + CONNECT_TIMEOUT;
        loop {
            if let Some(status) = self.master.try_wait()? {
                let mut said = String::new();
                if let Some(mut stderr) = self.master.stderr.take() {
                    let _ = std::io::Read::read_to_string(&mut stderr, &mut said);
                }
                bail!(
                    "{}: cannot connect over SSH ({status}): {}",
                    self.address,
                    said.trim().lines().last().unwrap_or("no message")
                );
            }
            let check = Command::new("ssh")
                .args(options(
                    self.config.as_deref(),
                    &self.socket(),
                    &self.address,
                ))
                .args(["-O", "check"])
                .arg(self.address.destination())
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()?;
            if check.success() {
                return Ok(());
            }
            if Instant::now() > deadline {
                bail!(
                    "{}: no SSH connection within {} s",
                    self.address,
                    CONNECT_TIMEOUT.as_secs()
                );
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn open_shell(&mut self) -> Result<()> {
        let mut command = self.command("exec sh -s");
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        isolate(&mut command, true);
        let mut process = command
            .spawn()
            .with_context(|| format!("{}: opening a shell", self.address))?;
        let input = process.stdin.take().context("no shell input")?;
        let output = BufReader::new(process.stdout.take().context("no shell output")?);
        *self.shell.get_mut().unwrap_or_else(|e| e.into_inner()) = Some(Shell {
            process,
            input,
            output,
        });
        Ok(())
    }

    fn read_identity(&mut self) -> Result<()> {
        let script: String = HOST_FILES
            .iter()
            .map(|f| format!("echo '==> {f}'; cat {f} 2>/dev/null; "))
            .chain([
                "echo '==> nproc'; nproc; ".to_string(),
                "echo '==> clk_tck'; getconf CLK_TCK; ".to_string(),
                "echo '==> pagesize'; getconf PAGESIZE".to_string(),
            ])
            .collect();
        let text = self.run(&script, "reading the host's identity")?;
        let files: BTreeMap<&str, &str> = sections(&text).into_iter().collect();
        let number = |name: &str| files.get(name).and_then(|t| t.trim().parse::<u64>().ok());
        self.identity = HostInfo::from_files(
            |path| files.get(path).map_or_else(String::new, |t| t.to_string()),
            number("nproc").unwrap_or(1) as usize,
        );
        self.ticks_per_s = number("clk_tck").unwrap_or(100) as f64;
        self.page_size = number("pagesize").unwrap_or(4096);
        Ok(())
    }

    fn socket(&self) -> PathBuf {
        self.socket_dir.join("control")
    }

    /// An ssh command that runs `script` in a POSIX shell on the host,
    /// over the open connection.
    pub fn command(&self, script: &str) -> Command {
        let mut command = Command::new("ssh");
        command
            .args(options(
                self.config.as_deref(),
                &self.socket(),
                &self.address,
            ))
            .args(["-o", "ControlMaster=no", "-T"])
            .arg(self.address.destination())
            .arg(format!("exec sh -c {}", super::launch::quote(script)));
        command
    }

    /// Runs `script` in the host's shell and returns what it printed (its
    /// standard output and error); an error names the host, `what` it was
    /// doing and what the script printed.
    pub fn run(&self, script: &str, what: &str) -> Result<String> {
        let mut guard = self.shell.lock().unwrap_or_else(|e| e.into_inner());
        let shell = guard
            .as_mut()
            .with_context(|| format!("{}: no shell is open", self.address))?;
        let lost = || anyhow::anyhow!("{}: the connection closed while {what}", self.address);
        writeln!(shell.input, "{{ {script}\n}} 2>&1; echo \"{END_MARKER}$?\"")
            .and_then(|()| shell.input.flush())
            .map_err(|_| lost())?;
        let mut printed = String::new();
        loop {
            let mut line = String::new();
            if shell.output.read_line(&mut line).map_err(|_| lost())? == 0 {
                return Err(lost());
            }
            // The marker may follow output that did not end its line.
            let Some(at) = line.find(END_MARKER) else {
                printed.push_str(&line);
                continue;
            };
            printed.push_str(&line[..at]);
            let status = line[at + END_MARKER.len()..].trim();
            if status != "0" {
                bail!(
                    "{}: {what} failed (exit status {status}): {}",
                    self.address,
                    printed.trim()
                );
            }
            return Ok(printed);
        }
    }

    /// Every process on the host now, with CPU ticks in units of
    /// `local_ticks_per_s` (this host's): the instant of a sample.
    pub fn processes(&self, local_ticks_per_s: f64) -> Result<Vec<ProcEntry>> {
        let (mut processes, _) = parse_stat_dump(&self.run(STAT_SCRIPT, "reading /proc")?);
        if self.ticks_per_s != local_ticks_per_s {
            for p in &mut processes {
                p.cpu_ticks = (p.cpu_ticks as f64 * local_ticks_per_s / self.ticks_per_s) as u64;
            }
        }
        Ok(processes)
    }

    /// Reads the trees of `roots` (process groups on the host) among
    /// `processes`, as the local sampler reads this host's: their ticks,
    /// keyed by the host's index, and their memory from smaps_rollup, read
    /// now (a level that needs no exact instant).
    pub fn read_trees(&self, roots: &[i32], processes: &[ProcEntry]) -> Result<TreeReading> {
        let members = trees_members(roots, processes);
        if members.is_empty() {
            return Ok(TreeReading::empty());
        }
        let rollups = parse_rollup_dump(&self.run(&rollup_script(&members), "reading memory")?);
        Ok(read_members(
            &members,
            processes,
            self.page_size,
            self.index,
            |pid| rollups.get(&pid).copied(),
        ))
    }

    /// How many processes the tree of `root` holds now.
    pub fn tree_size(&self, root: i32) -> Result<usize> {
        Ok(trees_members(&[root], &self.processes(self.ticks_per_s)?).len())
    }
}

impl Drop for RemoteHost {
    fn drop(&mut self) {
        if let Some(mut shell) = self.shell.get_mut().ok().and_then(Option::take) {
            drop(shell.input);
            let _ = shell.process.kill();
            let _ = shell.process.wait();
        }
        // The master's end closes every session over it: a process still
        // started there reads the end of its input and its group is killed.
        signal_group(self.master.id(), libc::SIGTERM);
        let _ = self.master.wait();
        let _ = std::fs::remove_dir_all(&self.socket_dir);
    }
}

/// The options every ssh command of a host shares: its config file, the
/// master's socket, no prompts, and its port.
fn options(config: Option<&Path>, socket: &Path, address: &SshAddress) -> Vec<String> {
    let mut options = Vec::new();
    if let Some(config) = config {
        options.extend(["-F".to_string(), config.to_string_lossy().into_owned()]);
    }
    options.extend([
        "-S".to_string(),
        socket.to_string_lossy().into_owned(),
        "-o".into(),
        "BatchMode=yes".into(),
        "-o".into(),
        "ConnectTimeout=10".into(),
    ]);
    if let Some(port) = address.port {
        options.extend(["-p".to_string(), port.to_string()]);
    }
    options
}
