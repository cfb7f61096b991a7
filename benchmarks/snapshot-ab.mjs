// Two builds of the library side by side on the snapshot of 10,000 names + 95 missing, over PV
// Access (default) or CA, alternating run by run against one IOC: names answered within 1 s, the
// time until all 10,000 were answered (with a 5 s timeout), the client's CPU, and the CPU of the
// IOC's server threads for the protocol (QSRV's PVXTCP, RSRV's CAS-client).
//
//   npx epicsperf ioc --records 10000 --rate 1 --array-elements 0 --write-env /tmp/ioc.env &
//   node benchmarks/snapshot-ab.mjs /tmp/ioc.env <IOC python pid> <dist A> <dist B> [rounds] [pva|ca]
// (a dist directory must sit under this checkout's node_modules/ or beside dist/ to find its packages)
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { loadIocEnv } from './ioc-env.mjs';

const [envFile, iocPid, distA, distB, roundsArg, protocolArg = 'pva'] = process.argv.slice(2);
/** The IOC's server thread of each protocol (its CPU is reported). */
const SERVER_THREAD = { pva: 'PVXTCP', ca: 'CAS-client' };
if (process.argv[2] === '--one') await one(process.argv[3], process.argv[4], process.argv[5], Number(process.argv[6]), process.argv[7]);
else if (!distB || !(protocolArg in SERVER_THREAD)) {
  console.error('usage: node benchmarks/snapshot-ab.mjs ENV_FILE IOC_PID DIST_A DIST_B [ROUNDS] [pva|ca]');
  process.exit(2);
} else main();

/** CPU seconds of the IOC's threads by name (PVXTCP, PVXUDP, ...). */
function threadCpu(pid) {
  const out = {};
  for (const t of readdirSync(`/proc/${pid}/task`)) {
    try {
      const st = readFileSync(`/proc/${pid}/task/${t}/stat`, 'utf8');
      const name = st.slice(st.indexOf('(') + 1, st.lastIndexOf(')'));
      const f = st.slice(st.lastIndexOf(')') + 2).split(' ');
      out[name] = (out[name] ?? 0) + (Number(f[11]) + Number(f[12])) / 100;
    } catch {
      // the thread ended
    }
  }
  return out;
}

/** One snapshot in this process (a child of main): prints one JSON line. */
async function one(dist, env, pid, timeout, protocol) {
  loadIocEnv(env);
  const { Context } = await import(`${dist}/index.js`);
  const names = Array.from({ length: 10000 }, (_, i) => `${protocol}://TEST:CALC${i + 1}`);
  for (let k = 0; k < 95; k++) names.splice(Math.floor(((k + 1) * names.length) / 96), 0, `${protocol}://TEST:MISSING${k + 1}`);
  const ctx = new Context();
  const k0 = threadCpu(pid);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const res = await ctx.snapshot(names, { timeout });
  const wall = performance.now() - t0;
  const k1 = threadCpu(pid); // before the channels are destroyed
  const cpu = process.cpuUsage(cpu0);
  let last = 0;
  for (const r of res) if (r.ok && r.elapsedMs > last) last = r.elapsedMs;
  const thread = SERVER_THREAD[protocol];
  const tcp = (k1[thread] ?? 0) - (k0[thread] ?? 0);
  console.log(JSON.stringify({ ok: res.filter((r) => r.ok).length, wall, last, cpu: (cpu.user + cpu.system) / 1e6, tcp }));
  ctx.close();
}

function main() {
  const rounds = Number(roundsArg ?? 5);
  const self = fileURLToPath(import.meta.url);
  const rows = { A: { 1000: [], 5000: [] }, B: { 1000: [], 5000: [] } };
  for (let i = 0; i < rounds; i++) {
    for (const timeout of [1000, 5000]) {
      for (const [k, dist] of [
        ['A', distA],
        ['B', distB],
      ]) {
        const r = spawnSync(process.execPath, [self, '--one', dist, envFile, iocPid, String(timeout), protocolArg], { encoding: 'utf8' });
        const line = r.stdout.trim().split('\n').pop();
        try {
          rows[k][timeout].push(JSON.parse(line));
        } catch {
          console.error(`run ${k} failed: ${r.stderr.trim().split('\n').pop()}`);
        }
      }
    }
  }
  const med = (xs) => {
    const s = [...xs].sort((a, b) => a - b);
    return s.length ? s[Math.floor((s.length - 1) / 2)] : NaN;
  };
  const fmt = (xs, d = 0) => `${med(xs).toFixed(d)} (${Math.min(...xs).toFixed(d)}-${Math.max(...xs).toFixed(d)})`;
  for (const k of ['A', 'B']) {
    const a = rows[k][1000],
      b = rows[k][5000];
    console.log(
      `${k}: 1 s timeout: answered ${fmt(a.map((r) => r.ok))}, wall ms ${fmt(a.map((r) => r.wall))} | ` +
        `all 10,000 answered after ms ${fmt(b.map((r) => r.last))}, client CPU s ${fmt(
          b.map((r) => r.cpu),
          2,
        )}, ${SERVER_THREAD[protocolArg]} thread CPU s ${fmt(
          b.map((r) => r.tcp),
          2,
        )}`,
    );
  }
}
