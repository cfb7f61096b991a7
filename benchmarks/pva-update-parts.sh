#!/usr/bin/env bash
# What a PV Access monitor update's CPU off the wire is made of, for docs/results.md:
# pva-update-parts.mjs at 100,000 monitors (the library, and copies that each leave one part of
# the update path out), and CA's update path on the same bursts beside it.
set -euo pipefail
cd "$(dirname "$0")/.."
out=benchmarks/results
. benchmarks/record.sh
record pva-update-parts env MONITORS=100000 node benchmarks/pva-update-parts.mjs 300
record ca-update-path-parts env MONITORS=100000 node benchmarks/ca-update-path.mjs 0 300 ca=packages/client/dist
