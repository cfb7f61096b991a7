// The first seconds of a client's monitor run, second by second: its CPU (% of a core, from
// /proc/<pid>/task/*/stat) from `start` on, split by thread: the JVM's JIT compiler threads,
// its garbage collector threads, and the rest (the client library and the runner), then the
// collections the JVM made (the JDK's jstat). For the Java runners it shows what JIT compilation
// and garbage collection cost before the JVM settles, against the window the monitor workload
// measures (docs/method.md). Any client can be given (a C runner's threads count as "other").
//
//   npm run build && npx epicsperf setup
//   node benchmarks/jvm-warmup.mjs [clients] [seconds] [records] [rate]
//
// Defaults: java-corepva,java-caj, 30 s, 1,000 counters at 10 Hz. Each client is started fresh
// (JVM start-up included) on one built-in IOC, one after another; it subscribes to every counter
// and keeps every sample until the end (docs/runners.md), as in the monitor workload.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

const dist = join(dirname(fileURLToPath(import.meta.url)), '..', 'packages', 'epicsperf', 'dist');
const { LocalHost } = await import(join(dist, 'hosts', 'local-host.js'));
const { threadCpuSeconds } = await import(join(dist, 'procstat.js'));

const [clientList = 'java-corepva,java-caj', seconds = '30', records = '1000', rate = '10'] = process.argv.slice(2);
const clients = clientList.split(',');
/** CPU seconds per class of thread of a process: jit, gc, other. */
function threadCpu(pid) {
  const threads = threadCpuSeconds(pid);
  if (!threads) return undefined;
  const out = { jit: 0, gc: 0, other: 0 };
  // HotSpot's thread names: "C1 CompilerThre", "C2 CompilerThre"; "GC Thread#0", "G1 Main Marker",
  // "G1 Conc#0", "G1 Refine#0", "G1 Service" (G1, the default collector on 2 cores and 2 GB).
  for (const { name, seconds } of threads.values())
    out[/Compiler/.test(name) ? 'jit' : /^(GC |G1 )/.test(name) ? 'gc' : 'other'] += seconds;
  return out;
}

/** The JVM's collections so far (the JDK's jstat, when the process is a JVM): young and full, with their seconds. */
function collections(pid) {
  const r = spawnSync('jstat', ['-gc', String(pid)], { encoding: 'utf8' });
  const [head, values] = (r.stdout ?? '').trim().split('\n');
  if (r.status !== 0 || !values) return undefined;
  const row = Object.fromEntries(
    head
      .trim()
      .split(/\s+/)
      .map((k, i) => [k, Number(values.trim().split(/\s+/)[i])]),
  );
  return `${row.YGC} young collections (${(row.YGCT * 1000).toFixed(0)} ms), ${row.FGC} full, heap ${((row.EC + row.OC) / 1024).toFixed(0)} MB committed`;
}

const host = new LocalHost();
await host.prepare(clients, false);
const ioc = await host.startIoc({ records: Number(records), rate: Number(rate), arrayElements: 0 });
const rows = [];
try {
  for (const client of clients) {
    const samples = Math.ceil(Number(seconds) * Number(rate)) + 100; // more than the run receives
    const runner = host.startRunner({
      client,
      task: 'monitor',
      names: ioc.counterNames(),
      args: ['--samples', String(samples)],
      env: ioc.env,
    });
    await runner.next('ready', 60_000);
    let connectedAt;
    void runner.next('connected', (Number(seconds) + 30) * 1000).then(
      () => (connectedAt = performance.now()),
      () => {},
    );
    const t0 = performance.now();
    runner.send('start');
    let last = threadCpu(runner.pid);
    let lastT = t0;
    const perSecond = [];
    for (let i = 1; i <= Number(seconds); i++) {
      await new Promise((r) => setTimeout(r, t0 + i * 1000 - performance.now()));
      const now = threadCpu(runner.pid);
      const t = performance.now();
      if (!now || !last) break;
      const dt = (t - lastT) / 1000;
      const pct = (k) => ((now[k] - last[k]) / dt) * 100;
      perSecond.push({ s: i, jit: pct('jit'), gc: pct('gc'), other: pct('other') });
      last = now;
      lastT = t;
    }
    const gc = collections(runner.pid);
    await runner.kill();
    rows.push({ client, connectedS: connectedAt ? (connectedAt - t0) / 1000 : undefined, perSecond, gc });
  }
} finally {
  await ioc.stop();
}

const f = (x) => x.toFixed(1).padStart(6);
for (const r of rows) {
  console.log(`\n${r.client}: ${records} counters x ${rate} Hz, connected ${r.connectedS?.toFixed(2) ?? '?'} s after start`);
  console.log('second   total     JIT      GC   other  (% of a core)');
  for (const p of r.perSecond)
    console.log(`${String(p.s).padStart(6)}  ${f(p.jit + p.gc + p.other)}  ${f(p.jit)}  ${f(p.gc)}  ${f(p.other)}`);
  const mean = (from, to) => {
    const w = r.perSecond.filter((p) => p.s > from && p.s <= to);
    return w.reduce((a, p) => a + p.jit + p.gc + p.other, 0) / Math.max(w.length, 1);
  };
  const n = r.perSecond.length;
  // The monitor workload samples from 1 s after `connected` (about 1.2-1.4 s after start here) to
  // `complete`: about seconds 2-3 in the quick profile (30 samples at 10 Hz), 2-10 with --full (100).
  console.log(
    `mean: s1 ${mean(0, 1).toFixed(1)}  s2-3 (quick window) ${mean(1, 3).toFixed(1)}  s2-10 (--full window) ${mean(1, 10).toFixed(1)}  s11-${n} ${mean(10, n).toFixed(1)}`,
  );
  if (r.gc) console.log(`GC after ${n} s: ${r.gc}`);
}
