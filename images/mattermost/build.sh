#!/usr/bin/env bash
# Build the rollout image with REAL Mattermost as the chat service: egym/world:mattermost.
#
#   bash images/mattermost/build.sh        (no arguments; run images/build.sh first)
#
# Steps (each says which one failed and how to retry):
#   go-download  the server's Go modules, pinned by go.mod/go.sum beside this script
#                (cached in GOMODCACHE, by default ~/go/pkg/mod)
#   go-build     the `mattermost` binary (cached: .egym/build/mattermost/bin/, and GOCACHE)
#   assets       i18n/, templates/, fonts/ from the server module's files
#   docker-build FROM egym/world:latest; the first start (migrations) runs during the build
# Env: EGYM_IMAGE (base, default egym/world:latest), EGYM_MATTERMOST_IMAGE (result tag).
# See docs/chat-real-mattermost.md.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$(dirname "$here")")
tag=${EGYM_MATTERMOST_IMAGE:-egym/world:mattermost}
base=${EGYM_IMAGE:-egym/world:latest}
out="$root/.egym/build/mattermost"
bin="$out/bin/mattermost"
ctx="$out/ctx"
server=github.com/mattermost/mattermost/server/v8
public=github.com/mattermost/mattermost/server/public
export GOFLAGS="-buildvcs=false -mod=readonly"

fail() {  # fail STEP LOG WHAT-TO-DO
  [ -f "$2" ] && tail -n 15 "$2" >&2
  echo "[mattermost] step $1 failed: $(grep -v '^\s*$' "$2" 2>/dev/null | tail -n 1 | cut -c1-300); full log $2; $3" >&2
  exit 1
}
step() { echo "[mattermost] $*" >&2; }
now_ms() { date +%s%3N; }

command -v go >/dev/null || { echo "[mattermost] step go-download failed: no 'go' command (Go 1.24+ needed); install Go, then rerun" >&2; exit 1; }
command -v docker >/dev/null || { echo "[mattermost] step docker-build failed: no 'docker' command; run 'make setup'" >&2; exit 1; }
docker image inspect "$base" >/dev/null 2>&1 || {
  echo "[mattermost] step docker-build failed: base image $base not found; run 'bash images/build.sh', then rerun this script" >&2; exit 1; }
mkdir -p "$out/bin"
exec 9>"$out/.lock"
flock 9  # one build at a time per checkout

cd "$here"
t=$(now_ms)
version=$(go list -m -f '{{.Version}}' "$server" 2>"$out/go-download.log") \
  || fail go-download "$out/go-download.log" "check that the Go module proxy answers (go env GOPROXY), then rerun: bash images/mattermost/build.sh"
commit=${version##*-}
step "go-download: $server@$version"
go list -deps -f '{{.ImportPath}}' "$server/cmd/mattermost" > "$out/go-download.log" 2>&1 \
  || fail go-download "$out/go-download.log" "check that the Go module proxy answers (go env GOPROXY), then rerun: bash images/mattermost/build.sh"
step "go-download: done in $(( $(now_ms) - t )) ms"

# The binary is rebuilt when the pins (go.mod/go.sum) or this script change; GOCACHE makes a rebuild cheap.
stamp=$(cat go.mod go.sum "$here/build.sh" | sha256sum | cut -c1-16)
if [ -x "$bin" ] && [ "$(cat "$bin.stamp" 2>/dev/null)" = "$stamp" ]; then
  step "go-build: cached $bin"
else
  t=$(now_ms)
  step "go-build: building $server/cmd/mattermost (several minutes on 2 cores the first time)"
  m=github.com/mattermost/mattermost/server/public/model
  /usr/bin/env time -v go build -p 2 -trimpath -o "$bin.tmp" \
    -ldflags "-s -w -X $m.BuildNumber=$version -X $m.BuildHash=$commit -X $m.BuildEnterpriseReady=false" \
    "$server/cmd/mattermost" > "$out/go-build.log" 2>&1 \
    || fail go-build "$out/go-build.log" "retry with: bash images/mattermost/build.sh (the Go build cache keeps what was compiled)"
  mv "$bin.tmp" "$bin" && echo "$stamp" > "$bin.stamp"
  step "go-build: done in $(( $(now_ms) - t )) ms, peak RSS $(awk -F': ' '/Maximum resident/ {printf "%d MB", $2/1024}' "$out/go-build.log"), binary $(du -m "$bin" | cut -f1) MB"
fi

step "assets: i18n, templates, fonts from $server@$version"
srcdir=$(go list -m -f '{{.Dir}}' "$server" 2>"$out/assets.log") && [ -d "$srcdir/i18n" ] \
  || fail assets "$out/assets.log" "the module's files are missing from GOMODCACHE; run 'go mod download $server' in images/mattermost, then rerun"
rm -rf "$ctx" && mkdir -p "$ctx/mattermost/bin"
cp "$bin" "$ctx/mattermost/bin/mattermost"
for d in i18n templates fonts; do cp -r "$srcdir/$d" "$ctx/mattermost/$d"; done
chmod -R u+w "$ctx/mattermost"  # the module cache is read-only
cp "$here/Dockerfile" "$here/chat-service.conf" "$ctx/"

t=$(now_ms)
step "docker-build: $tag FROM $base (the server's first start, its migrations, runs here)"
docker build --build-arg "BASE_IMAGE=$base" -t "$tag" "$ctx" > "$out/docker-build.log" 2>&1 \
  || fail docker-build "$out/docker-build.log" "retry with: bash images/mattermost/build.sh (the binary is cached)"
grep -oE '\[mattermost\] first start \(migrations\) took [0-9]+ ms' "$out/docker-build.log" | tail -n 1 >&2 || true
rm -rf "$ctx"
step "docker-build: done in $(( $(now_ms) - t )) ms"
step "$tag ready ($(docker image inspect -f '{{.Size}}' "$tag" | awk '{printf "%.0f MB", $1/1e6}'), Mattermost $server@$version): EGYM_IMAGE=$tag selects it"
