#!/usr/bin/env bash
# A small CA snapshot in a fresh Node process, then twice more in the same process
# (benchmarks/snapshot-cold.mjs), against the built-in IOC at the EPICS defaults.
set -euo pipefail
cd "$(dirname "$0")/.."
out=benchmarks/results
. benchmarks/record.sh
env=$(mktemp -u /tmp/epicsperf-cold-XXXXXX.env)
# the IOC itself, not through npx, so that $! is the process the trap stops (npx would leave it running)
node packages/epicsperf/bin/epicsperf.js ioc --records 1000 --write-env "$env" >/dev/null 2>&1 &
ioc=$!
trap 'kill $ioc 2>/dev/null; wait $ioc 2>/dev/null; rm -f "$env"' EXIT
for _ in $(seq 60); do [ -s "$env" ] && break; sleep 0.5; done
record snapshot-cold node benchmarks/snapshot-cold.mjs "$env" "${ROUNDS:-7}"
