#!/usr/bin/env bash
# The gateways compared, for docs/results.md "Gateways": p4p's PV Access gateway pvagw and
# epics-rs's two (ca-gateway-rs, its port of EPICS ca-gateway, and pva-gateway-rs, both from
# crates.io's epics-bridge-rs), each in front of softioc on loopback, beside the server they stand
# in front of reached directly, in one session:
# - the crossing time through each (softioc's app posting, the bridge study's payloads, read by
#   c-libca over CA and c-pvxs over PVA), with the app reached directly as the reference;
# - headroom, the connect storm and the load with the built-in IOC's counters behind each, beside
#   the built-in IOC's own (ioc);
# - the monitor workload through each, its protocol's clients, and the same clients directly.
set -euo pipefail
cd "$(dirname "$0")/.."
out=benchmarks/results
. benchmarks/record.sh
gateways=pvagw,ca-gateway-rs,pva-gateway-rs
record gateways-crossing npx epicsperf bench crossing --full --repeat 1 --servers "softioc,$gateways" --format markdown --out "$out/gateways-crossing.json"
record gateways-headroom npx epicsperf bench headroom --servers "ioc,$gateways" --format markdown --out "$out/gateways-headroom.json"
record gateways-storm npx epicsperf bench storm --servers "ioc,$gateways" --format markdown --out "$out/gateways-storm.json"
record gateways-load npx epicsperf bench load --servers "ioc,$gateways" --format markdown --out "$out/gateways-load.json"
ca=c-libca,node,pyepics
pva=c-pvxs,node-pva,p4p
record gateways-monitor-ca-softioc npx epicsperf bench monitor --full --repeat 1 --server softioc --clients "$ca" --format markdown --out "$out/gateways-monitor-ca-softioc.json"
record gateways-monitor-ca-ca-gateway-rs npx epicsperf bench monitor --full --repeat 1 --server ca-gateway-rs --clients "$ca" --format markdown --out "$out/gateways-monitor-ca-ca-gateway-rs.json"
record gateways-monitor-pva-softioc npx epicsperf bench monitor --full --repeat 1 --server softioc --clients "$pva" --format markdown --out "$out/gateways-monitor-pva-softioc.json"
record gateways-monitor-pva-pvagw npx epicsperf bench monitor --full --repeat 1 --server pvagw --clients "$pva" --format markdown --out "$out/gateways-monitor-pva-pvagw.json"
record gateways-monitor-pva-pva-gateway-rs npx epicsperf bench monitor --full --repeat 1 --server pva-gateway-rs --clients "$pva" --format markdown --out "$out/gateways-monitor-pva-pva-gateway-rs.json"
