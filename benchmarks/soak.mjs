// The long reconnection soak (packages/testkit/src/soak.ts, built into its dist/): monitors over CA and PVA
// while the built-in IOC is stopped and started again, and frozen and thawed, cycle after cycle.
// Prints a summary and writes benchmarks/results/soak.json (or --out).
//
//   npm run build -w epicsperf-testkit && node --expose-gc benchmarks/soak.mjs --cycles 100 --records 100
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, hostname } from 'node:os';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const here = dirname(fileURLToPath(import.meta.url));
const { values: a } = parseArgs({
  options: {
    cycles: { type: 'string', default: '100' },
    records: { type: 'string', default: '100' },
    rate: { type: 'string', default: '10' },
    'conn-timeout': { type: 'string', default: '1' },
    warmup: { type: 'string', default: '5' },
    out: { type: 'string', default: resolve(here, 'results/soak.json') },
    quiet: { type: 'boolean', default: false },
  },
});
if (typeof globalThis.gc !== 'function') {
  console.error('run with node --expose-gc: the heap is sampled after a full collection');
  process.exit(2);
}
const { runSoak } = await import('../packages/testkit/dist/soak.js');

const kb = (b) => `${(b / 1024).toFixed(2)} KB`;
const ms = (x) => `${Math.round(x)} ms`;
const t0 = Date.now();
const r = await runSoak({
  cycles: Number(a.cycles),
  records: Number(a.records),
  rate: Number(a.rate),
  connTimeout: Number(a['conn-timeout']),
  warmup: Number(a.warmup),
  gc: () => globalThis.gc(),
  onCycle: (c, i) => {
    if (a.quiet) return;
    const s = ((Date.now() - t0) / 1000).toFixed(0);
    console.error(
      `[${s}s] cycle ${i + 1}: restart back in ${ms(c.restart.resumeMaxMs)} (CA ${ms(c.restart.resumeMaxMsCa)}, PVA ${ms(c.restart.resumeMaxMsPva)}), snapshot ${ms(c.restart.snapshotMs)}` +
        ` (${c.restart.snapshotFailed}/${c.restart.snapshotNames} failed); frozen ${ms(c.freeze.frozenMs)}, back in` +
        ` ${ms(c.freeze.resumeMaxMs)}; heap ${kb(c.heapUsed)}, rss ${kb(c.rss)}, fds ${c.fds}, circuits ${c.circuits.join('+')}`,
    );
  },
});

const lines = [
  `cycles                 ${r.cycles.length} of ${r.cyclesAsked}${r.aborted ? ` (stopped: ${r.aborted})` : ''}`,
  `monitors               ${r.monitors.ca} CA + ${r.monitors.pva} PVA, conn timeout ${r.connTimeoutS} s`,
  `restart: back in       median ${ms(r.restart.resumeMedianMs)}, max ${ms(r.restart.resumeMaxMs)}` +
    ` (snapshot during the outage median ${ms(r.restart.snapshotMedianMs)}, max ${ms(r.restart.snapshotMaxMs)})`,
  `freeze: all down after median ${ms(r.freeze.downMedianMs)}; back in median ${ms(r.freeze.resumeMedianMs)}, max ${ms(r.freeze.resumeMaxMs)}`,
  `heap growth per cycle  ${Math.round(r.heapGrowthPerCycle)} B (fit over cycles ${r.warmup + 1}..${r.cycles.length}, after gc; of which code space ${Math.round(r.codeSpaceGrowthPerCycle)} B)`,
  `rss growth per cycle   ${Math.round(r.rssGrowthPerCycle)} B`,
  `fds                    first ${r.fds.first}, after warm-up ${r.fds.afterWarmup}, last ${r.fds.last}, max ${r.fds.max}`,
  `events out of order    ${r.violationCount} (error events ${r.errorEvents}); exceptions ${r.thrown.length}; outage snapshot successes ${r.snapshotSuccesses}`,
  `updates                ${r.updates}, duration ${r.durationS.toFixed(0)} s (${(r.durationS / Math.max(1, r.cycles.length)).toFixed(1)} s per cycle)`,
];
console.log(lines.join('\n'));
for (const v of r.violations.slice(0, 10)) console.log(`  out of order: ${v}`);
for (const t of r.thrown.slice(0, 5)) console.log(`  thrown: ${t}`);

mkdirSync(dirname(a.out), { recursive: true });
const command = `node ${process.execArgv.join(' ')} benchmarks/soak.mjs ${process.argv.slice(2).join(' ')}`.replace(/ +/g, ' ').trim();
writeFileSync(
  a.out,
  JSON.stringify(
    { date: new Date().toISOString(), host: hostname(), cores: cpus().length, command, node: process.version, ...r },
    null,
    2,
  ) + '\n',
);
console.error(`wrote ${a.out}`);
const ok = !r.aborted && r.violationCount === 0 && r.thrown.length === 0 && r.snapshotSuccesses === 0;
process.exitCode = ok ? 0 : 1;
