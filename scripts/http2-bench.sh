#!/bin/sh
# HTTP/2 engine benchmark: our client vs h2load (both against nghttpd), and h2load against our server vs nghttpd.
# Release build; prints lines starting with BENCH. Needs nghttp2-client/-server (h2load, nghttpd) and openssl.
set -e
cd "$(dirname "$0")/.."
swift build -c release --build-tests
HTTP2_BENCH=1 timeout 900 swift test -c release --skip-build --filter HTTP2BenchmarkTests 2>&1 | grep -E "BENCH|✘|passed|failed"
