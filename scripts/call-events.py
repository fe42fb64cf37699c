#!/usr/bin/env python3
"""Call events for the load scripts, one per line as kcat -K '\\t' takes them: "<call id>\\t<event JSON>".

usage: call-events.py EVENTS [incoming]
EVENTS/2 calls: each call's incoming event, and its hang-up 50 calls later (the last 50 hang up at the end); every
call has its own device token and a 600 s ring timeout, so none expires while a worker catches up.
With `incoming`: EVENTS calls, their incoming events only (every one is pushed, as in the bench's worker area).
"""
import json
import sys
import time
import uuid

events = int(sys.argv[1])
incoming_only = sys.argv[2:] == ["incoming"]
now = int(time.time() * 1000)


def line(call, kind):
    body = {"event_id": str(uuid.uuid4()), "type": kind, "call_id": f"c-{call}", "device_token": "%064x" % (call + 1),
            "push": "alert", "topic": "com.example.app", "environment": "production", "created_at": now,
            "ring_timeout_s": 600, "caller": {"id": f"u-{call}", "name": "Alice Example"}}
    return f"c-{call}\t" + json.dumps(body, separators=(",", ":"))


if incoming_only:
    for call in range(events):
        print(line(call, "incoming"))
    sys.exit(0)
calls = events // 2
for call in range(calls):
    print(line(call, "incoming"))
    if call >= 50:
        print(line(call - 50, "hangup"))
for call in range(max(0, calls - 50), calls):
    print(line(call, "hangup"))
