#!/usr/bin/env bash
# Makes sure a Docker engine answers. If none does: installs Debian's docker.io
# when dockerd is missing, starts dockerd in the background, waits up to 60 s,
# and fails loudly otherwise. Safe to run when an engine is already up.
set -euo pipefail

log=${ARENA_DOCKERD_LOG:-/var/tmp/arena-dockerd.log}

answers() { docker version --format '{{.Server.Version}}' >/dev/null 2>&1; }

if answers; then
  echo "docker: engine $(docker version --format '{{.Server.Version}}') answers"
  exit 0
fi
if [[ -n ${DOCKER_HOST:-} && ${DOCKER_HOST} != unix://* ]]; then
  echo "docker: no engine answers at DOCKER_HOST=$DOCKER_HOST, and a remote engine cannot be started from here" >&2
  exit 1
fi
if [[ $(id -u) != 0 ]]; then
  echo "docker: no engine answers, and starting one needs root (sudo $0)" >&2
  exit 1
fi
if ! command -v dockerd >/dev/null || ! command -v docker >/dev/null; then
  echo "docker: installing Debian's docker.io"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io >/dev/null
fi
echo "docker: starting dockerd (log: $log)"
nohup dockerd >"$log" 2>&1 &
for _ in $(seq 1 60); do
  if answers; then
    echo "docker: engine $(docker version --format '{{.Server.Version}}') answers"
    exit 0
  fi
  sleep 1
done
echo "docker: dockerd did not answer within 60 s; the end of its log:" >&2
tail -n 40 "$log" >&2 || true
exit 1
