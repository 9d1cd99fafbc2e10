#!/usr/bin/env bash
# Builds a base image without any registry: debootstrap Debian trixie (minbase,
# plus python3 and python3-numpy for script bots) from the Debian mirror, then
# `docker import`. Trixie's glibc (2.41) is newer than Ubuntu 24.04's (2.39), so
# anything built for the official image also runs on this one.
#
# Usage: build.sh [TAG]        (default arena-testbase:trixie)
# Env:   ARENA_DEBIAN_MIRROR   (default http://deb.debian.org/debian)
#        ARENA_TESTBASE_FORCE=1 rebuilds even if TAG exists
set -euo pipefail

tag=${1:-arena-testbase:trixie}
mirror=${ARENA_DEBIAN_MIRROR:-http://deb.debian.org/debian}
suite=trixie
packages=python3,python3-numpy

if [[ ${ARENA_TESTBASE_FORCE:-} != 1 ]] && docker image inspect "$tag" >/dev/null 2>&1; then
  echo "testbase: $tag is present, nothing to do"
  exit 0
fi
if [[ $(id -u) != 0 ]]; then
  echo "testbase: debootstrap needs root; run this as root (sudo $0 $*)" >&2
  exit 2
fi
if ! command -v debootstrap >/dev/null; then
  echo "testbase: installing debootstrap"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
fi

work=$(mktemp -d /var/tmp/arena-testbase.XXXXXX)
trap 'rm -rf "$work"' EXIT
echo "testbase: debootstrap $suite from $mirror (about a minute)"
if ! debootstrap --variant=minbase --include="$packages" "$suite" "$work/root" "$mirror" >"$work/log" 2>&1; then
  tail -n 30 "$work/log" >&2
  echo "testbase: debootstrap failed; the log's end is above" >&2
  exit 1
fi
rm -rf "$work/root"/var/cache/apt/archives/*.deb "$work/root"/var/lib/apt/lists/* "$work/root"/usr/share/doc/*
echo "testbase: importing as $tag"
tar -C "$work/root" --numeric-owner -c . |
  docker import -m "arena offline test base: debian $suite minbase + $packages" -c 'CMD ["/bin/bash"]' - "$tag" >/dev/null
echo "testbase: $tag built"
