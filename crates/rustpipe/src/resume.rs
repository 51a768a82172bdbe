//! Where a pipeline that starts over resumes: never before the input that
//! an acknowledged transaction of this process committed.
//!
//! A transaction whose commit the coordinator acknowledged is decided: its
//! outputs and its input offsets become visible together, however long the
//! markers take. A single broker restarted after SIGKILL was seen to break
//! that once: the transaction's outputs appeared 20 s after the crash, while
//! the group's offsets, read as stable by the next consumer, were still
//! those of the transaction before it (Kafka drops a transaction's markers
//! to a partition it finds without a leader, as a restarted single node is
//! for a moment). A consumer that trusted them read that transaction's
//! input again and committed its outputs twice. So the reader skips what
//! lies below this process's own acknowledged commits and says so, once
//! per partition.

use anyhow::{bail, Result};

use crate::chunk::{advance, NextOffset};

/// How the floor reaches the process that replaces this one when a stuck
/// client makes rustpipe restart itself.
pub const FLOOR_VAR: &str = "RUSTPIPE_RESUME_FLOOR";

/// The input offsets acknowledged transactions of this process committed:
/// the least each partition's next read may be.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ResumeFloor {
    offsets: Vec<NextOffset>,
}

impl ResumeFloor {
    /// The floor an earlier image of this process handed on, if any.
    pub fn from_env() -> Result<ResumeFloor> {
        match std::env::var(FLOOR_VAR) {
            Ok(value) => ResumeFloor::parse(&value),
            Err(_) => Ok(ResumeFloor::default()),
        }
    }

    /// `partition:offset` pairs, comma-separated, as [`Self::to_env_value`] writes.
    fn parse(value: &str) -> Result<ResumeFloor> {
        let mut floor = ResumeFloor::default();
        for pair in value.split(',').filter(|p| !p.is_empty()) {
            let parsed = pair
                .split_once(':')
                .and_then(|(p, o)| Some((p.parse().ok()?, o.parse().ok()?)));
            let Some((partition, offset)) = parsed else {
                bail!("rustpipe: {FLOOR_VAR} holds {pair:?}, not partition:offset");
            };
            floor.raise(&[NextOffset { partition, offset }]);
        }
        Ok(floor)
    }

    /// The floor as [`FLOOR_VAR`]'s value.
    pub fn to_env_value(&self) -> String {
        let pairs: Vec<String> = self
            .offsets
            .iter()
            .map(|o| format!("{}:{}", o.partition, o.offset))
            .collect();
        pairs.join(",")
    }

    /// Moves the floor up to offsets a transaction committed.
    pub fn raise(&mut self, committed: &[NextOffset]) {
        for next in committed {
            advance(&mut self.offsets, next.partition, next.offset);
        }
    }

    /// Moves the floor up to another's: what a life's commits reached.
    pub fn raise_to(&mut self, other: &ResumeFloor) {
        self.raise(&other.offsets);
    }

    /// The reader's view of the floor for one life of the pipeline.
    pub fn guard(&self) -> FloorGuard {
        FloorGuard {
            pending: self.offsets.iter().map(|&f| (f, false)).collect(),
        }
    }
}

/// Skips records below the floor until each partition's reads pass it.
#[derive(Debug)]
pub struct FloorGuard {
    /// Partitions whose reads have not yet reached their floor, and
    /// whether a skip on each was logged.
    pending: Vec<(NextOffset, bool)>,
}

impl FloorGuard {
    /// Whether the record at `offset` of `partition` lies below the floor:
    /// committed already, so not to be read again.
    pub fn skips(&mut self, partition: i32, offset: i64) -> bool {
        let Some(at) = self
            .pending
            .iter()
            .position(|(f, _)| f.partition == partition)
        else {
            return false;
        };
        let (floor, logged) = &mut self.pending[at];
        if offset >= floor.offset {
            self.pending.swap_remove(at);
            return false;
        }
        if !*logged {
            *logged = true;
            eprintln!(
                "rustpipe: partition {partition} resumed at offset {offset}, behind offset {} \
                 that an acknowledged transaction of this process committed; reading on from there",
                floor.offset
            );
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(partition: i32, offset: i64) -> NextOffset {
        NextOffset { partition, offset }
    }

    #[test]
    fn the_floor_only_rises() {
        let mut floor = ResumeFloor::default();
        floor.raise(&[at(0, 10), at(1, 5)]);
        floor.raise(&[at(0, 7)]);
        assert_eq!(floor.offsets, vec![at(0, 10), at(1, 5)]);
    }

    #[test]
    fn the_env_value_round_trips_and_a_bad_one_is_refused() {
        let mut floor = ResumeFloor::default();
        floor.raise(&[at(0, 16093), at(3, 7)]);
        assert_eq!(floor.to_env_value(), "0:16093,3:7");
        assert_eq!(ResumeFloor::parse(&floor.to_env_value()).unwrap(), floor);
        assert_eq!(ResumeFloor::parse("").unwrap(), ResumeFloor::default());
        let err = ResumeFloor::parse("0:12,x").unwrap_err().to_string();
        assert!(err.contains(FLOOR_VAR) && err.contains("\"x\""), "{err}");
    }

    #[test]
    fn records_below_the_floor_are_skipped_until_it_is_reached() {
        let mut floor = ResumeFloor::default();
        floor.raise(&[at(0, 100)]);
        let mut guard = floor.guard();
        assert!(guard.skips(0, 98));
        assert!(guard.skips(0, 99));
        assert!(!guard.skips(0, 100));
        // Passed: a later read is never held against the floor again.
        assert!(!guard.skips(0, 50));
        // A partition the floor does not name is never skipped.
        assert!(!guard.skips(1, 0));
    }

    #[test]
    fn a_resume_at_the_floor_skips_nothing() {
        let mut floor = ResumeFloor::default();
        floor.raise(&[at(0, 100), at(1, 40)]);
        let mut guard = floor.guard();
        assert!(!guard.skips(1, 40));
        assert!(!guard.skips(0, 100));
        assert!(guard.pending.is_empty());
        assert!(!ResumeFloor::default().guard().skips(0, 0));
    }
}
