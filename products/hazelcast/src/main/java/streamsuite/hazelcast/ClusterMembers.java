package streamsuite.hazelcast;

import com.hazelcast.config.Config;
import com.hazelcast.config.JoinConfig;
import com.hazelcast.config.NetworkConfig;
import java.util.ArrayList;
import java.util.List;
import streamsuite.common.BenchEnv;
import streamsuite.common.Settings;

/**
 * The cluster deployment's members as the suite starts them: BENCH_MEMBER_COUNT
 * members on loopback, member i listening on BENCH_PORT_MEMBER_i (ports the
 * suite picked free for the run), each joining the others by TCP/IP under the
 * run's cluster name.
 */
record ClusterMembers(int count, List<Integer> ports) {
    /** The map each member records its source's partition assignments in. */
    static final String ASSIGNED_MAP = "streamsuite-assigned";

    static ClusterMembers fromEnv(BenchEnv env, String countVariable) {
        int count = env.intAtLeast(countVariable, 1);
        List<Integer> ports = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            ports.add(env.intAtLeast("BENCH_PORT_MEMBER_" + i, 1));
        }
        return new ClusterMembers(count, List.copyOf(ports));
    }

    /** Every member's address, host:port. */
    List<String> addresses() {
        return ports.stream().map(p -> "127.0.0.1:" + p).toList();
    }

    /**
     * Member {@code index}: the embedded member's configuration, but on its
     * own port and joining the other members by TCP/IP.
     */
    Config memberConfig(Settings settings, int index) {
        Config config = HazelcastApp.memberConfig(settings);
        NetworkConfig network = config.getNetworkConfig();
        network.setPort(ports.get(index));
        network.setPortAutoIncrement(false);
        JoinConfig join = network.getJoin();
        join.getTcpIpConfig().setEnabled(true).setMembers(addresses());
        return config;
    }
}
