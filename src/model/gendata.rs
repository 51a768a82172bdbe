//! What gendata reports when it stops: how much it sent, how much the
//! broker acknowledged, and how late it ran against its schedule.

use serde::{Deserialize, Serialize};

/// What gendata reports when it stops.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GendataSummary {
    /// Records handed to the producer.
    pub records_sent: u64,
    /// Records whose delivery the broker confirmed.
    pub records_acked: u64,
    /// Records the broker refused (a non-zero count fails the run).
    pub delivery_errors: u64,
    /// Records whose intended send time fell in the measurement window.
    pub window_records: u64,
    /// The first sequence number of the window (records before it are warm-up).
    pub window_first_seq: u64,
    /// records_sent / seconds from the schedule start to the last send.
    pub achieved_rate: f64,
    /// 99th percentile of lateness, ms: the broker's acknowledgement of a
    /// window record minus its slot (its send time when unpaced).
    pub behind_p99_ms: f64,
    /// The largest such lateness, ms.
    pub behind_max_ms: f64,
    /// Window records whose lateness was timed (acknowledged ones); 0 in
    /// records written before lateness was taken at acknowledgement.
    #[serde(default)]
    pub behind_count: u64,
}
