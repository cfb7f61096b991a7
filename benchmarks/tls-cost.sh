#!/usr/bin/env bash
# What Secure PV Access costs (benchmarks/tls-cost.mjs): plain TCP against TLS, this client
# beside core-pva's, on one core-pva server; needs the JDK (the Java runners build on first use).
set -euo pipefail
cd "$(dirname "$0")/.."
out=benchmarks/results
. benchmarks/record.sh
npm run --silent build -w epicsperf-testkit
record tls-cost node benchmarks/tls-cost.mjs "${SECONDS_EACH:-10}" "${ROUNDS:-2}" "${ELEMENTS:-10000000}"
