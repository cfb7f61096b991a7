#!/usr/bin/env bash
# Capture to HDF5 (issue 11): each capture client (node with h5wasm, pyepics and p4p with h5py)
# writes the built-in IOC's updates while the load rises step by step until updates are lost;
# the disk's own sequential write rate is measured in the same run. SECONDS_PER_STEP (default 5).
set -euo pipefail
# the worktree's own build (npm run build first)
cd "$(dirname "$0")/.."
out=benchmarks/results
. benchmarks/record.sh
# bench capture runs the full profile's capture workload (5 s per step and client).
record capture node packages/epicsperf/bin/epicsperf.js bench capture --clients node,pyepics,p4p ${SECONDS_PER_STEP:+--capture-seconds "$SECONDS_PER_STEP"} \
  --format markdown --out "$out/capture.json" --html "$out/capture.html"
