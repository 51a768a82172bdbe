//! Where the Avro pipeline's bottleneck is, judged from the figures alone:
//! when the CPU rig shows the decoders apart but the Avro arms land at one
//! rate end to end, the decoder is not what limits the rate, the sink is;
//! when the arms' rates differ, the decoder and pipeline are.

use crate::report::table::fixed;

/// Rates within this share of each other (max / min − 1) are one rate: about
/// what one run differs from the next on a shared host.
const FLAT: f64 = 0.10;

/// One Avro arm's end-to-end rate.
#[derive(Debug, Clone)]
pub(super) struct ArmRate {
    pub(super) label: String,
    /// Median rows landed in ClickHouse per second.
    pub(super) rows_per_s: f64,
}

/// CPU of the product's and ClickHouse's process trees, % of one core.
#[derive(Debug, Clone, Copy)]
pub(super) struct CpuUse {
    pub(super) product: f64,
    pub(super) sink: f64,
}

/// What limits the end-to-end rate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Limit {
    /// ClickHouse: the rate stays put whatever the decoder.
    Sink,
    /// The product's decoding and pipeline: the arms' rates differ.
    Pipeline,
    /// The figures do not say.
    Unknown,
}

impl Limit {
    /// The limit in a few words, as the page heads the sentence with it.
    pub(super) fn as_str(self) -> &'static str {
        match self {
            Limit::Sink => "the sink (ClickHouse)",
            Limit::Pipeline => "the decoder and pipeline",
            Limit::Unknown => "not placed",
        }
    }
}

/// The judgement and the sentence the page shows.
#[derive(Debug, Clone)]
pub(super) struct Finding {
    pub(super) limit: Limit,
    pub(super) text: String,
}

/// Places the bottleneck from the Avro arms' rates, the CPU rig's decode
/// multiple (same host) and, when recorded, who used more CPU.
pub(super) fn bottleneck(
    arms: &[ArmRate],
    decode_multiple: Option<f64>,
    cpu: Option<CpuUse>,
) -> Finding {
    let mut finding = rate_finding(arms, decode_multiple);
    if let Some(cpu) = cpu {
        let (p, s) = (fixed(cpu.product, 0), fixed(cpu.sink, 0));
        let who = if cpu.sink > cpu.product {
            format!("ClickHouse used more CPU than the product ({s} % against {p} % of one core")
        } else if cpu.product > cpu.sink {
            format!("The product used more CPU than ClickHouse ({p} % against {s} % of one core")
        } else {
            format!("The product and ClickHouse used as much CPU ({p} % of one core")
        };
        finding
            .text
            .push_str(&format!(" {who}, medians over the Avro arms' runs)."));
    }
    finding
}

fn rate_finding(arms: &[ArmRate], decode_multiple: Option<f64>) -> Finding {
    let finding = |limit, text: String| Finding { limit, text };
    let mut ranked: Vec<&ArmRate> = arms.iter().filter(|a| a.rows_per_s > 0.0).collect();
    ranked.sort_by(|a, b| b.rows_per_s.total_cmp(&a.rows_per_s));
    let (Some(fastest), Some(slowest)) = (ranked.first(), ranked.last()) else {
        return finding(
            Limit::Unknown,
            "No Avro arm has an end-to-end rate yet, so the bottleneck cannot be placed."
                .to_string(),
        );
    };
    if ranked.len() < 2 {
        return finding(
            Limit::Unknown,
            format!(
                "Only {} has an end-to-end rate: placing the bottleneck takes two Avro arms \
                 or more at one point.",
                fastest.label
            ),
        );
    }
    let spread = fastest.rows_per_s / slowest.rows_per_s - 1.0;
    let within = format!(
        "The Avro arms land within {} of each other ({} to {} rows/s)",
        percent(spread),
        fixed(slowest.rows_per_s, 0),
        fixed(fastest.rows_per_s, 0)
    );
    // As a product, not a difference: 110,000 against 100,000 is 10 % exactly.
    if fastest.rows_per_s > slowest.rows_per_s * (1.0 + FLAT) {
        return finding(
            Limit::Pipeline,
            format!(
                "The Avro arms' rates differ by {}, from {} ({} rows/s) down to {} ({} rows/s): \
                 the decoder and pipeline are the limit, not the sink.",
                percent(spread),
                fastest.label,
                fixed(fastest.rows_per_s, 0),
                slowest.label,
                fixed(slowest.rows_per_s, 0)
            ),
        );
    }
    match decode_multiple {
        Some(m) if m > 1.0 + FLAT => finding(
            Limit::Sink,
            format!(
                "{within} while the CPU rig puts the decoders {m:.1}× apart on decode: the sink \
                 (ClickHouse) is the limit, and the choice of decoder does not move the rate."
            ),
        ),
        Some(m) => finding(
            Limit::Unknown,
            format!(
                "{within}, but the CPU rig puts the decoders only {m:.1}× apart on decode, so \
                 the flat rate does not say what limits it."
            ),
        ),
        None => finding(
            Limit::Unknown,
            format!(
                "{within}: the sink (ClickHouse) may be the limit, but no CPU rig batch on this \
                 host shows how far apart the decoders are (suite rig cpu measures it)."
            ),
        ),
    }
}

/// A share as a percentage with one decimal: `0.8 %`.
fn percent(share: f64) -> String {
    format!("{} %", fixed(share * 100.0, 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rates(values: &[(&str, f64)]) -> Vec<ArmRate> {
        values
            .iter()
            .map(|(label, rows_per_s)| ArmRate {
                label: label.to_string(),
                rows_per_s: *rows_per_s,
            })
            .collect()
    }

    #[test]
    fn a_flat_rate_over_decoders_the_rig_sets_apart_is_the_sink() {
        let arms = rates(&[
            ("fast-borrowed · RowBinary", 212_607.0),
            ("apache-owned · Native", 213_553.0),
            ("fast-owned · Native", 212_650.0),
        ]);
        let cpu = CpuUse {
            product: 61.2,
            sink: 148.9,
        };
        let found = bottleneck(&arms, Some(7.2), Some(cpu));
        assert_eq!(found.limit, Limit::Sink);
        assert_eq!(
            found.text,
            "The Avro arms land within 0.4 % of each other (212,607 to 213,553 rows/s) while \
             the CPU rig puts the decoders 7.2× apart on decode: the sink (ClickHouse) is the \
             limit, and the choice of decoder does not move the rate. ClickHouse used more CPU \
             than the product (149 % against 61 % of one core, medians over the Avro arms' runs)."
        );
    }

    #[test]
    fn rates_that_differ_put_the_limit_in_the_pipeline() {
        let arms = rates(&[
            ("apache-owned · RowBinary", 100_000.0),
            ("fast-borrowed · RowBinary", 180_000.0),
        ]);
        let cpu = CpuUse {
            product: 190.0,
            sink: 40.0,
        };
        let found = bottleneck(&arms, Some(7.2), Some(cpu));
        assert_eq!(found.limit, Limit::Pipeline);
        assert!(
            found.text.starts_with(
                "The Avro arms' rates differ by 80.0 %, from fast-borrowed · RowBinary \
                 (180,000 rows/s) down to apache-owned · RowBinary (100,000 rows/s): the \
                 decoder and pipeline are the limit, not the sink."
            ),
            "{}",
            found.text
        );
        assert!(found.text.ends_with(
            "The product used more CPU than ClickHouse (190 % against 40 % of one core, \
             medians over the Avro arms' runs)."
        ));
    }

    #[test]
    fn ten_percent_is_still_flat_and_a_flat_rate_needs_the_rig_to_tell() {
        let arms = rates(&[("a", 100_000.0), ("b", 110_000.0)]);
        assert_eq!(bottleneck(&arms, Some(9.0), None).limit, Limit::Sink);
        // Decoders the rig cannot tell apart: a flat rate says nothing.
        assert_eq!(bottleneck(&arms, Some(1.05), None).limit, Limit::Unknown);
        let unconfirmed = bottleneck(&arms, None, None);
        assert_eq!(unconfirmed.limit, Limit::Unknown);
        assert!(
            unconfirmed.text.contains("suite rig cpu"),
            "{}",
            unconfirmed.text
        );
        let wider = rates(&[("a", 100_000.0), ("b", 110_100.0)]);
        assert_eq!(bottleneck(&wider, Some(9.0), None).limit, Limit::Pipeline);
    }

    #[test]
    fn one_arm_alone_places_nothing() {
        let found = bottleneck(
            &rates(&[("fast-borrowed · RowBinary", 1.0)]),
            Some(9.0),
            None,
        );
        assert_eq!(found.limit, Limit::Unknown);
        assert!(found.text.starts_with("Only fast-borrowed · RowBinary"));
        assert_eq!(bottleneck(&[], None, None).limit, Limit::Unknown);
    }
}
