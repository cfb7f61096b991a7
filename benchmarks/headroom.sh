#!/usr/bin/env bash
# Headroom of scalar monitors (issue 9): node, c-libca and the Python CA clients at rising
# (records x rate) steps until each loses updates, falls behind, is killed for its memory or fails;
# the IOC's own published rate at each step marks where the IOC, not the client, was the limit.
# The IOC and the client share the machine's cores. SECONDS_PER_STEP (default 4), STEPS (default
# the full profile's ramp, e.g. STEPS=1000x10,2000x10,1000x50).
set -euo pipefail
# the worktree's own build (npm run build first)
cd "$(dirname "$0")/.."
out=benchmarks/results
. benchmarks/record.sh
record headroom node packages/epicsperf/bin/epicsperf.js bench headroom --clients node,c-libca,pyepics,pyepics-ca,pyepics-threaded,caproto,aioca,cothread \
  ${SECONDS_PER_STEP:+--headroom-seconds "$SECONDS_PER_STEP"} ${STEPS:+--headroom-steps "$STEPS"} \
  --format markdown --out "$out/headroom.json" --html "$out/headroom.html"
