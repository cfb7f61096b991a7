#!/usr/bin/env bash
# PV Access at scale, for docs/results.md: the update path off the wire (pva-update-path.mjs,
# beside CA's), 100,000 monitors in one Context (pva-monitors.mjs, CA and PV Access) against the
# built-in IOC with 100,000 counters at 1 Hz, a snapshot of 100,000 names with 95 missing and a
# 10 s timeout beside c-pvxs and p4p on a fresh IOC, and the monitors of `bench monitor` at that
# scale beside c-pvxs and p4p; the heap of 10,000 monitors by kind (pva-monitor-heap.mjs).
# BEFORE="CHECKOUT ..." (other checkouts of this project, each after its `npm ci`) adds their
# libraries to the update path, the monitors and the heap, in that order: an A/B in one session.
set -euo pipefail
cd "$(dirname "$0")/.."
out=benchmarks/results
. benchmarks/record.sh
before=()
for b in ${BEFORE:-}; do before+=("$b/packages/client/dist"); done
record pva-update-path node benchmarks/pva-update-path.mjs 0,16 1500 "${before[@]}" packages/client/dist
record ca-update-path-scale node benchmarks/ca-update-path.mjs 0,16 1500 packages/client/dist
env=$(mktemp -u /tmp/epicsperf-pva-scale-XXXXXX.env)
# the IOC itself, not through npx, so that $! is the process the trap stops
node packages/epicsperf/bin/epicsperf.js ioc --records 100000 --rate 1 --array-elements 0 --write-env "$env" >/dev/null 2>&1 &
ioc=$!
trap 'kill $ioc 2>/dev/null; wait $ioc 2>/dev/null; rm -f "$env"' EXIT
for _ in $(seq 120); do [ -s "$env" ] && break; sleep 0.5; done
record pva-monitors node benchmarks/pva-monitors.mjs "$env" 100000 10 ca,pva "${before[@]}" packages/client/dist
record pva-monitor-heap node benchmarks/pva-monitor-heap.mjs "$env" 10000 pva "${before[@]}" packages/client/dist
kill $ioc; wait $ioc 2>/dev/null || true
# (c-pvxs and p4p take minutes to end a snapshot of 100,000 names: a deadline they reach)
record pva-snapshot-100k npx epicsperf bench snapshot --clients node-pva,c-pvxs,p4p --snapshots 100000+95 --timeout 10000 --deadline 240 \
  --format markdown --out "$out/pva-snapshot-100k.json"
# (a client that cannot connect within its deadline is a row that says so, and the bench exits 1)
record pva-monitor-100k npx epicsperf bench monitor --clients node-pva,node,c-pvxs,p4p --records 100000 --rate 1 --samples 5 \
  --deadline 150 --format markdown --out "$out/pva-monitor-100k.json" || true
