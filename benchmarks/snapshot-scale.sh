#!/usr/bin/env bash
# The facility-scale snapshot for docs/results.md: the built-in IOC's 100,000 counters read once
# by this project's client and by a C program on libca, with 95 missing names spread through the
# list (100000+95) and without them (100000), REPEAT runs each (default 3). The limit it
# measures: this client answers all 100,000 within 1.5 s, so that is the timeout per PV (TIMEOUT
# ms, default 1500); "last answer s" is when the last answer came (with missing names the wall
# time is the timeout).
set -euo pipefail
cd "$(dirname "$0")/.."
repeat=${REPEAT:-3}
timeout=${TIMEOUT:-1500}
out=benchmarks/results
. benchmarks/record.sh
record snapshot-scale npx epicsperf bench snapshot --full --clients node,c-libca --snapshots 100000+95,100000 --timeout "$timeout" \
  --repeat "$repeat" --format markdown --out "$out/snapshot-scale.json"
