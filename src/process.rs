//! Child processes: each started in a process group of its own, so that a
//! product's whole tree (JVM forks, Python workers) can be signalled at once,
//! and stopped with SIGTERM, then SIGKILL after a grace period.

use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{mpsc, Arc, OnceLock};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

use crate::interrupt::{Interrupt, Interrupted};

/// Puts the child in its own process group; with `die_with_parent`, the kernel
/// also kills it should the suite itself die without cleaning up.
pub fn isolate(command: &mut std::process::Command, die_with_parent: bool) {
    use std::os::unix::process::CommandExt;
    command.process_group(0);
    if die_with_parent {
        // SAFETY: prctl is async-signal-safe and touches only the child.
        unsafe {
            command.pre_exec(|| {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
}

/// Sends `signal` to every process of the group `pgid`.
pub fn signal_group(pgid: u32, signal: i32) {
    // SAFETY: kill has no memory effects; a stale group yields ESRCH, ignored.
    unsafe {
        libc::kill(-(pgid as i32), signal);
    }
}

/// Whether process `pid` exists and is not a zombie.
pub fn is_alive(pid: u32) -> bool {
    procfs::process::Process::new(pid as i32)
        .and_then(|p| p.stat())
        .is_ok_and(|stat| stat.state != 'Z')
}

/// Whether any process of group `pgid` is still alive.
pub fn group_alive(pgid: u32) -> bool {
    crate::sampler::all_processes()
        .iter()
        .any(|p| p.pgrp == pgid as i32)
}

/// SIGTERM to the group, then SIGKILL to what is left after `grace`.
/// Returns true when the group left on SIGTERM alone.
pub fn stop_group(pgid: u32, grace: Duration, mut reap: impl FnMut()) -> bool {
    signal_group(pgid, libc::SIGTERM);
    let deadline = Instant::now() + grace;
    while Instant::now() < deadline {
        reap();
        if !group_alive(pgid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    signal_group(pgid, libc::SIGKILL);
    while group_alive(pgid) && Instant::now() < deadline + Duration::from_secs(5) {
        reap();
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

/// Collects the exit status of a daemon this process started, if it has
/// ended, so that it does not linger as a zombie.
pub fn reap(pid: u32) {
    // SAFETY: waitpid on a pid that is not our child returns ECHILD, ignored.
    unsafe {
        libc::waitpid(pid as i32, std::ptr::null_mut(), libc::WNOHANG);
    }
}

/// Runs a tool (Maven, pip) to its end in a group of its own, killing the
/// group if Ctrl-C arrives; `command`'s standard streams are the caller's.
/// `cannot_start` is the error when the tool cannot be started at all.
pub fn run_tool(
    command: &mut Command,
    interrupt: &Interrupt,
    cannot_start: &str,
) -> Result<std::process::ExitStatus> {
    isolate(command, true);
    let mut child = command.spawn().with_context(|| cannot_start.to_string())?;
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(status);
        }
        if interrupt.is_set() {
            signal_group(child.id(), libc::SIGKILL);
            let _ = child.wait();
            return Err(Interrupted.into());
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The last `lines` lines of a text file, for error messages.
pub fn tail(path: &std::path::Path, lines: usize) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// A child the orchestrator started and watches: its standard output is
/// teed to a log and scanned for a readiness line, its standard error kept
/// for error messages. Killed with its whole group if dropped while running.
pub struct Supervised {
    name: String,
    child: Child,
    ready: mpsc::Receiver<()>,
    /// The first line of its standard output, once written.
    first_line: Arc<OnceLock<String>>,
    stderr_log: PathBuf,
    stopped: bool,
}

impl Supervised {
    /// Spawns `command` in its own group, logging to `<log_dir>/<role>.std{out,err}.log`.
    pub fn spawn(
        name: &str,
        command: Command,
        log_dir: &Path,
        role: &str,
        ready_marker: &str,
    ) -> Result<Supervised> {
        Supervised::spawn_from(name, command, Stdio::null(), log_dir, role, ready_marker)
    }

    /// As [`Supervised::spawn`], with a pipe to its standard input: what an
    /// ssh session reads its remote process's signals from.
    pub fn spawn_with_input(
        name: &str,
        command: Command,
        log_dir: &Path,
        role: &str,
        ready_marker: &str,
    ) -> Result<(Supervised, ChildStdin)> {
        let mut process =
            Supervised::spawn_from(name, command, Stdio::piped(), log_dir, role, ready_marker)?;
        let input = process.child.stdin.take().context("no standard input")?;
        Ok((process, input))
    }

    fn spawn_from(
        name: &str,
        mut command: Command,
        input: Stdio,
        log_dir: &Path,
        role: &str,
        ready_marker: &str,
    ) -> Result<Supervised> {
        let stdout_log = log_dir.join(format!("{role}.stdout.log"));
        let stderr_log = log_dir.join(format!("{role}.stderr.log"));
        command
            .stdin(input)
            .stdout(Stdio::piped())
            .stderr(File::create(&stderr_log)?);
        isolate(&mut command, true);
        let mut child = command
            .spawn()
            .with_context(|| format!("{name}: starting {:?}", command.get_program()))?;
        let stdout = child.stdout.take().context("no standard output")?;
        let (ready_tx, ready) = mpsc::channel();
        let marker = ready_marker.to_string();
        let mut log = File::create(&stdout_log)?;
        let first_line = Arc::new(OnceLock::new());
        let first = first_line.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let _ = writeln!(log, "{line}");
                if first.get().is_none() {
                    let _ = first.set(line.clone());
                }
                if line.contains(&marker) {
                    let _ = ready_tx.send(());
                }
            }
        });
        Ok(Supervised {
            name: name.to_string(),
            child,
            ready,
            first_line,
            stderr_log,
            stopped: false,
        })
    }

    /// The first line of its standard output, if it has written one.
    pub fn first_line(&self) -> Option<&str> {
        self.first_line.get().map(String::as_str)
    }

    /// Waits up to `timeout` for the process to exit by itself; whether it did.
    pub fn exited_within(&mut self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        loop {
            if matches!(self.child.try_wait(), Ok(Some(_)) | Err(_)) {
                return true;
            }
            if Instant::now() > deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The process group, which is the start command's pid.
    pub fn pgid(&self) -> u32 {
        self.child.id()
    }

    /// Waits for the readiness line; fails if the process exits first.
    pub fn wait_ready(&mut self, timeout: Duration, interrupt: &Interrupt) -> Result<()> {
        let deadline = Instant::now() + timeout;
        loop {
            match self.ready.recv_timeout(Duration::from_millis(100)) {
                Ok(()) => return Ok(()),
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                // Output closed: the process is going; give it a moment to exit.
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    std::thread::sleep(Duration::from_millis(100))
                }
            }
            self.check_alive()?;
            if interrupt.is_set() {
                return Err(Interrupted.into());
            }
            if Instant::now() > deadline {
                bail!(
                    "{} was not ready within {}s (log: {}); last lines of its stderr:\n{}",
                    self.name,
                    timeout.as_secs(),
                    self.stderr_log.display(),
                    self.stderr_tail()
                );
            }
        }
    }

    /// An error with the tail of stderr if the process has exited.
    pub fn check_alive(&mut self) -> Result<()> {
        if let Some(status) = self.child.try_wait()? {
            bail!(
                "{} exited ({status}) during the run (log: {}); last lines of its stderr:\n{}",
                self.name,
                self.stderr_log.display(),
                self.stderr_tail()
            );
        }
        Ok(())
    }

    /// An error with the tail of stderr if the process has exited unsuccessfully.
    pub fn check_not_failed(&mut self) -> Result<()> {
        match self.child.try_wait()? {
            Some(status) if !status.success() => bail!(
                "{} failed ({status}); last lines of its stderr:\n{}",
                self.name,
                self.stderr_tail()
            ),
            _ => Ok(()),
        }
    }

    /// Waits up to `timeout` for the process to exit by itself; an error if it
    /// fails or does not.
    pub fn wait_exit(&mut self, timeout: Duration, interrupt: &Interrupt) -> Result<()> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(status) = self.child.try_wait()? {
                self.stopped = true;
                if status.success() {
                    return Ok(());
                }
                bail!(
                    "{} failed ({status}); last lines of its stderr:\n{}",
                    self.name,
                    self.stderr_tail()
                );
            }
            if interrupt.is_set() {
                return Err(Interrupted.into());
            }
            if Instant::now() > deadline {
                bail!("{} did not finish within {}s", self.name, timeout.as_secs());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The last lines of the process's standard error.
    pub fn stderr_tail(&self) -> String {
        tail(&self.stderr_log, 15)
    }

    /// SIGKILL to the whole tree at once, with no warning, as a crash would;
    /// returns how many processes that hit.
    pub fn kill(&mut self) -> usize {
        let members =
            crate::sampler::tree_members(self.pgid() as i32, &crate::sampler::all_processes());
        signal_group(self.pgid(), libc::SIGKILL);
        for pid in &members {
            // SAFETY: kill has no memory effects; a pid already gone yields ESRCH.
            unsafe {
                libc::kill(*pid, libc::SIGKILL);
            }
        }
        let _ = self.child.wait();
        self.stopped = true;
        members.len()
    }

    /// Stops the whole process group: SIGTERM, then SIGKILL after `grace`.
    pub fn stop(&mut self, grace: Duration) {
        let pgid = self.pgid();
        let child = &mut self.child;
        stop_group(pgid, grace, || {
            let _ = child.try_wait();
        });
        let _ = self.child.wait();
        self.stopped = true;
    }
}

impl Drop for Supervised {
    fn drop(&mut self) {
        if !self.stopped {
            signal_group(self.pgid(), libc::SIGKILL);
            let _ = self.child.wait();
        }
    }
}

/// The first executable called `command` in PATH.
pub fn find_on_path(command: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(command))
        .find(|candidate| is_executable(candidate))
}

/// Whether `path` is a file with an execute bit.
pub fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_process_group_is_stopped_whole() {
        let mut command = std::process::Command::new("sh");
        command.args(["-c", "sleep 30 & sleep 30 & wait"]);
        isolate(&mut command, true);
        let mut child = command.spawn().unwrap();
        let pgid = child.id();
        std::thread::sleep(Duration::from_millis(200));
        assert!(group_alive(pgid));
        stop_group(pgid, Duration::from_secs(2), || {
            let _ = child.try_wait();
        });
        assert!(!group_alive(pgid));
        assert!(!is_alive(pgid));
    }

    #[test]
    fn tail_keeps_the_last_lines() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log");
        std::fs::write(&path, "a\nb\nc\nd\n").unwrap();
        assert_eq!(tail(&path, 2), "c\nd");
        assert_eq!(tail(&dir.path().join("none"), 2), "");
    }
}
