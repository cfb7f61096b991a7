#!/usr/bin/env bash
# Clients on several hosts, for docs/results.md. First `bench load` on three agent hosts (h2..h4)
# against the built-in IOC on h1: how many node clients, then pyepics clients, one IOC serves at
# 1,000 counters x 10 Hz with no loss (load-node, load-pyepics). Then the agent's overhead: a node monitor of 1,000 counters x 10 Hz on host h2 against the IOC on
# h1, its runner's CPU measured by the harness on h2 itself, and measured through agent a on h2
# by an orchestrator on h1; the same runner host, the same IOC, the same network path; runs
# interleaved in one session. The hosts are network namespaces on one bridge (198.18.1.0/24,
# links shaped to 1 Gbit/s), made here and removed at the end: h1 runs the orchestrator and the
# IOC, h2..h4 run agents a..c. Needs root.
# Writes benchmarks/results/load-node.*, load-pyepics.* and agents.md.
#   benchmarks/agents.sh [ROUNDS] (default 5)
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-5}
out=benchmarks/results
OUT=$out/agents.md
. benchmarks/record.sh
BIN=packages/epicsperf/bin/epicsperf.js
TAG=epbn$$
SUB=198.18.1
KEYS=$(mktemp -d)

cleanup() {
  # Everything started on the hosts, then the hosts.
  for n in h1 h2 h3 h4; do
    ip netns pids "$TAG-$n" 2>/dev/null | xargs -r kill 2>/dev/null || true
  done
  sleep 1
  for n in h1 h2 h3 h4; do
    ip netns pids "$TAG-$n" 2>/dev/null | xargs -r kill -9 2>/dev/null || true
  done
  for n in h1 h2 h3 h4 sw; do ip netns del "$TAG-$n" 2>/dev/null || true; done
  rm -rf "$KEYS"
}
trap cleanup EXIT

# The EPICS defaults on every host: no EPICS_* from this shell.
clean_env() { env $(env | sed -n 's/^\(EPICS_[A-Z_]*\)=.*/-u \1/p') "$@"; }
on() { local h=$1; shift; clean_env ip netns exec "$TAG-$h" "$@"; }

ip netns add "$TAG-sw"
ip -n "$TAG-sw" link add br0 type bridge
ip -n "$TAG-sw" link set br0 up
for i in 1 2 3 4; do
  ip netns add "$TAG-h$i"
  ip -n "$TAG-h$i" link set lo up
  ip -n "$TAG-sw" link add "p$i" type veth peer name eth0 netns "$TAG-h$i"
  ip -n "$TAG-sw" link set "p$i" master br0 up
  ip -n "$TAG-h$i" addr add "$SUB.$i/24" brd "$SUB.255" dev eth0
  ip -n "$TAG-h$i" link set eth0 up
  ip -n "$TAG-h$i" route add default via "$SUB.254"
  ip netns exec "$TAG-h$i" tc qdisc replace dev eth0 root tbf rate 1gbit burst 256kb latency 50ms
done

for k in orchestrator a b c; do node "$BIN" agent --keygen "$k" --keys "$KEYS" >/dev/null; done
i=2
for a in a b c; do
  on "h$i" node "$BIN" agent --bind "tcp://$SUB.$i:5599" --keys "$KEYS" --name "$a" 2>/dev/null &
  i=$((i + 1))
done
sleep 2
HOSTS="a=tcp://$SUB.2:5599,b=tcp://$SUB.3:5599,c=tcp://$SUB.4:5599"

# The runner's mean CPU from a monitor command's JSON, or why there is none.
cpu() {
  local out err
  out=$(mktemp) err=$(mktemp)
  "$@" >"$out" 2>"$err" || true
  node -e 'const fs=require("fs"); try { const r=JSON.parse(fs.readFileSync(process.argv[1],"utf8")).run; console.log(r.ok ? r.cpuPercent.mean.toFixed(3) : "failed: "+r.error) } catch { console.log("failed: "+fs.readFileSync(process.argv[2],"utf8").trim().split("\n").pop()) }' "$out" "$err"
  rm -f "$out" "$err"
}
MON=(monitor --client node --ioc env --records 1000 --rate 10 --samples 300 --format json)
# How many clients one IOC serves: N runners on each of the three agents' hosts, N rising.
record load-node on h1 node "$BIN" bench load --clients node --hosts "$HOSTS" --keys "$KEYS" --steps 1,2,4,8,16 \
  --records 1000 --rate 10 --step-seconds 10 --format markdown --out "$out/load-node.json"
record load-pyepics on h1 node "$BIN" bench load --clients pyepics --hosts "$HOSTS" --keys "$KEYS" --steps 1,2,3,4 \
  --records 1000 --rate 10 --step-seconds 10 --format markdown --out "$out/load-pyepics.json"

# One IOC on h1 for both kinds of run, found by broadcast from h2 (the EPICS defaults).
on h1 node "$BIN" ioc --listen 0.0.0.0 --records 1000 --rate 10 --array-elements 0 >/dev/null 2>&1 &
sleep 5
local_cpu=()
agent_cpu=()
for r in $(seq 1 "$ROUNDS"); do
  local_cpu+=("$(cpu on h2 node "$BIN" "${MON[@]}")")
  agent_cpu+=("$(cpu on h1 node "$BIN" "${MON[@]}" --hosts "$HOSTS" --keys "$KEYS" --place node=a)")
  echo "round $r: local ${local_cpu[-1]} %, through the agent ${agent_cpu[-1]} %" >&2
done

median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
ml=$(median "${local_cpu[@]}")
ma=$(median "${agent_cpu[@]}")
{
  printf 'benchmarks/agents.sh %s (%s, %s)\n\n' "$ROUNDS" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$(hostname)"
  echo "Node monitor, 1,000 counters x 10 Hz, 300 samples per PV (30 s); the runner's CPU (% of a core, the mean of its 1 s samples: /proc counts whole 10 ms ticks, so a single second is 0 or 1 %)."
  echo "The runner on h2, the IOC on h1 (1 Gbit/s links). Rounds interleaved: measured by the harness on h2 (local), then by an orchestrator on h1 through agent a on h2."
  echo
  echo "| round | local | through the agent |"
  echo "|---|---|---|"
  for r in $(seq 1 "$ROUNDS"); do echo "| $r | ${local_cpu[$((r - 1))]} | ${agent_cpu[$((r - 1))]} |"; done
  echo "| median | $ml | $ma |"
  echo
  echo "Through the agent / local: $(awk -v a="$ma" -v l="$ml" 'BEGIN {printf "%.3f", a / l}')"
} > "$OUT"
cat "$OUT"
