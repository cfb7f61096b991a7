#!/usr/bin/env bash
# One `epicsperf bench` command run in two checkouts (two builds of this project), alternating,
# ROUNDS rounds: each run's table, so that each build's row is read against the other clients of
# the same run. Each checkout needs `npm ci` (which builds it) first, e.g. a `git worktree` of the
# commit before a change:
#
#   git worktree add /tmp/before HEAD~1 && (cd /tmp/before && npm ci)
#   bash benchmarks/bench-ab.sh /tmp/before . 3 bench array --clients node-pva,pvapy --array-type int64 \
#     --array-elements 10000000 --array-samples 20 --repeat 3
set -euo pipefail
if [ $# -lt 4 ]; then
  echo "usage: bash benchmarks/bench-ab.sh CHECKOUT_A CHECKOUT_B ROUNDS bench WORKLOAD [OPTIONS...]" >&2
  exit 2
fi
a=$1 b=$2 rounds=$3
shift 3
for ((i = 1; i <= rounds; i++)); do
  for d in "$a" "$b"; do
    echo "== round $i: $d ($(git -C "$d" rev-parse --short HEAD))"
    (cd "$d" && node packages/epicsperf/bin/epicsperf.js "$@" --format markdown 2>/dev/null)
  done
done
