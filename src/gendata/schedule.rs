//! The rate schedule: when each record is meant to be sent.
//!
//! Slot `i` is due at `start + i / rate`. Records are stamped with their slot
//! time, not the moment they went out, so a generator that falls behind shows
//! up as latency instead of hiding it (coordinated omission).

/// How gendata sends its records: on a fixed-rate schedule, or as fast as
/// it can. The one notion of pacing: a run's config and the command line
/// write unpaced as a rate of 0, and [`Pacing::new`] is where that is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pacing {
    /// Each record is due at its slot, and stamped with it.
    Paced(Schedule),
    /// As fast as possible: a record is stamped when it goes out.
    Unpaced,
}

impl Pacing {
    /// From `start_us` (epoch microseconds) at `rate` records/s; unpaced at 0.
    pub fn new(start_us: i64, rate: u64) -> Pacing {
        if rate == 0 {
            Pacing::Unpaced
        } else {
            Pacing::Paced(Schedule { start_us, rate })
        }
    }

    /// The schedule of a paced run; none of an unpaced one.
    pub fn schedule(self) -> Option<Schedule> {
        match self {
            Pacing::Paced(schedule) => Some(schedule),
            Pacing::Unpaced => None,
        }
    }
}

/// A fixed-rate schedule: `rate` records/s from `start_us`, never 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Schedule {
    start_us: i64,
    rate: u64,
}

impl Schedule {
    /// A schedule starting at `start_us` (epoch microseconds) at `rate`
    /// records/s; `rate` is above 0 (a rate of 0 is [`Pacing::Unpaced`]).
    pub fn new(start_us: i64, rate: u64) -> Schedule {
        assert!(rate > 0, "a schedule has a rate; a rate of 0 is unpaced");
        Schedule { start_us, rate }
    }

    /// Intended send time of slot `index`, in epoch microseconds.
    pub fn slot_us(&self, index: u64) -> i64 {
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
    fn rate_zero_is_unpaced_and_any_other_rate_paced() {
        assert_eq!(Pacing::new(10, 0), Pacing::Unpaced);
        assert_eq!(Pacing::new(10, 0).schedule(), None);
        let paced = Pacing::new(10, 4).schedule().unwrap();
        assert_eq!(paced, Schedule::new(10, 4));
        assert_eq!(paced.slot_us(1), 250_010);
    }

    #[test]
    #[should_panic(expected = "a rate of 0 is unpaced")]
    fn a_schedule_has_a_rate() {
        Schedule::new(10, 0);
    }
}
