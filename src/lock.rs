//! The host's run lock: one measuring command at a time per cache directory,
//! and so per host and local broker. Two runs at once would share the cores
//! and the broker and skew each other's figures, yet both look fine.
//!
//! The lock is an advisory `flock` on `<cache>/run.lock`, held for the whole
//! command and released by the kernel when the holder exits, however it
//! exits. The file names its holder (what it measures and its pid), so a
//! second command can say what it waits for. Commands that measure take it;
//! commands that only read, install or serve a run (gendata, probe) do not.

use std::fs::{File, OpenOptions};
use std::io::Read;
use std::os::unix::fs::FileExt;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Result;

use crate::cache::Cache;
use crate::interrupt::{Interrupt, Interrupted};

/// What to do when another command holds the lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WhenHeld {
    /// Say once what is being waited for, then wait until it ends.
    Wait,
    /// Refuse at once (`--no-wait`), naming the holder.
    Refuse,
}

impl WhenHeld {
    /// `Refuse` with `--no-wait`, else `Wait`.
    pub fn from_no_wait(no_wait: bool) -> WhenHeld {
        if no_wait {
            WhenHeld::Refuse
        } else {
            WhenHeld::Wait
        }
    }
}

/// Why the run lock was not taken.
#[derive(Debug, thiserror::Error)]
pub enum RunLockError {
    /// Another command holds it, and `WhenHeld::Refuse` was asked.
    #[error(
        "another run is measuring on this host: {holder}; wait for it to end, \
         or leave out --no-wait to queue behind it"
    )]
    Held {
        /// The holder as its lock file names it: what it measures and its pid.
        holder: String,
    },
    /// The lock file could not be opened or locked.
    #[error("the run lock {path} cannot be taken: {source}; check that the cache directory can be written")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// The host's run lock, held until dropped (or until the process dies).
#[derive(Debug)]
pub struct RunLock {
    _file: File,
}

impl RunLock {
    /// Takes the run lock of `cache` for `holder` (what the command measures,
    /// such as `rustpipe-eos stateless`), which the lock file records with
    /// this process's pid. When another command holds it, waits (printing one
    /// line naming the holder) or refuses, as `when_held` says; a wait ends
    /// with [`Interrupted`] on Ctrl-C.
    pub fn acquire(
        cache: &Cache,
        holder: &str,
        when_held: WhenHeld,
        interrupt: &Interrupt,
    ) -> Result<RunLock> {
        let path = cache.run_lock_file();
        let io = |source| RunLockError::Io {
            path: path.clone(),
            source,
        };
        // Not truncated on open: until the lock is ours, the text is the holder's.
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(io)?;
        let mut told = false;
        loop {
            // SAFETY: flock on a descriptor this function owns.
            if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
                let line = format!("{holder} (pid {})\n", std::process::id());
                file.set_len(0)
                    .and_then(|()| file.write_all_at(line.as_bytes(), 0))
                    .map_err(io)?;
                return Ok(RunLock { _file: file });
            }
            let error = std::io::Error::last_os_error();
            if error.raw_os_error() != Some(libc::EWOULDBLOCK) {
                return Err(io(error).into());
            }
            match when_held {
                WhenHeld::Refuse => {
                    return Err(RunLockError::Held {
                        holder: read_holder(&path),
                    }
                    .into())
                }
                WhenHeld::Wait if !told => {
                    eprintln!(
                        "waiting for another run on this host to end: {}",
                        read_holder(&path)
                    );
                    told = true;
                }
                WhenHeld::Wait => {}
            }
            if interrupt.is_set() {
                return Err(Interrupted.into());
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

/// The holder's line from the lock file. A holder that has just taken the
/// lock may not have written it yet, so an empty file is read again briefly.
fn read_holder(path: &Path) -> String {
    for _ in 0..25 {
        let mut text = String::new();
        let read = File::open(path).and_then(|mut f| f.read_to_string(&mut text));
        if read.is_ok() && !text.trim().is_empty() {
            return text.trim().to_string();
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    format!("a command that has not named itself in {}", path.display())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_acquire_names_the_holder_and_succeeds_once_it_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::at(dir.path().to_path_buf());
        let none = Interrupt::none();
        let first =
            RunLock::acquire(&cache, "rustpipe-eos stateless", WhenHeld::Refuse, &none).unwrap();
        let err = RunLock::acquire(&cache, "rustpipe stateless", WhenHeld::Refuse, &none)
            .unwrap_err()
            .to_string();
        let holder = format!("rustpipe-eos stateless (pid {})", std::process::id());
        assert!(err.contains(&holder), "{err}");
        assert!(err.contains("--no-wait"), "{err}");
        drop(first);
        let _second =
            RunLock::acquire(&cache, "rustpipe stateless", WhenHeld::Refuse, &none).unwrap();
        let text = std::fs::read_to_string(cache.run_lock_file()).unwrap();
        assert_eq!(
            text,
            format!("rustpipe stateless (pid {})\n", std::process::id())
        );
    }

    #[test]
    fn a_wait_ends_when_the_holder_lets_go() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::at(dir.path().to_path_buf());
        let none = Interrupt::none();
        let first = RunLock::acquire(&cache, "first", WhenHeld::Refuse, &none).unwrap();
        let waiter = {
            let cache = cache.clone();
            std::thread::spawn(move || {
                RunLock::acquire(&cache, "second", WhenHeld::Wait, &Interrupt::none()).map(|_| ())
            })
        };
        std::thread::sleep(Duration::from_millis(300));
        assert!(!waiter.is_finished(), "the second must wait for the first");
        drop(first);
        waiter.join().unwrap().unwrap();
    }
}
