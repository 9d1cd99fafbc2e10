#!/usr/bin/env bash
# The project's test command: the same on a laptop and in CI.
#   1. make sure a Docker engine answers (start one if not; see ensure-docker.sh)
#   2. build the offline test base image (cached by its recipe's hash) and,
#      beside it, gVisor's runsc from its pinned version (cached by version;
#      the gVisor tests register it with an engine of their own)
#   3. the busy-host test, alone (it fills every core, and nothing else may
#      take the CPU from its bot: not even a cluster starting)
#   4. start a single-node Kubernetes cluster of its own (scripts/cluster.sh:
#      built from pinned sources, cached by version; stopped, and what it
#      changed on the host undone, when the tests end) while gofmt, go vet
#      and staticcheck run, then every test under -race, Docker- and
#      cluster-backed ones included
# Under CI=true a missing engine or cluster is a failure, never a skip.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin:/usr/games" # Debian installs pgn-extract in /usr/games
# -trimpath: what is compiled does not depend on where the checkout is, so
# a fresh clone in another directory finds it in Go's build cache.
export GOFLAGS="${GOFLAGS:--buildvcs=false -trimpath}"

if [[ ${CI:-} == true ]]; then
  export ARENA_REQUIRE_DOCKER=1
fi
step() { printf '\n== %s (at %d s)\n' "$*" "$SECONDS"; }

step "docker engine"
if bash scripts/ensure-docker.sh; then
  step "offline test base image, and gVisor's runsc beside it"
  bash scripts/runsc.sh >/tmp/arena-runsc.$$.log 2>&1 &
  runsc_pid=$!
  bash images/testbase/build.sh
  if ! wait "$runsc_pid"; then
    cat /tmp/arena-runsc.$$.log >&2
    echo "runsc did not build: the gVisor tests need it" >&2
    exit 1
  fi
  cat /tmp/arena-runsc.$$.log
  rm -f /tmp/arena-runsc.$$.log
elif [[ ${ARENA_REQUIRE_DOCKER:-} == 1 ]]; then
  echo "no Docker engine: Docker-backed tests must run here" >&2
  exit 1
else
  echo "no Docker engine: Docker-backed tests will be skipped"
fi

step "tools the tests drive: chromium (the pages), pgn-extract (the PGN export), sqlite3 (a reader beside the server)"
need=()
command -v chromium >/dev/null || need+=(chromium fonts-dejavu-core)
command -v pgn-extract >/dev/null || need+=(pgn-extract)
command -v sqlite3 >/dev/null || need+=(sqlite3)
if (( ${#need[@]} == 0 )); then
  echo "chromium: $(chromium --version 2>/dev/null | head -1); $(pgn-extract -h 2>&1 | grep -m1 -i 'pgn-extract' || echo pgn-extract); sqlite3 $(sqlite3 --version | cut -d' ' -f1)"
elif [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
  echo "installing from Debian: ${need[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
elif [[ ${ARENA_REQUIRE_DOCKER:-} == 1 ]]; then
  echo "missing ${need[*]} and no way to install them: the pages, the PGN export and the readers beside the server must be tested with them here" >&2
  exit 1
else
  echo "missing ${need[*]}: the tests that need them will be skipped"
fi

# The race detector instruments every package but one: the SQLite engine
# transcribed from C (modernc.org/sqlite/lib), which arena reaches only
# through database/sql and which defines no generic code another package
# could share. Instrumented, it took most of the tests' CPU (harness/event:
# 25 s of CPU under -race, 5.6 s without it). Excluding more is wrong: a
# package compiled without -race may supply the one copy of a generic
# function (sync.Map's) that every package links, and the detector then
# misses its synchronization (false races in encoding/gob and encoding/json).
race=(-race -gcflags=modernc.org/sqlite/lib=-race=false)
# A program built with -race sleeps a second before it exits (the race
# detector's atexit_sleep_ms), every test binary and every arena a test
# runs: a race is reported before the exit all the same.
export GORACE="atexit_sleep_ms=0${GORACE:+ $GORACE}"
# The programs a test runs on the host (arena itself) are built with the
# same flags (internal/gobuild.Host), from what the tests compiled.
export ARENA_RACE_FLAGS="${race[*]}"

step "go test -race: a busy host decides no game (alone, before the cluster starts: it fills every core)"
if [[ ${ARENA_REQUIRE_DOCKER:-} == 1 ]] || docker info >/dev/null 2>&1; then
  set +e
  busy=$(ARENA_BUSY_HOST=1 go test "${race[@]}" -count=1 -timeout 10m -run '^TestABusyHostDecidesNoGame$' -v ./harness/match 2>&1)
  rc=$?
  set -e
  echo "$busy" | grep -v '^=== '
  if [[ $rc != 0 ]]; then
    exit 1
  fi
fi

step "a Kubernetes cluster of its own (its binaries cached by version; the first build takes about 12 minutes)"
cluster_pid=
if [[ $(id -u) == 0 ]] && docker info >/dev/null 2>&1; then
  # cluster.sh start installs what the node needs from Debian.
  export ARENA_CLUSTER=/tmp/arena-cluster
  bash scripts/cluster.sh stop "$ARENA_CLUSTER" >/dev/null 2>&1 || true
  rm -rf "$ARENA_CLUSTER"
  trap 'bash scripts/cluster.sh stop "$ARENA_CLUSTER"; rm -rf "$ARENA_CLUSTER"' EXIT
  # It starts while the checks below run.
  bash scripts/cluster.sh start "$ARENA_CLUSTER" >/tmp/arena-cluster.$$.log 2>&1 &
  cluster_pid=$!
elif [[ ${ARENA_REQUIRE_DOCKER:-} == 1 ]]; then
  echo "no cluster can start here (it needs root and a Docker engine for its images): the cluster-backed tests must run here" >&2
  exit 1
else
  echo "no cluster (it needs root and a Docker engine): the cluster-backed tests will be skipped"
fi

step "gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [[ -n $unformatted ]]; then
  echo "gofmt would change:" >&2
  echo "$unformatted" >&2
  exit 1
fi

step "go vet"
go vet ./...
go vet -tags team ./cmd/arena # the team's arena (make builds it beside arena)

step "staticcheck"
# Pinned in go.mod (tool directive): the same checker on every machine.
go tool staticcheck ./...

if [[ -n $cluster_pid ]]; then
  step "the cluster"
  if ! wait "$cluster_pid"; then
    cat /tmp/arena-cluster.$$.log >&2
    echo "the cluster did not start: the cluster-backed tests need it" >&2
    exit 1
  fi
  cat /tmp/arena-cluster.$$.log
  rm -f /tmp/arena-cluster.$$.log
fi

step "go test -race"
# ARENA_TEST_EVENTS=FILE keeps go test's events (-json) for a look at the times.
go build -o /tmp/arena-testsummary ./internal/testsummary
set +e
# The busy-host test ran on its own above.
# harness/web first: its tests take the longest, so they start at once.
go test "${race[@]}" -count=1 -timeout 40m -skip '^TestABusyHostDecidesNoGame$' -json ./harness/web ./... |
  tee "${ARENA_TEST_EVENTS:-/dev/null}" | /tmp/arena-testsummary
codes=("${PIPESTATUS[@]}")
set -e
if [[ ${codes[0]} != 0 || ${codes[1]} != 0 || ${codes[2]} != 0 ]]; then
  exit 1
fi
echo "all tests passed in $SECONDS s"
