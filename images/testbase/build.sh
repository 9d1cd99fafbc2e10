#!/usr/bin/env bash
# Builds a base image without any registry: debootstrap Debian trixie (minbase,
# plus python3 and the modules the event's script bots import: numpy, pandas,
# tabulate; and the toolchains bots handed in as source are built and run
# with: gcc, g++, a headless JDK, nodejs) from the Debian mirror, then
# `docker import`. Trixie's glibc (2.41) is newer than Ubuntu 24.04's (2.39),
# so anything built for the official image also runs on this one.
#
# The image is cached by content: its tag ends with the hash of this script
# (arena-testbase:trixie-<12 hex digits>) and it carries the whole hash in the
# label org.arenabots.arena.testbase, so changing the package list, or anything
# else here, builds a new image instead of reusing a stale one. After a build,
# or when the image for this script already exists, arena-testbase:trixie is
# pointed at it: the short name people type, always the newest recipe built.
#
# Usage: build.sh [TAG]        build under TAG instead (rebuilt when the image
#                              under TAG was built from another recipe; TAG
#                              arena-testbase:trixie is the default build)
#        build.sh --print-tag  print the content tag and exit
# Env:   ARENA_DEBIAN_MIRROR   (default http://deb.debian.org/debian)
#        ARENA_TESTBASE_FORCE=1 rebuilds even if the image is up to date
set -euo pipefail

recipe=$(sha256sum <"${BASH_SOURCE[0]}" | cut -d' ' -f1)
content_tag=arena-testbase:trixie-${recipe:0:12}
alias_tag=arena-testbase:trixie
label=org.arenabots.arena.testbase
if [[ ${1:-} == --print-tag ]]; then
  echo "$content_tag"
  exit 0
fi

tag=${1:-$content_tag}
if [[ $tag == "$alias_tag" ]]; then
  tag=$content_tag # the short name only ever points at a content tag
fi
mirror=${ARENA_DEBIAN_MIRROR:-http://deb.debian.org/debian}
suite=trixie
# debootstrap installs Depends only, never Recommends: the image stays small.
# Besides python3 and its modules, the toolchains of the languages bots may
# be handed in as (harness/build/languages.txt): gcc and libc6-dev (.c), g++
# (.cpp), a headless JDK with javac, jar and java (.java), nodejs (.js).
packages=python3,python3-numpy,python3-pandas,python3-tabulate,gcc,g++,libc6-dev,default-jdk-headless,nodejs

# point_alias gives the default build its short name; a build under an
# explicit TAG leaves the short name alone.
point_alias() {
  if [[ $tag == "$content_tag" ]]; then
    docker tag "$tag" "$alias_tag"
    echo "testbase: $alias_tag is $tag"
  fi
}

built_from=$(docker image inspect -f "{{index .Config.Labels \"$label\"}}" "$tag" 2>/dev/null || true)
if [[ ${ARENA_TESTBASE_FORCE:-} != 1 && $built_from == "$recipe" ]]; then
  echo "testbase: $tag is up to date, nothing to do"
  point_alias
  exit 0
fi
if [[ $built_from == "$recipe" ]]; then
  echo "testbase: $tag is up to date; rebuilding as ARENA_TESTBASE_FORCE=1 asks"
elif docker image inspect "$tag" >/dev/null 2>&1; then
  echo "testbase: $tag was built from another recipe; rebuilding"
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
# dpkg in the new system leaves out documentation, manual pages and
# translations as it unpacks, and while debootstrap runs it does not sync
# each file it writes (a build that crashes is built again anyway).
excludes=$work/root/etc/dpkg/dpkg.cfg.d/arena-excludes
mkdir -p "${excludes%/*}"
printf 'path-exclude=/usr/share/%s/*\n' doc man info locale >"$excludes"
echo force-unsafe-io >"${excludes%/*}/arena-unsafe-io"
echo "testbase: debootstrap $suite from $mirror with $packages (about three minutes)"
if ! debootstrap --variant=minbase --include="$packages" "$suite" "$work/root" "$mirror" >"$work/log" 2>&1; then
  tail -n 30 "$work/log" >&2
  echo "testbase: debootstrap failed; the log's end is above" >&2
  exit 1
fi
# Left out of the image: the package cache and lists, the documentation
# debootstrap's first stage unpacked, dpkg's unsafe-io setting, and the JDK's
# jmods (for jlink only, which no bot's build uses).
rm -rf "${excludes%/*}/arena-unsafe-io" "$work"/root/var/cache/apt/archives/*.deb "$work"/root/var/lib/apt/lists/* "$work"/root/usr/share/doc/* \
  "$work"/root/usr/share/man/* "$work"/root/usr/share/info/* "$work"/root/usr/share/locale/* "$work"/root/usr/lib/jvm/*/jmods
echo "testbase: importing as $tag"
tar -C "$work/root" --numeric-owner -c . |
  docker import -m "arena offline test base: debian $suite minbase + $packages" \
    -c "LABEL $label=$recipe" -c 'CMD ["/bin/bash"]' - "$tag" >/dev/null
echo "testbase: $tag built"
point_alias
