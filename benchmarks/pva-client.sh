#!/usr/bin/env bash
# The PV Access client's figures for docs/results.md: this project's client (node-pva) beside p4p and
# pvapy, and c-pvxs (the pvxs client library, the reference) on the snapshots and the
# 10M-element int64 array, on the built-in IOC's QSRV, each workload in one bench run (median of
# REPEAT runs, default 3; the snapshots SNAPSHOT_REPEAT runs, default 5). WORKLOADS picks steps (default "monitor snapshot array");
# SNAPSHOT_CLIENTS the snapshot's clients (pvapy needs up to 180 s a run there).
set -euo pipefail
cd "$(dirname "$0")/.."
repeat=${REPEAT:-3}
snapshot_repeat=${SNAPSHOT_REPEAT:-5}
workloads=${WORKLOADS:-monitor snapshot array}
snapshot_clients=${SNAPSHOT_CLIENTS:-node-pva,c-pvxs,p4p,pvapy}
out=benchmarks/results
. benchmarks/record.sh
for w in $workloads; do
  case "$w" in
    monitor)
      record pva-monitor npx epicsperf bench monitor --clients node-pva,p4p,pvapy --records 1000 --samples 100 --rate 10 \
        --repeat "$repeat" --format markdown --out "$out/pva-monitor.json" ;;
    snapshot)
      record pva-snapshot npx epicsperf bench snapshot --clients "$snapshot_clients" --snapshots 10000,10000+95 --timeout 1000 \
        --repeat "$snapshot_repeat" --format markdown --out "$out/pva-snapshot.json" ;;
    array)
      record pva-array npx epicsperf bench array --clients node-pva,c-pvxs,p4p,pvapy --array-type int64 --array-elements 10000000 --array-samples 30 \
        --repeat "$repeat" --format markdown --out "$out/pva-array.json" ;;
    *) echo "pva-client.sh: unknown workload '$w' (monitor, snapshot, array)" >&2; exit 2 ;;
  esac
done
