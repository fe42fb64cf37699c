#!/usr/bin/env python3
"""How long calls wait while the consumer group changes: steady call traffic through `callpush run` processes in one
group, one group change, and per second of `created_at` the receipts' `latency_ms` (created_at -> APNs answer).

usage: swift build -c release --product callpush && scripts/scale-events.py crash|restart|scale-out [SESSION_TIMEOUT_S]

  crash      2 workers; at 5 s one is SIGKILLed and started again 1 s later (a crashed pod that Kubernetes restarts)
  restart    2 workers; at 5 s one gets SIGTERM and is started again once it has stopped (a rolling restart)
  scale-out  2 workers; at 5 s a third one starts

A fresh `callpush kafka-mock` (6 partitions) and `callpush mock-apns --latency-ms 5` (token mode) per run; kcat
produces 400 events/s (incoming calls, each hung up 2 s later, murmur2 by call id); the workers run with receipts
and the given `--kafka-session-timeout` (default: run's own). Prints one line per second with the events created
in it and their p50 / p99 / longest wait, then the longest wait of all. librdkafka 2.0.2's mock broker waits a
session timeout - 1 s for members whenever one joins (README "Crashes, restarts and scaling").
BIN picks the binary (default .build/release/callpush); RATE the events per second; DURATION the traffic's
seconds (default 35).
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

BIN = os.environ.get("BIN", ".build/release/callpush")
RATE = int(os.environ.get("RATE", "400"))
DURATION = int(os.environ.get("DURATION", "35"))
CHANGE_AT = 5
KEY_ID, TEAM_ID = "ABC123DEFG", "DEF123GHIJ"


class Bed:
    """The mock cluster, the mock APNs and the workers, all stopped on exit."""

    def __init__(self, work, session_timeout):
        self.work, self.session_timeout = work, session_timeout
        self.processes, self.workers = [], {}
        self.key = os.path.join(work, "key.p8")
        subprocess.run(["openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out",
                        self.key], check=True, stderr=subprocess.DEVNULL)
        topics = "calls,calls.retry.1s,calls.retry.2s,calls.dlq,apns.tokens.invalidated,calls.outcomes"
        self.brokers = self.first_line(self.spawn("kafka", [BIN, "kafka-mock", "--partitions", "6", "--topics", topics]))
        apns = self.first_line(self.spawn("apns", [BIN, "mock-apns", "--latency-ms", "5", "--key-file", self.key,
                                                   "--key-id", KEY_ID, "--team-id", TEAM_ID])).split(" ")
        self.endpoint, self.ca_file = apns[0], apns[1].removeprefix("ca=")

    def spawn(self, name, arguments):
        path = os.path.join(self.work, name + ".log")
        process = subprocess.Popen(arguments, stdout=open(path, "w"), stderr=subprocess.STDOUT, stdin=subprocess.PIPE)
        self.processes.append(process)
        return path

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
        arguments = [BIN, "run", "--kafka-brokers", self.brokers, "--kafka-group", "scale-events", "--kafka-receipts",
                     "--kafka-retry-tiers", "1s,2s", "--kafka-client-id", f"worker-{name}",
                     "--apns-endpoint", self.endpoint, "--apns-ca-file", self.ca_file, "--apns-key-file", self.key,
                     "--apns-key-id", KEY_ID, "--apns-team-id", TEAM_ID, "--log-level", "warning"]
        if self.session_timeout:
            arguments += ["--kafka-session-timeout", self.session_timeout]
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        self.spawn(f"worker-{name}", arguments + ["--metrics-port", str(port)])
        self.workers[name] = (self.processes[-1], port)

    def wait_until_ready(self):
        """Until every worker has partitions (`callpush_ready 1`): the group has formed."""
        for _ in range(600):
            if all(self.ready(port) for _, port in self.workers.values()):
                return
            time.sleep(0.1)
        sys.exit("the workers did not get partitions within 60 s")

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

    def close(self):
        # SIGTERM first: mock-apns removes the certificate directory it made in /tmp only when it exits on a signal
        # it handles.
        for process in self.processes:
            process.terminate()
        for process in self.processes:
            try:
                process.wait(timeout=2)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


class Traffic:
    """kcat producing RATE events/s, and kcat reading the receipts; created_at by event id."""

    def __init__(self, brokers):
        self.created = {}
        self.waits = collections.defaultdict(list)  # second of created_at since start -> latencies (ms)
        self.start = time.time()
        self.running = True
        self.producer = subprocess.Popen(["kcat", "-b", brokers, "-P", "-t", "calls", "-K", "\t", "-X",
                                          "partitioner=murmur2_random"], stdin=subprocess.PIPE, text=True)
        self.reader = subprocess.Popen(["kcat", "-b", brokers, "-C", "-t", "calls.outcomes", "-u", "-q"],
                                       stdout=subprocess.PIPE, text=True)
        threading.Thread(target=self.read, daemon=True).start()
        threading.Thread(target=self.produce, daemon=True).start()

    def event(self, call, kind):
        event_id, now = str(uuid.uuid4()), time.time()
        self.created[event_id] = now
        body = {"event_id": event_id, "type": kind, "call_id": f"c-{call}", "device_token": "%064x" % (call + 1),
                "push": "alert", "topic": "com.example.app", "environment": "production",
                "created_at": int(now * 1000), "ring_timeout_s": 600}
        self.producer.stdin.write(f"c-{call}\t" + json.dumps(body, separators=(",", ":")) + "\n")

    def produce(self):
        call, due, tick = 0, time.time(), 0.01
        hang_up_lag = RATE  # calls: each hangs up 2 s after it rang
        while self.running:
            for _ in range(round(RATE * tick / 2)):
                self.event(call, "incoming")
                if call >= hang_up_lag:
                    self.event(call - hang_up_lag, "hangup")
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
            created = self.created.get(receipt.get("event_id"))
            if created is not None and receipt.get("latency_ms") is not None:
                self.waits[int(created - self.start)].append(receipt["latency_ms"])

    def close(self):
        self.running = False
        for process in (self.producer, self.reader):
            process.kill()
            process.wait()

    def report(self):
        print("second  events   p50 ms   p99 ms   longest ms")
        for second in sorted(self.waits):
            waits = sorted(self.waits[second])
            print(f"{second:6d}  {len(waits):6d}  {waits[len(waits) // 2]:7d}  {waits[int(len(waits) * 0.99)]:7d}  "
                  f"{waits[-1]:11d}")
        longest = max((max(waits) for waits in self.waits.values()), default=0)
        answered = sum(len(waits) for waits in self.waits.values())
        print(f"longest wait {longest} ms; {answered} of {len(self.created)} events pushed (the others cancelled by "
              "their hang-up or not answered yet)")


def main():
    if len(sys.argv) not in (2, 3) or sys.argv[1] not in ("crash", "restart", "scale-out"):
        sys.exit(__doc__)
    plan, session_timeout = sys.argv[1], sys.argv[2] if len(sys.argv) == 3 else None
    if not os.access(BIN, os.X_OK):
        sys.exit(f"{BIN}: not built (swift build -c release --product callpush), or set BIN")
    with tempfile.TemporaryDirectory() as work:
        bed, traffic = Bed(work, session_timeout), None
        try:
            for name in ("a", "b"):
                bed.start(name)
            bed.wait_until_ready()
            traffic = Traffic(bed.brokers)
            time.sleep(CHANGE_AT)
            print(f"{plan} at {CHANGE_AT} s")
            if plan == "crash":
                bed.stop("b", signal.SIGKILL)
                time.sleep(1)
                bed.start("b")
            elif plan == "restart":
                bed.stop("b", signal.SIGTERM)
                bed.start("b")
            else:
                bed.start("c")
            time.sleep(max(0, traffic.start + DURATION - time.time()))
            traffic.running = False
            time.sleep(10)  # what waits in the group gets its answer
            traffic.report()
        finally:
            if traffic:
                traffic.close()
            bed.close()


if __name__ == "__main__":
    main()
