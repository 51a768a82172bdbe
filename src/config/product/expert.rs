//! A product's `expert:` profile: what its own experts set otherwise for
//! low latency, checked against the uniform profile, and handed over as
//! settings.

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::config::{Setting, CLIENT_KEYS};

/// A product's `expert:` section: the client profile keys and the keys of
/// its own `settings` that its experts set otherwise for low latency, each
/// with the documentation that recommends it. Only keys the uniform
/// profile has can change, so the two views differ exactly by these; a
/// product whose experts' documentation asks for nothing else says why.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpertProfile {
    #[serde(default)]
    pub client: BTreeMap<String, yaml_serde::Value>,
    #[serde(default)]
    pub settings: BTreeMap<String, yaml_serde::Value>,
    /// For each key changed above, where its engine's documentation says so.
    #[serde(default)]
    pub sources: BTreeMap<String, String>,
    /// Why the experts' settings are the uniform profile's, when they are.
    #[serde(default)]
    pub unchanged: Option<String>,
}

impl ExpertProfile {
    /// Every key is the uniform profile's (a client key, or one of the
    /// product's `settings`), and every key changed names its source; or
    /// nothing changes, for the reason `unchanged` gives.
    pub(in crate::config) fn check(
        &self,
        settings: &BTreeMap<String, yaml_serde::Value>,
    ) -> Result<(), String> {
        if let Some(why) = &self.unchanged {
            if why.trim().is_empty() {
                return Err(
                    "`expert.unchanged` is empty: say why the experts set nothing else".into(),
                );
            }
            if !self.client.is_empty() || !self.settings.is_empty() || !self.sources.is_empty() {
                return Err(
                    "`expert.unchanged` says the experts set nothing else, yet `client`, `settings` \
                     or `sources` has keys"
                        .into(),
                );
            }
            return Ok(());
        }
        if let Some(key) = self
            .client
            .keys()
            .find(|k| !CLIENT_KEYS.contains(&k.as_str()))
        {
            return Err(format!(
                "`expert.client` names `{key}`, which is not a client profile key ({})",
                CLIENT_KEYS.join(", ")
            ));
        }
        if let Some(key) = self.settings.keys().find(|k| !settings.contains_key(*k)) {
            return Err(format!(
                "`expert.settings` names `{key}`, which is not one of this product's `settings` \
                 (an expert changes a setting the uniform profile has)"
            ));
        }
        let changed: Vec<&String> = self.client.keys().chain(self.settings.keys()).collect();
        if changed.is_empty() {
            return Err(
                "`expert` changes nothing; give `client` or `settings` keys, or `unchanged` with the reason"
                    .into(),
            );
        }
        if let Some(key) = changed
            .iter()
            .find(|k| !self.sources.contains_key(k.as_str()))
        {
            return Err(format!(
                "`expert.sources` gives no source for `{key}`: cite the documentation that recommends it"
            ));
        }
        if let Some(key) = self.sources.keys().find(|k| !changed.contains(k)) {
            return Err(format!(
                "`expert.sources` cites `{key}`, which the expert profile does not change"
            ));
        }
        Ok(())
    }

    /// The profile as bench.yaml settings (`client.KEY=VALUE`), checked
    /// and typed the way `--set` is.
    pub fn client_settings(&self) -> Vec<Setting> {
        self.client
            .iter()
            .map(|(key, value)| Setting {
                key: format!("client.{key}"),
                value: yaml_text(value),
            })
            .collect()
    }

    /// The product settings it changes, as `product.KEY=VALUE` gives them.
    pub fn settings_changes(&self) -> Vec<(String, String)> {
        self.settings
            .iter()
            .map(|(key, value)| (key.clone(), yaml_text(value)))
            .collect()
    }
}

/// A YAML scalar as `--set` would take it.
fn yaml_text(value: &yaml_serde::Value) -> String {
    match value {
        yaml_serde::Value::String(text) => text.clone(),
        other => yaml_serde::to_string(other)
            .unwrap_or_default()
            .trim()
            .to_string(),
    }
}
