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
    properties.fetch.min.bytes = '65536',
    properties.fetch.wait.max.ms = '10',
    properties.max.partition.fetch.bytes = '52428800'
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
    properties.bootstrap.server = '@BOOTSTRAP@'
) FORMAT PLAIN ENCODE JSON (force_append_only = 'true');
