//! Hosts beyond this one: a product's processes placed on other machines
//! and reached over SSH. gendata and the probe stay on this host, so
//! latency is read on one clock; the product's processes are started,
//! signalled and sampled over one connection per host.

pub mod launch;
mod session;

use std::collections::BTreeMap;
use std::sync::Arc;

use anyhow::Result;

pub use crate::model::ssh::SshAddress;
pub use session::RemoteHost;

use crate::config::Bench;

/// The connected hosts of each product bench.yaml places elsewhere.
#[derive(Default)]
pub struct Placements {
    hosts: BTreeMap<String, Vec<Arc<RemoteHost>>>,
}

impl Placements {
    /// Connects to the hosts of `products` that bench.yaml places
    /// elsewhere; an error names the host that could not be reached.
    pub fn connect<'a>(
        bench: &Bench,
        products: impl IntoIterator<Item = &'a str>,
    ) -> Result<Placements> {
        let mut hosts = BTreeMap::new();
        for product in products {
            let Some(addresses) = bench.hosts.get(product) else {
                continue;
            };
            if hosts.contains_key(product) {
                continue;
            }
            let connected = addresses
                .iter()
                .zip(1..)
                .map(|(address, index)| {
                    eprintln!("connecting to {address} for {product}");
                    RemoteHost::connect(address, index, bench.ssh.config.as_deref()).map(Arc::new)
                })
                .collect::<Result<Vec<_>>>()?;
            hosts.insert(product.to_string(), connected);
        }
        Ok(Placements { hosts })
    }

    /// The hosts `product` runs on; empty when it runs on this one.
    pub fn of(&self, product: &str) -> &[Arc<RemoteHost>] {
        self.hosts.get(product).map_or(&[], Vec::as_slice)
    }
}
