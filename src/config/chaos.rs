//! The faults a run injects: `--chaos` on `suite run`, and the campaigns of
//! `suite chaos`.

use std::str::FromStr;

/// The faults of one run, at times in its measurement window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChaosPlan {
    /// When the product's whole tree gets SIGKILL, in ms into the window, in
    /// increasing order.
    pub kills_ms: Vec<u64>,
    /// Start the product again, with the same identity, after each kill.
    pub restart: bool,
    /// When a node of the local broker gets SIGKILL and is started again,
    /// in s into the window.
    pub broker_restart_at_s: Option<u64>,
    /// The node killed is the one that leads the input partition; otherwise
    /// the cluster's last node (the only one, on a single node).
    pub broker_leader: bool,
    /// Kill one member of this role of the product's deployment (a
    /// TaskManager, a Hazelcast member) instead of the whole product: the
    /// role's members in turn, kill after kill.
    pub member: Option<String>,
}

/// How a campaign spaces its kills.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Spacing {
    /// Every so many seconds, the first that far into the window.
    Every { seconds: u64 },
    /// At seeded random times in a window of `window_s`: the window is cut
    /// into `kills + 1` equal slots and kill k falls in the middle half of
    /// slot k, so kills are at least half a slot apart and the last slot is
    /// left for the last recovery.
    Seeded { seed: u64, window_s: u64 },
}

/// Seconds of window after a campaign's last kill, so its recovery can be
/// seen, when the campaign's spacing sets no window of its own.
const TAIL_S: u64 = 10;

impl ChaosPlan {
    /// `kills` SIGKILLs with restarts, spaced as `spacing` says; returns the
    /// plan and the window it needs.
    pub fn campaign(kills: u32, spacing: Spacing) -> Result<(ChaosPlan, u64), String> {
        if kills == 0 {
            return Err("--kills must be at least 1".into());
        }
        let (kills_ms, window_s) = match spacing {
            Spacing::Every { seconds } => {
                if seconds == 0 {
                    return Err("--every must be at least 1 s".into());
                }
                let times = (1..=u64::from(kills)).map(|k| k * seconds * 1000).collect();
                (times, u64::from(kills) * seconds + seconds.max(TAIL_S))
            }
            Spacing::Seeded { seed, window_s } => {
                let slot_ms = window_s * 1000 / (u64::from(kills) + 1);
                if slot_ms < 1000 {
                    return Err(format!(
                        "{kills} kills do not fit a {window_s} s window a second apart; \
                         give a longer --window"
                    ));
                }
                let mut state = seed;
                let times = (0..u64::from(kills))
                    .map(|k| {
                        // Within the middle half of slot k, so consecutive
                        // kills are at least half a slot apart.
                        let jitter = splitmix64(&mut state) % (slot_ms / 2);
                        k * slot_ms + slot_ms / 4 + jitter
                    })
                    .collect();
                (times, window_s)
            }
        };
        Ok((
            ChaosPlan {
                kills_ms,
                restart: true,
                broker_restart_at_s: None,
                broker_leader: false,
                member: None,
            },
            window_s,
        ))
    }

    /// The first fault time that falls at or after `window_s`, in words.
    pub fn outside(&self, window_s: u64) -> Option<String> {
        if let Some(&kill) = self.kills_ms.iter().find(|&&ms| ms >= window_s * 1000) {
            return Some(format!("a kill at {} s", kill as f64 / 1000.0));
        }
        self.broker_restart_at_s
            .filter(|&s| s >= window_s)
            .map(|s| format!("the broker restart at {s} s"))
    }
}

/// One step of SplitMix64: a small, well-mixed, seedable sequence.
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Seconds, written `15s` or `15`.
fn seconds(value: &str) -> Option<u64> {
    value.strip_suffix('s').unwrap_or(value).parse().ok()
}

impl FromStr for ChaosPlan {
    type Err = String;

    fn from_str(text: &str) -> Result<ChaosPlan, String> {
        let usage = "expected kill-at=<seconds>s[,restart][,member=<role>] and/or \
                     broker-kill-at=<seconds>s[,leader], such as kill-at=15s,restart";
        let mut plan = ChaosPlan {
            kills_ms: Vec::new(),
            restart: false,
            broker_restart_at_s: None,
            broker_leader: false,
            member: None,
        };
        for part in text.split(',').map(str::trim) {
            if let Some(value) = part.strip_prefix("kill-at=") {
                let s = seconds(value).ok_or_else(|| format!("`{part}` in `{text}`: {usage}"))?;
                if !plan.kills_ms.is_empty() {
                    return Err(format!(
                        "`{text}`: one kill-at per run; `suite chaos` runs campaigns"
                    ));
                }
                plan.kills_ms.push(s * 1000);
            } else if let Some(value) = part
                .strip_prefix("broker-kill-at=")
                // The name it had before clusters: on one node, the same fault.
                .or_else(|| part.strip_prefix("broker-restart-at="))
            {
                let s = seconds(value).ok_or_else(|| format!("`{part}` in `{text}`: {usage}"))?;
                plan.broker_restart_at_s = Some(s);
            } else if let Some(role) = part.strip_prefix("member=") {
                if role.is_empty() {
                    return Err(format!("`{part}` in `{text}`: name the member's role"));
                }
                plan.member = Some(role.to_string());
            } else if part == "restart" {
                plan.restart = true;
            } else if part == "leader" {
                plan.broker_leader = true;
            } else {
                return Err(format!("`{part}` in `{text}`: {usage}"));
            }
        }
        if plan.kills_ms.is_empty() && plan.broker_restart_at_s.is_none() {
            return Err(format!("`{text}`: {usage}"));
        }
        if plan.restart && plan.kills_ms.is_empty() {
            return Err(format!("`{text}`: `restart` goes with kill-at"));
        }
        if plan.member.is_some() && plan.kills_ms.is_empty() {
            return Err(format!("`{text}`: `member` goes with kill-at"));
        }
        if plan.broker_leader && plan.broker_restart_at_s.is_none() {
            return Err(format!("`{text}`: `leader` goes with broker-kill-at"));
        }
        Ok(plan)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(kills_ms: &[u64], restart: bool, broker: Option<u64>) -> ChaosPlan {
        ChaosPlan {
            kills_ms: kills_ms.to_vec(),
            restart,
            broker_restart_at_s: broker,
            broker_leader: false,
            member: None,
        }
    }

    #[test]
    fn plans_parse_with_and_without_restart() {
        assert_eq!("kill-at=15s".parse(), Ok(plan(&[15_000], false, None)));
        assert_eq!("kill-at=7,restart".parse(), Ok(plan(&[7_000], true, None)));
        assert_eq!(
            "broker-restart-at=20s".parse(),
            Ok(plan(&[], false, Some(20)))
        );
        assert_eq!(
            "kill-at=5s,restart,broker-restart-at=20s".parse(),
            Ok(plan(&[5_000], true, Some(20)))
        );
        assert_eq!("broker-kill-at=20s".parse(), Ok(plan(&[], false, Some(20))));
        assert_eq!(
            "kill-at=5s,restart,member=taskmanager".parse(),
            Ok(ChaosPlan {
                member: Some("taskmanager".into()),
                ..plan(&[5_000], true, None)
            })
        );
        assert_eq!(
            "broker-kill-at=20s,leader".parse(),
            Ok(ChaosPlan {
                broker_leader: true,
                ..plan(&[], false, Some(20))
            })
        );
    }

    #[test]
    fn a_bad_plan_says_what_is_expected() {
        for bad in [
            "kill=15s",
            "kill-at=soon",
            "kill-at=15s,reboot",
            "",
            "restart",
            "broker-restart-at=later",
            "kill-at=5s,leader",
            "member=worker",
        ] {
            let err = bad.parse::<ChaosPlan>().unwrap_err();
            assert!(
                err.contains("kill-at=<seconds>s") || err.contains("goes with"),
                "{bad}: {err}"
            );
        }
        let err = "kill-at=5s,kill-at=9s".parse::<ChaosPlan>().unwrap_err();
        assert!(err.contains("suite chaos"), "{err}");
    }

    #[test]
    fn a_campaign_every_s_seconds_kills_at_each_step_and_leaves_a_tail() {
        let (plan, window_s) = ChaosPlan::campaign(3, Spacing::Every { seconds: 10 }).unwrap();
        assert_eq!(plan.kills_ms, [10_000, 20_000, 30_000]);
        assert!(plan.restart);
        assert_eq!(window_s, 30 + TAIL_S);
        assert_eq!(plan.outside(window_s), None);
        let (_, window_s) = ChaosPlan::campaign(2, Spacing::Every { seconds: 60 }).unwrap();
        assert_eq!(window_s, 180);
    }

    #[test]
    fn a_seeded_campaign_is_repeatable_ordered_and_inside_its_window() {
        let spacing = Spacing::Seeded {
            seed: 42,
            window_s: 110,
        };
        let (first, window_s) = ChaosPlan::campaign(10, spacing).unwrap();
        let (again, _) = ChaosPlan::campaign(10, spacing).unwrap();
        assert_eq!(first, again);
        assert_eq!(window_s, 110);
        assert_eq!(first.kills_ms.len(), 10);
        // 10 slots of 10 s: each kill in the middle half of its slot.
        for (k, pair) in first.kills_ms.windows(2).enumerate() {
            assert!(
                pair[1] - pair[0] >= 5_000,
                "kills {k} and {}: {pair:?}",
                k + 1
            );
        }
        assert!(*first.kills_ms.last().unwrap() < 100_000);
        let (other, _) = ChaosPlan::campaign(
            10,
            Spacing::Seeded {
                seed: 43,
                window_s: 110,
            },
        )
        .unwrap();
        assert_ne!(first.kills_ms, other.kills_ms);
    }

    #[test]
    fn a_campaign_that_cannot_fit_is_refused() {
        assert!(ChaosPlan::campaign(0, Spacing::Every { seconds: 5 }).is_err());
        assert!(ChaosPlan::campaign(3, Spacing::Every { seconds: 0 }).is_err());
        assert!(ChaosPlan::campaign(
            20,
            Spacing::Seeded {
                seed: 1,
                window_s: 10
            }
        )
        .is_err());
    }

    #[test]
    fn a_fault_past_the_window_is_named() {
        assert_eq!(
            plan(&[5_000, 31_000], true, None).outside(30),
            Some("a kill at 31 s".into())
        );
        assert_eq!(
            plan(&[], false, Some(30)).outside(30),
            Some("the broker restart at 30 s".into())
        );
        assert_eq!(plan(&[29_999], true, Some(29)).outside(30), None);
    }
}
