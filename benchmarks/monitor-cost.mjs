// The CPU a CA monitor of many counters costs this client, with the library's share apart from the
// benchmark runner's: fresh processes taken in turn, each monitoring PREFIX:CALC1..N for a
// measured window after a warm-up, in one of four modes:
//
//   library  the library alone: each update's callback counts it;
//   runner   what the node runner of `bench monitor` and `bench headroom` does per update (its
//            receive time, the sample store, the checks' status), on top of the library;
//   c-libca  the C runner on libca of `bench monitor`, keeping one sample a PV (its callback then
//            only checks that under its lock), measured from /proc over the same window;
//   build    like library, with another build of the library (a dist directory): an A/B.
//
//   npx epicsperf ioc --records 2000 --rate 50 --array-elements 0 --write-env /tmp/ioc.env &
//   node benchmarks/monitor-cost.mjs ENV_FILE [records] [processes] [seconds] [DIST_B]
//
// Without DIST_B the modes are library, runner and c-libca; with it, library, build and c-libca. Prints,
// per mode, the median over the processes of CPU % of a core, updates/s and CPU µs per update,
// with min-max.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadIocEnv } from './ioc-env.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const WARMUP_S = 2;

async function one(mode, envFile, records, seconds, dist) {
  loadIocEnv(envFile);
  const { Context } = await import(`${resolve(dist ?? resolve(HERE, '../packages/client/dist'))}/index.js`);
  const prefix = process.env.EPICSPERF_PREFIX ?? 'TEST:';
  const names = Array.from({ length: records }, (_, i) => `${prefix}CALC${i + 1}`);
  const ctx = new Context();
  let updates = 0;
  let onUpdate = () => updates++;
  if (mode === 'runner') {
    const { SampleStore } = await import(resolve(HERE, '../packages/epicsperf/dist/bench/samples.js'));
    const { nowSeconds } = await import(resolve(HERE, '../packages/epicsperf/dist/clock.js'));
    const { statusOf } = await import('epics-ops');
    // As the runner: the first samples of each PV kept (here 100), every update seen.
    const store = new SampleStore(records, 100);
    onUpdate = (i, e) => {
      updates++;
      const recv = nowSeconds();
      store.add(i, e.severity, statusOf(e), Number(e.value), e.posixSeconds, recv);
    };
  }
  const monitors = names.map((name, i) =>
    ctx.monitor(name, { type: 'double' }, (e) => {
      if (e.kind === 'update') onUpdate(i, e);
    }),
  );
  await new Promise((r) => setTimeout(r, WARMUP_S * 1000));
  const u0 = updates;
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  await new Promise((r) => setTimeout(r, seconds * 1000));
  const c = process.cpuUsage(c0);
  const wall = (performance.now() - t0) / 1000;
  const n = updates - u0;
  const cpu = (c.user + c.system) / 1e6;
  for (const m of monitors) m.close();
  await ctx.close();
  console.log(JSON.stringify({ cpuPercent: (100 * cpu) / wall, updatesPerSecond: n / wall, usPerUpdate: (1e6 * cpu) / n }));
}

// The C runner from outside, asked to keep one sample a PV: past that its callback takes its lock,
// sees it has its sample and returns, the C counterpart of a callback that counts. Its CPU comes
// from /proc over the same window, its updates from the bytes its TCP connections received there
// (`ss`: nothing else arrives, and an update of a DBR_TIME_DOUBLE is 40 bytes with its header).
const UPDATE_BYTES = 40;

function bytesReceived(pid) {
  const out = execFileSync('ss', ['-tinpH'], { encoding: 'utf8' }).split('\n');
  let n = 0;
  for (let i = 0; i + 1 < out.length; i++)
    if (out[i].includes(`pid=${pid},`)) n += Number(/bytes_received:(\d+)/.exec(out[i + 1])?.[1] ?? 0);
  return n;
}

async function libca(envFile, records, seconds) {
  loadIocEnv(envFile);
  const lib = resolve(HERE, '../packages/epicsperf/dist');
  const { buildCRunner } = await import(`${lib}/toolchains/clib.js`);
  const { ensurePythonEnv } = await import(`${lib}/pyenv/index.js`);
  const { cpuSeconds } = await import(`${lib}/procstat.js`);
  const built = await buildCRunner(await ensurePythonEnv());
  if ('error' in built) throw new Error(built.error);
  const prefix = process.env.EPICSPERF_PREFIX ?? 'TEST:';
  const dir = mkdtempSync(join(tmpdir(), 'monitor-cost-'));
  const names = join(dir, 'names');
  writeFileSync(names, Array.from({ length: records }, (_, i) => `${prefix}CALC${i + 1}\n`).join(''));
  const child = spawn(built.path, ['monitor', '--names', names, '--samples', '1'], { stdio: ['pipe', 'ignore', 'inherit', 'pipe'] });
  child.stdio[3].resume(); // its events
  try {
    child.stdin.write('start\n');
    await new Promise((r) => setTimeout(r, WARMUP_S * 1000));
    if (child.exitCode !== null) throw new Error(`the C runner exited with ${child.exitCode}`);
    const c0 = cpuSeconds(child.pid);
    const b0 = bytesReceived(child.pid);
    const t0 = performance.now();
    await new Promise((r) => setTimeout(r, seconds * 1000));
    const cpu = cpuSeconds(child.pid) - c0;
    const n = (bytesReceived(child.pid) - b0) / UPDATE_BYTES;
    const wall = (performance.now() - t0) / 1000;
    console.log(JSON.stringify({ cpuPercent: (100 * cpu) / wall, updatesPerSecond: n / wall, usPerUpdate: (1e6 * cpu) / n }));
  } finally {
    child.kill();
    rmSync(dir, { recursive: true, force: true });
  }
}

function main(envFile, records, processes, seconds, distB) {
  const self = fileURLToPath(import.meta.url);
  const modes = distB ? ['library', 'build', 'c-libca'] : ['library', 'runner', 'c-libca'];
  const rows = Object.fromEntries(modes.map((m) => [m, []]));
  for (let i = 0; i < processes; i++) {
    for (const mode of modes) {
      const args = [self, '--one', mode, envFile, String(records), String(seconds), ...(mode === 'build' ? [distB] : [])];
      const r = spawnSync(process.execPath, args, { encoding: 'utf8' });
      try {
        rows[mode].push(JSON.parse(r.stdout.trim().split('\n').pop()));
      } catch {
        console.error(`a ${mode} run failed: ${r.stderr.trim().split('\n').slice(-3).join(' | ')}`);
      }
    }
  }
  const med = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const cell = (xs, d) => `${med(xs).toFixed(d)} (${Math.min(...xs).toFixed(d)}-${Math.max(...xs).toFixed(d)})`;
  const commit = (dir) => spawnSync('git', ['-C', dir, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).stdout.trim() || '?';
  const builds = distB ? `; library: this checkout (${commit(HERE)}), build: ${distB} (${commit(distB)})` : '';
  console.log(`${records} monitors, ${processes} processes of each mode in turn, ${seconds} s measured after ${WARMUP_S} s${builds}\n`);
  console.log('| mode | CPU % of a core | updates/s | CPU µs per update |');
  console.log('|---|---:|---:|---:|');
  for (const m of modes) {
    const r = rows[m];
    console.log(
      `| ${m} | ${cell(
        r.map((x) => x.cpuPercent),
        2,
      )} | ${cell(
        r.map((x) => x.updatesPerSecond),
        0,
      )} | ${cell(
        r.map((x) => x.usPerUpdate),
        3,
      )} |`,
    );
  }
}

if (process.argv[2] === '--one' && process.argv[3] === 'c-libca')
  await libca(process.argv[4], Number(process.argv[5]), Number(process.argv[6]));
else if (process.argv[2] === '--one')
  await one(process.argv[3], process.argv[4], Number(process.argv[5]), Number(process.argv[6]), process.argv[7]);
else {
  const [envFile, records = '2000', processes = '5', seconds = '8', distB] = process.argv.slice(2);
  if (!envFile) {
    console.error('usage: node benchmarks/monitor-cost.mjs ENV_FILE [RECORDS] [PROCESSES] [SECONDS] [DIST_B]');
    process.exit(2);
  }
  main(envFile, Number(records), Number(processes), Number(seconds), distB);
}
