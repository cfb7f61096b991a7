#!/usr/bin/env bash
# Figures of the arrays and latency workloads for docs/results.md, held against the arrayPerformance and
# ADO bridge studies: one bench run each, on the built-in IOC, sizes chosen for a 2-core machine
# (REPEAT runs per client, default 2; the latency rounds per size LATENCY_COUNT, default 50).
set -euo pipefail
cd "$(dirname "$0")/.."
repeat=${REPEAT:-2}
count=${LATENCY_COUNT:-50}
out=benchmarks/results
. benchmarks/record.sh
run() { # name, then the bench arguments; --full: no client deadline, the options give the sizes
  local name=$1; shift
  record "$name" npx epicsperf bench "$@" --full --format markdown --out "$out/$name.json"
}
# Over CA: 10M doubles refreshed as fast as the IOC can, with and without numpy.
run arrays-ca array --clients c-libca,node,pyepics,pyepics-nonumpy --array-type double \
  --array-elements 10000000 --array-samples 20 --repeat "$repeat"
# Over PVA, the study's case: 10M int64, the C++ reference beside p4p and pvapy with and without numpy.
run arrays-pva array --clients c-pvxs,p4p,pvapy,pvapy-nonumpy --array-type int64 \
  --array-elements 10000000 --array-samples 20 --repeat "$repeat"
# Puts of 10M int64 (doubles over CA), each client with and without completion.
run arrays-put array-put --array-type int64 --array-elements 10000000 --array-samples 10 --repeat 1
# Latency against payload size, doubles and bytes, 1 to 1M elements.
run latency-double latency --latency-type double --latency-sizes 1,10,100,1000,10000,100000,1000000 \
  --latency-count "$count" --repeat 1
run latency-char latency --latency-type char --latency-sizes 1,10,100,1000,10000,100000,1000000 \
  --latency-count "$count" --repeat 1
