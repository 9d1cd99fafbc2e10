#!/usr/bin/env bash
# Builds gVisor's runsc from the version pinned in images/runsc (go.mod and
# the checksums of go.sum), with CGO_ENABLED=0 from the Go module proxy, and
# prints the path of the binary. The build is cached by content: it lives in
# CACHE/runsc-<12 hex digits of the hash of go.mod, go.sum, this script and
# the Go version>/runsc, so a changed pin builds anew and an unchanged one is
# found at once. CACHE is ARENA_CACHE, else $XDG_CACHE_HOME/arena, else
# ~/.cache/arena.
#
# Nothing is installed and no engine is configured: an engine that should run
# bots under gVisor registers the printed path as a runtime (for tests,
# scripts/second-engine.sh start DIR runsc=PATH does that for an engine of
# its own; the host's engine is never touched).
#
# Usage: runsc.sh            build if needed; print the path
#        runsc.sh --print-key print the cache key and exit
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"

pin=images/runsc
key=$(cat "$pin/go.mod" "$pin/go.sum" "${BASH_SOURCE[0]}" <(go env GOVERSION GOARCH) | sha256sum | cut -c1-12)
if [[ ${1:-} == --print-key ]]; then
  echo "$key"
  exit 0
fi
(($# == 0)) || {
  sed -n '/^# Usage:/,/^set /p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//' >&2
  exit 2
}

cache=${ARENA_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/arena}
dir=$cache/runsc-$key
bin=$dir/runsc
if [[ -x $bin ]]; then
  echo "$bin"
  exit 0
fi
mkdir -p "$dir"
version=$(sed -n 's/^\tgvisor.dev\/gvisor \(v[^ ]*\).*/\1/p' "$pin/go.mod")
echo "runsc: building gvisor.dev/gvisor/runsc $version (about two and a half minutes the first time)" >&2
t0=$SECONDS
tmp=$(mktemp "$dir/runsc.XXXXXX")
trap 'rm -f "$tmp"' EXIT
(cd "$pin" && CGO_ENABLED=0 GOFLAGS=-mod=readonly go build -trimpath -o "$tmp" gvisor.dev/gvisor/runsc)
"$tmp" --version >/dev/null
mv "$tmp" "$bin"
trap - EXIT
echo "runsc: built in $((SECONDS - t0)) s: $bin" >&2
echo "$bin"
