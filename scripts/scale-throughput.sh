#!/usr/bin/env bash
# Events/s of 1, 2 and 3 `callpush run` processes in one consumer group, the way operators scale out: a fresh
# `callpush kafka-mock` and `callpush mock-apns` (token mode) per step, the workers started and settled, then
# EVENTS call events (incoming + hang-up pairs, murmur2-partitioned by kcat) produced at once; timed from the
# produce to the last final outcome (summed over the workers' /metrics). Also prints the workers' CPU per event.
# Everything shares this machine's cores with the mock cluster and the mock APNs: report, do not tune for it.
#
#   swift build -c release --product callpush && scripts/scale-throughput.sh [WORKER_COUNTS...]
#   EVENTS=100000 PARTITIONS=12 scripts/scale-throughput.sh 1 2 3
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-.build/release/callpush}
EVENTS=${EVENTS:-60000}
PARTITIONS=${PARTITIONS:-6}
if [ $# -gt 0 ]; then COUNTS=("$@"); else COUNTS=(1 2 3); fi
work=$(mktemp -d)
pids=()
. scripts/stop-process.sh
stop_all() { for pid in "${pids[@]}"; do stop_process "$pid"; done; pids=(); }
cleanup() { stop_all; rm -rf "$work"; }
trap cleanup EXIT

openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$work/key.p8" 2>/dev/null
scripts/call-events.py "$EVENTS" > "$work/events.tsv"
total=$(wc -l < "$work/events.tsv")

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
outcomes() {
    local sum=0 port value
    for port in "$@"; do
        value=$(curl -s --max-time 2 "localhost:$port/metrics" | awk '/^callpush_outcomes_total/ {s += $2} END {print s + 0}')
        sum=$((sum + ${value%.*}))
    done
    echo "$sum"
}

printf '%-8s %10s %10s %14s\n' workers events events/s cpu-us/event
for n in "${COUNTS[@]}"; do
    "$BIN" kafka-mock --partitions "$PARTITIONS" > "$work/kafka.txt" 2>/dev/null & pids+=($!)
    "$BIN" mock-apns --key-file "$work/key.p8" --key-id ABC123DEFG --team-id DEF123GHIJ > "$work/apns.txt" 2>/dev/null < <(sleep 100000) & pids+=($!)
    while [ ! -s "$work/kafka.txt" ] || [ ! -s "$work/apns.txt" ]; do sleep 0.1; done
    brokers=$(head -1 "$work/kafka.txt"); apns=$(head -1 "$work/apns.txt")
    ports=(); workers=()
    for i in $(seq 1 "$n"); do
        port=$((19500 + i))
        "$BIN" run --kafka-brokers "$brokers" --kafka-client-id "w$i" --metrics-port "$port" --log-level error \
            --apns-key-file "$work/key.p8" --apns-key-id ABC123DEFG --apns-team-id DEF123GHIJ \
            --apns-endpoint "${apns%% *}" --apns-ca-file "${apns##*ca=}" --kafka-session-timeout 6 > /dev/null 2>&1 &
        pids+=($!); workers+=($!); ports+=("$port")
    done
    for port in "${ports[@]}"; do
        until curl -s "localhost:$port/metrics" | grep -q '^callpush_ready 1'; do sleep 0.2; done
    done
    sleep 2
    before=0; for pid in "${workers[@]}"; do before=$((before + $(cpu_ticks "$pid"))); done
    start=$(date +%s.%N)
    kcat -b "$brokers" -P -t calls -K $'\t' -X partitioner=murmur2_random < "$work/events.tsv"
    until [ "$(outcomes "${ports[@]}")" -ge "$total" ]; do sleep 0.1; done
    end=$(date +%s.%N)
    after=0; for pid in "${workers[@]}"; do after=$((after + $(cpu_ticks "$pid"))); done
    hz=$(getconf CLK_TCK)
    awk -v n="$n" -v t="$total" -v s="$start" -v e="$end" -v c=$((after - before)) -v hz="$hz" \
        'BEGIN { printf "%-8d %10d %10.0f %14.1f\n", n, t, t / (e - s), c / hz / t * 1e6 }'
    stop_all
    rm -f "$work/kafka.txt" "$work/apns.txt"
done
