//! avro-etl: Avro batch datums from Kafka into a ClickHouse table. Its
//! output is a table, checked row by row by the ETL runner
//! (`analysis::etl`), not a topic.

use super::{Implementation, Output};
use crate::config::Encoding;

pub struct AvroEtl;

impl Implementation for AvroEtl {
    fn name(&self) -> &'static str {
        "avro-etl"
    }

    fn input(&self) -> Encoding {
        Encoding::Avro
    }

    fn output(&self) -> Output {
        Output::Table
    }

    /// No probe times a table: rows landed per second instead of latency.
    fn headline(&self) -> [&'static str; 2] {
        ["rows_per_s", "us_cpu_per_record"]
    }
}
