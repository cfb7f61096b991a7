// What ca-update-path.mjs and pva-update-path.mjs share: the command line, and each build (a dist
// directory, or LABEL=DIR) measured in fresh processes, in turn, at each MB of memory read between
// bursts; the median ns per update of each, and the bytes its updates allocated, as a Markdown
// table.
import { spawnSync } from 'node:child_process';
import v8 from 'node:v8';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));
/** Processes of each build (ROUNDS in the environment; default 3). */
const ROUNDS = Number(process.env.ROUNDS) || 3;

/**
 * The script `script` (an import.meta.url) as its own command: with `--one DIST MB BURSTS` it
 * runs `one(dist, mb, bursts)`, which prints `{"ns": ..., "bytes": ...}` per update (measureBursts);
 * otherwise it measures the builds of its command line, `title` heading the table.
 */
export async function updatePathMain(script, title, one) {
  const [, , first, ...rest] = process.argv;
  if (first === '--one') return one(rest[0], Number(rest[1]), Number(rest[2]));
  const [mbArg = '0,16', burstsArg = '1500', ...dists] = process.argv.slice(2);
  const mbs = mbArg.split(',').map(Number);
  const bursts = Number(burstsArg);
  const self = fileURLToPath(script);
  if (mbs.some((x) => !Number.isFinite(x) || x < 0) || !(bursts > 0)) {
    console.error(`usage: node benchmarks/${self.split('/').pop()} [MB,...] [BURSTS] [DIST ...]`);
    process.exit(2);
  }
  const named = dists.map((d) => /^([\w.-]+)=(.+)$/.exec(d));
  const builds = dists.length ? dists.map((d, i) => resolve(named[i] ? named[i][2] : d)) : [resolve(HERE, '../packages/client/dist')];
  const rows = builds.map(() => mbs.map(() => []));
  const bytes = builds.map(() => []);
  for (let r = 0; r < ROUNDS; r++)
    for (let m = 0; m < mbs.length; m++)
      for (let d = 0; d < builds.length; d++) {
        const res = spawnSync(process.execPath, [self, '--one', builds[d], String(mbs[m]), String(bursts)], { encoding: 'utf8' });
        if (res.status !== 0) {
          console.error(`${builds[d]}: ${res.stderr.trim().split('\n').slice(-3).join(' | ')}`);
          process.exit(1);
        }
        const out = JSON.parse(res.stdout.trim().split('\n').pop());
        rows[d][m].push(out.ns);
        bytes[d].push(out.bytes);
      }
  const med = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  console.log(`${title(bursts)}, ${ROUNDS} processes of each build in turn\n`);
  console.log(`| build | ${mbs.map((mb) => `ns per update, ${mb} MB read between bursts`).join(' | ')} | bytes allocated per update |`);
  console.log(`|---|${mbs.map(() => '---:').join('|')}|---:|`);
  for (let d = 0; d < builds.length; d++) {
    const label =
      named[d]?.[1] ?? (spawnSync('git', ['-C', builds[d], 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).stdout.trim() || '?');
    const cells = rows[d].map((xs) => `${med(xs).toFixed(0)} (${Math.min(...xs).toFixed(0)}-${Math.max(...xs).toFixed(0)})`);
    console.log(`| ${label} | ${cells.join(' | ')} | ${med(bytes[d]).toFixed(0)} |`);
  }
}

/**
 * `bursts` bursts, `evict()` before each: the ns `feed()` took in all, and the bytes allocated
 * over the bursts.
 */
export function measureBursts(bursts, evict, feed) {
  let ns = 0n;
  const bytes = allocatedDuring(() => {
    for (let i = 0; i < bursts; i++) {
      evict();
      const t = process.hrtime.bigint();
      feed();
      ns += process.hrtime.bigint() - t;
    }
  });
  return { ns: Number(ns), bytes };
}

/**
 * The bytes the JavaScript heap allocated while `fn` ran: the heap's growth plus what each
 * collection during it freed (V8's GCProfiler reports the heap before and after each).
 */
function allocatedDuring(fn) {
  const profiler = new v8.GCProfiler();
  const before = v8.getHeapStatistics().used_heap_size;
  profiler.start();
  fn();
  const after = v8.getHeapStatistics().used_heap_size;
  let freed = 0;
  for (const gc of profiler.stop().statistics) freed += gc.beforeGC.heapStatistics.usedHeapSize - gc.afterGC.heapStatistics.usedHeapSize;
  return after - before + freed;
}
