#!/usr/bin/env bash
# Make sure a Docker engine answers. If none does and we are root on Debian,
# install docker.io and start dockerd in the background (log: .egym/dockerd.log).
set -euo pipefail
log() { echo "[docker] $*" >&2; }
docker info >/dev/null 2>&1 && exit 0

if [ "$(id -u)" != 0 ]; then
  log "error: no Docker engine answers and we are not root: start Docker, or add your user to the 'docker' group"
  exit 1
fi
if ! command -v dockerd >/dev/null; then
  command -v apt-get >/dev/null || { log "error: no Docker engine and no apt-get to install one: install Docker"; exit 1; }
  log "installing docker.io with apt"
  DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q docker.io >/dev/null
fi
mkdir -p .egym
log "starting dockerd (log: .egym/dockerd.log)"
nohup dockerd > .egym/dockerd.log 2>&1 &
for _ in $(seq 1 60); do
  docker info >/dev/null 2>&1 && { log "engine up"; exit 0; }
  sleep 1
done
log "error: dockerd did not answer within 60 s; last lines of .egym/dockerd.log:"
tail -n 5 .egym/dockerd.log >&2
exit 1
