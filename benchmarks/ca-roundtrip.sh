#!/usr/bin/env bash
# Where this client's CA round trip goes (benchmarks/ca-roundtrip.mjs), then the latency workload
# at one element for this client, libca, rust-ca and repics in the same session, all against the
# built-in IOC at the EPICS defaults.
set -euo pipefail
cd "$(dirname "$0")/.."
out=benchmarks/results
. benchmarks/record.sh
env=$(mktemp -u /tmp/epicsperf-roundtrip-XXXXXX.env)
# the IOC itself, not through npx, so that $! is the process the trap stops
node packages/epicsperf/bin/epicsperf.js ioc --records 1 --rate 0 --array-elements 0 --latency-elements 1000 --write-env "$env" >/dev/null 2>&1 &
ioc=$!
trap 'kill $ioc 2>/dev/null; wait $ioc 2>/dev/null; rm -f "$env"' EXIT
for _ in $(seq 60); do [ -s "$env" ] && break; sleep 0.5; done
record ca-roundtrip node benchmarks/ca-roundtrip.mjs "$env" "${PROCESSES:-7}" "${ROUNDS:-2000}"
kill $ioc; wait $ioc 2>/dev/null || true
record ca-roundtrip-clients npx epicsperf bench latency --clients node,c-libca,rust-ca,repics --latency-sizes 1 --latency-count 1000 \
  --repeat "${REPEAT:-3}" --format markdown --out "$out/ca-roundtrip-clients.json"
