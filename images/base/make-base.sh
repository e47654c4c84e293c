#!/usr/bin/env bash
# Produce the base OS image for the rollout image and print its name.
#
# Where a registry answers we use debian:bookworm-slim as everyone else does.
# Where none does (air-gapped machines, CI boxes without registry access) we
# build an equivalent bookworm minbase rootfs with debootstrap and
# `docker import` it. Detect, don't ask.
set -euo pipefail

OFFICIAL=debian:bookworm-slim
LOCAL=egym/base:bookworm
MIRROR=${EGYM_DEBIAN_MIRROR:-http://deb.debian.org/debian}

log() { echo "[images] $*" >&2; }

if docker image inspect "$OFFICIAL" >/dev/null 2>&1; then echo "$OFFICIAL"; exit 0; fi
if docker image inspect "$LOCAL" >/dev/null 2>&1; then echo "$LOCAL"; exit 0; fi
if timeout 60 docker pull -q "$OFFICIAL" >/dev/null 2>&1; then echo "$OFFICIAL"; exit 0; fi

log "no registry answers: building $LOCAL with debootstrap from $MIRROR"
if ! command -v debootstrap >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    DEBIAN_FRONTEND=noninteractive apt-get update -q >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q debootstrap >&2
  else
    log "error: debootstrap is not installed and we cannot install it (need root on Debian)"; exit 1
  fi
fi
rootfs=$(mktemp -d /tmp/egym-rootfs.XXXXXX)
trap 'rm -rf "$rootfs"' EXIT
debootstrap --variant=minbase bookworm "$rootfs" "$MIRROR" > "$rootfs.log" 2>&1 || { log "error: debootstrap failed, see $rootfs.log"; exit 1; }
# Same sources layout as the official image, so apt inside `docker build` works.
printf 'Types: deb\nURIs: %s\nSuites: bookworm bookworm-updates\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' "$MIRROR" \
  > "$rootfs/etc/apt/sources.list.d/debian.sources"
rm -f "$rootfs/etc/apt/sources.list"
rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
tar -C "$rootfs" -c . | docker import -c 'CMD ["bash"]' - "$LOCAL" >&2
echo "$LOCAL"
