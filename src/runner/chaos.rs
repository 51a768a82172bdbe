//! Crash injection (`--chaos kill-at=15s[,restart]`): SIGKILL the product's
//! whole tree mid-window, optionally start it again with the same settings,
//! and time how long until its output flows again.

use std::str::FromStr;
use std::thread::JoinHandle;
use std::time::Duration;

use anyhow::{Context, Result};
use rdkafka::config::RDKafkaLogLevel;
use rdkafka::consumer::BaseConsumer;
use rdkafka::{ClientConfig, Offset};

use crate::broker::admin::assign_all;
use crate::clock::now_us;

/// What `--chaos` asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChaosPlan {
    /// Seconds into the measurement window.
    pub kill_at_s: u64,
    /// Start the product again right after the kill.
    pub restart: bool,
}

impl FromStr for ChaosPlan {
    type Err = String;

    fn from_str(text: &str) -> Result<ChaosPlan, String> {
        let usage = "expected kill-at=<seconds>s[,restart], such as kill-at=15s,restart";
        let mut parts = text.split(',').map(str::trim);
        let kill_at_s = parts
            .next()
            .and_then(|p| p.strip_prefix("kill-at="))
            .map(|s| s.strip_suffix('s').unwrap_or(s))
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| format!("`{text}`: {usage}"))?;
        let mut restart = false;
        for part in parts {
            match part {
                "restart" => restart = true,
                other => return Err(format!("`{other}` in `{text}`: {usage}")),
            }
        }
        Ok(ChaosPlan { kill_at_s, restart })
    }
}

/// Waits, on a thread of its own, for the first record to become visible on
/// the output topic after the kill.
///
/// It reads read_committed from the end as it stands just after the kill:
/// whatever the killed process had written is behind it, and its open
/// transaction, if any, is aborted and never shows. So the first record it
/// sees is the restarted product's.
pub struct ResumeWatch {
    thread: JoinHandle<Result<Option<i64>>>,
}

impl ResumeWatch {
    /// Starts watching `topic` until a record arrives or `deadline_us` passes.
    pub fn start(bootstrap: &str, topic: &str, deadline_us: i64) -> Result<ResumeWatch> {
        let consumer: BaseConsumer = ClientConfig::new()
            .set("bootstrap.servers", bootstrap)
            .set("group.id", format!("{topic}-resume"))
            .set("enable.auto.commit", "false")
            .set("isolation.level", "read_committed")
            .set("fetch.wait.max.ms", "10")
            .set_log_level(RDKafkaLogLevel::Critical)
            .create()
            .context("chaos: creating the output watcher")?;
        assign_all(&consumer, &[topic], Offset::End).context("chaos")?;
        let thread = std::thread::spawn(move || {
            while now_us() < deadline_us {
                match consumer.poll(Duration::from_millis(10)) {
                    Some(Ok(_)) => return Ok(Some(now_us())),
                    Some(Err(err)) => return Err(err).context("chaos: watching the output"),
                    None => {}
                }
            }
            Ok(None)
        });
        Ok(ResumeWatch { thread })
    }

    /// When output resumed (epoch microseconds), or `None` if not by the deadline.
    pub fn resumed_at(self) -> Result<Option<i64>> {
        self.thread
            .join()
            .map_err(|_| anyhow::anyhow!("chaos: the output watcher panicked"))?
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans_parse_with_and_without_restart() {
        assert_eq!(
            "kill-at=15s".parse(),
            Ok(ChaosPlan {
                kill_at_s: 15,
                restart: false
            })
        );
        assert_eq!(
            "kill-at=7,restart".parse(),
            Ok(ChaosPlan {
                kill_at_s: 7,
                restart: true
            })
        );
    }

    #[test]
    fn a_bad_plan_says_what_is_expected() {
        for bad in ["kill=15s", "kill-at=soon", "kill-at=15s,reboot", ""] {
            let err = bad.parse::<ChaosPlan>().unwrap_err();
            assert!(err.contains("kill-at=<seconds>s"), "{bad}: {err}");
        }
    }
}
