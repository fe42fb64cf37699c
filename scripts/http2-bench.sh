#!/bin/sh
# HTTP/2 engine benchmark: our client vs h2load (both against nghttpd), and h2load against our server vs nghttpd.
# Release build; prints lines starting with BENCH. Needs nghttp2-client/-server (h2load, nghttpd) and openssl.
# `swift test` builds with testable imports (other test targets use @testable), which a plain
# `swift build -c release --build-tests` does not, so the build happens inside `swift test`.
set -e
cd "$(dirname "$0")/.."
HTTP2_BENCH=1 timeout 1800 swift test -c release --filter HTTP2BenchmarkTests 2>&1 | grep -E "BENCH|✘|error:|passed after|failed"
