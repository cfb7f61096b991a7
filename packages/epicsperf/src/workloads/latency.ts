// The latency workload: per array size, each client puts an array and waits for its own monitor
// update of it (round trip and one way), as the ADO bridge study did; its options are
// `epicsperf latency`'s too.
import { InvalidArgumentError, Option } from 'commander';
import { stealMeter } from '../procstat.js';
import { intArg, listArg } from '../options.js';
import { DEFAULT_LATENCY_SIZES, LATENCY_TYPES, runLatency, whyNoLatency } from '../bench/latency.js';
import { latencyOutcome } from '../report/outcomes.js';
import { figure, plural } from '../report/figures.js';
import { stealNote } from '../report/bench.js';
import { latencyChart } from '../report/charts.js';
import { latencyTables, latencyTitle } from '../report/latency.js';
import type { LatencyRun, LatencyWorkload } from '../results/index.js';
import { type BenchWorkload, type ProfileName, serving, value, byProfile, profileOption } from './workload.js';

/** Largest latency array: the IOC's target records are this long, CA's array limit follows. */
export const MAX_LATENCY_ELEMENTS = 10_000_000;

export function parseSizes(v: string): number[] {
  const sizes = listArg(v).map(Number);
  if (sizes.length === 0) throw new InvalidArgumentError('give at least one size');
  for (const s of sizes) {
    if (!Number.isInteger(s) || s < 1 || s > MAX_LATENCY_ELEMENTS)
      throw new InvalidArgumentError(`sizes are whole numbers from 1 to ${MAX_LATENCY_ELEMENTS}, got ${s}`);
  }
  if (new Set(sizes).size !== sizes.length) throw new InvalidArgumentError('a size is listed twice');
  return sizes;
}

export const sizesOption = (flag = '--sizes'): Option =>
  new Option(`${flag} <list>`, 'latency: array sizes in elements, comma-separated')
    .argParser(parseSizes)
    .default(DEFAULT_LATENCY_SIZES, DEFAULT_LATENCY_SIZES.join(','));
export const latencyTypeOption = (flag = '--type'): Option =>
  new Option(`${flag} <type>`, 'latency: element type, double or char (byte arrays)').choices([...LATENCY_TYPES]).default('double');
export const countOption = (flag = '--count'): Option =>
  new Option(`${flag} <n>`, 'latency: rounds per size (after 3 that are not kept)').argParser(intArg(1, 100_000)).default(200);

/** Each profile's latency: three sizes five decades apart (the fixed cost, the middle and the
 *  bandwidth), or the ADO bridge study's range, a decade apart. */
export const LATENCY_DEFAULTS: Record<ProfileName, LatencyWorkload> = {
  quick: { sizes: [1, 1000, 100_000], elementType: 'double', samplesPerSize: 50 },
  full: { sizes: DEFAULT_LATENCY_SIZES, elementType: 'double', samplesPerSize: 200 },
};

export const latency: BenchWorkload = {
  name: 'latency',
  serves: 'latency',
  rowPerClient: true,
  ramp: false,
  inAll: { quick: true, full: false },
  options: [
    profileOption(
      sizesOption('--latency-sizes'),
      byProfile(LATENCY_DEFAULTS, (d) => d.sizes.join(',')),
    ),
    profileOption(latencyTypeOption('--latency-type'), 'double'),
    profileOption(
      countOption('--latency-count'),
      byProfile(LATENCY_DEFAULTS, (d) => d.samplesPerSize),
    ),
  ],
  ask: (o, profile) => {
    const d = LATENCY_DEFAULTS[profile];
    return {
      latency: {
        sizes: value<number[]>(o, 'latencySizes') ?? d.sizes,
        elementType: value<string>(o, 'latencyType') ?? d.elementType,
        samplesPerSize: value<number>(o, 'latencyCount') ?? d.samplesPerSize,
      },
    };
  },
  steps: (w, ready, repeat) => (w.latency ? repeat * serving(ready, 'latency').length : 0),
  async run(ws, ctx, results) {
    const w = ws.latency;
    if (!w) return;
    // It asks for no time of its own: it goes as fast as the client does.
    const deadline = ctx.deadline(0);
    // Every client asked for has a row: those that cannot run it say why.
    const cannot: LatencyRun[] = ctx.ready
      .filter((c) => !c.tasks.includes('latency'))
      .map((c) => ({ client: c.name, ok: false, unsupported: true, error: whyNoLatency(c), points: [] }));
    const ioc = await ctx.placement.startIoc({ records: 1, rate: 0, arrayElements: 0, latencyElements: Math.max(...w.sizes) });
    const runs: LatencyRun[] = [];
    const steal = stealMeter();
    try {
      for (let rep = 1; rep <= ctx.repeat; rep++) {
        for (const client of serving(ctx.ready, 'latency')) {
          const body = () =>
            runLatency({
              client,
              python: ctx.python,
              env: ioc.env,
              prefix: ioc.prefix,
              workload: w,
              onProgress: ctx.progress,
              ...deadline,
              ...ctx.placement.runOn(client.name),
            });
          runs.push(await ctx.steps.run(`latency ${plural(w.sizes.length, 'size')}`, client.name, rep, ctx.repeat, body, latencyOutcome));
        }
      }
    } finally {
      await ioc.stop();
    }
    results.latency = { workload: w, runs: [...runs, ...cannot], stealPercent: steal() };
  },
  // The main figure is the median round trip at the largest payload every client tried.
  figures: (r) => {
    const l = r.latency;
    if (!l) return [];
    const largest = Math.max(...l.workload.sizes);
    // Clients that cannot put have a row in the tables, not a place among the results.
    const runs = l.runs.filter((x) => !x.unsupported);
    if (runs.length === 0) return [];
    return [
      {
        key: 'latency',
        title: latencyTitle(l.workload),
        figure: `median round trip at ${largest.toLocaleString('en-US')} elements`,
        unit: 'ms',
        better: 'lower' as const,
        stealPercent: l.stealPercent,
        clients: figure<LatencyRun>(
          runs,
          (x) => x.points.find((p) => p.elements === largest && p.ok)?.p50Ms,
          (x) => {
            const bad = x.points.filter((p) => !p.ok);
            const missing = l.workload.sizes.filter((n) => !x.points.some((p) => p.elements === n));
            return [
              ...bad.map((p) => `${p.elements.toLocaleString('en-US')} elements: ${p.error ?? 'failed'}`),
              ...(missing.length && !x.error ? [`no result at ${missing.map((n) => n.toLocaleString('en-US')).join(', ')} elements`] : []),
            ];
          },
        ),
      },
    ];
  },
  text: (r, markdown) =>
    r.latency
      ? `\n${latencyTitle(r.latency.workload)}${stealNote(r.latency.stealPercent)}\n\n${latencyTables(r.latency.runs, markdown)}`
      : '',
  // Its tables (per size, and the fixed cost and MB/s fitted through the sizes) are its findings
  // beside the chart of round trip against payload size.
  html: async (r) =>
    r.latency
      ? {
          charts: [{ cls: 'latency', caption: 'round trip against payload size', svg: await latencyChart(r.latency.runs) }],
          details: { text: latencyTables(r.latency.runs), open: 'latency' },
        }
      : {},
};
