#!/usr/bin/env bash
# The CPU of a CA monitor at 100,000 updates/s (2,000 counters at 50 Hz), the library's share apart
# from the benchmark runner's (benchmarks/monitor-cost.mjs), then `bench headroom` at that step for
# this client and libca in the same session, against the built-in IOC at the EPICS defaults.
# BEFORE=CHECKOUT (another checkout of this project, after its `npm ci`) adds an A/B of the
# library: this checkout's against that one's, in turn, on the IOC and on the update path alone
# (benchmarks/ca-update-path.mjs).
set -euo pipefail
cd "$(dirname "$0")/.."
out=benchmarks/results
. benchmarks/record.sh
record ca-update-path node benchmarks/ca-update-path.mjs 0,16 1500 ${BEFORE:+"$BEFORE/packages/client/dist"} packages/client/dist
env=$(mktemp -u /tmp/epicsperf-monitor-cost-XXXXXX.env)
# the IOC itself, not through npx, so that $! is the process the trap stops
node packages/epicsperf/bin/epicsperf.js ioc --records 2000 --rate 50 --array-elements 0 --write-env "$env" >/dev/null 2>&1 &
ioc=$!
trap 'kill $ioc 2>/dev/null; wait $ioc 2>/dev/null; rm -f "$env"' EXIT
for _ in $(seq 60); do [ -s "$env" ] && break; sleep 0.5; done
record monitor-cost node benchmarks/monitor-cost.mjs "$env" 2000 "${PROCESSES:-7}" "${SECONDS_EACH:-6}"
if [ -n "${BEFORE:-}" ]; then
  record monitor-cost-ab node benchmarks/monitor-cost.mjs "$env" 2000 "${PROCESSES:-7}" "${SECONDS_EACH:-6}" \
    "$BEFORE/packages/client/dist"
fi
kill $ioc; wait $ioc 2>/dev/null || true
# (a headroom ramp runs once for each client: --repeat does not apply to it)
record monitor-cost-clients npx epicsperf bench headroom --clients node,c-libca --headroom-steps 2000x50 \
  --format markdown --out "$out/monitor-cost-clients.json"
