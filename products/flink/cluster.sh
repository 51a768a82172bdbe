#!/bin/sh
# One process of the cluster deployment's standalone session cluster,
# started the way Flink's own jobmanager.sh and taskmanager.sh start theirs:
# BashJavaUtils (in Flink's runtime) turns the memory settings into the
# JVM's flags and the dynamic configuration, then the JVM runs Flink's
# entrypoint inside ClusterProcess, which prints the readiness line.
#
# Usage: cluster.sh BUILD_DIR (role from BENCH_MEMBER_ROLE: jobmanager or
# taskmanager; ports from BENCH_PORT_REST and BENCH_PORT_RPC). The classpath
# is the build's flink-lib/ (Flink's runtime, as the distribution's lib/
# holds it) and the app's own classes for ClusterProcess; the job's code,
# the Kafka connector with it, comes from app.jar, shipped with the job.
set -eu
build="$1"
classpath="$build/flink-lib/*:$build/streamsuite-flink-1.jar"
role="$BENCH_MEMBER_ROLE"
conf="$(dirname "$0")/cluster-conf"
settings="
  -Djobmanager.rpc.address=127.0.0.1
  -Djobmanager.rpc.port=$BENCH_PORT_RPC
  -Djobmanager.bind-host=127.0.0.1
  -Drest.address=127.0.0.1
  -Drest.bind-address=127.0.0.1
  -Drest.port=$BENCH_PORT_REST
  -Dtaskmanager.host=127.0.0.1
  -Dtaskmanager.bind-host=127.0.0.1
  -Dtaskmanager.numberOfTaskSlots=$BENCH_PARALLELISM
  -Dtaskmanager.resource-id=taskmanager-$BENCH_MEMBER_INDEX-$$
  -Djobmanager.memory.process.size=768m
  -Dtaskmanager.memory.task.heap.size=384m
  -Dtaskmanager.memory.managed.size=0
"
# The JDK internals Flink reflects into (closure cleaning, Kryo): the same
# as app.jar's manifest opens for the embedded form, which `java -jar`
# honours and a -cp start does not.
jdk_access="
  --add-opens=java.base/java.lang=ALL-UNNAMED --add-opens=java.base/java.util=ALL-UNNAMED
  --add-opens=java.base/java.lang.reflect=ALL-UNNAMED --add-opens=java.base/java.io=ALL-UNNAMED
  --add-opens=java.base/java.net=ALL-UNNAMED --add-opens=java.base/java.nio=ALL-UNNAMED
  --add-opens=java.base/java.util.concurrent=ALL-UNNAMED --add-opens=java.base/java.time=ALL-UNNAMED
  --add-opens=java.base/sun.nio.ch=ALL-UNNAMED
  --add-exports=java.base/sun.net.util=ALL-UNNAMED --add-exports=java.base/sun.nio.ch=ALL-UNNAMED
"
# Besides warnings, the cluster's own lifecycle: a job's state changes and
# restarts, TaskManagers registering and lost.
lifecycle_logs="
  -Dorg.slf4j.simpleLogger.log.org.apache.flink.runtime.executiongraph.ExecutionGraph=info
  -Dorg.slf4j.simpleLogger.log.org.apache.flink.runtime.jobmaster.JobMaster=info
  -Dorg.slf4j.simpleLogger.log.org.apache.flink.runtime.resourcemanager=info
"
case "$role" in
  jobmanager) params=GET_JM_RESOURCE_PARAMS ;;
  taskmanager) params=GET_TM_RESOURCE_PARAMS ;;
  *) echo "flink: unknown cluster role $role" >&2; exit 2 ;;
esac
# shellcheck disable=SC2086
computed="$(java -cp "$classpath" org.apache.flink.runtime.util.bash.BashJavaUtils $params -c "$conf" $settings \
  | sed -n 's/^BASH_JAVA_UTILS_EXEC_RESULT://p')"
jvm="$(echo "$computed" | sed -n 1p)"
dynamic="$(echo "$computed" | sed -n 2p)"
if [ -z "$jvm" ]; then
  echo "flink: BashJavaUtils computed no JVM flags for the $role" >&2
  exit 2
fi
# shellcheck disable=SC2086
exec java $jvm -XX:+UseSerialGC -XX:+ExitOnOutOfMemoryError $jdk_access $lifecycle_logs -cp "$classpath" streamsuite.flink.ClusterProcess \
  "$role" -c "$conf" $settings $dynamic
