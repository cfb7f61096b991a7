#!/usr/bin/env bash
# The seed studies' tables with a row per runtime: Node (this client), C and C++ (libca, pvxs),
# Python (pyepics, p4p, repics), Java (CAJ through JCA, Phoebus's core-pva) and Rust
# (epics-rs), one bench run per table against the built-in IOC at the EPICS defaults:
#   runtimes-monitor   EPICSPyClientPerformance: 1000 counters x 10 Hz, 100 samples each, every
#                      sample checked, CPU of a core
#   runtimes-snapshot  the 2012 study: 97 names, +4 and +15 missing, 1000+95, 10000+95, 1 s timeout
#   runtimes-array     arrayPerformance: a 10,000,000-element int64 waveform at the IOC's top rate
#                      (over CA the IOC serves it as doubles, CA having no int64)
#   runtimes-latency   a put and the client's own monitor update of it, against the payload size
#   runtimes-headroom  the most scalar updates/s each client holds with no loss
# The Java and Rust runners are built on first use (before the first run; not timed).
# REPEAT (default 1) runs each workload that many times; HEADROOM_STEPS narrows the ramp.
set -euo pipefail
cd "$(dirname "$0")/.."
repeat=${REPEAT:-1}
out=benchmarks/results
. benchmarks/record.sh
ca=node,c-libca,pyepics,repics,java-caj,rust-ca
pva=node-pva,c-pvxs,p4p,repics-pva,java-corepva,rust-pva
bench() { # name, then the bench arguments
  local name=$1; shift
  record "$name" npx epicsperf bench "$@" --full --repeat "$repeat" --format markdown --out "$out/$name.json"
}
bench runtimes-monitor monitor --clients "$ca,$pva" --records 1000 --samples 100 --rate 10
bench runtimes-snapshot snapshot --clients "$ca,$pva" --snapshots 97,97+4,97+15,1000+95,10000+95 --timeout 1000
bench runtimes-array array --clients "$ca,$pva" --array-type int64 --array-elements 10000000 --array-samples 20
bench runtimes-latency latency --clients "$ca,$pva" --latency-type double --latency-sizes 1,1000,100000,1000000 --latency-count 50
record runtimes-headroom npx epicsperf bench headroom --clients "$ca,$pva" ${HEADROOM_STEPS:+--headroom-steps "$HEADROOM_STEPS"} \
  --format markdown --out "$out/runtimes-headroom.json"
