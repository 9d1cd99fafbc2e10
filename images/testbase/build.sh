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
# The Debian mirror is the host's own (see debian_mirror below): the first
# `deb` source of the host's apt whose suites include a Debian release, so a
# machine behind a local mirror or proxy builds from it. ARENA_DEBIAN_MIRROR
# overrides it; http://deb.debian.org/debian is used only when neither gives
# one. The mirror is not part of the recipe's hash: the same packages from
# another mirror are the same image, and an image is not rebuilt because the
# mirror changed.
#
# Usage: build.sh [TAG]        build under TAG instead (rebuilt when the image
#                              under TAG was built from another recipe; TAG
#                              arena-testbase:trixie is the default build)
#        build.sh --print-tag  print the content tag and exit
#        build.sh --print-mirror [APT_DIR]
#                              print the mirror a build would use, a tab, and
#                              where it comes from, reading APT_DIR instead of
#                              /etc/apt; then exit
# Env:   ARENA_DEBIAN_MIRROR   the mirror, whatever apt's sources say
#        ARENA_TESTBASE_FORCE=1 rebuilds even if the image is up to date
set -euo pipefail

recipe=$(sha256sum <"${BASH_SOURCE[0]}" | cut -d' ' -f1)
content_tag=arena-testbase:trixie-${recipe:0:12}
alias_tag=arena-testbase:trixie
label=org.arenabots.arena.testbase
default_mirror=http://deb.debian.org/debian

# debian_mirror [APT_DIR] prints the mirror to debootstrap from, a tab, and
# where it comes from: ARENA_DEBIAN_MIRROR when set; else the URI of the
# first source, in the order apt reads them (APT_DIR/sources.list, then the
# files of APT_DIR/sources.list.d in name order: one-line `deb [options] URI
# SUITE COMPONENT...` lines in *.list, deb822 stanzas in *.sources) that is of
# type deb (not deb-src), not disabled (Enabled: no), has a suite naming a
# Debian release (a codename such as bookworm or trixie, or stable, testing,
# unstable, oldstable, oldoldstable; never bookworm-security,
# bookworm-updates or a third party's suite) and an http, https, ftp or file
# URI; else the default.
debian_mirror() {
  local apt=${1:-/etc/apt} f uri
  if [[ -n ${ARENA_DEBIAN_MIRROR:-} ]]; then
    printf '%s\tARENA_DEBIAN_MIRROR\n' "${ARENA_DEBIAN_MIRROR%/}"
    return
  fi
  for f in "$apt/sources.list" "$apt"/sources.list.d/*; do
    [[ -f $f ]] || continue
    case $f in
    */sources.list | *.list) uri=$(apt_sources oneline <"$f") ;;
    *.sources) uri=$(apt_sources deb822 <"$f") ;;
    *) continue ;;
    esac
    if [[ -n $uri ]]; then
      printf '%s\t%s\n' "${uri%/}" "$f"
      return
    fi
  done
  printf '%s\tthe default (no Debian mirror in %s)\n' "$default_mirror" "$apt"
}

# apt_sources FORMAT prints the URI of the first Debian release source in the
# sources on stdin, one-line (FORMAT oneline) or deb822 (FORMAT deb822).
apt_sources() {
  awk -v format="$1" '
    function release(s) {
      return s ~ /^(buzz|rex|bo|hamm|slink|potato|woody|sarge|etch|lenny|squeeze|wheezy|jessie|stretch|buster|bullseye|bookworm|trixie|forky|duke|sid|stable|testing|unstable|oldstable|oldoldstable)$/
    }
    function usable(u) { return u ~ /^(https?|ftp|file):/ }
    function norm(s) { gsub(/[ \t]+/, " ", s); sub(/^ /, "", s); sub(/ $/, "", s); return s }
    function flush(   i, n, m, s, u, ok) {
      if (found || enabled ~ /^(no|false|0)$/ || (" " types " ") !~ / deb /) { types = uris = suites = enabled = key = ""; return }
      n = split(suites, s, " ")
      for (i = 1; i <= n; i++) if (release(s[i])) ok = 1
      m = split(uris, u, " ")
      for (i = 1; ok && i <= m; i++) if (usable(u[i])) { print u[i]; found = 1; break }
      types = uris = suites = enabled = key = ""
    }
    format == "oneline" {
      line = $0
      sub(/#.*/, "", line)
      gsub(/\[[^]]*\]/, " ", line) # [ options ]
      n = split(norm(line), w, " ")
      if (!found && n >= 3 && w[1] == "deb" && release(w[3]) && usable(w[2])) { print w[2]; found = 1 }
      next
    }
    /^[ \t]*#/ { next } # a comment, even inside a stanza
    /^[ \t]*$/ { flush(); next }
    /^[ \t]/ { # a continuation line
      if (key == "types") types = norm(types " " $0)
      else if (key == "uris") uris = norm(uris " " $0)
      else if (key == "suites") suites = norm(suites " " $0)
      next
    }
    {
      i = index($0, ":")
      key = tolower(norm(substr($0, 1, i - 1)))
      val = norm(substr($0, i + 1))
      if (key == "types") types = val
      else if (key == "uris") uris = val
      else if (key == "suites") suites = val
      else if (key == "enabled") enabled = tolower(val)
    }
    END { if (format == "deb822") flush() }
  '
}

case ${1:-} in
--print-tag)
  echo "$content_tag"
  exit 0
  ;;
--print-mirror)
  debian_mirror "${2:-}"
  exit 0
  ;;
esac

tag=${1:-$content_tag}
if [[ $tag == "$alias_tag" ]]; then
  tag=$content_tag # the short name only ever points at a content tag
fi
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
IFS=$'\t' read -r mirror mirror_from < <(debian_mirror)
echo "testbase: Debian mirror $mirror, from $mirror_from"
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
