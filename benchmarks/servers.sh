#!/usr/bin/env bash
# Servers compared, for docs/results.md "Servers": every server runner (this project's Node server,
# pythonSoftIOC on RSRV and QSRV, pvxs's SharedPV, p4p, caproto, core-pva's PVAServer, epics-rs's
# servers, p4p's gateway pvagw in front of softioc) and, where a workload takes it, the built-in
# IOC's own records (ioc), on each protocol it serves, in one session:
# - the crossing time (a server app's post to a client's callback), the ADO-to-EPICS bridge
#   study's payloads (a double, int32 arrays of 12 to 250,000, byte arrays of 1,000 to
#   1,000,000), 100 posts each, read by c-libca over CA and c-pvxs over PVA; and what one post
#   costs the Node server by how long it was idle before (server-post.mjs);
# - the servers' headroom: the headroom ramp's counters posted by each app, to one and to four
#   reference clients at once;
# - the connect storm: 100,000 channels of a fresh server, asked for at once by one client;
# - the servers' load: the load ramp's runners of the reference client against each server.
# The gateways compared on each workload, with the monitor workload through them: gateways.sh.
# BEFORE="CHECKOUT ..." (other checkouts of this project, each after its `npm ci`) adds the post's
# cost in their libraries beside this one's, each in fresh processes in turn: an A/B in one session.
set -euo pipefail
cd "$(dirname "$0")/.."
out=benchmarks/results
. benchmarks/record.sh
all=node,softioc,pvxs,p4p,caproto,corepva,epics-rs,pvagw
before=()
for b in ${BEFORE:-}; do before+=("$b/packages/client/dist"); done
record servers-crossing npx epicsperf bench crossing --full --repeat 1 --format markdown --out "$out/servers-crossing.json"
record server-post node benchmarks/server-post.mjs
if [ ${#before[@]} -gt 0 ]; then record server-post-ab node benchmarks/server-post.mjs 200 20 "${before[@]}" packages/client/dist; fi
record servers-headroom npx epicsperf bench headroom --servers "$all,ioc" --format markdown --out "$out/servers-headroom.json"
record servers-storm npx epicsperf bench storm --servers "$all,ioc" --format markdown --out "$out/servers-storm.json"
record servers-load npx epicsperf bench load --servers "$all,ioc" --format markdown --out "$out/servers-load.json"
