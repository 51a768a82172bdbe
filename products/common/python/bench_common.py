"""What the suite's Python product apps share: the BENCH_* variables, the
client profile, and the stateless workload's filter and output record.

One copy, so that a fix to the workload or to the profile's checks reaches
every Python app at once. Each app (products/<name>/app.py) puts this folder
on sys.path itself and maps the profile onto its own client's names. Only the
standard library is imported: the module runs in each product's virtualenv
and under the system python3 that runs its tests.
"""

import json
import os
import queue
import signal
import subprocess
import sys
import threading
from dataclasses import dataclass
from typing import Optional

ACKS = ("all", "1", "0")
BOOLEANS = ("true", "false")
COMPRESSIONS = ("none", "gzip", "snappy", "lz4", "zstd")

# The stateless workload keeps the events of the regions named so.
KEPT_REGION_PREFIX = "eu-"


class BenchEnv:
    """The BENCH_* variables of a run, read for one product.

    The suite sets them all; a missing or malformed one ends the process with
    one line on standard error, naming the product and the variable, which the
    suite reports as the run's failure.
    """

    def __init__(self, product):
        self.product = product

    def __call__(self, name):
        """The variable's value; unset and empty are both refused."""
        value = os.environ.get(name)
        if not value:
            sys.exit(f"{self.product}: {name} is not set (the suite sets it)")
        return value

    def integer(self, name, minimum):
        """The variable as an integer of at least `minimum`."""
        value = self(name)
        try:
            number = int(value)
        except ValueError:
            sys.exit(f"{self.product}: {name} `{value}` is not an integer")
        if number < minimum:
            sys.exit(f"{self.product}: {name} `{value}` is below {minimum}")
        return number

    def choice(self, name, choices):
        """The variable's value, one of `choices`."""
        value = self(name)
        if value not in choices:
            sys.exit(f"{self.product}: {name} `{value}` is not one of {', '.join(choices)}")
        return value

    def settings(self, counts):
        """BENCH_SETTINGS, the product.yaml `settings:` map (JSON), for an app
        whose settings are all counts (ms, records): each key of `counts`
        must be there as a whole number of at least 1, and no other key, so
        that a setting the app would ignore is not reported as applied."""
        try:
            settings = json.loads(os.environ.get("BENCH_SETTINGS") or "{}")
        except json.JSONDecodeError as error:
            sys.exit(f"{self.product}: BENCH_SETTINGS is not JSON: {error}")
        if not isinstance(settings, dict):
            sys.exit(f"{self.product}: BENCH_SETTINGS is not a JSON object")
        unknown = sorted(set(settings) - set(counts))
        if unknown:
            sys.exit(f"{self.product}: BENCH_SETTINGS has keys this app does not apply: {', '.join(unknown)}")
        for key in counts:
            if key not in settings:
                sys.exit(f"{self.product}: BENCH_SETTINGS has no {key} (product.yaml `settings:`)")
            value = settings[key]
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                sys.exit(f"{self.product}: {key} `{value}` is not an integer of at least 1")
        return settings


@dataclass(frozen=True)
class ClientProfile:
    """The suite's client profile (bench.yaml `client:`) in the suite's own
    terms, checked; each app maps it onto its client's setting names, so
    every engine gets the same values under whatever names it uses.

    group_instance_id and session_timeout_ms (static group membership) are
    read only for apps whose consumer joins the run's group, else None;
    fetch_queue_backoff_ms only for librdkafka's consumers, the only ones
    with a prefetch queue to back off from, else None.
    """

    fetch_min_bytes: int
    fetch_max_wait_ms: int
    max_partition_fetch_bytes: int
    linger_ms: int
    acks: str
    enable_idempotence: bool
    compression: str
    group_instance_id: Optional[str] = None
    session_timeout_ms: Optional[int] = None
    fetch_queue_backoff_ms: Optional[int] = None

    @classmethod
    def from_env(cls, env, static_member=False, librdkafka=False):
        """Reads the profile from `env` (a BenchEnv); with static_member, also
        BENCH_GROUP_INSTANCE_ID and BENCH_SESSION_TIMEOUT_MS; with
        librdkafka, also BENCH_FETCH_QUEUE_BACKOFF_MS."""
        fetch_min_bytes = env.integer("BENCH_FETCH_MIN_BYTES", 1)
        fetch_max_wait_ms = env.integer("BENCH_FETCH_MAX_WAIT_MS", 0)
        max_partition_fetch_bytes = env.integer("BENCH_MAX_PARTITION_FETCH_BYTES", 1)
        group_instance_id = env("BENCH_GROUP_INSTANCE_ID") if static_member else None
        session_timeout_ms = env.integer("BENCH_SESSION_TIMEOUT_MS", 1) if static_member else None
        fetch_queue_backoff_ms = env.integer("BENCH_FETCH_QUEUE_BACKOFF_MS", 0) if librdkafka else None
        return cls(
            fetch_min_bytes=fetch_min_bytes,
            fetch_max_wait_ms=fetch_max_wait_ms,
            max_partition_fetch_bytes=max_partition_fetch_bytes,
            linger_ms=env.integer("BENCH_LINGER_MS", 0),
            acks=env.choice("BENCH_ACKS", ACKS),
            enable_idempotence=env.choice("BENCH_ENABLE_IDEMPOTENCE", BOOLEANS) == "true",
            compression=env.choice("BENCH_COMPRESSION", COMPRESSIONS),
            group_instance_id=group_instance_id,
            session_timeout_ms=session_timeout_ms,
            fetch_queue_backoff_ms=fetch_queue_backoff_ms,
        )

    def check_idempotence(self, env, exactly_once=None):
        """Refuses acks 1 or 0 with an idempotent producer, a pair the Kafka
        clients refuse, with a line that says which variable to change.

        exactly_once: None for an app without an exactly-once line; else
        whether this run is exactly-once, whose transactional producer is
        idempotent whatever BENCH_ENABLE_IDEMPOTENCE says.
        """
        if (self.enable_idempotence or exactly_once) and self.acks != "all":
            why = "BENCH_ENABLE_IDEMPOTENCE true"
            if exactly_once is not None:
                why += ", or exactly-once"
            sys.exit(
                f"{env.product}: BENCH_ACKS `{self.acks}` does not go with an idempotent producer "
                f"({why}), which needs acks all"
            )


def librdkafka_effective(consumer, producer):
    """The profile's eight keys of the "effective client config" line that
    every librdkafka app applies, read back from librdkafka configuration
    dicts (values as strings or as numbers and booleans, acks "-1" for
    all), in the line's order."""
    acks = str(producer["acks"])
    return {
        "fetch_min_bytes": int(consumer["fetch.min.bytes"]),
        "fetch_max_wait_ms": int(consumer["fetch.wait.max.ms"]),
        "max_partition_fetch_bytes": int(consumer["max.partition.fetch.bytes"]),
        "linger_ms": int(producer["linger.ms"]),
        "acks": "all" if acks == "-1" else acks,
        "enable_idempotence": str(producer["enable.idempotence"]).lower() == "true",
        "compression": str(producer["compression.type"]),
        "fetch_queue_backoff_ms": int(consumer["fetch.queue.backoff.ms"]),
    }


def is_kept(event):
    """The stateless workload's filter: the events of eu-* regions."""
    return event["region"].startswith(KEPT_REGION_PREFIX)


def enrich(event):
    """The stateless workload's output record: the six fields the suite's
    verification reads, plus latency_ratio (latency over SLA, a float) and
    sla_status ("breach" above 1, else "ok")."""
    ratio = event["latency_ms"] / event["sla_ms"]
    return {
        "seq": event["seq"],
        "ts_us": event["ts_us"],
        "region": event["region"],
        "service": event["service"],
        "latency_ms": event["latency_ms"],
        "sla_ms": event["sla_ms"],
        "latency_ratio": ratio,
        "sla_status": "breach" if ratio > 1 else "ok",
    }


# Set in a member process of a group that run_members started.
MEMBER_VAR = "BENCH_MEMBER"
# Each member's own static member id and transactional id: the group's with
# the member's number appended, the same after a restart.
PER_MEMBER_VARS = ("BENCH_GROUP_INSTANCE_ID", "BENCH_TRANSACTIONAL_ID")


def run_members(product, ready_line, main):
    """Runs `main` once, or, with BENCH_PARALLELISM N above 1, as N processes
    of one consumer group: how an app whose process holds one consumer
    scales. This process then only starts the members (this same script,
    with MEMBER_VAR set), passes their standard output on, prints
    `ready_line` once every member has printed it, and exits with the first
    failure. A member that ends unasked ends the
    group: the suite sees the product fail, as it would one process.

    One partition feeds one consumer, so N processes need N input partitions
    (BENCH_INPUT_PARTITIONS); fewer is refused rather than left idle.
    """
    env = BenchEnv(product)
    members = env.integer("BENCH_PARALLELISM", 1)
    if members == 1 or os.environ.get(MEMBER_VAR):
        main()
        return
    partitions = env.integer("BENCH_INPUT_PARTITIONS", 1)
    if members > partitions:
        sys.exit(
            f"{product}: parallelism {members} runs {members} processes of one consumer group, "
            f"which needs as many input partitions; the input has {partitions}"
        )
    sys.exit(_supervise(members, ready_line))


def member_environment(environ, member):
    """The environment of member `member` (0, 1, ...) of a group."""
    child = dict(environ)
    child[MEMBER_VAR] = str(member)
    for name in PER_MEMBER_VARS:
        if name in child:
            child[name] = f"{child[name]}-{member}"
    return child


def _supervise(members, ready_line):
    """Starts and watches the members; returns the group's exit status."""
    lines = queue.Queue()
    children = []
    for member in range(members):
        child = subprocess.Popen(
            [sys.executable, "-u", *sys.argv],
            env=member_environment(os.environ, member),
            stdout=subprocess.PIPE,
            text=True,
        )
        children.append(child)
        threading.Thread(target=_pass_lines, args=(member, child.stdout, lines), daemon=True).start()
    # The suite signals the product's whole process group, the members with
    # it: this process only notes that the group is being stopped.
    stopping = threading.Event()
    signal.signal(signal.SIGTERM, lambda _signum, _frame: stopping.set())
    signal.signal(signal.SIGINT, lambda _signum, _frame: stopping.set())
    ready, ended, status = set(), 0, 0
    while ended < members:
        member, line = lines.get()
        if line is None:
            ended += 1
            code = children[member].wait()
            if code != 0 and status == 0:
                status = code if code > 0 else 1
            if not stopping.is_set():
                print(f"member {member} of {members} ended ({code}); stopping the group", file=sys.stderr, flush=True)
                stopping.set()
                for other in children:
                    if other.poll() is None:
                        other.terminate()
                status = status or 1
        elif line.rstrip("\n") == ready_line:
            ready.add(member)
            if len(ready) == members:
                print(ready_line, flush=True)
        else:
            print(line, end="", flush=True)
    return status


def _pass_lines(member, stream, lines):
    for line in stream:
        lines.put((member, line))
    lines.put((member, None))
