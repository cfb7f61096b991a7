#!/usr/bin/env bash
# Servers compared, for docs/results.md "Servers": the crossing time (a server app's post to a
# client's callback) of every server runner (this project's Node server, pythonSoftIOC on RSRV and
# QSRV, pvxs's SharedPV, p4p, caproto) on each protocol it serves, the ADO-to-EPICS bridge study's
# payloads (a double, int32 arrays of 12 to 250,000, byte arrays of 1,000 to 1,000,000), 100
# posts each, read by c-libca over CA and c-pvxs over PVA, in one session; and what one post costs
# the Node server by how long it was idle before (server-post.mjs).
set -euo pipefail
cd "$(dirname "$0")/.."
out=benchmarks/results
. benchmarks/record.sh
record servers-crossing npx epicsperf bench crossing --full --repeat 1 --format markdown --out "$out/servers-crossing.json"
record server-post node benchmarks/server-post.mjs
