//! bench.yaml's `sink:`: the ClickHouse the ETL workloads write to.

use serde::{Deserialize, Serialize};

/// Which ClickHouse the ETL workloads write to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum SinkConfig {
    /// Debian's clickhouse-server, started by the suite on 127.0.0.1 with its
    /// data in the cache directory.
    Local {
        /// The HTTP port, which the suite and the products write through.
        #[serde(default = "default_sink_http_port")]
        http_port: u16,
        /// The native protocol's port, for `clickhouse-client --port`.
        #[serde(default = "default_sink_tcp_port")]
        tcp_port: u16,
    },
    /// Any ClickHouse reached over HTTP at `url`.
    External {
        /// `http://host:8123`; https is not supported.
        url: String,
        #[serde(default)]
        user: Option<String>,
        #[serde(default)]
        password: Option<String>,
    },
}

fn default_sink_http_port() -> u16 {
    18123
}
fn default_sink_tcp_port() -> u16 {
    19000
}

impl Default for SinkConfig {
    fn default() -> Self {
        SinkConfig::Local {
            http_port: default_sink_http_port(),
            tcp_port: default_sink_tcp_port(),
        }
    }
}

impl SinkConfig {
    /// The server's HTTP address.
    pub fn url(&self) -> String {
        match self {
            SinkConfig::Local { http_port, .. } => format!("http://127.0.0.1:{http_port}"),
            SinkConfig::External { url, .. } => url.clone(),
        }
    }
}
