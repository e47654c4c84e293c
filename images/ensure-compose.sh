#!/usr/bin/env bash
# Make sure `docker compose` (Compose v2) works: Harbor runs its task containers with it
# (tests/gym/test_export_harbor.py plays exported tasks with `harbor run`). Debian has only
# Compose v1, so, when it is missing, build the pinned release from its Go module into the
# user's Docker CLI plugins (a few minutes the first time; Go's build cache makes a rebuild fast).
set -euo pipefail
version=v2.29.7  # the newest release `go install` accepts: later ones carry exclude directives in go.mod
log() { echo "[compose] $*" >&2; }
docker compose version >/dev/null 2>&1 && exit 0
command -v go >/dev/null || { log "error: no 'docker compose' and no Go to build it: install docker-compose-plugin, or Go 1.24+"; exit 1; }
plugins=${DOCKER_CONFIG:-$HOME/.docker}/cli-plugins
build=$(mktemp -d)
trap 'rm -rf "$build"' EXIT
log "building Docker Compose $version from its Go module (a few minutes the first time)"
if ! GOBIN="$build" GOFLAGS=-buildvcs=false go install "github.com/docker/compose/v2/cmd@$version" > "$build/log" 2>&1; then
  tail -n 15 "$build/log" >&2
  log "error: go install github.com/docker/compose/v2/cmd@$version failed; check the Go module proxy (go env GOPROXY), then rerun: bash images/ensure-compose.sh"
  exit 1
fi
mkdir -p "$plugins"
mv "$build/cmd" "$plugins/docker-compose"
docker compose version >&2
