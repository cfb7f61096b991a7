// What a PV Access monitor's pipelining window and the server's queue do to a 10M-element array at
// the IOC's top rate: monitors of pva://PREFIX:ARRAY (as the node-pva runner opens it) with each
// setting in turn, ROUNDS rounds of SECONDS each, alternating: the updates a second this client
// got, the updates a second the IOC made (from the arrays' counter), and the IOC's CPU. A setting
// is W (pipelineSize W, the server's queue left to the client's default), W/Q (pipelineSize W,
// record[queueSize=Q] in the pvRequest) or 0 (not pipelined). QSRV keeps up to Q updates per
// monitor, each a copy of the array.
//
//   npx epicsperf ioc --records 1 --array-elements 10000000 --array-type int64 --array-rate max --write-env /tmp/ioc.env &
//   node benchmarks/pva-array-window.mjs /tmp/ioc.env [rounds] [seconds] [settings, default 16,16/16,2,0]
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadIocEnv } from './ioc-env.mjs';

const [envFile, rounds = '3', seconds = '8', sizesArg = '16,16/16,2,0'] = process.argv.slice(2);
if (!envFile) {
  console.error('usage: node benchmarks/pva-array-window.mjs ENV_FILE [ROUNDS] [SECONDS] [SETTINGS]');
  process.exit(2);
}
loadIocEnv(envFile);
const { Context } = await import(resolve(dirname(fileURLToPath(import.meta.url)), '../packages/client/dist/index.js'));
const name = `${process.env.EPICSPERF_PREFIX ?? 'TEST:'}ARRAY`;
const iocPid = Number(execFileSync('pgrep', ['-f', 'epicsperf_runners.ioc'], { encoding: 'utf8' }).split('\n')[0]);
/** CPU seconds of a process so far (user and system). */
const cpuOf = (pid) => {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const rows = new Map();
for (let r = 0; r < Number(rounds); r++) {
  for (const size of sizesArg.split(',')) {
    const [window, queue] = size.split('/').map(Number);
    const request = `${queue ? `record[queueSize=${queue}]` : ''}field(value,alarm,timeStamp)`;
    const ctx = new Context({ protocol: 'pva' });
    let n = 0;
    let first, last, t0, t1, cpu0;
    const m = ctx.monitor(name, { request, reuseArrays: true, pipelineSize: window }, (e) => {
      if (e.kind === 'error') console.error(`${name}: ${e.error.message}`);
      if (e.kind !== 'update') return;
      const k = Number(e.value[0]);
      const now = performance.now();
      if (t0 === undefined) {
        t0 = now;
        first = k;
        cpu0 = cpuOf(iocPid);
      } else {
        n++;
        last = k;
        t1 = now;
      }
    });
    await sleep(Number(seconds) * 1000);
    const cpu1 = cpuOf(iocPid);
    m.close();
    ctx.close();
    const s = (t1 - t0) / 1000;
    if (!(s > 0)) throw new Error(`${name}: fewer than two updates in ${seconds} s`);
    const row = rows.get(size) ?? [];
    row.push({ got: n / s, made: (last - first) / s, cpu: (100 * (cpu1 - cpu0)) / s });
    rows.set(size, row);
    await sleep(1000);
  }
}
const f = (xs) => xs.map((x) => x.toFixed(1)).join(', ');
console.log('| pipelineSize / server queue | updates/s got | updates/s the IOC made | IOC CPU % |');
console.log('|---|---|---|---|');
for (const [size, row] of rows) {
  console.log(
    `| ${size === '0' ? 'not pipelined' : size} | ${f(row.map((x) => x.got))} | ${f(row.map((x) => x.made))} | ${row.map((x) => Math.round(x.cpu)).join(', ')} |`,
  );
}
process.exit(0);
