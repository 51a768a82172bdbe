-- The stateless workload in Arroyo SQL. run.sh replaces the @NAME@ markers
-- with the run's settings before handing the file to `arroyo run`.
CREATE TABLE events (
    seq BIGINT NOT NULL,
    ts_us BIGINT NOT NULL,
    region TEXT NOT NULL,
    service TEXT NOT NULL,
    latency_ms INT NOT NULL,
    sla_ms INT NOT NULL
) WITH (
    connector = 'kafka',
    bootstrap_servers = '@BOOTSTRAP@',
    topic = '@INPUT_TOPIC@',
    type = 'source',
    format = 'json',
    'source.offset' = 'earliest',
    'source.read_mode' = 'read_committed',
    'source.group_id' = '@GROUP_ID@',
    client_configs = '@SOURCE_CLIENT_CONFIGS@'
);

CREATE TABLE output WITH (
    connector = 'kafka',
    bootstrap_servers = '@BOOTSTRAP@',
    topic = '@OUTPUT_TOPIC@',
    type = 'sink',
    format = 'json',
    'sink.commit_mode' = '@COMMIT_MODE@',
    client_configs = '@SINK_CLIENT_CONFIGS@'
);

INSERT INTO output
SELECT
    seq,
    ts_us,
    region,
    service,
    latency_ms,
    sla_ms,
    CAST(latency_ms AS DOUBLE) / CAST(sla_ms AS DOUBLE) AS latency_ratio,
    CASE WHEN CAST(latency_ms AS DOUBLE) / CAST(sla_ms AS DOUBLE) > 1.0
         THEN 'breach' ELSE 'ok' END AS sla_status
FROM events
WHERE region LIKE 'eu-%';
