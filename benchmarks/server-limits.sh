#!/usr/bin/env bash
# The Node server (epicsperf ioc --server node) against softioc on the server issue's limits, both
# servers in turn in one session (benchmarks/server-limits.mjs; its variables set the sizes).
set -euo pipefail
# the worktree's own build (npm run build first)
cd "$(dirname "$0")/.."
out=benchmarks/results
. benchmarks/record.sh
record server-limits node benchmarks/server-limits.mjs
