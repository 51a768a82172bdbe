//! Which input partition each event goes to on an input of several, and
//! the key it carries there.

use super::event;

/// The key of an event on a topic of several partitions: `region/service`,
/// the key the workloads keep order by.
pub(super) fn event_key(region: &str, service: &str) -> String {
    format!("{region}/{service}")
}

/// Which input partition each key's records go to, on an input of several.
///
/// The 42 keys are of unequal weight (regions are drawn by weight), so a
/// hash would fill partitions unevenly (FNV-1a, or murmur2 as the Java
/// client hashes keys, leaves 58 to 63 % of the records in one of two
/// partitions) and a parallel run would measure the skew. The keys are dealt instead, heaviest first, each
/// to the partition least full so far: every partition gets its share to
/// within a few percent, and a key still has one partition. The table is a
/// function of the event model alone, so verification finds every record's
/// partition, and so its offset there, from its sequence number.
#[derive(Debug, Clone)]
pub struct KeyPartitions {
    partitions: u32,
    table: std::collections::HashMap<(&'static str, &'static str), i32>,
}

impl KeyPartitions {
    pub fn new(partitions: u32) -> KeyPartitions {
        let mut keys: Vec<(u32, &'static str, &'static str)> = event::REGIONS
            .iter()
            .flat_map(|&(region, weight)| {
                event::SERVICES
                    .iter()
                    .map(move |&(service, _)| (weight, region, service))
            })
            .collect();
        keys.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(b.1)).then(a.2.cmp(b.2)));
        let mut load = vec![0u64; partitions.max(1) as usize];
        let mut table = std::collections::HashMap::new();
        for (weight, region, service) in keys {
            let least = (0..load.len()).min_by_key(|&p| (load[p], p)).unwrap_or(0);
            load[least] += u64::from(weight);
            table.insert((region, service), least as i32);
        }
        KeyPartitions { partitions, table }
    }

    /// The input partition of record `seq` of the stream seeded by `seed`:
    /// its key's; 0 on an input of one partition.
    pub fn of_seq(&self, seed: u64, seq: u64) -> i32 {
        if self.partitions <= 1 {
            return 0;
        }
        let core = event::Core::generate(seed, seq);
        self.table
            .get(&(core.region, core.service))
            .copied()
            .unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_partition_gets_its_share_of_the_records_and_each_key_one_partition() {
        for partitions in [2u32, 3, 4, 8] {
            let keys = KeyPartitions::new(partitions);
            let mut counts = vec![0u64; partitions as usize];
            let mut partition_of_key = std::collections::HashMap::new();
            for seq in 0..50_000 {
                let p = keys.of_seq(42, seq);
                counts[p as usize] += 1;
                let core = event::Core::generate(42, seq);
                let first = *partition_of_key
                    .entry((core.region, core.service))
                    .or_insert(p);
                assert_eq!(first, p, "{} / {}", core.region, core.service);
            }
            let fair = 50_000.0 / f64::from(partitions);
            assert!(
                counts
                    .iter()
                    .all(|&n| (n as f64 - fair).abs() < fair * 0.15),
                "{partitions} partitions: {counts:?}"
            );
        }
        let one = KeyPartitions::new(1);
        assert!((0..100).all(|seq| one.of_seq(42, seq) == 0));
    }
}
