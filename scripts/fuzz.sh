#!/usr/bin/env bash
# Fuzzes what arena reads from untrusted or tamperable files, each target for
# FUZZTIME (default 60s), one after the other:
#   FuzzReadZip  ./harness/submission   submission ZIPs: never panics or hangs,
#                                       refusals carry a kind, accepted files
#                                       stay within every limit
#   FuzzRead     ./harness/transcript   transcript.jsonl: never panics or hangs,
#                                       the lines read cover the input exactly,
#                                       and the chain and signature checks agree
#                                       with the format's rules
# Run by hand (bash scripts/fuzz.sh), not by scripts/test.sh: the seeds of each
# target already run as ordinary tests under go test. A failing input is saved
# by go test under the package's testdata/fuzz/ to reproduce it with
# go test -run 'FuzzX/<name>'; fix the code, and do not commit the input: the
# seeds are built by the tests themselves.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
fuzztime=${FUZZTIME:-60s}

targets=(
  "FuzzReadZip ./harness/submission"
  "FuzzRead ./harness/transcript"
)
for t in "${targets[@]}"; do
  read -r name pkg <<<"$t"
  printf '\n== %s %s (%s)\n' "$name" "$pkg" "$fuzztime"
  go test -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" "$pkg"
done
