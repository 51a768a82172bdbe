//! An exclusive lock on one install folder, so two suites never install
//! the same version at once.

use std::fs::{self, File};
use std::os::unix::io::AsRawFd;
use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result};

use crate::interrupt::{Interrupt, Interrupted};

/// An exclusive lock on one install folder, so two suites never install the
/// same version at once; released when dropped.
pub(super) struct InstallLock {
    _file: File,
}

impl InstallLock {
    pub(super) fn acquire(dir: &Path, interrupt: &Interrupt) -> Result<InstallLock> {
        let parent = dir.parent().unwrap_or(dir);
        fs::create_dir_all(parent).with_context(|| format!("creating {}", parent.display()))?;
        let mut name = dir.file_name().unwrap_or_default().to_os_string();
        name.push(".lock");
        let path = parent.join(name);
        let file = File::create(&path).with_context(|| format!("creating {}", path.display()))?;
        let mut told = false;
        loop {
            // SAFETY: flock on a descriptor this function owns.
            if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
                return Ok(InstallLock { _file: file });
            }
            if interrupt.is_set() {
                return Err(Interrupted.into());
            }
            if !told {
                eprintln!("waiting for another install into {} ...", dir.display());
                told = true;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}
