// Two builds of the library side by side on PV Access round trips to the built-in IOC's QSRV, in
// fresh processes taken in turn: a put of one double and its reply (awaited put), a get, and a put
// followed by the client's own monitor update of it (the latency workload's round trip).
//
//   npx epicsperf ioc --records 1 --rate 0 --array-elements 0 --latency-elements 1000 --write-env /tmp/ioc.env &
//   node benchmarks/pva-roundtrip.mjs /tmp/ioc.env <dist A> <dist B> [processes] [rounds]
//
// Prints the median over the processes of each process's p50 (µs), with min-max.
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadIocEnv } from './ioc-env.mjs';

const WARMUP = 300;
const now = () => Number(process.hrtime.bigint()) / 1e3; // µs
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function one(dist, envFile, rounds) {
  loadIocEnv(envFile);
  const { Context } = await import(`${resolve(dist)}/index.js`);
  const pv = `${process.env.EPICSPERF_PREFIX ?? 'TEST:'}LATENCY:DOUBLE`;
  const ctx = new Context({ protocol: 'pva' });
  const value = new Float64Array(1);
  let waiting;
  let subscribed;
  const first = new Promise((r) => (subscribed = r));
  const m = ctx.monitor(pv, {}, (e) => {
    if (e.kind !== 'update') return;
    subscribed();
    const w = waiting;
    if (w && e.value[0] === w.v) {
      waiting = undefined;
      w.resolve(now());
    }
  });
  await first;
  const out = { put: [], get: [], 'put and own update': [] };
  let k = 0;
  for (let i = -WARMUP; i < rounds; i++) {
    value[0] = (k++ % 250) + 1;
    let t0 = now();
    await ctx.put(pv, value);
    if (i >= 0) out.put.push(now() - t0);
    t0 = now();
    await ctx.get(pv);
    if (i >= 0) out.get.push(now() - t0);
    value[0] = (k++ % 250) + 1;
    const got = new Promise((resolveUpdate) => (waiting = { v: value[0], resolve: resolveUpdate }));
    t0 = now();
    const put = ctx.put(pv, value);
    const t1 = await got;
    await put;
    if (i >= 0) out['put and own update'].push(t1 - t0);
  }
  m.close();
  await ctx.close();
  console.log(JSON.stringify(Object.fromEntries(Object.entries(out).map(([key, xs]) => [key, median(xs)]))));
}

function main(envFile, dists, processes, rounds) {
  const self = fileURLToPath(import.meta.url);
  const rows = { A: [], B: [] };
  for (let i = 0; i < processes; i++) {
    for (const [k, dist] of [
      ['A', dists[0]],
      ['B', dists[1]],
    ]) {
      const r = spawnSync(process.execPath, [self, '--one', dist, envFile, String(rounds)], { encoding: 'utf8' });
      try {
        rows[k].push(JSON.parse(r.stdout.trim().split('\n').pop()));
      } catch {
        console.error(`a run of ${k} failed: ${r.stderr.trim().split('\n').slice(-3).join(' | ')}`);
      }
    }
  }
  const cell = (xs) => `${median(xs).toFixed(1)} (${Math.min(...xs).toFixed(1)}-${Math.max(...xs).toFixed(1)})`;
  console.log(
    `${rounds} rounds per process after ${WARMUP} not kept, ${processes} processes of each in turn; A ${dists[0]}, B ${dists[1]}\n`,
  );
  console.log('| p50 µs | A | B |');
  console.log('|---|---:|---:|');
  for (const key of Object.keys(rows.A[0] ?? {}))
    console.log(`| ${key} | ${cell(rows.A.map((r) => r[key]))} | ${cell(rows.B.map((r) => r[key]))} |`);
}

if (process.argv[2] === '--one') await one(process.argv[3], process.argv[4], Number(process.argv[5]));
else {
  const [envFile, distA, distB, processes = '5', rounds = '1000'] = process.argv.slice(2);
  if (!distB) {
    console.error('usage: node benchmarks/pva-roundtrip.mjs ENV_FILE DIST_A DIST_B [PROCESSES] [ROUNDS]');
    process.exit(2);
  }
  main(envFile, [distA, distB], Number(processes), Number(rounds));
}
