#!/usr/bin/env python3
"""A second embedded Kafka cluster for group-change measurements: the mock cluster of the librdkafka that PyPI's
confluent-kafka wheel bundles (a newer implementation of the group coordinator than the 2.0.2 `callpush kafka-mock`
uses), started through ctypes. Prints the bootstrap servers as its first line, like `callpush kafka-mock`, and runs
until stdin closes or a signal.

usage: scripts/kafka-mock-newer.py --partitions N --topics a,b,c
Needs confluent-kafka in the Python that runs it (`.build/python/bin/python3 -m pip install confluent-kafka`).
"""
import argparse
import ctypes
import glob
import os
import signal
import sys

import confluent_kafka


def library():
    directory = os.path.join(os.path.dirname(os.path.dirname(confluent_kafka.__file__)), "confluent_kafka.libs")
    paths = glob.glob(os.path.join(directory, "librdkafka*.so*"))
    if not paths:
        sys.exit(f"no bundled librdkafka in {directory}")
    lib = ctypes.CDLL(paths[0])
    lib.rd_kafka_conf_new.restype = ctypes.c_void_p
    lib.rd_kafka_conf_set.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t]
    lib.rd_kafka_new.restype = ctypes.c_void_p
    lib.rd_kafka_new.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t]
    lib.rd_kafka_mock_cluster_new.restype = ctypes.c_void_p
    lib.rd_kafka_mock_cluster_new.argtypes = [ctypes.c_void_p, ctypes.c_int]
    lib.rd_kafka_mock_cluster_bootstraps.restype = ctypes.c_char_p
    lib.rd_kafka_mock_cluster_bootstraps.argtypes = [ctypes.c_void_p]
    lib.rd_kafka_mock_topic_create.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_int]
    lib.rd_kafka_version_str.restype = ctypes.c_char_p
    return lib


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--topics", required=True)
    parser.add_argument("--brokers", type=int, default=3)
    args = parser.parse_args()
    lib = library()
    error = ctypes.create_string_buffer(512)
    conf = lib.rd_kafka_conf_new()
    lib.rd_kafka_conf_set(conf, b"log_level", b"0", error, len(error))  # the first line is the bootstrap servers
    handle = lib.rd_kafka_new(0, conf, error, len(error))  # a producer owns the mock cluster
    if not handle:
        sys.exit(f"rd_kafka_new: {error.value.decode()}")
    cluster = lib.rd_kafka_mock_cluster_new(handle, args.brokers)
    if not cluster:
        sys.exit("rd_kafka_mock_cluster_new failed")
    for topic in args.topics.split(","):
        lib.rd_kafka_mock_topic_create(cluster, topic.encode(), args.partitions, 1)
    print(lib.rd_kafka_mock_cluster_bootstraps(cluster).decode(), flush=True)
    print(f"librdkafka {lib.rd_kafka_version_str().decode()} mock cluster", file=sys.stderr, flush=True)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    # A parent may have SIGTERM blocked in the mask this process inherited (a test runner's threads do).
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
    try:
        sys.stdin.read()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
