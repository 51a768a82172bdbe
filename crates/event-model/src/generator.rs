//! The generator: an event is a pure function of (seed, sequence number).
//!
//! Every field but the timestamp is derived from a SplitMix64 stream seeded by
//! the run's seed and the record's sequence number alone, so any record can be
//! regenerated on its own, in any order, by verification as well as by gendata.
//! The generator is our own (not `rand`) so that a record never changes across
//! dependency upgrades.

use std::borrow::Cow;

use crate::Event;

/// One generated event, JSON-encoded on the input topic: the fixed
/// vocabularies borrowed, the generated strings owned.
pub type Generated = Event<Cow<'static, str>>;

/// Regions with their weights (per mille). The `eu-` share is what the
/// stateless workload keeps: 290 per mille.
pub const REGIONS: [(&str, u32); 7] = [
    ("eu-west", 180),
    ("eu-central", 110),
    ("us-east", 250),
    ("us-west", 160),
    ("ap-south", 120),
    ("ap-northeast", 100),
    ("sa-east", 80),
];

/// Services with their SLA in milliseconds.
pub const SERVICES: [(&str, u32); 6] = [
    ("checkout", 250),
    ("search", 100),
    ("catalog", 200),
    ("auth", 150),
    ("payments", 500),
    ("recommendations", 1000),
];

const ENDPOINTS: [&str; 8] = [
    "/api/v1/items",
    "/api/v1/cart",
    "/api/v1/orders",
    "/api/v1/login",
    "/api/v1/search",
    "/api/v2/items",
    "/api/v2/pay",
    "/health",
];
const METHODS: [&str; 4] = ["GET", "GET", "POST", "PUT"];
const DEVICES: [&str; 4] = ["desktop", "mobile", "tablet", "tv"];
const OSES: [&str; 5] = ["linux", "windows", "macos", "android", "ios"];
const APP_VERSIONS: [&str; 4] = ["3.2.0", "3.2.1", "3.3.0", "4.0.0-rc1"];

/// Mean of the latency/SLA factor: exponential with this mean puts
/// P(latency > sla) at exp(-1/0.62) ~ 0.199, the breach rate users expect.
const LATENCY_FACTOR_MEAN: f64 = 0.62;

/// The share of events the stateless filter keeps, in theory.
pub fn eu_share() -> f64 {
    let eu: u32 = REGIONS
        .iter()
        .filter(|(r, _)| r.starts_with("eu-"))
        .map(|(_, w)| w)
        .sum();
    let all: u32 = REGIONS.iter().map(|(_, w)| w).sum();
    f64::from(eu) / f64::from(all)
}

/// SplitMix64: tiny, fast, and fully specified, so its output never changes.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len() as u64) as usize]
    }

    /// A uniform float in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn weighted<'a>(rng: &mut SplitMix64, table: &[(&'a str, u32)]) -> &'a str {
    let total: u32 = table.iter().map(|(_, w)| w).sum();
    let mut roll = rng.below(u64::from(total)) as u32;
    for (name, weight) in table {
        if roll < *weight {
            return name;
        }
        roll -= weight;
    }
    table[table.len() - 1].0
}

/// The fields the workloads' operators read. They are drawn first, so that
/// verification can recompute them for millions of records without building
/// whole events.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Core {
    pub region: &'static str,
    pub service: &'static str,
    pub latency_ms: u32,
    pub sla_ms: u32,
}

impl Core {
    /// The core of event `seq` of the stream seeded by `seed`.
    pub fn generate(seed: u64, seq: u64) -> Core {
        Core::draw(seed, seq).1
    }

    /// The core, and the generator positioned for the remaining fields.
    fn draw(seed: u64, seq: u64) -> (SplitMix64, Core) {
        let mut rng = SplitMix64(seed ^ seq.wrapping_mul(0xD6E8_FEB8_6659_FD93));
        let region = weighted(&mut rng, &REGIONS);
        let (service, sla_ms) = rng.pick(&SERVICES);
        let factor = -(1.0 - rng.unit()).ln() * LATENCY_FACTOR_MEAN;
        let latency_ms = ((f64::from(sla_ms) * factor).round() as u32).max(1);
        let core = Core {
            region,
            service,
            latency_ms,
            sla_ms,
        };
        (rng, core)
    }

    /// Whether the stateless workload's filter keeps this event.
    pub fn is_kept(&self) -> bool {
        is_kept_region(self.region)
    }

    /// latency_ms / sla_ms, the stateless workload's derived ratio.
    pub fn latency_ratio(&self) -> f64 {
        latency_ratio(self.latency_ms, self.sla_ms)
    }
}

/// The event with sequence number `seq` of the stream seeded by `seed`,
/// stamped with the intended send time `ts_us`.
pub fn generate(seed: u64, seq: u64, ts_us: i64) -> Generated {
    let (mut rng, core) = Core::draw(seed, seq);
    let Core {
        region,
        service,
        latency_ms,
        sla_ms,
    } = core;
    let status = match rng.below(1000) {
        0..=939 => 200,
        940..=959 => 404,
        960..=979 => 429,
        _ => 503,
    };
    let user = rng.below(100_000);
    Event {
        seq,
        event_id: format!("{seed:x}-{seq}").into(),
        ts_us,
        tenant: format!("tenant-{:03}", rng.below(200)).into(),
        zone: format!("{region}-{}", ["a", "b", "c"][rng.below(3) as usize]).into(),
        region: region.into(),
        service: service.into(),
        endpoint: rng.pick(&ENDPOINTS).into(),
        method: rng.pick(&METHODS).into(),
        status,
        latency_ms,
        sla_ms,
        bytes: 200 + rng.below(64_000) as u32,
        user_id: format!("u{user:06}").into(),
        session_id: format!("s{user:06}-{:04x}", rng.below(1 << 16)).into(),
        device: rng.pick(&DEVICES).into(),
        os: rng.pick(&OSES).into(),
        app_version: rng.pick(&APP_VERSIONS).into(),
        trace_id: format!("{:016x}{:016x}", rng.next_u64(), rng.next_u64()).into(),
    }
}

impl<S: AsRef<str>> Event<S> {
    /// Whether the stateless workload's filter keeps this event.
    pub fn is_kept(&self) -> bool {
        is_kept_region(self.region.as_ref())
    }

    /// latency_ms / sla_ms, the stateless workload's derived ratio.
    pub fn latency_ratio(&self) -> f64 {
        latency_ratio(self.latency_ms, self.sla_ms)
    }

    /// `breach` when the ratio is above 1, else `ok`.
    pub fn sla_status(&self) -> &'static str {
        sla_status(self.latency_ratio())
    }
}

/// The stateless filter: events of the `eu-` regions.
fn is_kept_region(region: &str) -> bool {
    region.starts_with("eu-")
}

fn latency_ratio(latency_ms: u32, sla_ms: u32) -> f64 {
    f64::from(latency_ms) / f64::from(sla_ms)
}

/// The SLA verdict for a latency ratio, as the checks expect it.
pub fn sla_status(latency_ratio: f64) -> &'static str {
    if latency_ratio > 1.0 {
        "breach"
    } else {
        "ok"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_core_is_the_events_own_fields() {
        for seq in 0..500 {
            let (core, event) = (Core::generate(42, seq), generate(42, seq, 0));
            assert_eq!(
                (core.region, core.service, core.latency_ms, core.sla_ms),
                (
                    event.region.as_ref(),
                    event.service.as_ref(),
                    event.latency_ms,
                    event.sla_ms
                )
            );
            assert_eq!(core.is_kept(), event.is_kept());
            assert_eq!(core.latency_ratio(), event.latency_ratio());
        }
    }

    #[test]
    fn same_seed_and_seq_give_the_same_event() {
        let a = generate(42, 1234, 0);
        let b = generate(42, 1234, 0);
        assert_eq!(a, b);
        assert_ne!(a, generate(42, 1235, 0));
        assert_ne!(a, generate(43, 1234, 0));
    }

    #[test]
    fn an_event_has_nineteen_fields() {
        let json = serde_json::to_value(generate(1, 1, 5)).unwrap();
        assert_eq!(json.as_object().unwrap().len(), 19);
        assert_eq!(json["ts_us"], 5);
    }

    #[test]
    fn a_known_event_never_changes() {
        // Pinned: a change here silently invalidates every stored result.
        let e = generate(42, 7, 0);
        let pinned = serde_json::to_string(&e).unwrap();
        assert_eq!(pinned, include_str!("testdata/event-42-7.json").trim_end());
    }

    #[test]
    fn distribution_matches_the_weights() {
        let n = 200_000;
        let events: Vec<Generated> = (0..n).map(|s| generate(7, s, 0)).collect();
        let kept = events.iter().filter(|e| e.is_kept()).count() as f64 / n as f64;
        assert!((kept - eu_share()).abs() < 0.005, "eu share {kept}");
        assert!((eu_share() - 0.29).abs() < 1e-9);
        let breaches =
            events.iter().filter(|e| e.sla_status() == "breach").count() as f64 / n as f64;
        assert!((breaches - 0.199).abs() < 0.01, "breach rate {breaches}");
        for (region, weight) in REGIONS {
            let share = events.iter().filter(|e| e.region == region).count() as f64 / n as f64;
            assert!(
                (share - f64::from(weight) / 1000.0).abs() < 0.005,
                "{region}"
            );
        }
    }

    #[test]
    fn ratio_above_one_is_a_breach() {
        assert_eq!(sla_status(1.0), "ok");
        assert_eq!(sla_status(1.0001), "breach");
        assert_eq!(sla_status(0.2), "ok");
    }
}
