#!/usr/bin/env bash
# Every client on the snapshot and monitor workloads of the issue (1000 counters x 100 samples at
# 10 Hz; the 2012 study's snapshot lists), one bench run, with JSON, Markdown and HTML output.
set -euo pipefail
cd "$(dirname "$0")/.."
out=benchmarks/results
. benchmarks/record.sh
# --full: 3 runs, the snapshots 97,97+4,97+15,1000+95,10000+95, monitor 1000 x 100 at 10 Hz.
record all-clients npx epicsperf bench all --full ${REPEAT:+--repeat "$REPEAT"} ${SNAPSHOTS:+--snapshots "$SNAPSHOTS"} \
  --format markdown --out "$out/all-clients.json" --html "$out/all-clients.html"
