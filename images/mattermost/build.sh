#!/usr/bin/env bash
# Build the rollout image with REAL Mattermost as the chat service.
#
#   bash images/mattermost/build.sh <release tarball: path or URL> [image tag]
#
# The tarball is an official Mattermost Team Edition server release for
# linux-amd64, e.g. https://releases.mattermost.com/<version>/mattermost-team-<version>-linux-amd64.tar.gz
# (this project cannot download or ship it for you). The result, by default
# egym/world:mattermost, is egym/world:latest (run images/build.sh first) with
# Mattermost in /opt/mattermost started by the same start-chat/stop-chat scripts,
# using the container's PostgreSQL. See docs/chat.md.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$(dirname "$here")")
src=${1:?usage: build.sh <mattermost release tarball path or URL> [tag]}
tag=${2:-${EGYM_MATTERMOST_IMAGE:-egym/world:mattermost}}
base=${EGYM_IMAGE:-egym/world:latest}
ctx="$root/.egym/build/mattermost"

docker image inspect "$base" >/dev/null 2>&1 || {
  echo "[mattermost] error: base image $base not found; run 'bash images/build.sh' first" >&2; exit 1; }
rm -rf "$ctx" && mkdir -p "$ctx"
case "$src" in
  http://*|https://*)
    echo "[mattermost] downloading $src" >&2
    python3 -c 'import shutil, sys, urllib.request; shutil.copyfileobj(urllib.request.urlopen(sys.argv[1]), open(sys.argv[2], "wb"))' \
      "$src" "$ctx/mattermost.tar.gz" || { echo "[mattermost] error: could not download $src" >&2; exit 1; } ;;
  *)
    [ -f "$src" ] || { echo "[mattermost] error: no file $src" >&2; exit 1; }
    cp "$src" "$ctx/mattermost.tar.gz" ;;
esac
tar -tzf "$ctx/mattermost.tar.gz" mattermost/bin/mattermost >/dev/null 2>&1 || {
  echo "[mattermost] error: $src is not a Mattermost server release (no mattermost/bin/mattermost inside)" >&2; exit 1; }
cp "$here/Dockerfile" "$here/chat-service.conf" "$ctx/"
echo "[mattermost] building $tag on $base" >&2
if ! docker build --build-arg "BASE_IMAGE=$base" -t "$tag" "$ctx" > "$ctx.log" 2>&1; then
  tail -n 20 "$ctx.log" >&2
  echo "[mattermost] error: docker build failed; full log in $ctx.log" >&2
  exit 1
fi
rm -f "$ctx/mattermost.tar.gz"
echo "[mattermost] $tag ready: start sandboxes from it (image=\"$tag\") with apps including chat" >&2
