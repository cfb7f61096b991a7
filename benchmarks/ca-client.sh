#!/usr/bin/env bash
# The CA client's figures for docs/results.md: this project's client beside pyepics and a C program on
# libca, on the built-in IOC, each workload in one bench run (median of REPEAT runs, default 3;
# the snapshots, a second each, SNAPSHOT_REPEAT runs, default 9).
set -euo pipefail
cd "$(dirname "$0")/.."
repeat=${REPEAT:-3}
snapshot_repeat=${SNAPSHOT_REPEAT:-9}
out=benchmarks/results
. benchmarks/record.sh
record ca-monitor npx epicsperf bench monitor --full --clients c-libca,node,pyepics --records 1000 --samples 100 --rate 10 \
  --repeat "$repeat" --format markdown --out "$out/ca-monitor.json"
record ca-snapshot npx epicsperf bench snapshot --full --clients c-libca,node,pyepics-ca --snapshots 10000,10000+95 --timeout 1000 \
  --repeat "$snapshot_repeat" --format markdown --out "$out/ca-snapshot.json"
record ca-array npx epicsperf bench array --full --clients c-libca,node,pyepics --array-elements 10000000 --array-samples 30 \
  --repeat "$repeat" --format markdown --out "$out/ca-array.json"
# At "max" the IOC (its refresh loop and the CA server) takes 1.3-1.4 of the two cores; at 20 Hz
# it takes less and still offers more updates than any client here takes (the IOC CPU column).
record ca-array-20hz npx epicsperf bench array --full --clients c-libca,node,pyepics --array-elements 10000000 --array-samples 30 --array-rate 20 \
  --repeat "$repeat" --format markdown --out "$out/ca-array-20hz.json"
