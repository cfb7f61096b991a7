// The crossing workload (`bench crossing`): the time from a server app's post to a client's
// callback, for each server runner (src/servers/) and protocol it serves, a double and arrays of
// rising size, read by a reference client per protocol (c-libca over CA, c-pvxs over PVA, or
// those of --clients); bench/crossing.ts measures one server and protocol.
import { Option } from 'commander';
import { CROSSING_PREFIX, runCrossing } from '../bench/crossing.js';
import { IOC_SERVER } from '../bench/counting.js';
import { UsageError } from '../errors.js';
import { intArg } from '../options.js';
import { stealMeter } from '../procstat.js';
import { stealNote } from '../report/bench.js';
import { crossingOutcome, crossingTables, crossingTitle } from '../report/crossing.js';
import { serverFigure } from '../report/figures.js';
import type { CrossingRun, CrossingWorkload } from '../results/index.js';
import { SERVER_NAMES, findServer, startServer, type RunningServer } from '../servers/index.js';
import { referenceClients, referenceFor, servesAll, serversOption } from './servers.js';
import { type BenchWorkload, type ProfileName, byProfile, profileOption, value } from './workload.js';
import { parseSizes } from './latency.js';

/** The tasks a reference client of the crossing runs: the double's monitor, the arrays' array. */
const TASKS = ['monitor', 'array'] as const;

/** Each profile's crossing: a double and the study's smallest and largest int arrays, or its range. */
export const CROSSING_DEFAULTS: Record<ProfileName, CrossingWorkload> = {
  // This project's server, the built-in IOC's servers and the C++ reference: the quick run's time
  // stays the main job's.
  quick: { servers: ['node', 'softioc', 'pvxs'], int32Sizes: [12, 250_000], byteSizes: [], count: 20, periodMs: 20, roundTripSizes: [1] },
  full: {
    servers: SERVER_NAMES,
    int32Sizes: [12, 120, 1200, 12_000, 120_000, 250_000],
    byteSizes: [1000, 10_000, 100_000, 1_000_000],
    count: 100,
    periodMs: 20,
    roundTripSizes: [1, 1000, 100_000],
  },
};

/** The sizes of a list that may be empty ("" for none). */
const optionalSizes = (v: string): number[] => (v.trim() === '' ? [] : parseSizes(v));

export const crossing: BenchWorkload = {
  name: 'crossing',
  ramp: false,
  inAll: { quick: true, full: true },
  options: [
    serversOption,
    profileOption(
      new Option('--crossing-int32 <list>', 'crossing: int32 array sizes, elements').argParser(parseSizes),
      byProfile(CROSSING_DEFAULTS, (d) => d.int32Sizes.join(',')),
    ),
    profileOption(
      new Option('--crossing-bytes <list>', 'crossing: byte array sizes, elements ("" for none)').argParser(optionalSizes),
      byProfile(CROSSING_DEFAULTS, (d) => d.byteSizes.join(',') || 'none'),
    ),
    profileOption(
      new Option(
        '--crossing-roundtrip <list>',
        'crossing: sizes (doubles) of the round trip through the app\'s put handler ("" for none)',
      ).argParser(optionalSizes),
      byProfile(CROSSING_DEFAULTS, (d) => d.roundTripSizes?.join(',') || 'none'),
    ),
    profileOption(
      new Option('--crossing-count <n>', 'crossing: posts per payload').argParser(intArg(1, 127)),
      byProfile(CROSSING_DEFAULTS, (d) => d.count),
    ),
    profileOption(
      new Option('--crossing-period <ms>', 'crossing: time between two posts, ms').argParser(intArg(1, 10_000)),
      byProfile(CROSSING_DEFAULTS, (d) => d.periodMs),
    ),
  ],
  ask: (o, profile) => {
    const d = CROSSING_DEFAULTS[profile];
    return {
      crossing: {
        servers: value<string[]>(o, 'servers') ?? d.servers,
        int32Sizes: value<number[]>(o, 'crossingInt32') ?? d.int32Sizes,
        byteSizes: value<number[]>(o, 'crossingBytes') ?? d.byteSizes,
        count: value<number>(o, 'crossingCount') ?? d.count,
        periodMs: value<number>(o, 'crossingPeriod') ?? d.periodMs,
        roundTripSizes: value<number[]>(o, 'crossingRoundtrip') ?? d.roundTripSizes ?? [],
      },
    };
  },
  clients: (list) => referenceClients('crossing', list, TASKS),
  check(_o, asked) {
    if (asked.crossing?.servers.includes(IOC_SERVER))
      throw new UsageError(
        `crossing: ${IOC_SERVER} (the built-in IOC's records) posts nothing on command; softioc is its servers with an app posting`,
      );
  },
  steps: (w, ready, repeat) => {
    const c = w.crossing;
    if (!c) return 0;
    const protocols = new Set(ready.filter((x) => servesAll(x, TASKS)).map((x) => x.protocol));
    return repeat * c.servers.reduce((n, s) => n + (findServer(s)?.protocols.filter((p) => protocols.has(p)).length ?? 0), 0);
  },
  async run(ws, ctx, results) {
    const w = ws.crossing;
    if (!w) return;
    const runs: CrossingRun[] = [];
    const steal = stealMeter();
    const reference = (protocol: 'CA' | 'PVA') => referenceFor(ctx.ready, protocol, TASKS);
    for (const name of w.servers) {
      const spec = findServer(name)!;
      const protocols = spec.protocols.filter((p) => reference(p));
      if (protocols.length === 0) continue;
      let server: RunningServer | undefined;
      let why: string | undefined;
      try {
        ctx.progress(`starting the ${name} server`);
        server = await startServer(name, ctx.python, {
          prefix: CROSSING_PREFIX,
          int32: w.int32Sizes,
          bytes: w.byteSizes,
          latency: Math.max(0, ...(w.roundTripSizes ?? [])),
        });
      } catch (e) {
        why = (e as Error).message;
      }
      try {
        for (const protocol of protocols) {
          const client = reference(protocol)!;
          const row = (): Promise<CrossingRun> =>
            server
              ? runCrossing({ server, protocol, client, python: ctx.python, workload: w, onProgress: ctx.progress })
              : Promise.resolve({ server: name, protocol, client: client.name, ok: false, unsupported: true, error: why, points: [] });
          for (let rep = 1; rep <= ctx.repeat; rep++)
            runs.push(await ctx.steps.run(`crossing ${protocol}`, name, rep, ctx.repeat, row, crossingOutcome));
        }
      } finally {
        await server?.stop();
      }
    }
    results.crossing = { workload: w, runs, stealPercent: steal() };
  },
  // The main figure: the median crossing time of one double, per server and protocol.
  figures: (r) =>
    r.crossing
      ? serverFigure(
          {
            key: 'crossing',
            title: crossingTitle(r.crossing.workload),
            figure: "median crossing time of one double (a server app's post to the client's callback)",
            unit: 'ms',
            better: 'lower',
            stealPercent: r.crossing.stealPercent,
          },
          r.crossing.runs,
          (x) => x.points.find((p) => p.payload === 'double' && p.ok)?.p50Ms,
          (x) => x.points.filter((p) => !p.ok).map((p) => `${p.payload} ${p.elements.toLocaleString('en-US')}: ${p.error ?? 'failed'}`),
        )
      : [],
  text: (r, markdown) =>
    r.crossing
      ? `\n${crossingTitle(r.crossing.workload)}${stealNote(r.crossing.stealPercent)}\n\n${crossingTables(r.crossing.runs, markdown)}`
      : '',
  html: (r) => Promise.resolve(r.crossing ? { details: { text: crossingTables(r.crossing.runs), open: 'crossing' } } : {}),
};
