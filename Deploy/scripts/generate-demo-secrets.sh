#!/bin/sh
# Generates the demo secrets Deploy/compose.yaml shares between the mock APNs server and the workers:
#   AuthKey.p8      an EC P-256 signing key standing in for Apple's .p8 (workers sign provider tokens with it,
#                   mock-apns verifies them with its public half)
#   mock-apns.key   the mock's TLS private key
#   mock-apns.crt   its self-signed certificate; the workers trust it as their CA (CALLPUSH_APNS_CA_FILE).
#                   The subjectAltName must contain the host name the workers dial (`mock-apns`), because the
#                   APNs client verifies it; localhost/127.0.0.1 are added for runs outside compose.
# Idempotent: existing files are kept, so restarts do not invalidate what is already running.
# Usage: generate-demo-secrets.sh DIRECTORY [HOSTNAME]
# Demo only: these files are world-readable so any container user can read them. Never use them for Apple.
set -eu
dir=${1:?usage: generate-demo-secrets.sh DIRECTORY [HOSTNAME]}
host=${2:-mock-apns}
mkdir -p "$dir"
if [ ! -s "$dir/AuthKey.p8" ]; then
    openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$dir/AuthKey.p8"
fi
if [ ! -s "$dir/mock-apns.crt" ] || [ ! -s "$dir/mock-apns.key" ]; then
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 825 \
        -subj "/CN=$host" \
        -addext "subjectAltName=DNS:$host,DNS:localhost,IP:127.0.0.1" \
        -keyout "$dir/mock-apns.key" -out "$dir/mock-apns.crt" 2>/dev/null
fi
chmod 0644 "$dir/AuthKey.p8" "$dir/mock-apns.key" "$dir/mock-apns.crt"
echo "secrets in $dir: AuthKey.p8 mock-apns.key mock-apns.crt (CN=$host)"
