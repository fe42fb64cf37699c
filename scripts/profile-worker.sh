#!/usr/bin/env bash
# One `callpush run` process against `callpush kafka-mock` and `callpush mock-apns` (token mode, receipts on), fed
# EVENTS call events (incoming + hang-up pairs) by kcat once it is ready; what the worker spent on them:
#
#   scripts/profile-worker.sh native [EVENTS]      CPU µs per event (user + sys; and by thread group, with the
#                                                  kernel's part), context switches, minor faults and, when `perf`
#                                                  works here, futex calls per event (default 60 000)
#   scripts/profile-worker.sh callgrind FILE [EVENTS]
#                                                  the worker under valgrind's callgrind, counting only while the
#                                                  events are processed (default 5 000; about 1.5 minutes); then
#                                                  `callgrind_annotate --inclusive=yes FILE.1` (instructions per
#                                                  event = totals ÷ EVENTS; see docs/benchmarks.md)
#                                                  SEPARATE_THREADS=yes: a file per thread (FILE.1-NN; the
#                                                  thread's name is not recorded: tell them apart by their
#                                                  top functions, e.g. runPollLoop for kafka-consume)
#                                                  CALLGRIND_ARGS adds valgrind options (--dump-instr=yes for
#                                                  scripts/count-locks.py: mutex acquisitions per event)
#
# MIX=incoming: incoming calls only, every one pushed (the bench's worker area); the default backlog hangs up each call
# 50 calls after it rang, so the worker reads about half the hang-ups before it sends their incoming push.
# RUN_ARGS adds options to the worker's `callpush run` (e.g. RUN_ARGS="--kafka-linger 5": compare settings in
# interleaved runs as you would binaries).
# BIN picks the binary (default .build/release/callpush: `swift build -c release --static-swift-stdlib --product
# callpush`). CPU seconds per event move ±25 % between runs on a shared machine: compare binaries in interleaved
# runs; instruction counts (callgrind) do not move, but miss what contention and the kernel cost.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-.build/release/callpush}
MODE=${1:-native}
case "$MODE" in
    native) EVENTS=${2:-60000} ;;
    callgrind) OUT=${2:?callgrind needs an output file}; EVENTS=${3:-5000}; OUT=$(realpath -m "$OUT") ;;
    *) echo "usage: $0 native [EVENTS] | callgrind FILE [EVENTS]" >&2; exit 2 ;;
esac
for tool in kcat curl python3 openssl; do
    command -v "$tool" >/dev/null || { echo "$0: needs $tool (make test-deps installs it)" >&2; exit 2; }
done
[ "$MODE" = native ] || command -v valgrind >/dev/null || { echo "$0: callgrind needs valgrind (apt install valgrind)" >&2; exit 2; }
work=$(mktemp -d); pids=()
. scripts/stop-process.sh
cleanup() { for pid in "${pids[@]}"; do stop_process "$pid"; done; rm -rf "$work"; }
trap cleanup EXIT

openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$work/key.p8" 2>/dev/null
scripts/call-events.py "$EVENTS" ${MIX:-} > "$work/events.tsv"
total=$(wc -l < "$work/events.tsv")

"$BIN" kafka-mock --partitions 8 > "$work/kafka.txt" 2>/dev/null & pids+=($!)
"$BIN" mock-apns --key-file "$work/key.p8" --key-id ABC123DEFG --team-id DEF123GHIJ > "$work/apns.txt" 2>/dev/null \
    < <(sleep 100000) & pids+=($!)
while [ ! -s "$work/kafka.txt" ] || [ ! -s "$work/apns.txt" ]; do sleep 0.1; done
brokers=$(head -1 "$work/kafka.txt"); apns=$(head -1 "$work/apns.txt")
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
wrap=()
[ "$MODE" = callgrind ] && wrap=(valgrind --tool=callgrind --separate-threads=${SEPARATE_THREADS:-no} --instr-atstart=no
    --callgrind-out-file="$OUT" ${CALLGRIND_ARGS:-})
"${wrap[@]}" "$BIN" run --kafka-brokers "$brokers" --kafka-receipts --metrics-port "$port" --log-level error \
    --apns-key-file "$work/key.p8" --apns-key-id ABC123DEFG --apns-team-id DEF123GHIJ \
    --apns-endpoint "${apns%% *}" --apns-ca-file "${apns##*ca=}" --kafka-session-timeout 6 ${RUN_ARGS:-} > "$work/worker.log" 2>&1 &
worker=$!; pids+=($worker)
until curl -s "localhost:$port/metrics" | grep -q '^callpush_ready 1'; do
    kill -0 "$worker" 2>/dev/null || { echo "$0: the worker exited; its log:" >&2; tail -20 "$work/worker.log" >&2; exit 1; }
    sleep 0.5
done
sleep 3

field() { awk -v f="$1" '{print $f}' "/proc/$worker/stat"; }
switches() { cat /proc/"$worker"/task/*/status | awk '/ctxt_switches/ {s += $2} END {print s}'; }
# The sum of a metric's series in an exposition on stdin, and in the worker's /metrics now.
metric_sum() { awk -v name="$1" 'index($0, name) == 1 {s += $2} END {print s + 0}'; }
metric_total() { curl -s --max-time 5 "localhost:$port/metrics" | metric_sum "$1"; }
outcomes() { metric_total callpush_outcomes_total; }
perf_pid=
if [ "$MODE" = callgrind ]; then
    callgrind_control -i on "$worker" >/dev/null 2>&1
elif command -v perf >/dev/null && perf stat -e syscalls:sys_enter_futex -p "$worker" -o /dev/null sleep 0.1 2>/dev/null; then
    perf stat -x, -e syscalls:sys_enter_futex -p "$worker" -o "$work/perf.txt" & perf_pid=$!; sleep 0.3
fi
# Per thread: "id name user sys" (clock ticks; the name is the kernel's, e.g. kafka-consume, http2-loop-0, rdk:broker1).
threads() { for task in /proc/"$worker"/task/*; do
    echo "${task##*/} $(tr ' ' _ < "$task/comm") $(sed 's/.*) //' "$task/stat" | awk '{print $12, $13}')"; done; }
threads > "$work/threads0"
user0=$(field 14); sys0=$(field 15); faults0=$(field 10); switches0=$(switches); start=$(date +%s.%N)
kcat -b "$brokers" -P -t calls -K $'\t' -X partitioner=murmur2_random < "$work/events.tsv"
# Each look is a /metrics exposition the worker renders: under valgrind (~60 events/s) look every 2 s, not every 0.1 s,
# or the rendering is ~2k of the instructions per event.
look=0.1; [ "$MODE" = callgrind ] && look=2
# Bounded: librdkafka's mock broker keeps about 5 MB per partition and deletes the oldest records beyond that, so a
# worker far behind a large backlog (a big EVENTS, a slow profiler) never sees some of them: the consumer counts them
# in callpush_kafka_offset_resets_total. Give up when the outcomes stop growing for 60 s.
done_count=0; last_change=$(date +%s)
until [ "$done_count" -ge "$total" ]; do
    sleep "$look"
    now_count=$(outcomes) || continue  # a scrape that timed out (the worker is slow under valgrind): look again
    if [ "$now_count" -ne "$done_count" ]; then done_count=$now_count; last_change=$(date +%s)
    elif [ $(($(date +%s) - last_change)) -ge 60 ]; then
        resets=$(metric_total callpush_kafka_offset_resets_total)
        echo "$0: stuck at $done_count of $total outcomes for 60 s; partitions reset past deleted records: $resets" \
            "(the mock broker keeps about 5 MB per partition: use fewer events)" >&2
        exit 1
    fi
done
end=$(date +%s.%N); threads > "$work/threads1"
# What the events became, and how many pushes they took: the cost per event depends on it (in this backlog the worker
# reads a call's hang-up before it sends the incoming push, for about half the calls: those are cancelled, no push).
exposition=$(curl -s --max-time 5 "localhost:$port/metrics")
mix=$(awk '/^callpush_outcomes_total[{]/ && $2 > 0 { match($0, /outcome="[^"]*"/)
          printf "%s%s %d", sep, substr($0, RSTART + 9, RLENGTH - 10), $2; sep = ", " }' <<< "$exposition")
pushes=$(metric_sum callpush_apns_requests_total <<< "$exposition")
# The consumer's back-pressure: pauses of a partition at its in-flight limit, wake-ups of librdkafka's fetcher.
pauses=$(metric_sum callpush_kafka_partition_pauses_total <<< "$exposition")
wakeups=$(metric_sum callpush_kafka_fetch_wakeups_total <<< "$exposition")
if [ "$MODE" = callgrind ]; then
    callgrind_control -i off "$worker" >/dev/null 2>&1
    callgrind_control -d "$worker" >/dev/null 2>&1
    sleep 1
    files="$OUT.1"; [ "${SEPARATE_THREADS:-no}" = yes ] && files="$OUT.1-NN, one per thread"
    echo "$total events ($mix; $pushes APNs requests); profile in $files"
    exit 0
fi
awk -v n="$total" -v a="$start" -v b="$end" -v u=$(($(field 14) - user0)) -v y=$(($(field 15) - sys0)) \
    -v hz="$(getconf CLK_TCK)" -v x=$(($(switches) - switches0)) -v f=$(($(field 10) - faults0)) \
    'BEGIN { printf "%d events: %.0f events/s, CPU %.1f µs/event (sys %.1f), %.2f context switches/event, %.2f minor faults/event",
             n, n / (b - a), (u + y) / hz / n * 1e6, y / hz / n * 1e6, x / n, f / n }'
if [ -n "$perf_pid" ]; then
    kill -INT "$perf_pid"; wait "$perf_pid" || true
    awk -F, -v n="$total" '/futex/ { printf ", %.2f futex calls/event", $1 / n }' "$work/perf.txt"
fi
echo
echo "outcomes: $mix; APNs requests: $pushes; partition pauses: $pauses, fetch wake-ups: $wakeups"
# CPU per event by thread group (as callpush_thread_cpu_seconds_total groups them), and the kernel's part of it:
# threads that lived through the run.
join <(sort "$work/threads0") <(sort "$work/threads1") | awk -v n="$total" -v hz="$(getconf CLK_TCK)" '
    { name = $2; if (name ~ /^rdk:/) name = "librdkafka"; else if (name ~ /qos/) name = "dispatch"; else sub(/-[0-9]+$/, "", name)
      cpu[name] += $6 + $7 - $3 - $4; sys[name] += $7 - $4 }
    END { printf "by thread (µs/event):"; for (g in cpu) if (cpu[g] > 0)
              printf " %s %.1f (sys %.1f)", g, cpu[g] / hz / n * 1e6, sys[g] / hz / n * 1e6; print "" }'
