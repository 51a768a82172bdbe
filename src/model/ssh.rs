//! An SSH host as bench.yaml names it: `ssh://user@host:port`.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Where a product's processes run: a host reached over SSH.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct SshAddress {
    /// The login user; ssh's own choice (its config, then the local user)
    /// when absent.
    pub user: Option<String>,
    pub host: String,
    /// ssh's own choice (its config, then 22) when absent.
    pub port: Option<u16>,
}

impl SshAddress {
    /// Parses `ssh://[user@]host[:port]`; an IPv6 host goes in brackets.
    pub fn parse(text: &str) -> Result<SshAddress, String> {
        let rest = text
            .strip_prefix("ssh://")
            .ok_or_else(|| format!("`{text}` is not an ssh:// address (ssh://user@host:port)"))?;
        let (user, hostport) = match rest.rsplit_once('@') {
            Some((user, hostport)) if !user.is_empty() => (Some(user.to_string()), hostport),
            Some(_) => return Err(format!("`{text}` has an empty user before `@`")),
            None => (None, rest),
        };
        let (host, port) = if let Some(bracketed) = hostport.strip_prefix('[') {
            let (host, after) = bracketed
                .split_once(']')
                .ok_or_else(|| format!("`{text}` opens `[` without closing it"))?;
            (host, after.strip_prefix(':'))
        } else {
            match hostport.rsplit_once(':') {
                Some((host, port)) => (host, Some(port)),
                None => (hostport, None),
            }
        };
        if host.is_empty() || host.contains(['/', ' ', '@']) {
            return Err(format!("`{text}` names no host"));
        }
        let port = port
            .map(|p| {
                p.parse::<u16>()
                    .ok()
                    .filter(|&p| p > 0)
                    .ok_or_else(|| format!("`{text}` has port `{p}`, which is not 1-65535"))
            })
            .transpose()?;
        Ok(SshAddress {
            user,
            host: host.to_string(),
            port,
        })
    }

    /// `user@host`, as ssh takes it on its command line.
    pub fn destination(&self) -> String {
        match &self.user {
            Some(user) => format!("{user}@{}", self.host),
            None => self.host.clone(),
        }
    }

    /// Whether the host is this machine's loopback: only there can the
    /// product reach a broker the suite started on 127.0.0.1.
    pub fn is_loopback(&self) -> bool {
        self.host == "localhost"
            || self
                .host
                .parse::<std::net::IpAddr>()
                .is_ok_and(|ip| ip.is_loopback())
    }
}

impl fmt::Display for SshAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ssh://")?;
        if let Some(user) = &self.user {
            write!(f, "{user}@")?;
        }
        if self.host.contains(':') {
            write!(f, "[{}]", self.host)?;
        } else {
            write!(f, "{}", self.host)?;
        }
        if let Some(port) = self.port {
            write!(f, ":{port}")?;
        }
        Ok(())
    }
}

impl Serialize for SshAddress {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for SshAddress {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        SshAddress::parse(&text).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_parse_and_print_back() {
        for text in [
            "ssh://bench@10.0.0.5",
            "ssh://bench@10.0.0.5:2222",
            "ssh://engine-1.example.net",
            "ssh://root@[::1]:2299",
        ] {
            assert_eq!(SshAddress::parse(text).unwrap().to_string(), text);
        }
        let a = SshAddress::parse("ssh://bench@10.0.0.5:2222").unwrap();
        assert_eq!(a.user.as_deref(), Some("bench"));
        assert_eq!((a.host.as_str(), a.port), ("10.0.0.5", Some(2222)));
        assert_eq!(a.destination(), "bench@10.0.0.5");
        assert!(!a.is_loopback());
        assert!(SshAddress::parse("ssh://127.0.0.1").unwrap().is_loopback());
        assert!(SshAddress::parse("ssh://u@[::1]").unwrap().is_loopback());
        assert!(SshAddress::parse("ssh://localhost:22")
            .unwrap()
            .is_loopback());
    }

    #[test]
    fn a_bad_address_says_what_is_wrong() {
        let error = |text: &str| SshAddress::parse(text).unwrap_err();
        assert!(error("bench@10.0.0.5").contains("not an ssh:// address"));
        assert!(error("ssh://@host").contains("empty user"));
        assert!(error("ssh://bench@").contains("names no host"));
        assert!(error("ssh://host:0").contains("not 1-65535"));
        assert!(error("ssh://host:http").contains("not 1-65535"));
        assert!(error("ssh://[::1:22").contains("without closing"));
        assert!(error("ssh://host/path").contains("names no host"));
    }
}
