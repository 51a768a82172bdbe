//! avro-etl: Avro batch datums from Kafka into a ClickHouse table. Its
//! output is a table, checked row by row by the ETL runner
//! (`analysis::etl`), not a topic.

use super::{Implementation, Output};
use crate::config::Encoding;
use crate::results::figure::{ROWS_PER_S, US_CPU_PER_RECORD};
use crate::results::Figure;

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
    fn headline(&self) -> [&'static Figure; 2] {
        [&ROWS_PER_S, &US_CPU_PER_RECORD]
    }
}
