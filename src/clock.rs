//! Wall-clock time in epoch microseconds: the one clock every process of a run
//! shares, since gendata, the product and the probe run on one host.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Now, in microseconds since the Unix epoch.
pub fn now_us() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_micros() as i64)
        .unwrap_or(0)
}

/// Sleeps until the wall clock reaches `target_us` (returns at once if past).
pub fn sleep_until_us(target_us: i64) {
    let wait = target_us - now_us();
    if wait > 0 {
        std::thread::sleep(Duration::from_micros(wait as u64));
    }
}
