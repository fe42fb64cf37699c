#!/usr/bin/env python3
"""Sends pushes through aioapns, the asyncio APNs client from PyPI, used as it is shipped.

An independent client for callpush's mock APNs server: the interop test checks that every push is accepted, the
benchmark compares its pushes/s with callpush's own client. aioapns always dials api.push.apple.com:443; the only
thing changed here is where that name points (the protocol class's APNS_SERVER/APNS_PORT), plus an SSL context
that trusts the mock's certificate. Prints one JSON line: counts by status and reason, seconds, pushes per second.
"""
import argparse
import asyncio
import json
import logging
import ssl
import time
import uuid

from aioapns import APNs, NotificationRequest, PushType
from aioapns import connection


async def run(args):
    host, _, port = args.endpoint.rpartition(":")
    connection.APNsProductionClientProtocol.APNS_SERVER = host
    connection.APNsProductionClientProtocol.APNS_PORT = int(port)
    context = ssl.create_default_context(cafile=args.ca_file)
    context.set_alpn_protocols(["h2"])
    with open(args.key_file) as key_file:
        key = key_file.read()
    client = APNs(key=key, key_id=args.key_id, team_id=args.team_id, topic=args.topic,
                  max_connections=args.connections, ssl_context=context)
    payload = {"aps": {"alert": {"title": "Alice", "body": "Incoming call"}, "mutable-content": 1}, "pushType": 1}
    statuses, reasons = {}, {}

    async def push(index):
        # aioapns' own apns-id: a lowercase uuid4 (str(uuid4())); uppercase ones when asked for.
        notification_id = str(uuid.uuid4()).upper() if args.uppercase_ids else None
        request = NotificationRequest(device_token=args.token, message=payload, push_type=PushType.ALERT,
                                      priority=10, notification_id=notification_id)
        try:
            result = await asyncio.wait_for(client.send_notification(request), args.timeout)
        except asyncio.TimeoutError:  # e.g. an apns-id echo aioapns cannot match to its request
            statuses["timeout"] = statuses.get("timeout", 0) + 1
            return
        statuses[result.status] = statuses.get(result.status, 0) + 1
        if result.description:
            reasons[result.description] = reasons.get(result.description, 0) + 1

    # The first push opens a connection and lifts the stream limit (1 until a valid token, as APNs does).
    await push(0)
    remaining = args.count - 1
    started = time.monotonic()

    async def worker():
        nonlocal remaining
        while remaining > 0:
            remaining -= 1
            await push(remaining)

    await asyncio.gather(*(worker() for _ in range(args.concurrency)))
    seconds = time.monotonic() - started
    client.pool.close()
    print(json.dumps({"sent": args.count, "statuses": statuses, "reasons": reasons, "seconds": seconds,
                      "pushes_per_second": (args.count - 1) / seconds if seconds > 0 else 0}))


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--endpoint", required=True, help="HOST:PORT of the APNs server")
    parser.add_argument("--ca-file", required=True, help="PEM certificate(s) to trust")
    parser.add_argument("--key-file", required=True, help="the .p8 provider key")
    parser.add_argument("--key-id", required=True)
    parser.add_argument("--team-id", required=True)
    parser.add_argument("--topic", default="com.example.app")
    parser.add_argument("--token", default="ab" * 32, help="device token")
    parser.add_argument("--uppercase-ids", action="store_true", help="send uppercase apns-ids (default: lowercase)")
    parser.add_argument("--count", type=int, default=100)
    parser.add_argument("--concurrency", type=int, default=10, help="pushes outstanding at once")
    parser.add_argument("--connections", type=int, default=1, help="aioapns max_connections")
    parser.add_argument("--timeout", type=float, default=10, help="seconds to wait for each answer")
    args = parser.parse_args()
    logging.basicConfig(level=logging.CRITICAL)
    asyncio.run(run(args))


if __name__ == "__main__":
    main()
