//! `--set KEY=VALUE`: a bench.yaml setting changed for one batch's runs, so a
//! settings study is a command anyone can rerun. The changed setting is
//! recorded with each run, and every setting that shapes a run is part of
//! its configuration, so an overridden run is its own bench point.

use std::fmt;
use std::str::FromStr;

use yaml_serde::Value;

use super::{Bench, ConfigError, Product, Profile};

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

impl Setting {
    /// `run.deploy=NAME`, as `--deploy NAME` gives it.
    pub fn deploy(name: &str) -> Setting {
        Setting {
            key: "run.deploy".to_string(),
            value: name.to_string(),
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
    /// Only `client.*`, `run.commit_interval_ms.*`, `run.deploy`, `etl.*`
    /// and `product.*` (a key of the product's own `settings`): the
    /// settings a record's configuration carries, so the variants stay apart.
    pub settings: Vec<Setting>,
}

/// The keys a line may set for itself.
const LINE_KEYS: [&str; 5] = [
    "client.",
    "run.commit_interval_ms.",
    "run.deploy",
    "etl.",
    PRODUCT_PREFIX,
];

/// A line setting's prefix for a key of its product's own `settings`.
pub const PRODUCT_PREFIX: &str = "product.";

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
                        "{name}@{setting}: a line sets only client.*, run.commit_interval_ms.*, \
                         run.deploy, etl.* and product.* for itself; give other settings to the \
                         whole batch with --set"
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
            // The workload's own, applied to it (`Workload::with_settings`).
            if setting.key.starts_with(super::workload::WORKLOAD_PREFIX) {
                continue;
            }
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
            let mut root = yaml_serde::to_value(&bench)
                .map_err(|err| invalid(setting, format!("cannot represent bench.yaml: {err}")))?;
            let slot = slot(&mut root, &setting.key).map_err(|m| invalid(setting, m))?;
            *slot = typed_like(slot, &setting.value).map_err(|m| invalid(setting, m))?;
            bench =
                yaml_serde::from_value(root).map_err(|err| invalid(setting, err.to_string()))?;
            bench.check().map_err(|(_, m)| invalid(setting, m))?;
        }
        Ok(bench)
    }
}

/// What one line of a batch runs with: bench.yaml under its product's
/// expert profile when asked for, then the settings given (the batch's,
/// then the line's own); and the keys of its product's `settings` it has
/// otherwise.
#[derive(Debug, Clone)]
pub struct LineBench {
    pub bench: Bench,
    pub product_settings: std::collections::BTreeMap<String, serde_json::Value>,
}

impl Bench {
    /// This bench for a line of `product` under `profile` with `settings`
    /// given over it (`client.*`, ..., `product.*`): what a user sets wins
    /// over the profile.
    pub fn for_line(
        &self,
        product: &Product,
        profile: Profile,
        settings: &[Setting],
    ) -> Result<LineBench, ConfigError> {
        let (mut bench_settings, mut product_changes) = match profile {
            Profile::Uniform => (Vec::new(), Vec::new()),
            Profile::Expert => {
                let expert = product
                    .expert
                    .as_ref()
                    .ok_or_else(|| ConfigError::Invalid {
                        path: product.path.clone(),
                        message: format!(
                            "--profile expert: {} has no `expert:` section",
                            product.name
                        ),
                    })?;
                (expert.client_settings(), expert.settings_changes())
            }
        };
        for setting in settings {
            match setting.key.strip_prefix(PRODUCT_PREFIX) {
                Some(key) => product_changes.push((key.to_string(), setting.value.clone())),
                None => bench_settings.push(setting.clone()),
            }
        }
        Ok(LineBench {
            bench: self.with_settings(&bench_settings)?,
            product_settings: product_overrides(
                &product.name,
                &product.settings,
                &product_changes,
            )?,
        })
    }
}

/// `changes` (keys of the product's `settings`, without the prefix) applied
/// over `settings`, typed like the values they replace: only the keys that
/// differ from the product's own, as a record carries them. A key the
/// product does not have is an error naming it.
fn product_overrides(
    product: &str,
    settings: &std::collections::BTreeMap<String, Value>,
    changes: &[(String, String)],
) -> Result<std::collections::BTreeMap<String, serde_json::Value>, ConfigError> {
    let mut overrides = std::collections::BTreeMap::new();
    for (key, text) in changes {
        let invalid = |message: String| ConfigError::Setting {
            setting: format!("{PRODUCT_PREFIX}{key}={text}"),
            message,
        };
        let Some(current) = settings.get(key) else {
            let known: Vec<&str> = settings.keys().map(String::as_str).collect();
            return Err(invalid(format!(
                "{product} has no setting `{key}`; known: {}",
                if known.is_empty() {
                    "none".to_string()
                } else {
                    known.join(", ")
                }
            )));
        };
        let value = typed_like(current, text).map_err(invalid)?;
        if std::mem::discriminant(&value) != std::mem::discriminant(current) {
            return Err(invalid(format!(
                "`{text}` is not of the kind {product}'s `{key}` takes (now {})",
                serde_json::to_string(current).unwrap_or_default()
            )));
        }
        let json = serde_json::to_value(&value).map_err(|e| invalid(e.to_string()))?;
        if &value == current {
            overrides.remove(key);
        } else {
            overrides.insert(key.clone(), json);
        }
    }
    Ok(overrides)
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
        yaml_serde::from_str(text).map_err(|err| format!("`{text}` is not a value: {err}"))?;
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
        assert!("pathway@product.autocommit_duration_ms=2"
            .parse::<LineSpec>()
            .is_ok());
    }

    /// rustpipe's product.yaml with a setting and an expert profile of its own.
    fn product_with_expert(expert: &str) -> Product {
        let suite = crate::config::Suite::load(
            &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("bench.yaml"),
        )
        .unwrap();
        let mut product = suite.products["rustpipe"].clone();
        product.settings = yaml_serde::from_str("{work_us_per_record: 0, mode: fast}").unwrap();
        product.expert = Some(yaml_serde::from_str(expert).unwrap());
        product
    }

    const EXPERT: &str = "{client: {linger_ms: 0}, settings: {work_us_per_record: 5}, \
        sources: {linger_ms: doc one, work_us_per_record: doc two}}";

    #[test]
    fn the_expert_profile_changes_its_keys_over_the_uniform_one() {
        let product = product_with_expert(EXPERT);
        let base = bench();
        let uniform = base.for_line(&product, Profile::Uniform, &[]).unwrap();
        assert_eq!(uniform.bench.client, base.client);
        assert!(uniform.product_settings.is_empty());
        let expert = base.for_line(&product, Profile::Expert, &[]).unwrap();
        assert_eq!(expert.bench.client.linger_ms, 0);
        assert_eq!(
            expert.bench.client.fetch_min_bytes,
            base.client.fetch_min_bytes
        );
        assert_eq!(
            expert.product_settings,
            std::collections::BTreeMap::from([(
                "work_us_per_record".to_string(),
                serde_json::json!(5)
            )])
        );
        // A line's own settings go over the expert's.
        let spec: LineSpec = "rustpipe@product.work_us_per_record=0@client.linger_ms=2"
            .parse()
            .unwrap();
        let own = base
            .for_line(&product, Profile::Expert, &spec.settings)
            .unwrap();
        assert_eq!(own.bench.client.linger_ms, 2);
        assert!(
            own.product_settings.is_empty(),
            "back to the product's own value"
        );
    }

    #[test]
    fn a_product_setting_must_exist_and_keep_its_kind() {
        let product = product_with_expert(EXPERT);
        let base = bench();
        let with = |text: &str| {
            let spec: LineSpec = format!("rustpipe@{text}").parse().unwrap();
            base.for_line(&product, Profile::Uniform, &spec.settings)
                .map(|l| l.product_settings)
                .map_err(|e| e.to_string())
        };
        assert_eq!(
            with("product.mode=slow").unwrap()["mode"],
            serde_json::json!("slow")
        );
        let unknown = with("product.nope=1").unwrap_err();
        assert!(
            unknown.contains("rustpipe has no setting `nope`"),
            "{unknown}"
        );
        assert!(unknown.contains("work_us_per_record"), "{unknown}");
        let kind = with("product.work_us_per_record=fast").unwrap_err();
        assert!(kind.contains("not of the kind"), "{kind}");
    }

    #[test]
    fn an_expert_profile_without_a_source_or_outside_the_uniform_keys_is_refused() {
        let settings: std::collections::BTreeMap<String, Value> =
            yaml_serde::from_str("{autocommit_duration_ms: 10}").unwrap();
        let check = |yaml: &str| {
            yaml_serde::from_str::<crate::config::ExpertProfile>(yaml)
                .unwrap()
                .check(&settings)
        };
        assert!(check("{client: {linger_ms: 0}, sources: {linger_ms: docs}}").is_ok());
        let unsourced = check("{client: {linger_ms: 0}, sources: {}}").unwrap_err();
        assert!(
            unsourced.contains("no source for `linger_ms`"),
            "{unsourced}"
        );
        let foreign =
            check("{client: {buffer_memory: 1}, sources: {buffer_memory: d}}").unwrap_err();
        assert!(foreign.contains("not a client profile key"), "{foreign}");
        let unknown = check("{settings: {threads: 2}, sources: {threads: d}}").unwrap_err();
        assert!(
            unknown.contains("not one of this product's `settings`"),
            "{unknown}"
        );
        let stray =
            check("{client: {linger_ms: 0}, sources: {linger_ms: a, acks: b}}").unwrap_err();
        assert!(stray.contains("cites `acks`"), "{stray}");
        assert!(check("{sources: {}}")
            .unwrap_err()
            .contains("changes nothing"));
        assert!(check("{unchanged: the docs name no other setting}").is_ok());
        let blank = check("{unchanged: ' '}").unwrap_err();
        assert!(blank.contains("is empty"), "{blank}");
        let both =
            check("{unchanged: why, client: {linger_ms: 0}, sources: {linger_ms: d}}").unwrap_err();
        assert!(both.contains("yet `client`"), "{both}");
        let no_expert = bench()
            .for_line(
                &{
                    let mut p = product_with_expert(EXPERT);
                    p.expert = None;
                    p
                },
                Profile::Expert,
                &[],
            )
            .unwrap_err()
            .to_string();
        assert!(
            no_expert.contains("has no `expert:` section"),
            "{no_expert}"
        );
    }
}
