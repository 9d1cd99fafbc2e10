#!/usr/bin/env bash
# From a fresh clone to a real match: starts a Docker engine if none answers,
# builds arena and the example bots, builds the runtime image (on ubuntu:24.04
# when it can be had, otherwise offline on a Debian base made with debootstrap),
# then plays the random example bot against the greedy one with live output.
# Extra arguments go to `arena match` (e.g. --seed 7).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
export GOFLAGS="${GOFLAGS:--buildvcs=false}"

bash scripts/ensure-docker.sh
echo "quickstart: building arena, its agent and the example bots"
make -s all

base=ubuntu:24.04
if ! docker image inspect "$base" >/dev/null 2>&1 && ! timeout 120 docker pull -q "$base" >/dev/null 2>&1; then
  echo "quickstart: $base cannot be pulled here; building the offline test base instead"
  bin/arena image testbase
  base=arena-testbase:trixie
fi
bin/arena image build --base "$base"

echo "quickstart: playing random (white) against greedy (black)"
exec bin/arena match --white bin/examples/random --black bin/examples/greedy "$@"
