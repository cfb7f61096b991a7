// Many monitors in one Context, as a control-room display or an archiver opens them: this client
// monitors PREFIX:CALC1..N of a running IOC (all at once, in one turn), and reports how long until
// every one had its first update, the process's peak RSS over the run (sampled every 250 ms), its
// live heap after a full GC, and then, over a measured window, updates/s and CPU µs per update.
// Each build (a dist directory) and protocol runs in a fresh process, in turn.
//
//   npx epicsperf ioc --records 100000 --rate 1 --array-elements 0 --write-env /tmp/ioc.env &
//   node benchmarks/pva-monitors.mjs ENV_FILE [RECORDS] [SECONDS] [PROTOCOLS] [DIST ...]
//
// Defaults: 100000 records, a 10 s window, protocols pva (a comma-separated list of ca and pva),
// this checkout's packages/client/dist. Prints one Markdown row per build and protocol.
import { spawnSync } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadIocEnv } from './ioc-env.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
/** The longest wait for every first update. */
const CONNECT_LIMIT_MS = 180_000;

async function one(envFile, records, seconds, protocol, dist) {
  loadIocEnv(envFile);
  const { Context } = await import(`${dist}/index.js`);
  const prefix = process.env.EPICSPERF_PREFIX ?? 'TEST:';
  let peak = 0;
  const sample = () => (peak = Math.max(peak, process.memoryUsage.rss()));
  const sampler = setInterval(sample, 250);
  const ctx = new Context({ protocol });
  const seen = new Uint8Array(records);
  let first = 0;
  let updates = 0;
  const t0 = performance.now();
  let connectedMs;
  const all = new Promise((res) => {
    for (let i = 0; i < records; i++)
      ctx.monitor(`${prefix}CALC${i + 1}`, protocol === 'pva' ? { request: 'field(value,alarm,timeStamp)' } : {}, (e) => {
        if (e.kind !== 'update') return;
        updates++;
        if (!seen[i]) {
          seen[i] = 1;
          if (++first === records) {
            connectedMs = performance.now() - t0;
            res();
          }
        }
      });
  });
  await Promise.race([all, new Promise((r) => setTimeout(r, CONNECT_LIMIT_MS))]);
  const u0 = updates;
  const c0 = process.cpuUsage();
  const w0 = performance.now();
  await new Promise((r) => setTimeout(r, seconds * 1000));
  const s = (performance.now() - w0) / 1000;
  const cpu = process.cpuUsage(c0);
  const rate = (updates - u0) / s;
  sample();
  clearInterval(sampler);
  globalThis.gc();
  console.log(
    JSON.stringify({
      connectedS: connectedMs === undefined ? null : connectedMs / 1000,
      firstUpdates: first,
      peakRssMb: peak / 2 ** 20,
      liveHeapMb: process.memoryUsage().heapUsed / 2 ** 20,
      updatesPerS: rate,
      cpuUsPerUpdate: rate > 0 ? (cpu.user + cpu.system) / s / rate : null,
    }),
  );
  process.exit(0);
}

function main(envFile, records, seconds, protocols, dists) {
  const self = fileURLToPath(import.meta.url);
  console.log(
    `${records.toLocaleString('en-US')} monitors in one Context, opened at once; a ${seconds} s window after the last first update\n`,
  );
  console.log('| build | protocol | all first updates s | first updates | peak RSS MB | live heap MB | updates/s | CPU µs per update |');
  console.log('|---|---|---:|---:|---:|---:|---:|---:|');
  for (const protocol of protocols)
    for (const dist of dists) {
      const res = spawnSync(process.execPath, ['--expose-gc', self, '--one', envFile, String(records), String(seconds), protocol, dist], {
        encoding: 'utf8',
        maxBuffer: 1 << 24,
      });
      const commit = spawnSync('git', ['-C', dist, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).stdout.trim() || '?';
      if (res.status !== 0) {
        console.log(`| ${commit} | ${protocol} | failed: ${res.stderr.trim().split('\n').pop()} | | | | | |`);
        continue;
      }
      const r = JSON.parse(res.stdout.trim().split('\n').pop());
      const f = (x, d) => (x === null ? '-' : x.toFixed(d));
      console.log(
        `| ${commit} | ${protocol} | ${r.connectedS === null ? `not within ${CONNECT_LIMIT_MS / 1000}` : f(r.connectedS, 1)} | ${r.firstUpdates} | ${f(r.peakRssMb, 0)} | ${f(r.liveHeapMb, 0)} | ${f(r.updatesPerS, 0)} | ${f(r.cpuUsPerUpdate, 2)} |`,
      );
    }
}

if (process.argv[2] === '--one') {
  const [, , , envFile, records, seconds, protocol, dist] = process.argv;
  await one(envFile, Number(records), Number(seconds), protocol, dist);
} else {
  const [envFile, recordsArg = '100000', secondsArg = '10', protocolsArg = 'pva', ...dists] = process.argv.slice(2);
  const records = Number(recordsArg);
  const seconds = Number(secondsArg);
  const protocols = protocolsArg.split(',');
  if (!envFile || !(records > 0) || !(seconds > 0) || protocols.some((p) => p !== 'ca' && p !== 'pva')) {
    console.error('usage: node benchmarks/pva-monitors.mjs ENV_FILE [RECORDS] [SECONDS] [ca,pva] [DIST ...]');
    process.exit(2);
  }
  main(envFile, records, seconds, protocols, dists.length ? dists.map((d) => resolve(d)) : [resolve(HERE, '../packages/client/dist')]);
}
