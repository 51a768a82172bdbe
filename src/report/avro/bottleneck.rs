//! Where the Avro pipeline's bottleneck is, judged from the figures alone.
//! An arm that mostly kept up with its load was limited by the load itself (gendata
//! on this host, when it offered as fast as it could), so only the arms that
//! fell behind say what limits the pipeline: when the CPU rig shows the
//! decoders apart but those arms land at one rate, the decoder is not what
//! limits the rate, the sink is; when their rates differ, the decoder and
//! pipeline are.

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
    /// Most runs of the arm kept up with their load (keep-up or draining,
    /// not saturated): the product took all that was offered.
    pub(super) kept_up: bool,
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
    /// The offered load: every arm kept up with it.
    Load,
    /// The figures do not say.
    Unknown,
}

impl Limit {
    /// The limit in a few words, as the page heads the sentence with it.
    pub(super) fn as_str(self) -> &'static str {
        match self {
            Limit::Sink => "the sink (ClickHouse)",
            Limit::Pipeline => "the decoder and pipeline",
            Limit::Load => "the load offered (gendata), not the pipeline",
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

/// Where the arms' end-to-end rates put the bottleneck: the load when an
/// arm kept up, else the pipeline when the rates differ, else the sink when
/// the CPU rig shows the decoders far apart.
fn rate_finding(arms: &[ArmRate], decode_multiple: Option<f64>) -> Finding {
    let measured: Vec<&ArmRate> = arms.iter().filter(|a| a.rows_per_s > 0.0).collect();
    let (kept_up, behind): (Vec<&ArmRate>, Vec<&ArmRate>) =
        measured.iter().partition(|a| a.kept_up);
    if !kept_up.is_empty() {
        return load_finding(&kept_up, &behind);
    }
    let mut ranked = behind;
    ranked.sort_by(|a, b| b.rows_per_s.total_cmp(&a.rows_per_s));
    let (Some(fastest), Some(slowest)) = (ranked.first(), ranked.last()) else {
        return Finding {
            limit: Limit::Unknown,
            text: "No Avro arm has an end-to-end rate yet, so the bottleneck cannot be placed."
                .to_string(),
        };
    };
    if ranked.len() < 2 {
        return Finding {
            limit: Limit::Unknown,
            text: format!(
                "Only {} has an end-to-end rate: placing the bottleneck takes two Avro arms \
                 or more at one point.",
                fastest.label
            ),
        };
    }
    spread_finding(fastest, slowest, decode_multiple)
}

/// Some arms kept up with the load: the load set their rate, and the
/// pipeline that of the arms that fell behind.
fn load_finding(kept_up: &[&ArmRate], behind: &[&ArmRate]) -> Finding {
    let labels: Vec<&str> = kept_up.iter().map(|a| a.label.as_str()).collect();
    let top = kept_up.iter().map(|a| a.rows_per_s).fold(0.0, f64::max);
    let load = format!(
        "{} kept up with all the load offered (up to {} rows/s)",
        labels.join(", "),
        fixed(top, 0)
    );
    if behind.is_empty() {
        return Finding {
            limit: Limit::Load,
            text: format!(
                "{load}: the load, not the decoder or the sink, set the rate; a heavier \
                 load would be needed to reach either."
            ),
        };
    }
    let slow: Vec<String> = behind
        .iter()
        .map(|a| {
            format!(
                "{} fell behind at {} rows/s",
                a.label,
                fixed(a.rows_per_s, 0)
            )
        })
        .collect();
    Finding {
        limit: Limit::Pipeline,
        text: format!(
            "{load}, while {}: the decoder and pipeline limit the arms that fell behind, \
             and the sink took more than they could give it.",
            slow.join(", ")
        ),
    }
}

/// Every arm fell behind: rates that differ put the limit in the pipeline;
/// flat ones put it in the sink when the decoders are far apart on decode.
fn spread_finding(fastest: &ArmRate, slowest: &ArmRate, decode_multiple: Option<f64>) -> Finding {
    let finding = |limit, text: String| Finding { limit, text };
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
                kept_up: false,
            })
            .collect()
    }

    #[test]
    fn arms_that_kept_up_were_limited_by_the_load() {
        let mut arms = rates(&[
            ("fast-borrowed · RowBinary", 300_000.0),
            ("fast-owned · RowBinary", 290_000.0),
        ]);
        arms.iter_mut().for_each(|a| a.kept_up = true);
        let found = bottleneck(&arms, Some(6.9), None);
        assert_eq!(found.limit, Limit::Load);
        assert!(found.text.starts_with(
            "fast-borrowed · RowBinary, fast-owned · RowBinary kept up with all the load offered \
             (up to 300,000 rows/s): the load"
        ), "{}", found.text);
        arms.push(ArmRate {
            label: "apache-owned · RowBinary".into(),
            rows_per_s: 135_000.0,
            kept_up: false,
        });
        let found = bottleneck(&arms, Some(6.9), None);
        assert_eq!(found.limit, Limit::Pipeline);
        assert!(
            found
                .text
                .contains("apache-owned · RowBinary fell behind at 135,000 rows/s"),
            "{}",
            found.text
        );
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
