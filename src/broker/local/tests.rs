//! The checks of local.

use super::*;

fn cluster(nodes: u32, replication: u32, min_insync_replicas: u32) -> LocalBroker {
    let config = BrokerConfig::Local {
        version: "4.4.0".into(),
        port: 29092,
        heap_mb: 512,
        warmup_s: 0,
        nodes,
        replication,
        min_insync_replicas,
    };
    let cache = Cache::at(PathBuf::from("/cache"));
    LocalBroker::from_config(&config, &cache).unwrap()
}

#[test]
fn a_cluster_names_every_node_as_a_voter_on_ports_of_its_own() {
    let broker = cluster(3, 3, 2);
    assert_eq!(
        broker.bootstrap(),
        "127.0.0.1:29092,127.0.0.1:29094,127.0.0.1:29096"
    );
    let second = broker.server_properties(NodeId(2));
    for line in [
        "node.id=2",
        "controller.quorum.voters=1@127.0.0.1:29093,2@127.0.0.1:29095,3@127.0.0.1:29097",
        "listeners=PLAINTEXT://127.0.0.1:29094,CONTROLLER://127.0.0.1:29095",
        "default.replication.factor=3",
        "min.insync.replicas=2",
        "transaction.state.log.replication.factor=3",
        "transaction.state.log.min.isr=2",
        "log.dirs=/cache/broker/cluster-29092-of-3/node-2/data-4.4.0",
    ] {
        assert!(second.lines().any(|l| l == line), "{line} in\n{second}");
    }
    // Nodes of a cluster keep Kafka's session: a killed node's partitions
    // move to the others, and a shorter session would fence a slow node.
    assert!(!second.contains("broker.session.timeout.ms"), "{second}");
}

#[test]
fn a_single_node_keeps_its_layout_and_its_own_quorum() {
    let broker = cluster(1, 1, 1);
    assert_eq!(broker.bootstrap(), "127.0.0.1:29092");
    assert_eq!(broker.log_file(), PathBuf::from("/cache/broker/broker.log"));
    let only = broker.server_properties(NodeId(1));
    for line in [
        "controller.quorum.bootstrap.servers=127.0.0.1:29093",
        "offsets.topic.replication.factor=1",
        "transaction.state.log.min.isr=1",
        "broker.session.timeout.ms=3000",
        "broker.heartbeat.interval.ms=500",
    ] {
        assert!(only.lines().any(|l| l == line), "{line} in\n{only}");
    }
}

#[test]
fn cluster_ids_never_look_like_options() {
    // One id in 64 would start with `-` if nothing prevented it.
    for _ in 0..2000 {
        let id = cluster_id().unwrap();
        assert_eq!(id.len(), 22);
        assert!(!id.starts_with('-'), "{id}");
    }
}
