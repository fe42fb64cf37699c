# callpush: two commands on a fresh Debian 12 machine with Swift installed:
#   make demo   installs missing apt packages, builds release, runs the whole pipeline on the embedded default
#   make test   installs what the tests need, runs the whole test suite
# and, for the container image (docker or podman; see docs/operations.md "Container image"):
#   make image        builds Deploy/Dockerfile as $(IMAGE), without a registry if none is reachable
#   make test-image   runs it for real: demo, a worker against kafka-mock + mock-apns containers, health, stop
SHELL := /bin/bash
SWIFT ?= swift
APT_BUILD := pkg-config librdkafka-dev libnghttp2-dev libssl-dev ca-certificates
# Python tools come from Debian's packages; Debian's python3 refuses pip installs (PEP 668), so what Debian does not
# package (aioapns) goes into a venv made from Debian's python3 that also sees its packages. Tests run the first
# python3 that imports what they need (TestSupport/PythonInterpreter.swift: $$CALLPUSH_PYTHON, the venv, python3 on
# PATH, /usr/bin/python3).
APT_TEST := curl gdb kcat nghttp2-client nghttp2-server prometheus openssl python3 python3-venv python3-jwt python3-cryptography python3-yaml python3-jsonschema python3-kafka python3-lz4
PYTHON_VENV := .build/python
# confluent-kafka: its wheel bundles a newer librdkafka whose mock cluster is the second broker of the group tests.
PIP_TEST := aioapns confluent-kafka==2.16.1
IMAGE ?= callpush:local
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
DEMO_ARGS ?=

.PHONY: all deps test-deps build release demo test test-long bench image test-image clean

all: build

# Installs only the packages that are missing; a no-op taking well under a second when all are present.
deps:
	@./scripts/apt-ensure $(APT_BUILD)

test-deps: deps
	@./scripts/apt-ensure $(APT_TEST)
	@[ -x $(PYTHON_VENV)/bin/python3 ] || /usr/bin/python3 -m venv --system-site-packages $(PYTHON_VENV)
	@$(PYTHON_VENV)/bin/python3 -c 'import aioapns, confluent_kafka' 2>/dev/null || $(PYTHON_VENV)/bin/python3 -m pip install --quiet $(PIP_TEST)

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT) build -c release --product callpush

demo: release
	.build/release/callpush demo $(DEMO_ARGS)

# scripts/run-tests.sh raises the descriptor limit, stops a run that has not ended after TEST_TIMEOUT (30m; a full
# run takes about 6 minutes on 2 cores), and prints every thread's stack from a core dump when the test process died
# in a way the Swift backtracer cannot report (gdb, from APT_TEST).
TEST_TIMEOUT ?= 30m
TEST_RUN = SWIFT=$(SWIFT) TEST_TIMEOUT=$(TEST_TIMEOUT) scripts/run-tests.sh

test: test-deps
	$(SWIFT) build --build-tests
	$(TEST_RUN) --skip-build --parallel --num-workers 2

# The multi-process scale-out scenarios with more events and repeated kills.
test-long: test-deps
	$(SWIFT) build --build-tests
	CALLPUSH_LONG_TESTS=1 $(TEST_RUN) --skip-build --filter ScaleOutTests

# `swift build` honours only the last --product it is given, so each product is built on its own.
# BENCH_ARGS: areas and options, e.g. `make bench BENCH_ARGS="http2 --repeat 5"`.
BENCH_ARGS ?=
# Both with the Swift runtime and Foundation linked statically, as Deploy/Dockerfile builds the image: what production
# runs (idle `callpush run` is about 6 MB smaller than with them as shared libraries: the memory area's idle target).
bench: test-deps
	$(SWIFT) build -c release --static-swift-stdlib --product callpush
	$(SWIFT) build -c release --static-swift-stdlib --product callpush-bench
	.build/release/callpush-bench $(BENCH_ARGS)

# Not part of `make test`: about 1 minute for image, 30 s for test-image once the base image is cached, and they
# need a container engine (docker, or podman which they install from Debian's packages).
image: deps
	IMAGE=$(IMAGE) SWIFT=$(SWIFT) ./Deploy/scripts/build-image.sh

test-image:
	@./scripts/apt-ensure openssl
	IMAGE=$(IMAGE) ./Deploy/scripts/test-image.sh

clean:
	rm -rf .build
