#!/usr/bin/env bash
# A PV Access snapshot of 10,000 + 95 names and the IOC's TCP thread's CPU over it
# (benchmarks/pva-snapshot-server.mjs), on freshly started built-in IOCs at the EPICS defaults.
set -euo pipefail
cd "$(dirname "$0")/.."
out=benchmarks/results
. benchmarks/record.sh
record pva-snapshot-server node benchmarks/pva-snapshot-server.mjs "${IOCS:-7}"
