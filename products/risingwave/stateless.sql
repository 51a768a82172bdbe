-- The stateless workload in RisingWave SQL. run.sh replaces the @NAME@
-- markers with the run's settings and runs the file through psql.
CREATE SOURCE events (
    seq BIGINT,
    ts_us BIGINT,
    region VARCHAR,
    service VARCHAR,
    latency_ms INT,
    sla_ms INT
) WITH (
    connector = 'kafka',
    topic = '@INPUT_TOPIC@',
    properties.bootstrap.server = '@BOOTSTRAP@',
    scan.startup.mode = 'earliest',
    properties.fetch.min.bytes = '@FETCH_MIN_BYTES@',
    properties.fetch.wait.max.ms = '@FETCH_MAX_WAIT_MS@',
    -- librdkafka's name for max.partition.fetch.bytes (its alias), the one
    -- RisingWave accepts.
    properties.fetch.message.max.bytes = '@MAX_PARTITION_FETCH_BYTES@'
) FORMAT PLAIN ENCODE JSON;

CREATE SINK output AS
SELECT
    seq,
    ts_us,
    region,
    service,
    latency_ms,
    sla_ms,
    latency_ms::DOUBLE PRECISION / sla_ms AS latency_ratio,
    CASE WHEN latency_ms::DOUBLE PRECISION / sla_ms > 1 THEN 'breach' ELSE 'ok' END AS sla_status
FROM events
WHERE region LIKE 'eu-%'
WITH (
    connector = 'kafka',
    topic = '@OUTPUT_TOPIC@',
    properties.bootstrap.server = '@BOOTSTRAP@',
    -- librdkafka's names: queue.buffering.max.ms is linger.ms (its alias),
    -- request.required.acks is acks, compression.codec is compression.type.
    properties.queue.buffering.max.ms = '@LINGER_MS@',
    properties.request.required.acks = '@ACKS@',
    properties.enable.idempotence = '@ENABLE_IDEMPOTENCE@',
    properties.compression.codec = '@COMPRESSION@'
) FORMAT PLAIN ENCODE JSON (force_append_only = 'true');
