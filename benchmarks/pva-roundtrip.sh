#!/usr/bin/env bash
# The PV Access round trip: the latency workload at one element (a put of one double that waits
# for its reply, ended at the client's own monitor update) for this client (node-pva), the pvxs
# client (c-pvxs), p4p and core-pva, in the same session, against the built-in IOC's QSRV at the
# EPICS defaults; the CA reference (c-libca) beside them.
set -euo pipefail
cd "$(dirname "$0")/.."
out=benchmarks/results
. benchmarks/record.sh
record pva-roundtrip-clients npx epicsperf bench latency --clients node-pva,c-pvxs,p4p,java-corepva,c-libca --latency-sizes 1,1000 \
  --latency-count 1000 --repeat "${REPEAT:-3}" --format markdown --out "$out/pva-roundtrip-clients.json"
