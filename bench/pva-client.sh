#!/usr/bin/env bash
# The PV Access client's figures for README: this project's client (node-pva) beside p4p and
# pvapy, on the built-in IOC's QSRV, each workload in one bench run (median of REPEAT runs,
# default 3; the snapshots SNAPSHOT_REPEAT runs, default 5).
set -euo pipefail
cd "$(dirname "$0")/.."
repeat=${REPEAT:-3}
snapshot_repeat=${SNAPSHOT_REPEAT:-5}
out=bench/results
mkdir -p "$out"
npx epicsperf bench monitor --clients node-pva,p4p,pvapy --records 1000 --samples 100 --rate 10 \
  --repeat "$repeat" --format markdown --out "$out/pva-monitor.json" | tee "$out/pva-monitor.md"
npx epicsperf bench snapshot --clients node-pva,p4p,pvapy --snapshots 10000,10000+95 --timeout 1000 \
  --repeat "$snapshot_repeat" --format markdown --out "$out/pva-snapshot.json" | tee "$out/pva-snapshot.md"
npx epicsperf bench array --clients node-pva,p4p,pvapy --array-elements 10000000 --array-samples 30 \
  --repeat "$repeat" --format markdown --out "$out/pva-array.json" | tee "$out/pva-array.md"
