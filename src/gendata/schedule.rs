//! The rate schedule: when each record is meant to be sent.
//!
//! Slot `i` is due at `start + i / rate`. Records are stamped with their slot
//! time, not the moment they went out, so a generator that falls behind shows
//! up as latency instead of hiding it (coordinated omission).

/// A fixed-rate schedule, or as-fast-as-possible when `rate` is 0.
#[derive(Debug, Clone, Copy)]
pub struct Schedule {
    start_us: i64,
    rate: u64,
}

impl Schedule {
    /// A schedule starting at `start_us` (epoch microseconds) at `rate` records/s.
    pub fn new(start_us: i64, rate: u64) -> Schedule {
        Schedule { start_us, rate }
    }

    /// Whether records go out as fast as possible (no slots).
    pub fn is_unpaced(&self) -> bool {
        self.rate == 0
    }

    /// Intended send time of slot `index`, in epoch microseconds.
    pub fn slot_us(&self, index: u64) -> i64 {
        if self.rate == 0 {
            return self.start_us;
        }
        // Rounded up, so that slot `i` is due exactly from its own time on.
        let rate = u128::from(self.rate);
        let offset = (u128::from(index) * 1_000_000).div_ceil(rate);
        self.start_us + offset as i64
    }

    /// How many slots are due at `now_us` (slots `0..n` have a time <= now).
    pub fn due(&self, now_us: i64) -> u64 {
        if now_us < self.start_us {
            return 0;
        }
        if self.rate == 0 {
            return u64::MAX;
        }
        let elapsed = (now_us - self.start_us) as u128;
        (elapsed * u128::from(self.rate) / 1_000_000) as u64 + 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_evenly_spaced() {
        let s = Schedule::new(1_000_000, 4);
        assert_eq!(s.slot_us(0), 1_000_000);
        assert_eq!(s.slot_us(1), 1_250_000);
        assert_eq!(s.slot_us(4), 2_000_000);
    }

    #[test]
    fn due_counts_slots_up_to_now() {
        let s = Schedule::new(1_000_000, 4);
        assert_eq!(s.due(999_999), 0);
        assert_eq!(s.due(1_000_000), 1);
        assert_eq!(s.due(1_249_999), 1);
        assert_eq!(s.due(1_250_000), 2);
        assert_eq!(s.due(2_000_000), 5);
    }

    #[test]
    fn one_second_holds_rate_slots() {
        for rate in [1, 7, 1000, 20_000, 333_333] {
            let s = Schedule::new(5_000_000, rate);
            assert_eq!(s.due(6_000_000 - 1), rate, "rate {rate}");
            // each slot is due at its own time and not a microsecond before
            for i in [1, 2, rate / 2, rate - 1, rate, 3 * rate + 1] {
                assert_eq!(s.due(s.slot_us(i)), i + 1, "rate {rate} slot {i}");
                assert_eq!(s.due(s.slot_us(i) - 1), i, "rate {rate} slot {i}");
            }
        }
    }

    #[test]
    fn rate_zero_is_unpaced() {
        let s = Schedule::new(10, 0);
        assert!(s.is_unpaced());
        assert_eq!(s.due(9), 0);
        assert_eq!(s.due(10), u64::MAX);
    }
}
