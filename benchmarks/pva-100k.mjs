// Who loses PV Access updates at 100,000 a second: this client monitors PREFIX:CALC1..N over PV
// Access for a measured window after a warm-up, and reports its updates/s, its CPU (% of a core)
// and its event loop's utilisation (busy with CPU to spare, or busy without getting it), the age
// of the updates at the start and the end of the window, the IOC's CPU over the same window, and
// the kernel's counters of the connection (ss -tmi on the IOC's end: what limited its sending).
//
//   npx epicsperf ioc --records 2000 --rate 50 --array-elements 0 --write-env /tmp/ioc.env &
//   node benchmarks/pva-100k.mjs /tmp/ioc.env <IOC python pid> [records] [seconds] [pvRequest]
//
// The pvRequest defaults to field(value,alarm,timeStamp), as the node-pva runner asks; e.g.
// record[queueSize=4]field(value,alarm,timeStamp) asks QSRV for a queue of 4 instead of 16.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadIocEnv } from './ioc-env.mjs';

const [envFile, iocPid, recordsArg = '2000', secondsArg = '10', request = 'field(value,alarm,timeStamp)'] = process.argv.slice(2);
if (!iocPid) {
  console.error('usage: node benchmarks/pva-100k.mjs ENV_FILE IOC_PID [RECORDS] [SECONDS] [PVREQUEST]');
  process.exit(2);
}
loadIocEnv(envFile);
const WARMUP_MS = 3000;
const records = Number(recordsArg);
const seconds = Number(secondsArg);
const { Context } = await import(resolve(dirname(fileURLToPath(import.meta.url)), '../packages/client/dist/index.js'));
const prefix = process.env.EPICSPERF_PREFIX ?? 'TEST:';

const ticks = () => {
  const f = readFileSync(`/proc/${iocPid}/stat`, 'utf8').split(') ')[1].split(' ');
  return Number(f[11]) + Number(f[12]);
};
const ages = [];
let updates = 0;
const ctx = new Context({ protocol: 'pva' });
const monitors = Array.from({ length: records }, (_, i) =>
  ctx.monitor(`${prefix}CALC${i + 1}`, { request }, (e) => {
    if (e.kind !== 'update') return;
    if (++updates % 1000 === 0) ages.push(Date.now() / 1000 - e.posixSeconds);
  }),
);
await new Promise((r) => setTimeout(r, WARMUP_MS));
const start = {
  updates,
  ages: ages.length,
  cpu: process.cpuUsage(),
  elu: performance.eventLoopUtilization(),
  ioc: ticks(),
  t: performance.now(),
};
await new Promise((r) => setTimeout(r, seconds * 1000));
const s = (performance.now() - start.t) / 1000;
const cpu = process.cpuUsage(start.cpu);
const port = process.env.EPICS_PVA_SERVER_PORT;
const ss = spawnSync('ss', ['-tmi', 'state', 'established', `( sport = :${port} )`], { encoding: 'utf8' }).stdout;
const pick = (re) => ss.match(re)?.[1];
const window = ages.slice(start.ages);
const ms = (xs) => xs.map((x) => Math.round(x * 1000));
console.log(
  JSON.stringify({
    records,
    seconds,
    request,
    updatesPerSecond: Math.round((updates - start.updates) / s),
    clientCpuPercent: +((cpu.user + cpu.system) / 1e4 / s).toFixed(1),
    eventLoopUtilisation: +performance.eventLoopUtilization(start.elu).utilization.toFixed(2),
    iocCpuPercent: Math.round(((ticks() - start.ioc) / 100 / s) * 100),
    updateAgeMsFirst: ms(window.slice(0, 3)),
    updateAgeMsLast: ms(window.slice(-3)),
    iocSocket: { busy: pick(/busy:(\S+)/), rwndLimited: pick(/rwnd_limited:(\S+)/), sndbufLimited: pick(/sndbuf_limited:(\S+)/) },
  }),
);
for (const m of monitors) m.close();
await ctx.close();
