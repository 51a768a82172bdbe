//! `--set KEY=VALUE`: a bench.yaml setting changed for one batch's runs, so a
//! settings study is a command anyone can rerun. The changed setting is
//! recorded with each run, and every setting that shapes a run is part of
//! its configuration, so an overridden run is its own bench point.

use std::fmt;
use std::str::FromStr;

use serde_yaml::Value;

use super::{Bench, ConfigError};

/// One `KEY=VALUE`, KEY a dotted path into bench.yaml (`client.linger_ms`,
/// `run.commit_interval_ms.at-least-once`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Setting {
    pub key: String,
    pub value: String,
}

impl FromStr for Setting {
    type Err = String;

    fn from_str(text: &str) -> Result<Setting, String> {
        match text.split_once('=') {
            Some((key, value)) if !key.trim().is_empty() => Ok(Setting {
                key: key.trim().to_string(),
                value: value.trim().to_string(),
            }),
            _ => Err(format!(
                "`{text}` is not KEY=VALUE (for example client.fetch_min_bytes=1)"
            )),
        }
    }
}

impl fmt::Display for Setting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}={}", self.key, self.value)
    }
}

/// A line with settings of its own, `LINE@KEY=VALUE[@KEY=VALUE...]`: the
/// same line under two client profiles runs interleaved in one batch, and
/// `suite compare` pairs the two round by round.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LineSpec {
    pub name: String,
    /// Only `client.*`, `run.commit_interval_ms.*` and `etl.*`: the
    /// settings a record's configuration carries, so the variants stay apart.
    pub settings: Vec<Setting>,
}

/// The keys a line may set for itself.
const LINE_KEYS: [&str; 3] = ["client.", "run.commit_interval_ms.", "etl."];

impl FromStr for LineSpec {
    type Err = String;

    fn from_str(text: &str) -> Result<LineSpec, String> {
        let mut parts = text.split('@');
        let name = parts.next().unwrap_or_default().trim().to_string();
        if name.is_empty() {
            return Err(format!("`{text}` names no line"));
        }
        let settings = parts
            .map(|part| {
                let setting: Setting = part.parse()?;
                if LINE_KEYS.iter().any(|k| setting.key.starts_with(k)) {
                    Ok(setting)
                } else {
                    Err(format!(
                        "{name}@{setting}: a line sets only client.*, run.commit_interval_ms.* \
                         and etl.* for itself; give other settings to the whole batch with --set"
                    ))
                }
            })
            .collect::<Result<_, _>>()?;
        Ok(LineSpec { name, settings })
    }
}

impl fmt::Display for LineSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.name)?;
        for setting in &self.settings {
            write!(f, "@{setting}")?;
        }
        Ok(())
    }
}

impl Bench {
    /// This bench with `settings` applied in order, checked as bench.yaml is.
    pub fn with_settings(&self, settings: &[Setting]) -> Result<Bench, ConfigError> {
        let invalid = |setting: &Setting, message: String| ConfigError::Setting {
            setting: setting.to_string(),
            message,
        };
        let mut bench = self.clone();
        for setting in settings {
            let refused = match setting.key.as_str() {
                "bench_version" => Some("bench_version belongs to the suite, not to a run"),
                "results_dir" => Some("the results folder is chosen with --results"),
                "cache_dir" => Some("the cache is chosen with STREAMSUITE_CACHE"),
                _ => None,
            };
            if let Some(why) = refused {
                return Err(invalid(setting, why.to_string()));
            }
            // Each setting is applied and checked on its own, so an error
            // names the one at fault.
            let mut root = serde_yaml::to_value(&bench)
                .map_err(|err| invalid(setting, format!("cannot represent bench.yaml: {err}")))?;
            let slot = slot(&mut root, &setting.key).map_err(|m| invalid(setting, m))?;
            *slot = typed_like(slot, &setting.value).map_err(|m| invalid(setting, m))?;
            bench =
                serde_yaml::from_value(root).map_err(|err| invalid(setting, err.to_string()))?;
            bench.check().map_err(|(_, m)| invalid(setting, m))?;
        }
        Ok(bench)
    }
}

/// The value at dotted `key`, which must already be there: a key bench.yaml
/// does not have is a typo, not a new setting.
fn slot<'v>(root: &'v mut Value, key: &str) -> Result<&'v mut Value, String> {
    let mut at = root;
    let mut path = String::new();
    for part in key.split('.') {
        let Value::Mapping(map) = at else {
            return Err(format!("`{path}` is a value, not a section"));
        };
        if !map.contains_key(part) {
            let known: Vec<&str> = map.keys().filter_map(|k| k.as_str()).collect();
            let within = if path.is_empty() {
                "bench.yaml".to_string()
            } else {
                format!("`{path}`")
            };
            return Err(format!(
                "unknown key `{part}` in {within}; known: {}",
                known.join(", ")
            ));
        }
        let next = map.get_mut(part).expect("checked just above");
        if !path.is_empty() {
            path.push('.');
        }
        path.push_str(part);
        at = next;
    }
    if matches!(at, Value::Mapping(_)) {
        return Err(format!("`{key}` is a section; set one of its keys"));
    }
    Ok(at)
}

/// `text` read as YAML, kept a string where the setting is one (`acks=1`).
fn typed_like(current: &Value, text: &str) -> Result<Value, String> {
    let parsed: Value =
        serde_yaml::from_str(text).map_err(|err| format!("`{text}` is not a value: {err}"))?;
    Ok(match (current, &parsed) {
        (Value::String(_), Value::Number(_) | Value::Bool(_)) => Value::String(text.to_string()),
        _ => parsed,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Acks, Delivery};

    fn bench() -> Bench {
        Bench::from_file(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("bench.yaml"))
            .unwrap()
    }

    fn set(bench: &Bench, settings: &[&str]) -> Result<Bench, String> {
        let settings: Vec<Setting> = settings.iter().map(|s| s.parse().unwrap()).collect();
        bench.with_settings(&settings).map_err(|e| e.to_string())
    }

    #[test]
    fn a_setting_changes_only_its_key() {
        let base = bench();
        let changed = set(
            &base,
            &[
                "client.fetch_min_bytes=65536",
                "client.acks=1",
                "run.commit_interval_ms.at-least-once=10",
            ],
        )
        .unwrap();
        assert_eq!(changed.client.fetch_min_bytes, 65536);
        assert_eq!(changed.client.acks, Acks::Leader);
        assert_eq!(
            changed
                .run
                .commit_interval_ms
                .for_delivery(Delivery::AtLeastOnce),
            10
        );
        assert_eq!(changed.client.linger_ms, base.client.linger_ms);
        assert_eq!(changed.run.rate, base.run.rate);
        assert_eq!(changed.tolerances.lag_drift, base.tolerances.lag_drift);
    }

    #[test]
    fn an_unknown_key_or_a_wrong_type_is_one_line() {
        let base = bench();
        let err = set(&base, &["client.fetch_min_byte=1"]).unwrap_err();
        assert!(
            err.starts_with(
                "--set client.fetch_min_byte=1: unknown key `fetch_min_byte` in `client`; known: "
            ),
            "{err}"
        );
        assert!(err.contains("fetch_min_bytes"), "{err}");
        let err = set(&base, &["clients.linger_ms=1"]).unwrap_err();
        assert!(err.contains("unknown key `clients` in bench.yaml"), "{err}");
        let err = set(&base, &["client.fetch_min_bytes=lots"]).unwrap_err();
        assert!(
            err.starts_with("--set client.fetch_min_bytes=lots: "),
            "{err}"
        );
        assert!(err.contains("invalid type"), "{err}");
        let err = set(&base, &["client.compression=brotli"]).unwrap_err();
        assert!(err.contains("unknown variant `brotli`"), "{err}");
        let err = set(&base, &["client=1"]).unwrap_err();
        assert!(err.contains("`client` is a section"), "{err}");
        let err = set(&base, &["run.window_s=2"]).unwrap_err();
        assert!(err.contains("run.window_s 2 is too short"), "{err}");
        let err = set(&base, &["bench_version=9"]).unwrap_err();
        assert!(err.contains("belongs to the suite"), "{err}");
        let err = set(&base, &["results_dir=elsewhere"]).unwrap_err();
        assert!(err.contains("--results"), "{err}");
        for err in [
            set(&base, &["client.linger_ms=-1"]).unwrap_err(),
            set(&base, &["client.linger_ms=1", "client.acks=2"]).unwrap_err(),
        ] {
            assert_eq!(err.lines().count(), 1, "{err}");
        }
        assert!("linger_ms".parse::<Setting>().is_err());
        assert!("=1".parse::<Setting>().is_err());
    }

    #[test]
    fn a_line_sets_its_client_profile_and_commit_interval_only() {
        let spec: LineSpec = "quix@client.fetch_min_bytes=65536@client.linger_ms=5"
            .parse()
            .unwrap();
        assert_eq!(spec.name, "quix");
        assert_eq!(spec.settings.len(), 2);
        assert_eq!(
            spec.to_string(),
            "quix@client.fetch_min_bytes=65536@client.linger_ms=5"
        );
        let plain: LineSpec = "quix".parse().unwrap();
        assert!(plain.settings.is_empty());
        let err = "quix@run.rate=5".parse::<LineSpec>().unwrap_err();
        assert!(
            err.contains("give other settings to the whole batch with --set"),
            "{err}"
        );
        assert!("@client.linger_ms=1".parse::<LineSpec>().is_err());
        assert!("flink@run.commit_interval_ms.at-least-once=10"
            .parse::<LineSpec>()
            .is_ok());
    }
}
