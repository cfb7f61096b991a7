#!/usr/bin/env bash
# Where PV Access's CPU per update goes, for docs/results.md: 100,000 monitors in one Context,
# CA and PV Access in turn (pva-monitor-cpu.mjs: the client's main thread and other threads, V8's
# collections, the IOC's CPU) against the built-in IOC with 100,000 counters at 1 Hz; then the
# reference clients, c-libca and c-pvxs, beside this client's two protocols on the same number of
# updates a second (10,000 counters at 10 Hz: c-pvxs does not connect 100,000 monitors).
# BEFORE=CHECKOUT (another checkout of this project, after its `npm ci`) adds its library to the
# 100,000 monitors and to the update path off the wire at that many monitors: an A/B in one session.
set -euo pipefail
cd "$(dirname "$0")/.."
out=benchmarks/results
. benchmarks/record.sh
env=$(mktemp -u /tmp/epicsperf-pva-cpu-XXXXXX.env)
# the IOC itself, not through npx, so that $! is the process the trap stops
node packages/epicsperf/bin/epicsperf.js ioc --records 100000 --rate 1 --array-elements 0 --write-env "$env" >/dev/null 2>&1 &
ioc=$!
trap 'kill $ioc 2>/dev/null; wait $ioc 2>/dev/null; rm -f "$env"' EXIT
for _ in $(seq 120); do [ -s "$env" ] && break; sleep 0.5; done
# the IOC's Python process, whose CPU the table shows
py=$(pgrep -P "$ioc" python | head -1)
builds=()
dists=()
if [ -n "${BEFORE:-}" ]; then builds+=("before=$BEFORE/packages/client/dist"); dists+=("$BEFORE/packages/client/dist"); fi
record pva-monitor-cpu node benchmarks/pva-monitor-cpu.mjs "$env" "${py:-0}" 100000 20 5 3 "${builds[@]}" after=packages/client/dist
kill $ioc; wait $ioc 2>/dev/null || true
record pva-update-path-100k env MONITORS=100000 node benchmarks/pva-update-path.mjs 0 60 "${dists[@]}" packages/client/dist
record ca-update-path-100k env MONITORS=100000 node benchmarks/ca-update-path.mjs 0 60 packages/client/dist
record pva-monitor-refs npx epicsperf bench monitor --clients node,node-pva,c-libca,c-pvxs --records 10000 --rate 10 --samples 20 \
  --repeat 3 --format markdown --out "$out/pva-monitor-refs.json"
