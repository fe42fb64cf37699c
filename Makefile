# callpush: two commands on a fresh Debian 12 machine with Swift installed:
#   make demo   installs missing apt packages, builds release, runs the whole pipeline on the embedded default
#   make test   installs what the tests need, runs the whole test suite
SHELL := /bin/bash
SWIFT ?= swift
APT_BUILD := pkg-config librdkafka-dev libnghttp2-dev libssl-dev ca-certificates
APT_TEST := kcat nghttp2-client nghttp2-server prometheus openssl
PIP_TEST := pyjwt cryptography
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
DEMO_ARGS ?=

.PHONY: all deps test-deps build release demo test test-long bench clean

all: build

# Installs only the packages that are missing; a no-op taking well under a second when all are present.
deps:
	@./scripts/apt-ensure $(APT_BUILD)

test-deps: deps
	@./scripts/apt-ensure $(APT_TEST)
	@python3 -c 'import jwt, cryptography' 2>/dev/null || python3 -m pip install --quiet $(PIP_TEST)
	@python3 -c 'import aioapns' 2>/dev/null || python3 -m pip install --quiet aioapns

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT) build -c release --product callpush

demo: release
	.build/release/callpush demo $(DEMO_ARGS)

test: test-deps
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build --parallel --num-workers 2

# The multi-process scale-out scenarios with more events and repeated kills.
test-long: test-deps
	$(SWIFT) build --build-tests
	CALLPUSH_LONG_TESTS=1 $(SWIFT) test --skip-build --filter ScaleOutTests

# `swift build` honours only the last --product it is given, so each product is built on its own.
# BENCH_ARGS: areas and options, e.g. `make bench BENCH_ARGS="http2 --repeat 5"`.
BENCH_ARGS ?=
bench: test-deps
	$(SWIFT) build -c release --product callpush
	$(SWIFT) build -c release --product callpush-bench
	.build/release/callpush-bench $(BENCH_ARGS)

clean:
	rm -rf .build
