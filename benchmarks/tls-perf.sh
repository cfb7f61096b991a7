#!/usr/bin/env bash
# Where this client's CPU goes over TLS against TCP (benchmarks/tls-cost.mjs --perf): perf record
# of the client monitoring 1000 counters on core-pva's server; needs the JDK and perf.
set -euo pipefail
cd "$(dirname "$0")/.."
out=benchmarks/results
. benchmarks/record.sh
npm run --silent build -w epicsperf-testkit
record tls-perf node benchmarks/tls-cost.mjs --perf "${SECONDS_EACH:-20}" "${ROUNDS:-2}"
