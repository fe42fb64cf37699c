#!/usr/bin/env bash
# `make image`: builds Deploy/Dockerfile as $IMAGE (default callpush:local) with docker or podman.
#
# IMAGE_MODE=registry  the Dockerfile as is: debian:bookworm-slim and swift:6.3-bookworm from Docker Hub, the binary
#                      compiled in the build stage.
# IMAGE_MODE=local     no registry needed: the bookworm base image is made from Debian packages with mmdebstrap
#                      (minbase + slim-style dpkg excludes, cached as localhost/callpush-base:bookworm), and the binary
#                      is built on this (bookworm) host with --static-swift-stdlib and handed in as the prebuilt stage.
# Default: registry when `pull docker.io/library/debian:bookworm-slim` succeeds, else local.
set -euo pipefail
source "$(dirname "$0")/container-engine.sh"
cd "$root"
IMAGE=${IMAGE:-callpush:local}
BASE_IMAGE=localhost/callpush-base:bookworm
SWIFT=${SWIFT:-swift}
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
SECURITY_MIRROR=${DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}

if [[ -z "${IMAGE_MODE:-}" ]]; then
    if timeout 30 "$ENGINE" pull -q docker.io/library/debian:bookworm-slim >/dev/null 2>&1; then
        IMAGE_MODE=registry
    else
        IMAGE_MODE=local
        echo "no container registry reachable: building the base image from Debian packages" >&2
    fi
fi

format=()
[[ "$ENGINE" == podman ]] && format=(--format docker)  # OCI images drop HEALTHCHECK

if [[ "$IMAGE_MODE" == registry ]]; then
    "$ENGINE" build "${format[@]}" -f Deploy/Dockerfile -t "$IMAGE" .
else
    . /etc/os-release
    if [[ "${VERSION_CODENAME:-}" != bookworm ]]; then
        echo "IMAGE_MODE=local needs a Debian 12 (bookworm) host: the binary links bookworm's librdkafka, nghttp2 and OpenSSL" >&2
        exit 1
    fi
    if ! "$ENGINE" image exists "$BASE_IMAGE" 2>/dev/null && ! "$ENGINE" image inspect "$BASE_IMAGE" >/dev/null 2>&1; then
        "$root/scripts/apt-ensure" mmdebstrap
        mkdir -p .build/image-base
        # What debian:bookworm-slim is: minbase with merged /usr (without the usrmerge package, which drags in perl),
        # no manuals, docs (but copyrights) or translations, and apt set to drop downloaded packages and lists
        # (docker-clean, as in Debian's official images).
        mmdebstrap --variant=minbase --quiet --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr \
            --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/info/*' \
            --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
            --dpkgopt='path-exclude=/usr/share/locale/*' --aptopt='Acquire::Languages "none"' \
            --customize-hook='cp Deploy/podman/apt-docker-clean "$1"/etc/apt/apt.conf.d/docker-clean' \
            --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*.bin "$1"/var/cache/apt/archives/*.deb' \
            bookworm .build/image-base/bookworm.tar \
            "deb $MIRROR bookworm main" "deb $MIRROR bookworm-updates main" \
            "deb $SECURITY_MIRROR bookworm-security main"
        "$ENGINE" import --change 'CMD ["bash"]' .build/image-base/bookworm.tar "$BASE_IMAGE" >/dev/null
        rm -f .build/image-base/bookworm.tar
    fi
    "$SWIFT" build -c release --product callpush --static-swift-stdlib
    mkdir -p .build/image
    install -m 0755 "$("$SWIFT" build -c release --show-bin-path)/callpush" .build/image/callpush
    "$ENGINE" build "${format[@]}" -f Deploy/Dockerfile --build-arg BINARY_FROM=prebuilt \
        --build-arg DEBIAN_IMAGE="$BASE_IMAGE" -t "$IMAGE" .
fi
size=$("$ENGINE" image inspect --format '{{.Size}}' "$IMAGE")
echo "built $IMAGE with $ENGINE ($IMAGE_MODE mode): $((size / 1000000)) MB"
