#!/usr/bin/env bash
# `make test-image`: runs the image built by `make image` for real, with docker or podman.
#   1. it runs as a non-root user (uid 10001);
#   2. `callpush demo` inside it exits 0 (embedded Kafka + mock APNs + a worker, outcome sum checked);
#   3. a `callpush run` container processes events against a `kafka-mock` container and a `mock-apns` container
#      that requires provider tokens (ES256 key shared as a file, as with Apple's .p8): every event delivered;
#   4. its HEALTHCHECK turns healthy;
#   5. `stop` (SIGTERM to PID 1) drains: the worker exits 0 within the stop timeout, before any SIGKILL.
# Every container joins the kafka-mock container's network namespace (itself without a network: nothing but its
# loopback), because librdkafka's mock brokers listen on loopback only; the worker dials the mock APNs server at
# 127.0.0.1:2197 (its certificate names 127.0.0.1). No container network, bridge plugin or container DNS is needed,
# so a fresh Debian machine's podman runs it as installed.
set -euo pipefail
source "$(dirname "$0")/container-engine.sh"
cd "$root"
IMAGE=${IMAGE:-callpush:local}
EVENTS=${EVENTS:-50}
STOP_TIMEOUT=40
# Every APNs answer takes this long, so the second burst is still in flight when the stop arrives.
APNS_LATENCY_MS=1500
name=callpush-test-$$
work=$(mktemp -d)
chmod 0755 "$work"

cleanup() {
    # One at a time, the kafka-mock container last: the others live in its network namespace, which cannot go while
    # they do.
    for container in "$name-worker" "$name-apns" "$name-kafka"; do
        "$ENGINE" rm -f "$container" >/dev/null 2>&1 || true
    done
    rm -rf "$work"
}
trap cleanup EXIT
step() { printf '== %s\n' "$*"; }
fail() {
    printf 'FAIL: %s\n' "$*" >&2
    tail -20 "$work/engine.log" >&2 2>/dev/null || true
    for container in "$name-worker" "$name-apns" "$name-kafka"; do
        echo "--- logs of $container (last 20 lines)" >&2
        "$ENGINE" logs "$container" 2>&1 | tail -20 >&2 || true
    done
    exit 1
}
# Engine chatter (podman without systemd complains about health-check timers on every run) goes to a log file
# that is shown when a check fails.
engine() { "$ENGINE" "$@" 2>>"$work/engine.log"; }
# The first stdout line of a detached container, waiting for it up to 60 s.
first_line() {
    for _ in $(seq 120); do
        line=$("$ENGINE" logs "$1" 2>/dev/null | head -1 || true)
        [[ -n "$line" ]] && { echo "$line"; return 0; }
        sleep 0.5
    done
    return 1
}
# GET $2 on the worker's telemetry port from inside the container (the image has bash but no curl).
http_get() {
    "$ENGINE" exec "$1" bash -c "exec 3<>/dev/tcp/127.0.0.1/9464 && printf 'GET $2 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n' >&3 && cat <&3" 2>/dev/null
}

"$ENGINE" image inspect "$IMAGE" >/dev/null 2>&1 || fail "no image $IMAGE: run 'make image' first"

step "runs as non-root"
user=$("$ENGINE" image inspect --format '{{.Config.User}}' "$IMAGE")
uid=$(engine run --rm --no-healthcheck --entrypoint id "$IMAGE" -u)
[[ "$user" == "10001:10001" && "$uid" == 10001 ]] || fail "image user '$user', uid '$uid'"
echo "user $user"

step "callpush demo exits 0"
engine run --rm --no-healthcheck "$IMAGE" demo --rate 200 --duration 5 --faults light >"$work/demo.txt" 2>&1 \
    || { cat "$work/demo.txt" >&2; fail "demo exited non-zero"; }
grep -E '^(OK|FAIL)' "$work/demo.txt" || tail -3 "$work/demo.txt"

step "callpush run against kafka-mock and mock-apns containers"
Deploy/scripts/generate-demo-secrets.sh "$work/secrets" mock-apns >/dev/null
engine run -d --no-healthcheck --name "$name-kafka" --network none "$IMAGE" kafka-mock --partitions 4 >/dev/null
brokers=$(first_line "$name-kafka") || fail "kafka-mock printed no bootstrap servers"
engine run -d --no-healthcheck --name "$name-apns" --network "container:$name-kafka" \
    -v "$work/secrets:/secrets:ro" "$IMAGE" mock-apns --host 0.0.0.0 --port 2197 \
    --certificate /secrets/mock-apns.crt --private-key /secrets/mock-apns.key \
    --key-file /secrets/AuthKey.p8 --key-id ABC123DEFG --team-id DEF123GHIJ --bundle-id com.example.app \
    --latency-ms "$APNS_LATENCY_MS" >/dev/null
first_line "$name-apns" >/dev/null || fail "mock-apns did not start"
engine run -d --name "$name-worker" --network "container:$name-kafka" --stop-timeout "$STOP_TIMEOUT" \
    -v "$work/secrets:/secrets:ro" \
    -e CALLPUSH_KAFKA_BROKERS="$brokers" -e CALLPUSH_KAFKA_SESSION_TIMEOUT=6 \
    -e CALLPUSH_APNS_KEY_FILE=/secrets/AuthKey.p8 -e CALLPUSH_APNS_KEY_ID=ABC123DEFG \
    -e CALLPUSH_APNS_TEAM_ID=DEF123GHIJ -e CALLPUSH_APNS_ENDPOINT=127.0.0.1:2197 \
    -e CALLPUSH_APNS_CA_FILE=/secrets/mock-apns.crt "$IMAGE" >/dev/null
for _ in $(seq 120); do
    http_get "$name-worker" /readyz | head -1 | grep -q ' 200 ' && break
    "$ENGINE" inspect --format '{{.State.Running}}' "$name-worker" | grep -q true || fail "worker exited"
    sleep 0.5
done
http_get "$name-worker" /readyz | head -1 | grep -q ' 200 ' || fail "worker never became ready"

token=$(printf 'ab%.0s' $(seq 32))
now=$(date +%s%3N)
for i in $(seq "$EVENTS"); do
    printf '{"event_id":"e-%s","type":"incoming","call_id":"c-%s","device_token":"%s","push":"alert","topic":"com.example.app","environment":"sandbox","created_at":%s,"ring_timeout_s":120}\n' \
        "$i" "$i" "$token" "$now"
done >"$work/events.jsonl"
engine run --rm -i --no-healthcheck --network "container:$name-kafka" "$IMAGE" produce --brokers "$brokers" \
    <"$work/events.jsonl" >"$work/produce.txt" 2>&1 || { cat "$work/produce.txt" >&2; fail "produce failed"; }
tail -1 "$work/produce.txt" | tr '\r' '\n' | tail -1
delivered=0
for _ in $(seq 120); do
    delivered=$(http_get "$name-worker" /metrics | sed -n 's/^callpush_outcomes_total{outcome="delivered"} //p')
    [[ "${delivered:-0}" == "$EVENTS" ]] && break
    sleep 0.5
done
[[ "${delivered:-0}" == "$EVENTS" ]] || fail "delivered ${delivered:-0} of $EVENTS events"
echo "delivered $delivered of $EVENTS events through mock-apns (provider tokens required)"

step "HEALTHCHECK turns healthy"
health=""
for _ in $(seq 60); do
    # podman runs health checks from systemd timers, and there is no systemd here: run the check itself.
    [[ "$ENGINE" == podman ]] && engine healthcheck run "$name-worker" >/dev/null || true
    health=$("$ENGINE" inspect --format '{{.State.Health.Status}}' "$name-worker" 2>/dev/null \
        || "$ENGINE" inspect --format '{{.State.Healthcheck.Status}}' "$name-worker")
    [[ "$health" == healthy ]] && break
    sleep 1
done
[[ "$health" == healthy ]] || fail "health status '$health'"
echo "health: $health"

step "stop drains and exits 0 within the stop timeout (${STOP_TIMEOUT} s)"
# A second burst, stopped while its pushes wait for their (slow) APNs answers.
sed 's/"e-/"e2-/; s/"c-/"c2-/' "$work/events.jsonl" \
    | engine run --rm -i --no-healthcheck --network "container:$name-kafka" "$IMAGE" produce --brokers "$brokers" \
        >/dev/null || fail "second produce failed"
inflight=0
for _ in $(seq 100); do
    inflight=$(http_get "$name-worker" /metrics | sed -n 's/^callpush_inflight_events //p')
    [[ "${inflight:-0}" != 0 ]] && break
    sleep 0.1
done
[[ "${inflight:-0}" != 0 ]] || fail "the second burst was never in flight"
started=$(date +%s%N)
engine stop -t "$STOP_TIMEOUT" "$name-worker" >/dev/null
elapsed_ms=$((($(date +%s%N) - started) / 1000000))
status=$("$ENGINE" inspect --format '{{.State.ExitCode}}' "$name-worker")
[[ "$status" == 0 ]] || fail "worker exit status $status after stop (137 = killed after the timeout)"
stopped=$("$ENGINE" logs "$name-worker" 2>/dev/null | grep '"message":"stopped"' || true)
[[ "$stopped" == *'"worker.unfinished":"0"'* ]] || fail "the worker did not finish its in-flight events: $stopped"
echo "stopped with $inflight events in flight: every one finished, exit status 0 after ${elapsed_ms} ms"

size=$("$ENGINE" image inspect --format '{{.Size}}' "$IMAGE")
echo "OK: $IMAGE ($((size / 1000000)) MB) passed every check with $ENGINE"
