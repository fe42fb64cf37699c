#!/usr/bin/env python3
"""How long calls wait while the consumer group changes, the way an SRE sees it: steady call traffic through
`callpush run` processes in one group, then one group change per phase, and per phase the wait of every call
(created_at -> APNs answer, from the receipts' latency_ms), split into the partitions that moved in that phase and
those that did not; plus calls lost (no receipt), pushed twice, and rung after their hang-up.

usage: swift build -c release --product callpush && scripts/group-changes.py [cooperative|eager] [PHASE_S]

Phases (PHASE_S seconds each, default 20): steady (workers a and b), scale-out (c joins), scale-in (c stopped with
SIGTERM), a rolling restart as one phase per worker (a, then b: SIGTERM, started again once stopped), SIGKILL + restart
(b killed, started again 1 s later), SIGKILL without restart (a killed). A fresh `callpush kafka-mock` (6 partitions),
`callpush mock-apns --latency-ms 5` and workers a and b for the scaling phases, the rolling restart, and each SIGKILL
phase (see WARM_UP); kcat produces RATE incoming calls/s (default 200), each hung up 2 s later, keyed by call id
with the Java client's murmur2 partitioner; the workers run with receipts and `--kafka-session-timeout 6`. A
partition moved in a phase when a worker logged its assignment or revocation during it.
librdkafka's mock broker (2.0.2, the embedded default) waits session timeout - 1 s in every join: that part of a
moved partition's wait is the broker's. The last line is JSON, for `callpush-bench`.
BIN picks the binary (default .build/release/callpush); CLUSTER=newer runs the workers against the mock cluster of
the librdkafka PyPI's confluent-kafka wheel bundles (scripts/kafka-mock-newer.py) instead.
"""
import collections
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
import uuid
from datetime import datetime

BIN = os.environ.get("BIN", ".build/release/callpush")
# CLUSTER=newer: the newer librdkafka's mock cluster (scripts/kafka-mock-newer.py, run by PYTHON) instead of
# `callpush kafka-mock` (librdkafka 2.0.2's); the workers' client is callpush's 2.0.2 either way.
CLUSTER = os.environ.get("CLUSTER", "callpush")
PYTHON = os.environ.get("PYTHON", ".build/python/bin/python3")
RATE = int(os.environ.get("RATE", "200"))
PARTITIONS = 6
SESSION_TIMEOUT = "6"
KEY_ID, TEAM_ID = "ABC123DEFG", "DEF123GHIJ"


def murmur2(data):
    """The Java client's murmur2 (as kcat's murmur2_random and kafka-python's partitioner)."""
    length, seed, m, r = len(data), 0x9747B28C, 0x5BD1E995, 24
    h = (seed ^ length) & 0xFFFFFFFF
    for i in range(0, length - length % 4, 4):
        k = int.from_bytes(data[i:i + 4], "little")
        k = (k * m) & 0xFFFFFFFF
        k ^= k >> r
        k = (k * m) & 0xFFFFFFFF
        h = ((h * m) & 0xFFFFFFFF) ^ k
    tail = length % 4
    if tail:
        rest = data[length - tail:]
        if tail == 3:
            h ^= rest[2] << 16
        if tail >= 2:
            h ^= rest[1] << 8
        h ^= rest[0]
        h = (h * m) & 0xFFFFFFFF
    h ^= h >> 13
    h = (h * m) & 0xFFFFFFFF
    h ^= h >> 15
    return h


def partition_of(key):
    return (murmur2(key.encode()) & 0x7FFFFFFF) % PARTITIONS


class Bed:
    """The mock cluster, the mock APNs and the workers, all stopped on exit."""

    def __init__(self, work, rebalance):
        self.work, self.rebalance = work, rebalance
        self.processes, self.workers, self.logs = [], {}, []
        self.key = os.path.join(work, "key.p8")
        subprocess.run(["openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out",
                        self.key], check=True, stderr=subprocess.DEVNULL)
        topics = "calls,calls.retry.1s,calls.retry.2s,calls.dlq,apns.tokens.invalidated,calls.outcomes"
        cluster = [BIN, "kafka-mock"]
        if CLUSTER == "newer":
            cluster = [PYTHON, os.path.join(os.path.dirname(os.path.abspath(__file__)), "kafka-mock-newer.py")]
        self.brokers = self.first_line(self.spawn("kafka", cluster + ["--partitions", str(PARTITIONS),
                                                                      "--topics", topics])[1])
        self.apns, apns_log = self.spawn("apns", [BIN, "mock-apns", "--latency-ms", "5", "--key-file", self.key,
                                                  "--key-id", KEY_ID, "--team-id", TEAM_ID, "--record", "1000000"])
        self.apns_log = apns_log
        first = self.first_line(apns_log).split(" ")
        self.endpoint, self.ca_file = first[0], first[1].removeprefix("ca=")

    def spawn(self, name, arguments):
        path = os.path.join(self.work, f"{name}-{len(self.processes)}.log")
        process = subprocess.Popen(arguments, stdout=open(path, "w"), stderr=subprocess.STDOUT, stdin=subprocess.PIPE,
                                   text=True)
        self.processes.append(process)
        return process, path

    @staticmethod
    def first_line(path):
        for _ in range(300):
            with open(path) as log:
                line = log.readline()
            if line.endswith("\n"):
                return line.strip()
            time.sleep(0.1)
        sys.exit(f"{path}: no first line in 30 s")

    def start(self, name):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        process, log = self.spawn(f"worker-{name}", [
            BIN, "run", "--kafka-brokers", self.brokers, "--kafka-group", "group-changes", "--kafka-receipts",
            "--kafka-retry-tiers", "1s,2s", "--kafka-client-id", f"worker-{name}", "--kafka-rebalance", self.rebalance,
            "--kafka-session-timeout", SESSION_TIMEOUT, "--apns-endpoint", self.endpoint, "--apns-ca-file",
            self.ca_file, "--apns-key-file", self.key, "--apns-key-id", KEY_ID, "--apns-team-id", TEAM_ID,
            "--log-level", "info", "--metrics-port", str(port)])
        self.workers[name] = (process, port)
        self.logs.append(log)

    def wait_until_ready(self, names):
        for _ in range(600):
            if all(self.ready(self.workers[name][1]) for name in names):
                return
            time.sleep(0.1)
        sys.exit(f"workers {names} did not join the group within 60 s")

    @staticmethod
    def ready(port):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2) as response:
                return b"\ncallpush_ready 1" in response.read()
        except OSError:
            return False

    def stop(self, name, sig):
        process, _ = self.workers.pop(name)
        process.send_signal(sig)
        process.wait()

    def ownership_changes(self):
        """(time, calls partition) of every assignment and revocation the workers logged."""
        changes = []
        for path in self.logs:
            with open(path) as log:
                for line in log:
                    if '"partitions assigned"' not in line and '"partitions revoked"' not in line:
                        continue
                    entry = json.loads(line)
                    moment = datetime.fromisoformat(entry["time"].replace("Z", "+00:00")).timestamp()
                    for item in entry.get("kafka.partitions", "").split(","):
                        if item.startswith("calls["):
                            changes.append((moment, int(item[len("calls["):-1])))
        return changes

    def joins(self):
        """(time, milliseconds) of every worker start: from its "worker started" line (it has subscribed, so its
        JoinGroup is on its way) to its first "partitions assigned": the group protocol's part of a join, the
        broker's rebalance rounds and the other members' revocations included."""
        joins = []
        for path in self.logs:
            started = None
            with open(path) as log:
                for line in log:
                    if '"worker started"' in line or '"partitions assigned"' in line:
                        entry = json.loads(line)
                        moment = datetime.fromisoformat(entry["time"].replace("Z", "+00:00")).timestamp()
                        if entry.get("message") == "worker started":
                            started = moment
                        elif started is not None:
                            joins.append((started, round((moment - started) * 1000)))
                            break
        return joins

    def deliveries(self):
        """The pushes mock-apns answered 200, in the order it received them: (collapse id, pushType)."""
        before = os.path.getsize(self.apns_log)
        self.apns.stdin.write("deliveries\n")
        self.apns.stdin.flush()
        for _ in range(300):
            with open(self.apns_log) as log:
                log.seek(before)
                text = log.read()
            if "\nend\n" in "\n" + text:
                break
            time.sleep(0.1)
        pushes = []
        for line in text.splitlines():
            if line.startswith("{"):
                entry = json.loads(line)
                pushes.append((entry["collapse_id"], entry["push_type"]))
        return pushes

    def close(self):
        for process in self.processes:
            process.terminate()
        for process in self.processes:
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


class Traffic:
    """kcat producing RATE incoming calls/s (each hung up 2 s later), and kcat reading the receipts."""

    def __init__(self, brokers):
        self.events = {}  # event id -> (created, partition, kind, call)
        self.receipts = collections.defaultdict(list)  # event id -> [latency ms]
        self.running = True
        self.producer = subprocess.Popen(["kcat", "-b", brokers, "-P", "-t", "calls", "-K", "\t", "-X",
                                          "partitioner=murmur2_random"], stdin=subprocess.PIPE, text=True)
        self.reader = subprocess.Popen(["kcat", "-b", brokers, "-C", "-t", "calls.outcomes", "-u", "-q"],
                                       stdout=subprocess.PIPE, text=True)
        threading.Thread(target=self.read, daemon=True).start()
        threading.Thread(target=self.produce, daemon=True).start()

    def event(self, call, kind):
        event_id, now, key = str(uuid.uuid4()), time.time(), f"c-{call}"
        self.events[event_id] = (now, partition_of(key), kind, key)
        body = {"event_id": event_id, "type": kind, "call_id": key, "device_token": "%064x" % (call + 1),
                "push": "alert", "topic": "com.example.app", "environment": "production",
                "created_at": int(now * 1000), "ring_timeout_s": 600}
        self.producer.stdin.write(key + "\t" + json.dumps(body, separators=(",", ":")) + "\n")

    def produce(self):
        call, due, tick = 0, time.time(), 0.01
        lag = 2 * RATE  # each call hangs up 2 s after it rang
        while self.running:
            for _ in range(round(RATE * tick)):
                self.event(call, "incoming")
                if call >= lag:
                    self.event(call - lag, "hangup")
                call += 1
            self.producer.stdin.flush()
            due += tick
            time.sleep(max(0, due - time.time()))
        self.producer.stdin.close()

    def read(self):
        for line in self.reader.stdout:
            try:
                receipt = json.loads(line)
            except ValueError:
                continue
            if receipt.get("event_id") in self.events:
                self.receipts[receipt["event_id"]].append(receipt.get("latency_ms"))

    def settle(self, limit):
        """Waits up to `limit` seconds for every event produced to have its receipt."""
        deadline = time.time() + limit
        while time.time() < deadline and any(event_id not in self.receipts for event_id in list(self.events)):
            time.sleep(0.5)

    def close(self):
        self.running = False
        for process in (self.producer, self.reader):
            process.kill()
            process.wait()


def percentile(values, q):
    return values[min(len(values) - 1, int(len(values) * q))] if values else None


# The phases, in segments: each segment runs on a fresh cluster, mock APNs and pair of workers (a, b), after WARM_UP
# seconds of unmeasured traffic (the first segment's steady phase is the reference instead). librdkafka's mock broker
# finds a fetch's offset by walking the partition's message sets from the start, so every fetch costs more the
# longer a run has produced: fresh segments keep that cost the same for every phase.
WARM_UP = 5


def segments(bed):
    def restart(name):
        bed.stop(name, signal.SIGTERM)
        bed.start(name)
        bed.wait_until_ready([name])

    def kill_and_restart():
        bed.stop("b", signal.SIGKILL)
        time.sleep(1)
        bed.start("b")

    yield [("steady", lambda: None), ("scale-out", lambda: bed.start("c")),
           ("scale-in", lambda: bed.stop("c", signal.SIGTERM))]
    # A rolling restart, one phase per worker: at each moment only the restarted worker's partitions may wait.
    yield [("rolling restart: a", lambda: restart("a")), ("rolling restart: b", lambda: restart("b"))]
    yield [("SIGKILL + restart", kill_and_restart)]
    yield [("SIGKILL, no restart", lambda: bed.stop("a", signal.SIGKILL))]


def run_segment(work, rebalance, phase_seconds, index, build_phases):
    """One segment on a fresh bed: its rows and counts."""
    bed, traffic, phases = Bed(work, rebalance), None, []
    try:
        for name in ("a", "b"):
            bed.start(name)
        bed.wait_until_ready(["a", "b"])
        traffic = Traffic(bed.brokers)
        if index > 0:
            time.sleep(WARM_UP)
        for name, change in build_phases(bed):
            start = time.time()
            change()
            phases.append((name, start))
            time.sleep(max(0, start + phase_seconds - time.time()))
        traffic.running = False
        traffic.settle(15)  # what waits in the group gets its answer
        return measure(bed, traffic, phases, phase_seconds)
    finally:
        if traffic:
            traffic.close()
        bed.close()


def main():
    rebalance = sys.argv[1] if len(sys.argv) > 1 else "cooperative"
    phase_seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 20.0
    if rebalance not in ("cooperative", "eager"):
        sys.exit(__doc__)
    if not os.access(BIN, os.X_OK):
        sys.exit(f"{BIN}: not built (swift build -c release --product callpush), or set BIN")
    rows, totals = [], collections.Counter()
    for index in range(len(list(segments(None)))):
        with tempfile.TemporaryDirectory() as work:
            segment_rows, counts = run_segment(work, rebalance, phase_seconds, index,
                                               lambda bed, index=index: list(segments(bed))[index])
            rows += segment_rows
            totals.update(counts)
    report(rebalance, rows, totals)


def measure(bed, traffic, phases, phase_seconds):
    changes = bed.ownership_changes()
    joins = bed.joins()
    rows = []
    for index, (name, start) in enumerate(phases):
        last = index + 1 == len(phases)
        end = start + phase_seconds if last else phases[index + 1][1]
        # Moved: assigned or revoked during this phase (the group settles within a phase), or after the segment's last
        # phase (a killed worker's partitions move after its session timeout and the rebalance).
        moved = {partition for moment, partition in changes
                 if start <= moment and (last or moment < end) and name != "steady"}
        split = {"moved": [], "kept": []}
        for event_id, (created, partition, kind, _) in traffic.events.items():
            latencies = [value for value in traffic.receipts.get(event_id, []) if value is not None]
            if start <= created < end and kind == "incoming" and latencies:
                split["moved" if partition in moved else "kept"].append(min(latencies))
        phase_joins = [milliseconds for moment, milliseconds in joins if start <= moment < end]
        row = {"phase": name, "moved_partitions": sorted(moved), "join_ms": max(phase_joins) if phase_joins else None}
        for side, waits in split.items():
            waits.sort()
            row[side] = {"calls": len(waits), "p50_ms": percentile(waits, 0.5), "p99_ms": percentile(waits, 0.99),
                         "max_ms": waits[-1] if waits else None, "over_5s": sum(1 for wait in waits if wait > 5000)}
        rows.append(row)
    lost = sum(1 for event_id in traffic.events if not traffic.receipts.get(event_id))
    duplicates = sum(len(values) - 1 for values in traffic.receipts.values() if len(values) > 1)
    hung_up, rang_after = set(), 0
    for call, push_type in bed.deliveries():
        if push_type == 2:
            hung_up.add(call)
        elif push_type == 1 and call in hung_up:
            rang_after += 1
    return rows, {"events": len(traffic.events), "lost": lost, "duplicates": duplicates, "rings_after_hang_up": rang_after}


def report(rebalance, rows, totals):
    steady_p99 = rows[0]["kept"]["p99_ms"] or 0
    cluster = "the newer librdkafka's mock cluster" if CLUSTER == "newer" else "librdkafka 2.0.2's mock cluster"
    print(f"group changes, {rebalance} rebalancing, {RATE} incoming calls/s, {PARTITIONS} partitions, session timeout "
          f"{SESSION_TIMEOUT} s ({cluster}; a fresh cluster for the scaling, rolling-restart and each SIGKILL phase)")
    print(f"{'phase':22} {'partitions':11} {'calls':>6} {'p50 ms':>7} {'p99 ms':>7} {'max ms':>7} {'> 5 s':>6} "
          f"{'join ms':>8}")

    def cell(value):
        return "-" if value is None else str(value)

    for row in rows:
        for side in ("kept", "moved"):
            data = row[side]
            if not data["calls"] and side == "moved":
                continue
            label = f"{side} {','.join(map(str, row['moved_partitions']))}" if side == "moved" else side
            join = cell(row["join_ms"]) if side == "kept" else ""
            print(f"{row['phase'] if side == 'kept' else '':22} {label:11} {data['calls']:6d} {cell(data['p50_ms']):>7} "
                  f"{cell(data['p99_ms']):>7} {cell(data['max_ms']):>7} {data['over_5s']:6d} {join:>8}")
    print(f"events {totals['events']}, lost {totals['lost']}, duplicate receipts {totals['duplicates']}, rings after "
          f"hang-up {totals['rings_after_hang_up']}; steady p99 {steady_p99} ms")
    print(json.dumps({"rebalance": rebalance, "cluster": CLUSTER, "phases": rows, **totals}))

if __name__ == "__main__":
    main()
