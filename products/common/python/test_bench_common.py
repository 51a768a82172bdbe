"""Tests of bench_common, the Python product apps' shared helpers.

The stateless cases (products/common/stateless-cases.json) are fixed events
as the suite's generator writes them, each with the output the suite's
verification expects, or null where the workload's filter drops the event.
Run from the repository root: python3 -m unittest discover -s products/common/python
"""

import json
import math
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import unittest
from unittest import mock

from bench_common import (
    BenchEnv,
    ClientProfile,
    enrich,
    is_kept,
    librdkafka_effective,
    member_environment,
)

CASES = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "stateless-cases.json")

# A complete, valid client profile as the suite sets it.
PROFILE_ENV = {
    "BENCH_FETCH_MIN_BYTES": "1",
    "BENCH_FETCH_MAX_WAIT_MS": "5",
    "BENCH_MAX_PARTITION_FETCH_BYTES": "1048576",
    "BENCH_LINGER_MS": "0",
    "BENCH_ACKS": "all",
    "BENCH_ENABLE_IDEMPOTENCE": "true",
    "BENCH_COMPRESSION": "lz4",
    "BENCH_GROUP_INSTANCE_ID": "member-1",
    "BENCH_SESSION_TIMEOUT_MS": "6000",
    "BENCH_FETCH_QUEUE_BACKOFF_MS": "7",
}


def load_cases():
    with open(CASES, encoding="utf-8") as file:
        document = json.load(file)
    return document["workload"], document["cases"]


def stateless(value):
    """What a Python app does with one input record's value bytes: decode
    the JSON event, drop it unless kept, else enrich it and encode the
    output record; returns the output as the suite reads it back, or None."""
    event = json.loads(value)
    if not is_kept(event):
        return None
    return json.loads(json.dumps(enrich(event)).encode("utf-8"))


def exits_with(test, message, call):
    """Asserts that `call` ends the process with exactly `message`."""
    with test.assertRaises(SystemExit) as stopped:
        call()
    test.assertEqual(stopped.exception.code, message)


class StatelessCases(unittest.TestCase):
    """enrich and is_kept against the suite's expected outputs."""

    def setUp(self):
        workload, self.cases = load_cases()
        self.assertEqual(workload, "stateless")

    def test_the_cases_cover_kept_dropped_and_breach(self):
        outputs = [case["output"] for case in self.cases]
        self.assertTrue(any(o is None for o in outputs), "no dropped case")
        self.assertTrue(any(o is not None and o["sla_status"] == "ok" for o in outputs), "no ok case")
        self.assertTrue(any(o is not None and o["sla_status"] == "breach" for o in outputs), "no breach case")

    def test_each_case_gives_the_expected_output(self):
        for case in self.cases:
            value = json.dumps(case["input"], separators=(",", ":")).encode("utf-8")
            expected = case["output"]
            with self.subTest(seq=case["input"]["seq"], region=case["input"]["region"]):
                got = stateless(value)
                if expected is None:
                    self.assertIsNone(got, "the filter must drop this event")
                    continue
                self.assertIsNotNone(got, "the filter must keep this event")
                self.assertEqual(sorted(got), sorted(expected), "the output's fields")
                for field, want in expected.items():
                    if field == "latency_ratio":
                        self.assertIsInstance(got[field], float)
                        self.assertTrue(
                            math.isclose(got[field], want, rel_tol=1e-9),
                            f"latency_ratio {got[field]!r}, expected {want!r}",
                        )
                    else:
                        self.assertEqual(
                            (type(got[field]), got[field]), (type(want), want), f"field {field}"
                        )

    def test_the_filter_keeps_exactly_the_eu_dash_regions(self):
        for region, kept in [
            ("eu-west", True),
            ("eu-", True),
            ("eu", False),
            ("europe", False),
            ("EU-west", False),
            ("us-eu-west", False),
            ("", False),
        ]:
            with self.subTest(region=region):
                self.assertIs(is_kept({"region": region}), kept)

    def test_the_ratio_is_the_unrounded_quotient(self):
        event = {"seq": 1, "ts_us": 2, "region": "eu-west", "service": "s", "latency_ms": 100, "sla_ms": 300}
        self.assertTrue(math.isclose(enrich(event)["latency_ratio"], 1 / 3, rel_tol=1e-9))

    def test_a_ratio_of_exactly_one_is_ok(self):
        event = {"seq": 1, "ts_us": 2, "region": "eu-west", "service": "s", "latency_ms": 250, "sla_ms": 250}
        self.assertEqual(enrich(event)["sla_status"], "ok")
        self.assertEqual(enrich(dict(event, latency_ms=251))["sla_status"], "breach")


class BenchEnvParsing(unittest.TestCase):
    """The BENCH_* readers: accepted values and the one-line refusals."""

    env = BenchEnv("demo")

    def test_a_set_value_is_returned_as_is(self):
        with mock.patch.dict(os.environ, {"BENCH_X": "a b"}, clear=True):
            self.assertEqual(self.env("BENCH_X"), "a b")

    def test_unset_and_empty_are_refused(self):
        for environ in ({}, {"BENCH_X": ""}):
            with self.subTest(environ=environ), mock.patch.dict(os.environ, environ, clear=True):
                exits_with(self, "demo: BENCH_X is not set (the suite sets it)", lambda: self.env("BENCH_X"))

    def test_integers(self):
        for value, minimum, number in [("0", 0, 0), ("1", 1, 1), ("1048576", 1, 1048576), ("-3", -5, -3)]:
            with self.subTest(value=value), mock.patch.dict(os.environ, {"BENCH_N": value}, clear=True):
                self.assertEqual(self.env.integer("BENCH_N", minimum), number)

    def test_non_integers_and_values_below_the_minimum_are_refused(self):
        for value, minimum, message in [
            ("ten", 0, "demo: BENCH_N `ten` is not an integer"),
            ("1.5", 0, "demo: BENCH_N `1.5` is not an integer"),
            ("0", 1, "demo: BENCH_N `0` is below 1"),
            ("-1", 0, "demo: BENCH_N `-1` is below 0"),
        ]:
            with self.subTest(value=value), mock.patch.dict(os.environ, {"BENCH_N": value}, clear=True):
                exits_with(self, message, lambda: self.env.integer("BENCH_N", minimum))

    def test_choices(self):
        with mock.patch.dict(os.environ, {"BENCH_C": "lz4"}, clear=True):
            self.assertEqual(self.env.choice("BENCH_C", ("none", "lz4")), "lz4")
        with mock.patch.dict(os.environ, {"BENCH_C": "LZ4"}, clear=True):
            exits_with(self, "demo: BENCH_C `LZ4` is not one of none, lz4", lambda: self.env.choice("BENCH_C", ("none", "lz4")))


class EngineSettings(unittest.TestCase):
    """BENCH_SETTINGS: the product.yaml `settings:` map of counts."""

    env = BenchEnv("demo")

    def settings(self, text):
        environ = {} if text is None else {"BENCH_SETTINGS": text}
        with mock.patch.dict(os.environ, environ, clear=True):
            return self.env.settings(("batch_ms", "records"))

    def test_the_counts_are_returned(self):
        self.assertEqual(self.settings('{"batch_ms": 1, "records": 500}'), {"batch_ms": 1, "records": 500})

    def test_malformed_missing_unknown_and_non_counts_are_refused(self):
        for text, message in [
            ("{", "demo: BENCH_SETTINGS is not JSON: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"),
            ("[1]", "demo: BENCH_SETTINGS is not a JSON object"),
            ('{"batch_ms": 1, "records": 2, "zz": 3, "aa": 4}', "demo: BENCH_SETTINGS has keys this app does not apply: aa, zz"),
            (None, "demo: BENCH_SETTINGS has no batch_ms (product.yaml `settings:`)"),
            ('{"batch_ms": 5}', "demo: BENCH_SETTINGS has no records (product.yaml `settings:`)"),
            ('{"batch_ms": 0, "records": 1}', "demo: batch_ms `0` is not an integer of at least 1"),
            ('{"batch_ms": 2.5, "records": 1}', "demo: batch_ms `2.5` is not an integer of at least 1"),
            ('{"batch_ms": true, "records": 1}', "demo: batch_ms `True` is not an integer of at least 1"),
            ('{"batch_ms": "5", "records": 1}', "demo: batch_ms `5` is not an integer of at least 1"),
        ]:
            with self.subTest(text=text):
                exits_with(self, message, lambda: self.settings(text))


class ClientProfileReading(unittest.TestCase):
    """The client profile read from the suite's variables."""

    env = BenchEnv("demo")

    def test_the_profile_is_read_and_typed(self):
        with mock.patch.dict(os.environ, PROFILE_ENV, clear=True):
            profile = ClientProfile.from_env(self.env, static_member=True)
        self.assertEqual(
            profile,
            ClientProfile(
                fetch_min_bytes=1,
                fetch_max_wait_ms=5,
                max_partition_fetch_bytes=1048576,
                linger_ms=0,
                acks="all",
                enable_idempotence=True,
                compression="lz4",
                group_instance_id="member-1",
                session_timeout_ms=6000,
            ),
        )

    def test_the_fetch_queue_backoff_is_read_only_for_librdkafka(self):
        with mock.patch.dict(os.environ, PROFILE_ENV, clear=True):
            self.assertEqual(ClientProfile.from_env(self.env, librdkafka=True).fetch_queue_backoff_ms, 7)
        environ = {k: v for k, v in PROFILE_ENV.items() if k != "BENCH_FETCH_QUEUE_BACKOFF_MS"}
        with mock.patch.dict(os.environ, environ, clear=True):
            self.assertIsNone(ClientProfile.from_env(self.env).fetch_queue_backoff_ms)
            exits_with(
                self,
                "demo: BENCH_FETCH_QUEUE_BACKOFF_MS is not set (the suite sets it)",
                lambda: ClientProfile.from_env(self.env, librdkafka=True),
            )

    def test_static_membership_is_read_only_when_asked(self):
        environ = {k: v for k, v in PROFILE_ENV.items() if k not in ("BENCH_GROUP_INSTANCE_ID", "BENCH_SESSION_TIMEOUT_MS")}
        with mock.patch.dict(os.environ, environ, clear=True):
            profile = ClientProfile.from_env(self.env)
            self.assertIsNone(profile.group_instance_id)
            self.assertIsNone(profile.session_timeout_ms)
            exits_with(
                self,
                "demo: BENCH_GROUP_INSTANCE_ID is not set (the suite sets it)",
                lambda: ClientProfile.from_env(self.env, static_member=True),
            )

    def test_a_bad_profile_value_is_refused_by_name(self):
        for name, value, message in [
            ("BENCH_FETCH_MAX_WAIT_MS", "-1", "demo: BENCH_FETCH_MAX_WAIT_MS `-1` is below 0"),
            ("BENCH_ACKS", "-1", "demo: BENCH_ACKS `-1` is not one of all, 1, 0"),
            ("BENCH_ENABLE_IDEMPOTENCE", "yes", "demo: BENCH_ENABLE_IDEMPOTENCE `yes` is not one of true, false"),
            ("BENCH_COMPRESSION", "brotli", "demo: BENCH_COMPRESSION `brotli` is not one of none, gzip, snappy, lz4, zstd"),
        ]:
            with self.subTest(name=name), mock.patch.dict(os.environ, dict(PROFILE_ENV, **{name: value}), clear=True):
                exits_with(self, message, lambda: ClientProfile.from_env(self.env))

    def test_idempotence_needs_acks_all(self):
        with mock.patch.dict(os.environ, dict(PROFILE_ENV, BENCH_ACKS="1"), clear=True):
            profile = ClientProfile.from_env(self.env)
        exits_with(
            self,
            "demo: BENCH_ACKS `1` does not go with an idempotent producer "
            "(BENCH_ENABLE_IDEMPOTENCE true), which needs acks all",
            lambda: profile.check_idempotence(self.env),
        )
        exits_with(
            self,
            "demo: BENCH_ACKS `1` does not go with an idempotent producer "
            "(BENCH_ENABLE_IDEMPOTENCE true, or exactly-once), which needs acks all",
            lambda: profile.check_idempotence(self.env, exactly_once=False),
        )
        plain = ClientProfile(1, 0, 1, 0, "0", False, "none")
        plain.check_idempotence(self.env)
        plain.check_idempotence(self.env, exactly_once=False)
        exits_with(
            self,
            "demo: BENCH_ACKS `0` does not go with an idempotent producer "
            "(BENCH_ENABLE_IDEMPOTENCE true, or exactly-once), which needs acks all",
            lambda: plain.check_idempotence(self.env, exactly_once=True),
        )


class LibrdkafkaReadBack(unittest.TestCase):
    """The effective-config keys read back from librdkafka settings."""

    EXPECTED = {
        "fetch_min_bytes": 1,
        "fetch_max_wait_ms": 5,
        "max_partition_fetch_bytes": 1048576,
        "linger_ms": 0,
        "acks": "all",
        "enable_idempotence": True,
        "compression": "lz4",
        "fetch_queue_backoff_ms": 7,
    }

    def test_strings_and_native_values_read_back_alike(self):
        as_strings = (
            {"fetch.min.bytes": "1", "fetch.wait.max.ms": "5", "max.partition.fetch.bytes": "1048576",
             "fetch.queue.backoff.ms": "7"},
            {"linger.ms": "0", "acks": "all", "enable.idempotence": "true", "compression.type": "lz4"},
        )
        as_values = (
            {"fetch.min.bytes": 1, "fetch.wait.max.ms": 5, "max.partition.fetch.bytes": 1048576,
             "fetch.queue.backoff.ms": 7},
            {"linger.ms": 0, "acks": -1, "enable.idempotence": True, "compression.type": "lz4"},
        )
        for consumer, producer in (as_strings, as_values):
            with self.subTest(producer=producer):
                effective = librdkafka_effective(consumer, producer)
                self.assertEqual(list(effective.items()), list(self.EXPECTED.items()))

    def test_acks_one_and_no_idempotence(self):
        consumer = {"fetch.min.bytes": "1", "fetch.wait.max.ms": "0", "max.partition.fetch.bytes": "1",
                    "fetch.queue.backoff.ms": "1"}
        producer = {"linger.ms": "5", "acks": "1", "enable.idempotence": False, "compression.type": "none"}
        effective = librdkafka_effective(consumer, producer)
        self.assertEqual((effective["acks"], effective["enable_idempotence"]), ("1", False))


# An app of one consumer per process: each member prints its ids and the
# readiness line, then waits for SIGTERM, or exits with BENCH_TEST_EXIT
# (member 1 only) once ready.
MEMBER_APP = textwrap.dedent(
    """
    import os, signal, sys, time
    sys.path.insert(0, {common!r})
    from bench_common import run_members

    def main():
        # Ready only once SIGTERM is handled: the test stops it right after.
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
        print("ids", os.environ["BENCH_GROUP_INSTANCE_ID"], os.environ["BENCH_TRANSACTIONAL_ID"], flush=True)
        print("app ready", flush=True)
        code = os.environ.get("BENCH_TEST_EXIT")
        if code and os.environ.get("BENCH_MEMBER") == "1":
            sys.exit(int(code))
        time.sleep(60)

    run_members("app", "app ready", main)
    """
)


class RunMembersTest(unittest.TestCase):
    def start(self, parallelism, partitions, **extra):
        folder = tempfile.mkdtemp()
        script = os.path.join(folder, "app.py")
        with open(script, "w", encoding="utf-8") as file:
            file.write(MEMBER_APP.format(common=os.path.dirname(os.path.abspath(__file__))))
        environ = dict(
            os.environ,
            BENCH_PARALLELISM=str(parallelism),
            BENCH_INPUT_PARTITIONS=str(partitions),
            BENCH_GROUP_INSTANCE_ID="g-member",
            BENCH_TRANSACTIONAL_ID="g-txn",
            **extra,
        )
        environ.pop("BENCH_MEMBER", None)
        return subprocess.Popen(
            [sys.executable, "-u", script],
            env=environ,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )

    def read_until_ready(self, process):
        lines = []
        for line in process.stdout:
            lines.append(line.rstrip("\n"))
            if lines[-1] == "app ready":
                break
        return lines

    def test_each_member_has_its_own_ids_and_the_group_is_ready_once(self):
        process = self.start(2, 2)
        lines = self.read_until_ready(process)
        os.killpg(process.pid, signal.SIGTERM)
        rest, _ = process.communicate(timeout=30)
        self.assertEqual(process.returncode, 0)
        self.assertEqual(lines[-1], "app ready")
        ids = sorted(line for line in lines + rest.splitlines() if line.startswith("ids"))
        self.assertEqual(ids, ["ids g-member-0 g-txn-0", "ids g-member-1 g-txn-1"])
        self.assertNotIn("app ready", rest.splitlines(), "ready is printed once, for the group")

    def test_a_member_that_ends_unasked_ends_the_group(self):
        process = self.start(2, 4, BENCH_TEST_EXIT="3")
        _, stderr = process.communicate(timeout=30)
        self.assertEqual(process.returncode, 3)
        self.assertIn("member 1 of 2 ended (3); stopping the group", stderr)

    def test_more_processes_than_partitions_is_refused(self):
        process = self.start(3, 2)
        _, stderr = process.communicate(timeout=30)
        self.assertNotEqual(process.returncode, 0)
        self.assertEqual(
            stderr.strip(),
            "app: parallelism 3 runs 3 processes of one consumer group, which needs as many "
            "input partitions; the input has 2",
        )

    def test_one_member_runs_in_this_process(self):
        process = self.start(1, 1, BENCH_TEST_EXIT="3")
        lines = self.read_until_ready(process)
        self.assertEqual(lines, ["ids g-member g-txn", "app ready"])
        os.killpg(process.pid, signal.SIGTERM)
        process.communicate(timeout=30)
        self.assertEqual(process.returncode, 0)

    def test_a_member_environment_appends_its_number(self):
        child = member_environment({"BENCH_GROUP_INSTANCE_ID": "m", "OTHER": "x"}, 2)
        self.assertEqual(child, {"BENCH_GROUP_INSTANCE_ID": "m-2", "OTHER": "x", "BENCH_MEMBER": "2"})


if __name__ == "__main__":
    unittest.main()
