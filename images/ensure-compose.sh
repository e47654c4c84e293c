#!/usr/bin/env bash
# Make sure `docker compose` (Compose v2, 2.30 or later) works: Harbor runs its task containers
# with it, and `harbor lint` checks exported tasks with `docker compose config --no-env-resolution`
# (tests/gym/test_export_harbor.py). Debian has only Compose v1, so, when it is missing or older,
# build the pinned release from its Go module into the user's Docker CLI plugins (about 3 minutes
# the first time; Go's module and build caches make a rebuild fast).
set -euo pipefail
version=v2.40.3
log() { echo "[compose] $*" >&2; }
# The flag harbor lint needs, so an older plugin is rebuilt rather than kept.
docker compose config --help 2>/dev/null | grep -q -- --no-env-resolution && exit 0
command -v go >/dev/null || { log "error: no 'docker compose' 2.30+ and no Go to build it: install docker-compose-plugin, or Go 1.24+"; exit 1; }
plugins=${DOCKER_CONFIG:-$HOME/.docker}/cli-plugins
build=$(mktemp -d)
trap 'chmod -R u+w "$build"; rm -rf "$build"' EXIT
fail() {
  tail -n 15 "$build/log" >&2
  log "error: $1; check the Go module proxy (go env GOPROXY), then rerun: bash images/ensure-compose.sh"
  exit 1
}
log "building Docker Compose $version from its Go module (about 3 minutes the first time)"
# Built as the main module: its go.mod carries exclude directives, which `go install pkg@version` refuses.
source=$(go mod download -json "github.com/docker/compose/v2@$version" 2> "$build/log" \
  | python3 -c 'import json, sys; d = json.load(sys.stdin); sys.exit(d.get("Error")) if "Dir" not in d else print(d["Dir"])' \
  2>> "$build/log") \
  || fail "go mod download github.com/docker/compose/v2@$version failed"
cp -r "$source" "$build/src" && chmod -R u+w "$build/src"
(cd "$build/src" && GOFLAGS=-mod=mod go build -trimpath -buildvcs=false \
  -ldflags "-s -w -X github.com/docker/compose/v2/internal.Version=$version" -o "$build/docker-compose" ./cmd) \
  > "$build/log" 2>&1 || fail "go build of Docker Compose $version failed"
mkdir -p "$plugins"
mv "$build/docker-compose" "$plugins/docker-compose"
docker compose version >&2
