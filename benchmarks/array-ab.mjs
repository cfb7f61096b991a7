// Two builds (or two settings) side by side on one large array from a running IOC, alternating
// run by run: the client's CPU and what it kept. Start the IOC first, e.g.
//
//   npx epicsperf ioc --records 1 --array-elements 1000000 --array-rate 20 --write-env /tmp/ioc.env &
//   node benchmarks/array-ab.mjs capture /tmp/ioc.env <dist A> <dist B> [rounds] [seconds]
//
//   npx epicsperf ioc --records 1 --array-elements 10000000 --array-type int64 --array-rate max --write-env /tmp/ioc.env &
//   node benchmarks/array-ab.mjs pva-monitor /tmp/ioc.env <dist> <dist> [rounds] [seconds] [reuse]
//
// capture: a capture of TEST:ARRAY with the threaded HDF5 writer (packages/epicsperf/src/capture/session.ts) for
// `seconds`, flushed every second: CPU % of a core, updates written and lost, the longest flush.
// pva-monitor: a monitor of pva://TEST:ARRAY with a callback, A without reuseArrays and B with
// (reuse 'B', the default; 'none' or 'both' to compare two builds with the same setting):
// CPU % of a core, updates/s, CPU ms per update. Defaults: 3 rounds of 6 s.
// (A dist directory must sit under a checkout with node_modules, as this one's dist/ does.)
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readIocEnv } from './ioc-env.mjs';

const WORKLOADS = { capture, 'pva-monitor': pvaMonitor };

if (process.argv[2] === '--one') {
  const [, , , workload, envFile, dist, seconds, variant, reuse = 'B'] = process.argv;
  const reuseArrays = reuse === 'both' || (reuse === 'B' && variant === 'B');
  const row = await WORKLOADS[workload](resolve(dist), readEnv(envFile), Number(seconds), reuseArrays);
  console.log(JSON.stringify(row));
  process.exit(0);
} else {
  const [workload, envFile, distA, distB, rounds = '3', seconds = '6', reuse = 'B'] = process.argv.slice(2);
  if (!WORKLOADS[workload] || !distB || !['B', 'none', 'both'].includes(reuse)) {
    console.error('usage: node benchmarks/array-ab.mjs capture|pva-monitor ENV_FILE DIST_A DIST_B [ROUNDS] [SECONDS] [B|none|both]');
    process.exit(2);
  }
  main(workload, envFile, distA, distB, Number(rounds), seconds, reuse);
}

function readEnv(file) {
  return { ...process.env, ...readIocEnv(file) };
}

function cpuPercent(c0, t0) {
  const c = process.cpuUsage(c0);
  return { cpuMs: (c.user + c.system) / 1000, pct: (c.user + c.system) / 10 / (performance.now() - t0) };
}

/** One capture of TEST:ARRAY for `seconds` with the threaded writer. */
async function capture(dist, env, seconds) {
  const { ThreadedWriter } = await import(`${dist}/capture/worker.js`);
  const { CaptureSession } = await import(`${dist}/capture/session.js`);
  const dir = mkdtempSync(join(tmpdir(), 'epicsperf-array-ab-'));
  try {
    const w = await ThreadedWriter.open(join(dir, 'run.h5'), { toolVersion: 'ab', options: {}, environment: {} });
    const s = new CaptureSession(w, {
      names: ['TEST:ARRAY'],
      flushMs: 1000,
      gapCheck: /ARRAY$/,
      connectTimeoutMs: 5000,
      warn: () => {},
      env,
    });
    await s.start();
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    await new Promise((r) => setTimeout(r, seconds * 1000));
    const { pct } = cpuPercent(c0, t0);
    const sum = await s.stop('node', 'ab');
    return { cpu: pct, updates: sum.updates, lost: sum.pvs.reduce((a, p) => a + p.lost, 0), maxFlushMs: sum.maxFlushMs };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** One monitor of pva://TEST:ARRAY for `seconds` (after 1.5 s to settle), reusing arrays or not. */
async function pvaMonitor(dist, env, seconds, reuseArrays) {
  const { Context } = await import(`${dist}/index.js`);
  const ctx = new Context({ env });
  let n = 0;
  let torn = 0;
  const m = ctx.monitor('pva://TEST:ARRAY', { reuseArrays }, (e) => {
    if (e.kind !== 'update') return;
    n++;
    const v = e.value;
    if (v[0] !== v[v.length - 1]) torn++;
  });
  await new Promise((r) => setTimeout(r, 1500));
  const n0 = n;
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  await new Promise((r) => setTimeout(r, seconds * 1000));
  const { cpuMs, pct } = cpuPercent(c0, t0);
  const updates = n - n0;
  m.close();
  await ctx.close();
  return { cpu: pct, updatesPerS: updates / seconds, cpuMsPerUpdate: cpuMs / updates, torn };
}

function main(workload, envFile, distA, distB, rounds, seconds, reuse) {
  const self = fileURLToPath(import.meta.url);
  const rows = { A: [], B: [] };
  for (let i = 0; i < rounds; i++) {
    for (const [k, dist] of [
      ['A', distA],
      ['B', distB],
    ]) {
      const r = spawnSync(process.execPath, [self, '--one', workload, envFile, dist, seconds, k, reuse], { encoding: 'utf8' });
      try {
        rows[k].push(JSON.parse(r.stdout.trim().split('\n').pop()));
      } catch {
        console.error(`run ${k} failed: ${r.stderr.trim().split('\n').pop()}`);
      }
    }
  }
  const med = (xs) => [...xs].sort((x, y) => x - y)[Math.floor((xs.length - 1) / 2)];
  const fmt = (xs, d) => `${med(xs).toFixed(d)} (${Math.min(...xs).toFixed(d)}-${Math.max(...xs).toFixed(d)})`;
  const digits = { cpu: 2, cpuMsPerUpdate: 3, updatesPerS: 1 };
  for (const k of ['A', 'B']) {
    const r = rows[k];
    if (r.length === 0) continue;
    const cols = Object.keys(r[0]).map(
      (f) =>
        `${f} ${fmt(
          r.map((x) => x[f]),
          digits[f] ?? 0,
        )}`,
    );
    console.log(`${k} (${r.length} runs, median (min-max)): ${cols.join(', ')}`);
  }
  if (rows.A.length && rows.B.length) {
    const ratio = (f) => (med(rows.B.map((x) => x[f])) / med(rows.A.map((x) => x[f]))).toFixed(2);
    console.log(
      `B/A medians: ${Object.keys(rows.A[0])
        .filter((f) => f in digits)
        .map((f) => `${f} ${ratio(f)}`)
        .join(', ')}`,
    );
  }
}
