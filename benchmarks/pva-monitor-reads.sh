#!/usr/bin/env bash
# How 100,000 monitors' updates come in, CA against PV Access, for docs/results.md: the built-in
# IOC with 100,000 counters at 1 Hz, and pva-monitor-cpu.mjs's windows (the CPU per update, the
# IOC's CPU, and the socket reads, updates per read and context switches of the client's process),
# CA and PV Access in turn, three rounds of 10 s windows.
set -euo pipefail
cd "$(dirname "$0")/.."
out=benchmarks/results
. benchmarks/record.sh
env=$(mktemp -u /tmp/epicsperf-monitor-reads-XXXXXX.env)
# the IOC itself, not through npx, so that $! is the process the trap stops
node packages/epicsperf/bin/epicsperf.js ioc --records 100000 --rate 1 --array-elements 0 --write-env "$env" >/dev/null 2>&1 &
ioc=$!
trap 'kill $ioc 2>/dev/null; wait $ioc 2>/dev/null; rm -f "$env"' EXIT
for _ in $(seq 120); do [ -s "$env" ] && break; sleep 0.5; done
py=$(pgrep -P "$ioc" python | head -1)
record pva-monitor-reads node benchmarks/pva-monitor-cpu.mjs "$env" "${py:-0}" 100000 10 5 3
