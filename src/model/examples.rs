//! The tests' examples of the model's types, each test changing what it is
//! about.

use std::collections::BTreeMap;

use super::client::ClientProfile;
use super::record::RunConfig;
use super::settings::Profile;

impl RunConfig {
    /// A paced run at 1000 records/s on one partition with a fixed 2 s
    /// warm-up and a 10 s window: the tests' configuration, each changing
    /// what it is about.
    pub fn example() -> RunConfig {
        RunConfig {
            rate: 1000,
            warmup_s: 2,
            warmup_cap_s: None,
            window_s: 10,
            seed: 42,
            commit_interval_ms: 10,
            commit_intervals: None,
            client: ClientProfile::default(),
            settings: Vec::new(),
            profile: Profile::Uniform,
            product_settings: BTreeMap::new(),
            parallelism: 1,
            sample_interval_ms: 1000,
            deployment: super::record::EMBEDDED.to_string(),
            hosts: Vec::new(),
            input_partitions: 1,
            drain_records: None,
            etl: None,
            isolation: super::isolation::Isolation::None,
        }
    }
}
