//! `--chaos`: the crash a run injects into its product.

use std::str::FromStr;

/// What `--chaos` asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChaosPlan {
    /// Seconds into the measurement window.
    pub kill_at_s: u64,
    /// Start the product again right after the kill.
    pub restart: bool,
}

impl FromStr for ChaosPlan {
    type Err = String;

    fn from_str(text: &str) -> Result<ChaosPlan, String> {
        let usage = "expected kill-at=<seconds>s[,restart], such as kill-at=15s,restart";
        let mut parts = text.split(',').map(str::trim);
        let kill_at_s = parts
            .next()
            .and_then(|p| p.strip_prefix("kill-at="))
            .map(|s| s.strip_suffix('s').unwrap_or(s))
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| format!("`{text}`: {usage}"))?;
        let mut restart = false;
        for part in parts {
            match part {
                "restart" => restart = true,
                other => return Err(format!("`{other}` in `{text}`: {usage}")),
            }
        }
        Ok(ChaosPlan { kill_at_s, restart })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans_parse_with_and_without_restart() {
        assert_eq!(
            "kill-at=15s".parse(),
            Ok(ChaosPlan {
                kill_at_s: 15,
                restart: false
            })
        );
        assert_eq!(
            "kill-at=7,restart".parse(),
            Ok(ChaosPlan {
                kill_at_s: 7,
                restart: true
            })
        );
    }

    #[test]
    fn a_bad_plan_says_what_is_expected() {
        for bad in ["kill=15s", "kill-at=soon", "kill-at=15s,reboot", ""] {
            let err = bad.parse::<ChaosPlan>().unwrap_err();
            assert!(err.contains("kill-at=<seconds>s"), "{bad}: {err}");
        }
    }
}
