#!/usr/bin/env bash
# Build the rollout image egym/world (make images). Cached: with nothing
# changed this takes a few seconds (wheels are fetched once per requirements
# hash, Docker's layer cache does the rest).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
tag=${EGYM_IMAGE:-egym/world:latest}
ctx="$root/.egym/build/world"

mkdir -p "$(dirname "$ctx")"
# One build at a time per checkout: parallel builds would share the context folder.
exec 9>"$(dirname "$ctx")/.lock"
flock 9
base=$("$here/base/make-base.sh")
mkdir -p "$ctx"
# Wheels for the in-container venv, downloaded on the host (which has the
# package index configured, proxies and CAs included) and copied in.
req_hash=$(sha256sum "$here/world/requirements.txt" | cut -c1-16)
if [ ! -f "$ctx/wheels/.$req_hash" ]; then
  echo "[images] downloading wheels for the container's Python" >&2
  rm -rf "$ctx/wheels"
  python3 -m pip download -q --only-binary=:all: --python-version 3.11 --platform manylinux2014_x86_64 \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --implementation cp \
    -d "$ctx/wheels" -r "$here/world/requirements.txt" > "$ctx.pip.log" 2>&1 || {
    grep -v "is ignored: it is neither" "$ctx.pip.log" | tail -n 20 >&2
    echo "[images] error: could not download the container's Python packages (log: $ctx.pip.log)" >&2; exit 1; }
  touch "$ctx/wheels/.$req_hash"
fi
# The build context: images/world/ plus the in-container code (never the
# grader, rubrics or solutions: the agent must not read its answer key).
find "$ctx" -mindepth 1 -maxdepth 1 ! -name wheels -exec rm -rf {} +
cp -a "$here/world/." "$ctx/"
(cd "$root" && tar -c --exclude='__pycache__' --exclude='*.pyc' mcp_wrappers) | tar -C "$ctx" -x
# Each app's part of the image (mcp_wrappers/<app>/image/): its Debian packages in one list,
# installed in one layer, and its folder for the set-up step (docs/architecture.md).
mkdir -p "$ctx/apps"
: > "$ctx/app-packages.txt"
for dir in "$root"/mcp_wrappers/*/image; do
  [ -d "$dir" ] || continue
  app=$(basename "$(dirname "$dir")")
  cp -a "$dir" "$ctx/apps/$app"
  if [ -f "$dir/packages" ]; then grep -v '^\s*\(#\|$\)' "$dir/packages" >> "$ctx/app-packages.txt" || true; fi
done
sort -u -o "$ctx/app-packages.txt" "$ctx/app-packages.txt"
echo "[images] building $tag on $base" >&2
if ! docker build --build-arg "BASE_IMAGE=$base" -t "$tag" "$ctx" > "$ctx.log" 2>&1; then
  tail -n 20 "$ctx.log" >&2
  echo "[images] error: docker build failed; full log in $ctx.log" >&2
  exit 1
fi
echo "[images] $tag ready ($(docker image inspect -f '{{.Size}}' "$tag" | awk '{printf "%.0f MB", $1/1e6}'))" >&2
