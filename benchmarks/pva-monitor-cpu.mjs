// Where the CPU of many monitors goes, CA against PV Access: this client monitors
// PREFIX:CALC1..N of a running IOC in one Context (as pva-monitors.mjs does), waits for every
// first update and then SETTLE seconds more (the updates QSRV queued while the monitors were being
// set up come in first), and over a window of SECONDS reports: updates/s; the client's CPU per
// update, split into its main thread (the library and the callbacks) and its other threads (V8's
// garbage-collector helpers, libuv's pool); V8's young-generation and full collections in the
// window (how many, and their pauses on the main thread); the IOC process's CPU (% of a core)
// over the same window; and how the updates came in: the process's socket reads a second, the
// updates per read, and the main thread's context switches a second (Linux's /proc). Each protocol runs in a fresh process, CA and then PV Access with each
// build in turn, ROUNDS times; the last line is the ratio of the medians (the last build's).
//
//   npx epicsperf ioc --records 100000 --rate 1 --array-elements 0 --write-env /tmp/ioc.env &
//   node benchmarks/pva-monitor-cpu.mjs ENV_FILE IOC_PID [RECORDS] [SECONDS] [SETTLE] [ROUNDS] [LABEL=DIST ...]
//
// IOC_PID is the IOC's Python process (0: no IOC column). Defaults: 100000 records, a 20 s window,
// 5 s of settling, 3 rounds, and one build: after=packages/client/dist. Each LABEL=DIST is a build
// of the library (a dist directory), its label the row's build; CA runs with the last one.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { constants, PerformanceObserver } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { dirname, resolve } from 'node:path';
import { loadIocEnv } from './ioc-env.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const CONNECT_LIMIT_MS = 180_000;
const { cpuSeconds, threadCpuSeconds } = await import(resolve(HERE, '../packages/epicsperf/dist/procstat.js'));

async function one(envFile, iocPid, records, seconds, settle, protocol, dist) {
  loadIocEnv(envFile);
  const { Context } = await import(resolve(dist, 'index.js'));
  const prefix = process.env.EPICSPERF_PREFIX ?? 'TEST:';
  const ctx = new Context({ protocol });
  const seen = new Uint8Array(records);
  let first = 0;
  let updates = 0;
  const all = new Promise((res) => {
    for (let i = 0; i < records; i++)
      ctx.monitor(`${prefix}CALC${i + 1}`, protocol === 'pva' ? { request: 'field(value,alarm,timeStamp)' } : {}, (e) => {
        if (e.kind !== 'update') return;
        updates++;
        if (!seen[i] && ++first === records) res(true);
        seen[i] = 1;
      });
  });
  if (!(await Promise.race([all, new Promise((r) => setTimeout(() => r(false), CONNECT_LIMIT_MS))])))
    throw new Error(`${first} of ${records} first updates within ${CONNECT_LIMIT_MS / 1000} s`);
  await new Promise((r) => setTimeout(r, settle * 1000));
  const gc = { young: [0, 0], full: [0, 0] };
  const obs = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const k =
        e.detail.kind === constants.NODE_PERFORMANCE_GC_MINOR
          ? 'young'
          : e.detail.kind === constants.NODE_PERFORMANCE_GC_MAJOR
            ? 'full'
            : null;
      if (k) {
        gc[k][0]++;
        gc[k][1] += e.duration;
      }
    }
  });
  obs.observe({ entryTypes: ['gc'] });
  const t0 = threadCpuSeconds(process.pid);
  const io0 = ioCounts();
  const ioc0 = iocPid > 0 ? cpuSeconds(iocPid) : 0;
  const u0 = updates;
  const w0 = performance.now();
  await new Promise((r) => setTimeout(r, seconds * 1000));
  const s = (performance.now() - w0) / 1000;
  const n = updates - u0;
  const t1 = threadCpuSeconds(process.pid);
  const io1 = ioCounts();
  const ioc1 = iocPid > 0 ? cpuSeconds(iocPid) : 0;
  await new Promise((r) => setImmediate(r)); // the observer's last entries
  obs.disconnect();
  let main = 0;
  let other = 0;
  for (const [tid, t] of t1) {
    const d = t.seconds - (t0.get(tid)?.seconds ?? 0);
    if (tid === process.pid) main += d;
    else other += d;
  }
  const usPer = (cpu) => (cpu / n) * 1e6;
  console.log(
    JSON.stringify({
      updatesPerS: n / s,
      mainUs: usPer(main),
      otherUs: usPer(other),
      young: gc.young,
      full: gc.full,
      iocPct: iocPid > 0 ? ((ioc1 - ioc0) / s) * 100 : null,
      readsPerS: (io1.reads - io0.reads) / s,
      updatesPerRead: n / (io1.reads - io0.reads),
      switchesPerS: (io1.switches - io0.switches) / s,
    }),
  );
  process.exit(0);
}

/**
 * The process's read system calls (its sockets' reads: nothing else reads in the window) and its
 * main thread's context switches so far, from /proc (Linux).
 */
function ioCounts() {
  const io = readFileSync('/proc/self/io', 'utf8');
  const status = readFileSync('/proc/self/status', 'utf8');
  const field = (text, name) => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(text)?.[1] ?? Number.NaN);
  return {
    reads: field(io, 'syscr'),
    switches: field(status, 'voluntary_ctxt_switches') + field(status, 'nonvoluntary_ctxt_switches'),
  };
}

function main(envFile, iocPid, records, seconds, settle, rounds, builds) {
  const self = fileURLToPath(import.meta.url);
  console.log(
    `${records.toLocaleString('en-US')} monitors in one Context; a ${seconds} s window from ${settle} s after the last first update, CA and PV Access in turn\n`,
  );
  console.log(
    '| protocol | build | updates/s | CPU µs per update | main thread µs | other threads µs | young collections (pauses ms) | full collections (pauses ms) | IOC CPU % | socket reads/s | updates per read | main thread switches/s |',
  );
  console.log('|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  const last = builds[builds.length - 1];
  const runs = [['ca', last], ...builds.map((b) => ['pva', b])];
  const totals = new Map(runs.map(([p, b]) => [`${p} ${b.label}`, []]));
  for (let r = 0; r < rounds; r++)
    for (const [protocol, build] of runs) {
      const args = [self, '--one', envFile, String(iocPid), String(records), String(seconds), String(settle), protocol, build.dist];
      const res = spawnSync(process.execPath, args, { encoding: 'utf8', maxBuffer: 1 << 24 });
      if (res.status !== 0) {
        console.log(`| ${protocol} | ${build.label} | failed: ${res.stderr.trim().split('\n').pop()} | | | | | | | | | |`);
        continue;
      }
      const x = JSON.parse(res.stdout.trim().split('\n').pop());
      totals.get(`${protocol} ${build.label}`).push(x.mainUs + x.otherUs);
      const gcCell = ([count, ms]) => `${count} (${ms.toFixed(0)})`;
      console.log(
        `| ${protocol} | ${build.label} | ${x.updatesPerS.toFixed(0)} | ${(x.mainUs + x.otherUs).toFixed(2)} | ${x.mainUs.toFixed(2)} | ${x.otherUs.toFixed(2)} | ${gcCell(x.young)} | ${gcCell(x.full)} | ${x.iocPct === null ? '-' : x.iocPct.toFixed(0)} | ${x.readsPerS.toFixed(0)} | ${x.updatesPerRead.toFixed(0)} | ${x.switchesPerS.toFixed(0)} |`,
      );
    }
  const med = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const ca = totals.get(`ca ${last.label}`);
  for (const b of builds) {
    const pva = totals.get(`pva ${b.label}`);
    if (ca.length && pva.length)
      console.log(`\nPV Access (${b.label}) / CA, medians of the CPU per update: ${(med(pva) / med(ca)).toFixed(2)}`);
  }
}

if (process.argv[2] === '--one') {
  const [, , , envFile, iocPid, records, seconds, settle, protocol, dist] = process.argv;
  await one(envFile, Number(iocPid), Number(records), Number(seconds), Number(settle), protocol, dist);
} else {
  const [envFile, pidArg, recordsArg = '100000', secondsArg = '20', settleArg = '5', roundsArg = '3', ...buildArgs] = process.argv.slice(2);
  const [iocPid, records, seconds, settle, rounds] = [pidArg, recordsArg, secondsArg, settleArg, roundsArg].map(Number);
  const builds = (buildArgs.length ? buildArgs : [`after=${resolve(HERE, '../packages/client/dist')}`]).map((a) => {
    const at = a.indexOf('=');
    return { label: a.slice(0, at), dist: resolve(a.slice(at + 1)) };
  });
  if (!envFile || !(iocPid >= 0) || !(records > 0) || !(seconds > 0) || !(settle >= 0) || !(rounds >= 1) || builds.some((b) => !b.label)) {
    console.error('usage: node benchmarks/pva-monitor-cpu.mjs ENV_FILE IOC_PID [RECORDS] [SECONDS] [SETTLE] [ROUNDS] [LABEL=DIST ...]');
    process.exit(2);
  }
  main(envFile, iocPid, records, seconds, settle, rounds, builds);
}
