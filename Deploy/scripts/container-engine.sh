#!/usr/bin/env bash
# Sourced by build-image.sh and test-image.sh: picks the container engine and prepares it.
#   ENGINE   docker when a Docker engine answers, else podman (installed from Debian's packages if missing,
#            configured through CONTAINERS_CONF=Deploy/podman/containers.conf: runc, no default ulimits, cgroupfs).
# Override with CONTAINER_ENGINE=docker|podman.
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
if [[ -z "${CONTAINER_ENGINE:-}" ]]; then
    if command -v docker >/dev/null && timeout 10 docker info >/dev/null 2>&1; then
        CONTAINER_ENGINE=docker
    else
        CONTAINER_ENGINE=podman
    fi
fi
ENGINE=$CONTAINER_ENGINE
if [[ "$ENGINE" == podman ]]; then
    # runc: Debian's default crun fails on cgroup v1 hybrid hosts; iptables: netavark's bridge networks.
    "$root/scripts/apt-ensure" podman runc iptables
    export CONTAINERS_CONF=${CONTAINERS_CONF:-$root/Deploy/podman/containers.conf}
fi
