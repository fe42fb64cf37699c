# Sourced by the profiling scripts: stop_process PID stops a child with SIGTERM, then SIGKILL after 2 s, and reaps it.
# SIGTERM first: mock-apns removes the certificate directory it made in /tmp only when it exits on a signal it handles.
stop_process() {
    kill "$1" 2>/dev/null || return 0
    (sleep 2; kill -9 "$1" 2>/dev/null) & local killer=$!
    wait "$1" 2>/dev/null || true
    kill "$killer" 2>/dev/null || true
}
