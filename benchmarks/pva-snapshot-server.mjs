// Where a PV Access snapshot of 10,000 + 95 names spends its second: the built-in IOC as the
// snapshot workload starts it (10,000 counters at 1 Hz), this client reading every name with a
// 1 s timeout in a fresh process, twice per IOC (the first read of a freshly started IOC, then a
// second), and the CPU time of the IOC's PV Access TCP thread (pvxs's one thread that does every
// connection's creates, INITs and GETs: PVXTCP) over each read, from /proc.
//
//   node benchmarks/pva-snapshot-server.mjs [iocs]      (default 5; records benchmarks/results/ via pva-snapshot-server.sh)
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const RECORDS = 10_000;
const MISSING = 95;
const TIMEOUT_MS = 1000;

async function one() {
  const { Context } = await import('epics-client');
  const prefix = process.env.EPICSPERF_PREFIX ?? 'TEST:';
  const names = Array.from({ length: RECORDS }, (_, i) => `${prefix}CALC${i + 1}`);
  for (let i = 1; i <= MISSING; i++) names.push(`${prefix}NOSUCH${i}`);
  const ctx = new Context({ protocol: 'pva' });
  const t0 = performance.now();
  const res = await ctx.snapshot(names, { timeout: TIMEOUT_MS });
  const wall = performance.now() - t0;
  const ok = res.filter((r) => r.ok);
  console.log(JSON.stringify({ answered: ok.length, lastMs: Math.max(...ok.map((r) => r.elapsedMs)), wallMs: wall }));
  ctx.close();
}

/** CPU ms (user + system) of the thread of `pid` named `comm`. */
function threadCpuMs(pid, comm) {
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    if (readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim() !== comm) continue;
    const f = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8').split(') ')[1].split(' ');
    return ((Number(f[11]) + Number(f[12])) * 1000) / 100; // utime, stime in clock ticks of 10 ms
  }
  throw new Error(`no thread ${comm} in process ${pid}`);
}

async function main(iocs) {
  const dist = new URL('../packages/epicsperf/dist/ioc/index.js', import.meta.url);
  const { startIoc } = await import(dist.href);
  const self = fileURLToPath(import.meta.url);
  const rows = [[], []];
  for (let k = 0; k < iocs; k++) {
    const ioc = await startIoc({ records: RECORDS, rate: 1, arrayElements: 0 });
    try {
      for (const read of [0, 1]) {
        const before = threadCpuMs(ioc.pid, 'PVXTCP');
        const r = spawnSync(process.execPath, [self, '--one'], { encoding: 'utf8', env: { ...process.env, ...ioc.env } });
        const tcpMs = threadCpuMs(ioc.pid, 'PVXTCP') - before;
        try {
          rows[read].push({ ...JSON.parse(r.stdout.trim().split('\n').pop()), tcpMs });
        } catch {
          console.error(`a read failed: ${r.stderr.split('\n').find((l) => /Error/.test(l)) ?? r.stderr.trim()}`);
        }
      }
    } finally {
      await ioc.stop();
    }
  }
  const med = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const cell = (xs, d = 0) => `${med(xs).toFixed(d)} (${Math.min(...xs).toFixed(d)}-${Math.max(...xs).toFixed(d)})`;
  console.log(
    `A PV Access snapshot of ${RECORDS} + ${MISSING} names, timeout ${TIMEOUT_MS} ms, twice on each of ${iocs} freshly started IOCs\n`,
  );
  console.log('| read of the IOC | names answered | last answer ms | IOC PVXTCP thread CPU ms | of it per name µs |');
  console.log('|---|---:|---:|---:|---:|');
  for (const [i, rs] of rows.entries()) {
    if (rs.length === 0) continue;
    const per = rs.map((r) => (r.tcpMs * 1000) / RECORDS);
    console.log(
      `| ${i === 0 ? 'first' : 'second'} | ${cell(rs.map((r) => r.answered))} | ${cell(rs.map((r) => r.lastMs))} | ${cell(rs.map((r) => r.tcpMs))} | ${cell(per)} |`,
    );
  }
}

if (process.argv[2] === '--one') await one();
else await main(Number(process.argv[2] ?? 5));
