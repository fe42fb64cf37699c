#!/usr/bin/env python3
"""Writes Grafana/dashboards/callpush.json, the provisioned callpush SRE dashboard.

The JSON is the deployed artefact; this script is its source so that layout stays regular. Edit here, run
`python3 Grafana/generate-dashboard.py`, commit both. `--check` exits 1 when the JSON is out of date.

Layout (top to bottom): SLO overview -> APNs (RED + saturation) -> Kafka consumption -> outcomes -> latency.
Every query uses metrics callpush exports (docs/operations.md "Observability") and Prometheus' `up`; a test checks it.
"""
import json
import pathlib
import sys

DS = {"type": "prometheus", "uid": "prometheus"}
SEL = 'job="$job", instance=~"$instance"'
RI = "$__rate_interval"

panels = []
next_id = 1
y = 0


def target(expr, legend="", ref="A", fmt=None, instant=False):
    t = {"datasource": DS, "expr": expr, "legendFormat": legend or "__auto", "refId": ref, "range": not instant,
         "instant": instant}
    if fmt:
        t["format"] = fmt
    return t


def row(title):
    global next_id, y
    panels.append({"type": "row", "title": title, "id": next_id, "collapsed": False,
                   "gridPos": {"h": 1, "w": 24, "x": 0, "y": y}, "panels": []})
    next_id += 1
    y += 1


def place(specs, height):
    """specs: list of (width, panel dict). Lays them left to right on one line."""
    global next_id, y
    x = 0
    for width, panel in specs:
        panel["id"] = next_id
        panel["gridPos"] = {"h": height, "w": width, "x": x, "y": y}
        panel["datasource"] = DS
        next_id += 1
        x += width
        panels.append(panel)
    assert x <= 24, x
    y += height


def stat(title, expr, unit, description, thresholds=None, decimals=None):
    steps = thresholds or [{"color": "green", "value": None}]
    defaults = {"unit": unit, "thresholds": {"mode": "absolute", "steps": steps}, "color": {"mode": "thresholds"}}
    if decimals is not None:
        defaults["decimals"] = decimals
    return {"type": "stat", "title": title, "description": description,
            "targets": [target(expr, instant=False)],
            "fieldConfig": {"defaults": defaults, "overrides": []},
            "options": {"reduceOptions": {"calcs": ["lastNotNull"], "fields": "", "values": False},
                        "colorMode": "background", "graphMode": "area", "justifyMode": "auto",
                        "textMode": "auto", "orientation": "auto"}}


def series(title, targets, unit, description, stack=False, min_zero=True, overrides=None):
    custom = {"drawStyle": "line", "lineWidth": 1, "fillOpacity": 10 if not stack else 40,
              "showPoints": "never", "spanNulls": False,
              "stacking": {"mode": "normal" if stack else "none", "group": "A"}}
    defaults = {"unit": unit, "custom": custom, "color": {"mode": "palette-classic"}}
    if min_zero:
        defaults["min"] = 0
    return {"type": "timeseries", "title": title, "description": description, "targets": targets,
            "fieldConfig": {"defaults": defaults, "overrides": overrides or []},
            "options": {"legend": {"displayMode": "table", "placement": "right", "calcs": ["mean", "max", "lastNotNull"],
                                   "showLegend": True},
                        "tooltip": {"mode": "multi", "sort": "desc"}}}


def heatmap(title, metric, description):
    return {"type": "heatmap", "title": title, "description": description,
            "targets": [target(f'sum by (le) (increase({metric}_bucket{{{SEL}}}[{RI}]))', "{{le}}", fmt="heatmap")],
            "fieldConfig": {"defaults": {"custom": {"scaleDistribution": {"type": "linear"}}}, "overrides": []},
            "options": {"calculate": False, "yAxis": {"unit": "s", "axisPlacement": "left"},
                        "cellGap": 1, "color": {"mode": "scheme", "scheme": "Oranges", "fill": "dark-orange",
                                                "scale": "exponential", "exponent": 0.5, "steps": 64},
                        "rowsFrame": {"layout": "auto"}, "tooltip": {"show": True, "yHistogram": True},
                        "legend": {"show": True}, "filterValues": {"le": 1e-9}}}


def quantiles(metric, qs=(0.5, 0.9, 0.99)):
    refs = "ABCDEFG"
    return [target(f'histogram_quantile({q}, sum by (le) (rate({metric}_bucket{{{SEL}}}[{RI}])))', f"p{round(q * 100)}",
                   ref=refs[i]) for i, q in enumerate(qs)]


RED_ABOVE = lambda v: [{"color": "green", "value": None}, {"color": "red", "value": v}]

# ---------------------------------------------------------------------------------------------- SLO overview
row("SLO overview")
place([
    (3, stat("Calls consumed/s", f'sum(rate(callpush_events_consumed_total{{{SEL}, topic="calls"}}[{RI}]))', "reqps",
             "Events consumed from the calls topic per second (retry tiers excluded).")),
    (3, stat("Push success", f'sum(rate(callpush_apns_requests_total{{{SEL}, status="200"}}[{RI}])) / '
                             f'sum(rate(callpush_apns_requests_total{{{SEL}}}[{RI}]))', "percentunit",
             "APNs 200 answers / all APNs attempts (dead tokens and transient failures included).",
             [{"color": "red", "value": None}, {"color": "orange", "value": 0.9}, {"color": "green", "value": 0.97}], 2)),
    (3, stat("p99 end-to-end", f'histogram_quantile(0.99, sum by (le) (rate(callpush_end_to_end_latency_seconds_bucket{{{SEL}}}[{RI}])))',
             "s", "Event created_at to APNs answer, 99th percentile. SLO: 2 s.",
             [{"color": "green", "value": None}, {"color": "orange", "value": 1}, {"color": "red", "value": 2}], 2)),
    (3, stat("Within 2 s SLO", f'sum(rate(callpush_end_to_end_latency_seconds_bucket{{{SEL}, le="2"}}[{RI}])) / '
                               f'sum(rate(callpush_end_to_end_latency_seconds_count{{{SEL}}}[{RI}]))', "percentunit",
             "Fraction of pushes answered within 2 s of created_at (exact: 2 is a bucket bound). Target 99 %.",
             [{"color": "red", "value": None}, {"color": "orange", "value": 0.98}, {"color": "green", "value": 0.99}], 2)),
    (3, stat("Lag on calls", f'sum(callpush_kafka_consumer_lag{{{SEL}, topic="calls"}})', "short",
             "Messages behind on the calls topic, summed over the partitions the workers own (librdkafka statistics).",
             RED_ABOVE(1000))),
    (3, stat("Dead letters/s", f'sum(rate(callpush_dead_letters_total{{{SEL}}}[{RI}]))', "reqps",
             "Events written to calls.dlq per second. Anything above 0 needs a look.", RED_ABOVE(0.0001), 3)),
    (3, stat("Expired/s", f'sum(rate(callpush_outcomes_total{{{SEL}, outcome="expired"}}[{RI}]))', "reqps",
             "Events dropped because the call's ring deadline had passed before they could be pushed.", RED_ABOVE(0.1), 3)),
    (3, stat("Workers up", 'sum(up{job="$job"})', "short",
             "Scrape targets of the job answering /metrics.",
             [{"color": "red", "value": None}, {"color": "green", "value": 1}])),
], 4)

# ---------------------------------------------------------------------------------------------- APNs
row("APNs (rate, errors, duration, saturation)")
place([
    (8, series("APNs answers/s by status and reason",
               [target(f'sum by (status, reason) (rate(callpush_apns_requests_total{{{SEL}}}[{RI}]))', "{{status}} {{reason}}")],
               "reqps", "status=\"none\": no answer (timeout, connection lost).", stack=True)),
    (8, series("APNs error ratio",
               [target(f'sum(rate(callpush_apns_requests_total{{{SEL}, status=~"429|5..|none"}}[{RI}])) / sum(rate(callpush_apns_requests_total{{{SEL}}}[{RI}]))',
                       "retryable (429, 5xx, no answer)", "A"),
                target(f'sum(rate(callpush_apns_requests_total{{{SEL}, status=~"4..", status!="429"}}[{RI}])) / sum(rate(callpush_apns_requests_total{{{SEL}}}[{RI}]))',
                       "terminal (400, 403, 410, 413)", "B"),
                target(f'sum(rate(callpush_apns_requests_total{{{SEL}, status="403"}}[{RI}])) / sum(rate(callpush_apns_requests_total{{{SEL}}}[{RI}]))',
                       "credentials (403)", "C")],
               "percentunit", "Retryable errors go to the retry tiers; terminal ones invalidate tokens or dead-letter.")),
    (8, series("APNs request duration", quantiles("callpush_apns_request_duration_seconds", (0.5, 0.95, 0.99)), "s",
               "Send to answer, resends included.")),
], 8)
place([
    (6, series("Open HTTP/2 connections",
               [target(f'sum by (endpoint) (callpush_apns_connections{{{SEL}}})', "{{endpoint}}")], "short",
               "Connections are opened on demand: 0 is normal for an idle endpoint.")),
    (6, series("Connection events/s",
               [target(f'sum by (endpoint, event) (rate(callpush_apns_connection_events_total{{{SEL}}}[{RI}]))', "{{endpoint}} {{event}}")],
               "reqps", "opened, failed, replaced, goaway.")),
    (6, series("Streams in flight vs limit",
               [target(f'sum by (endpoint) (callpush_apns_streams_in_flight{{{SEL}}})', "in flight {{endpoint}}", "A"),
                target(f'sum by (endpoint) (callpush_apns_stream_limit{{{SEL}}})', "limit {{endpoint}}", "B")],
               "short", "Requests on the wire against the sum of every connection's MAX_CONCURRENT_STREAMS.")),
    (6, series("JWT refreshes and 403s",
               [target(f'sum(increase(callpush_apns_jwt_refreshes_total{{{SEL}}}[$__interval]))', "provider tokens minted", "A"),
                target(f'sum by (reason) (increase(callpush_apns_requests_total{{{SEL}, status="403"}}[$__interval]))', "403 {{reason}}", "B")],
               "short", "One token is shared by all connections and refreshed every ~50 minutes; 403s mean credential trouble.")),
], 7)

# ---------------------------------------------------------------------------------------------- Apps
row("APNs apps and credentials")
place([
    (7, series("Answers/s per app",
               [target(f'sum by (bundle_id, disposition) (rate(callpush_apns_app_requests_total{{{SEL}}}[{RI}]))', "{{bundle_id}} {{disposition}}")],
               "reqps", "Per configured app (apns.apps; 'any' for the single-app flags): delivered, tokenInvalid, retryLater, "
                        "fixCredentials (key or certificate rejected), permanent.")),
    (7, series("In flight per app, and pushes held back",
               [target(f'sum by (bundle_id) (callpush_apns_app_requests_in_flight{{{SEL}}})', "in flight {{bundle_id}}", "A"),
                target(f'sum by (bundle_id) (increase(callpush_apns_app_in_flight_limited_total{{{SEL}}}[$__interval]))', "at bound {{bundle_id}}", "B"),
                target(f'sum(increase(callpush_apns_unknown_app_requests_total{{{SEL}}}[$__interval]))', "unknown app", "C")],
               "short", "A credential at apns.app-max-in-flight answers AppInFlightLimit (retried later) so it cannot stall "
                        "the other apps; unknown bundle ids are dead-lettered (unknown_app).")),
    (6, series("Credential age and reloads",
               [target(f'time() - max by (credential) (callpush_apns_credential_loaded_timestamp_seconds{{{SEL}}})', "age (s) {{credential}}", "A"),
                target(f'sum by (result) (increase(callpush_apns_config_reloads_total{{{SEL}}}[$__interval]))', "reload {{result}}", "B")],
               "short", "Seconds since each key or certificate was read (start or SIGHUP); a failed reload keeps the old configuration.")),
    (4, stat("Days until each certificate expires",
             f'(min by (credential) (callpush_apns_certificate_expiry_timestamp_seconds{{{SEL}}}) - time()) / 86400', "none",
             "notAfter of each certificate credential (certificate apps only). Alert CallpushAPNsCertificateExpiresSoon at "
             "14 days: renew, replace the files, SIGHUP.",
             thresholds=[{"color": "red", "value": None}, {"color": "orange", "value": 7}, {"color": "green", "value": 14}],
             decimals=1)),
], 7)

# ---------------------------------------------------------------------------------------------- Kafka
row("Kafka consumption")
place([
    (8, series("Consumed/s by topic",
               [target(f'sum by (topic) (rate(callpush_events_consumed_total{{{SEL}}}[{RI}]))', "{{topic}}")],
               "reqps", "Events consumed from the main topic and each retry tier (redeliveries after a crash included).")),
    (8, series("Lag per partition",
               [target(f'sum by (topic, partition) (callpush_kafka_consumer_lag{{{SEL}}})', "{{topic}}[{{partition}}]")],
               "short", "High watermark minus committed offset for owned partitions (librdkafka statistics, every 15 s). "
                        "Retry-tier lag includes records waiting for their due time.")),
    (8, series("In-flight events and the oldest one's age",
               [target(f'sum by (instance) (callpush_inflight_events{{{SEL}}})', "in flight {{instance}}", "A"),
                target(f'max by (instance) (callpush_oldest_inflight_event_age_seconds{{{SEL}}})', "oldest age (s) {{instance}}", "B")],
               "short", "Consumed events without a final outcome yet (limit: CALLPUSH_WORKER_MAX_IN_FLIGHT), and how long the "
                        "oldest has waited: it stays below the APNs request timeout plus a few seconds unless an event is stuck.")),
], 7)
place([
    (6, series("Assigned and paused partitions",
               [target(f'sum by (instance) (callpush_kafka_assigned_partitions{{{SEL}}})', "assigned {{instance}}", "A"),
                target(f'sum by (reason) (callpush_kafka_paused_partitions{{{SEL}}})', "paused: {{reason}}", "B"),
                target(f'max by (instance) ((1 - callpush_kafka_group_join_state{{{SEL},state="steady"}}) '
                       f'or callpush_kafka_rebalance_round_overdue{{{SEL}}})', "rebalancing {{instance}}", "C")],
               "short",
               "Assigned: the partitions of every subscribed topic (main and retry tiers) each worker owns; a worker with "
               "none is idle (more workers than partitions). Paused: backpressure: in-flight limits reached. retry_due: a "
               "retry tier waits for its head record's due time (normal). rebalance (kafka.rebalance=eager only): the group "
               "refused a commit while rebalancing; intake waits for the new assignment. Rebalancing: 1 while a worker's "
               "group handler is not in its steady state (a rebalance in progress), or while the second round of a "
               "cooperative rebalance it gave partitions up in is overdue; over 2 minutes, alert "
               "CallpushRebalanceNotFinishing.")),
    (6, series("Calls waiting for a new owner",
               [target(f'histogram_quantile(0.99, sum by (le) (rate(callpush_kafka_assignment_wait_seconds_bucket{{{SEL}}}[$__rate_interval])))',
                       "p99 first-call wait", "A"),
                target(f'sum(increase(callpush_kafka_assignment_wait_seconds_count{{{SEL}}}[$__interval]))',
                       "partitions newly assigned", "B")],
               "s", "For each calls partition a worker is newly assigned, how long its first call had waited when read: "
                    "the wait of calls whose partition moved (a crash, a scale event, a restart), plus any backlog. With "
                    "cooperative rebalancing the partitions that do not move never wait (alert CallpushPartitionsWaitedForAnOwner).")),
    (6, series("Rebalances, events read again, offset resets, events not keyed by call or created ahead",
               [target(f'sum by (instance) (increase(callpush_kafka_rebalances_total{{{SEL}}}[$__interval]))', "{{instance}}", "A"),
                target(f'sum(increase(callpush_kafka_uncommitted_handed_over_total{{{SEL}}}[$__interval]))',
                       "read again after a hand-over", "E"),
                target(f'sum by (topic) (increase(callpush_kafka_offset_resets_total{{{SEL}}}[$__interval]))',
                       "records skipped {{topic}}", "B"),
                target(f'sum(increase(callpush_key_mismatches_total{{{SEL}}}[$__interval]))', "not keyed by call id", "C"),
                target(f'sum(increase(callpush_events_created_ahead_total{{{SEL}}}[$__interval]))', "created ahead", "D")],
               "short", "Assignments and revocations seen; every scale step or restart causes some. Read again after a "
                        "hand-over: events a worker read from a partition it gave away past the partition's last commit, "
                        "which the next owner reads again (at-least-once repeats of a rebalance; a receipt each). Records skipped: a "
                        "partition's position was reset past records deleted before the group read them (events lost "
                        "before callpush saw them; alert CallpushRecordsSkipped). Not keyed by call id: events whose "
                        "Kafka key is not their call_id, so their hang-up may reach another worker (alert "
                        "CallpushEventsNotKeyedByCall). Created ahead: events whose created_at was more than 1 s ahead "
                        "of the worker's clock; they ring from when read (alert CallpushEventsCreatedAhead).")),
    (6, series("Broker round-trip time",
               [target(f'max by (broker) (callpush_kafka_broker_rtt_seconds{{{SEL}}})', "{{broker}}")], "s",
               "p99 RTT per broker from librdkafka statistics.")),
], 7)

# ---------------------------------------------------------------------------------------------- Outcomes
row("Outcomes")
place([
    (12, series("Outcomes/s",
                [target(f'sum by (outcome) (rate(callpush_outcomes_total{{{SEL}}}[{RI}]))', "{{outcome}}")], "reqps",
                "Every consumed event ends in exactly one: delivered, invalidated, retried, dead_lettered, expired, cancelled, abandoned.",
                stack=True)),
    (6, series("Retries by tier",
               [target(f'sum by (tier) (rate(callpush_retries_total{{{SEL}}}[{RI}]))', "{{tier}}")], "reqps",
               "Events sent to each retry tier topic.", stack=True)),
    (6, series("Rings after a hang-up prevented, and read-ahead cut short",
               [target(f'sum by (reason) (increase(callpush_cancellations_total{{{SEL}}}[$__interval]))', "{{reason}}", "A"),
                target(f'sum by (reason) (increase(callpush_read_ahead_released_early_total{{{SEL}}}[$__interval]))',
                       "let go early: {{reason}}", "B"),
                target(f'sum by (scan, result) (increase(callpush_read_ahead_scans_total{{{SEL}}}[$__interval]))',
                       "{{scan}} scans: {{result}}", "C")], "short",
               "Incoming events not sent because their call had ended: look_ahead (found later in the log, the replay or "
               "a scan), after_stop, queued, retry_after_stop. Backlog scans: a newly assigned partition's backlog "
               "read for hang-ups before its incoming calls go; history scans: what lies before it, read before retries "
               "from there go (completed, stopped: read through first, failed: alert CallpushBacklogScansFailing). Let "
               "go early: incoming calls the read-ahead sent before it had read through their partition's backlog (limit, "
               "timeout), after a failed scan, or retries after a failed history scan (history_scan_failed); a hang-up "
               "the scan would have found no longer stops them (alert CallpushReadAheadCutShort).", stack=False)),
], 7)
place([
    (6, series("Dead letters by reason",
               [target(f'sum by (reason) (increase(callpush_dead_letters_total{{{SEL}}}[$__interval]))', "{{reason}}")], "short",
               "apns_credentials means the key is rejected; retries_exhausted means APNs failed every attempt.", stack=True)),
    (6, series("Token invalidations by reason",
               [target(f'sum by (reason) (rate(callpush_token_invalidations_total{{{SEL}}}[{RI}]))', "{{reason}}")], "reqps",
               "Dead device tokens written to apns.tokens.invalidated (Unregistered, BadDeviceToken, ...).", stack=True)),
    (6, series("Produce failures",
               [target(f'sum by (topic) (increase(callpush_produce_failures_total{{{SEL}}}[$__interval]))', "retried {{topic}}"),
                target(f'sum by (topic) (increase(callpush_records_refused_total{{{SEL}}}[$__interval]))',
                       "refused {{topic}}", ref="B")],
               "short", "Records (retries, dead letters, invalidations, receipts) whose produce failed and was retried; "
               "refused: records Kafka refused for good, each of which abandoned its event (alert CallpushEventsAbandoned).")),
    (6, series("Memory of ended calls reaches back",
               [target(f'min by (instance) (callpush_ended_calls_reach_seconds{{{SEL}}})', "{{instance}}")], "s",
               "How long ago the oldest hang-up a worker still remembers ended: 600 s until its memory "
               "(CALLPUSH_WORKER_ENDED_CALLS calls) is full. An incoming call retried or replayed later than this after its "
               "hang-up rings again (alert CallpushEndedCallMemoryShort below 180 s).")),
], 7)

# ---------------------------------------------------------------------------------------------- Latency
row("Latency")
place([
    (12, heatmap("End-to-end latency (created_at to APNs answer)", "callpush_end_to_end_latency_seconds",
                 "Distribution over time; bucket bounds include 0.3 s and 2 s.")),
    (12, heatmap("APNs request duration", "callpush_apns_request_duration_seconds", "Distribution over time.")),
], 8)
place([
    (12, series("End-to-end latency percentiles", quantiles("callpush_end_to_end_latency_seconds", (0.5, 0.9, 0.99)), "s",
                "SLO: p99 at most 2 s.",
                overrides=[])),
    (12, series("APNs request duration percentiles", quantiles("callpush_apns_request_duration_seconds", (0.5, 0.9, 0.99)), "s",
                "Send to answer.")),
], 8)
place([
    (12, series("Worker's own time per event, percentiles",
                quantiles("callpush_worker_processing_seconds", (0.5, 0.9, 0.99)), "s",
                "Record handed over by the consumer to outcome final and its records acknowledged: decode, admission, "
                "APNs round trip, produce and delivery reports. Target: p99 at most 5 ms at half the maximum rate.")),
    (12, heatmap("Worker's own time per event", "callpush_worker_processing_seconds",
                 "Distribution over time; end-to-end minus this is time spent in Kafka before the worker had the record.")),
], 8)
place([
    (12, series("Worker's own time by stage, p99",
                [target(f'histogram_quantile(0.99, sum by (le, stage) (rate(callpush_worker_stage_seconds_bucket{{{SEL}}}[{RI}])))',
                        "{{stage}}", ref="A"),
                 target(f'histogram_quantile(0.99, sum by (le) (rate(callpush_apns_request_duration_seconds_bucket{{{SEL}}}[{RI}])))',
                        "apns", ref="B")], "s",
                "Where the worker's own time goes: dispatch (record handed over to push handed to the APNs client: "
                "decode, map, admission, read-ahead gate), the APNs leg (send to answer) and acknowledge (outcome "
                "records produced to the last one acknowledged by Kafka). An event's three stages add up to about "
                "its own time; their p99s do not add up.")),
    (12, series("CPU by thread group",
                [target(f'sum by (instance, thread) (rate(callpush_thread_cpu_seconds_total{{{SEL}}}[{RI}]))',
                        "{{instance}} {{thread}}")], "percentunit",
                "Share of one core each group of a worker's threads uses: kafka-consume (poll, decode, map, admit), "
                "http2-loop (APNs connections, answers, routing, follow-up produce), kafka-produce (delivery reports), "
                "librdkafka (its broker threads). A group near 100 % is a saturated core: add workers.")),
], 8)

dashboard = {
    "id": None,
    "uid": "callpush-overview",
    "title": "callpush",
    "description": "Call events from Kafka to APNs: SLO, APNs, Kafka, outcomes, latency.",
    "tags": ["callpush", "apns", "kafka"],
    "timezone": "browser",
    "editable": False,
    "graphTooltip": 1,
    "liveNow": False,
    "refresh": "30s",
    "schemaVersion": 39,
    "version": 1,
    "time": {"from": "now-3h", "to": "now"},
    "timepicker": {},
    "fiscalYearStartMonth": 0,
    "links": [],
    "annotations": {"list": [{
        "builtIn": 1, "datasource": {"type": "grafana", "uid": "-- Grafana --"}, "enable": True, "hide": True,
        "iconColor": "rgba(0, 211, 255, 1)", "name": "Annotations & Alerts", "type": "dashboard"}]},
    "templating": {"list": [
        {"name": "job", "label": "job", "type": "query", "datasource": DS,
         "query": {"query": "label_values(callpush_outcomes_total, job)", "refId": "job"},
         "definition": "label_values(callpush_outcomes_total, job)",
         "current": {"selected": True, "text": "callpush", "value": "callpush"},
         "refresh": 2, "sort": 1, "multi": False, "includeAll": False, "hide": 0, "options": []},
        {"name": "instance", "label": "worker", "type": "query", "datasource": DS,
         "query": {"query": 'label_values(callpush_outcomes_total{job="$job"}, instance)', "refId": "instance"},
         "definition": 'label_values(callpush_outcomes_total{job="$job"}, instance)',
         "current": {"selected": True, "text": ["All"], "value": ["$__all"]},
         "refresh": 2, "sort": 1, "multi": True, "includeAll": True, "allValue": ".*", "hide": 0, "options": []},
    ]},
    "panels": panels,
}

text = json.dumps(dashboard, indent=2, sort_keys=False) + "\n"
path = pathlib.Path(__file__).resolve().parent / "dashboards" / "callpush.json"
if "--check" in sys.argv:
    if not path.exists() or path.read_text() != text:
        print(f"{path} is out of date: run python3 {pathlib.Path(__file__).name}", file=sys.stderr)
        sys.exit(1)
else:
    path.write_text(text)
    print(f"wrote {path} ({len(panels)} panels)")
