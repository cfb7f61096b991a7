// The connect storm (`bench storm --servers`): per server and protocol, one client asks a fresh
// server for many still channels at once (bench/storm.ts); the figure is the time to the last
// answer, the server's CPU and memory beside it.
import { Option } from 'commander';
import { IOC_SERVER, servedProtocols } from '../bench/counting.js';
import { runStorm } from '../bench/storm.js';
import { intArg } from '../options.js';
import { stealMeter } from '../procstat.js';
import { stealNote } from '../report/bench.js';
import { serverFigure } from '../report/figures.js';
import { stormOutcome, stormTable, stormTitle } from '../report/storm.js';
import type { StormRun } from '../results/index.js';
import { SERVER_NAMES } from '../servers/index.js';
import { referenceClients, referenceFor, serversOption } from './servers.js';
import { type BenchWorkload, value } from './workload.js';

/** The storm's clients: c-libca over CA, and over PV Access this project's (c-pvxs's own searches
 *  flood the host at 100,000 names: docs/results.md, "Serving PVs"). */
export const STORM_CLIENTS = ['c-libca', 'node-pva'];
const TASKS = ['snapshot'] as const;

export const STORM_DEFAULTS = { channels: 100_000, timeoutMs: 60_000 };

export const storm: BenchWorkload = {
  name: 'storm',
  ramp: false,
  inAll: { quick: false, full: false },
  options: [
    serversOption,
    new Option('--storm-channels <n>', `storm: channels one client asks a server for at once (${STORM_DEFAULTS.channels})`).argParser(
      intArg(1, 1_000_000),
    ),
    new Option('--storm-timeout <ms>', `storm: each channel's timeout (${STORM_DEFAULTS.timeoutMs})`).argParser(intArg(1, 3_600_000)),
  ],
  ask: (o) => ({
    storm: {
      servers: value<string[]>(o, 'servers') ?? [...SERVER_NAMES, IOC_SERVER],
      channels: value<number>(o, 'stormChannels') ?? STORM_DEFAULTS.channels,
      timeoutMs: value<number>(o, 'stormTimeout') ?? STORM_DEFAULTS.timeoutMs,
    },
  }),
  clients: (list) => (list === undefined ? STORM_CLIENTS : referenceClients('storm', list, TASKS)),
  steps: (w, ready, repeat) => {
    const s = w.storm;
    if (!s) return 0;
    return repeat * s.servers.reduce((n, name) => n + servedProtocols(name).filter((p) => referenceFor(ready, p, TASKS)).length, 0);
  },
  async run(ws, ctx, results) {
    const w = ws.storm;
    if (!w) return;
    const steal = stealMeter();
    const runs: StormRun[] = [];
    for (const server of w.servers)
      for (const protocol of servedProtocols(server)) {
        const client = referenceFor(ctx.ready, protocol, TASKS);
        if (!client) continue;
        for (let rep = 1; rep <= ctx.repeat; rep++)
          runs.push(
            await ctx.steps.run(
              `storm ${protocol}`,
              server,
              rep,
              ctx.repeat,
              () =>
                runStorm({
                  server,
                  protocol,
                  client,
                  python: ctx.python,
                  workload: w,
                  onProgress: ctx.progress,
                  ...ctx.deadline(w.timeoutMs / 1000),
                }),
              stormOutcome,
            ),
          );
      }
    results.storm = { workload: w, runs, stealPercent: steal() };
  },
  // The main figure: the time from the client's start to its last answer, per server and protocol.
  figures: (r) =>
    r.storm
      ? serverFigure(
          {
            key: 'storm',
            title: stormTitle(r.storm.workload),
            figure: `time until every one of ${r.storm.workload.channels.toLocaleString('en-US')} channels was answered`,
            unit: 'ms',
            better: 'lower',
            stealPercent: r.storm.stealPercent,
          },
          r.storm.runs,
          (x) => (x.ok ? x.wallMs : undefined),
          (x) => (x.ok ? [] : [x.error ?? 'failed']),
        )
      : [],
  text: (r, markdown) =>
    r.storm ? `\n${stormTitle(r.storm.workload)}${stealNote(r.storm.stealPercent)}\n\n${stormTable(r.storm.runs, markdown)}` : '',
  html: (r) => Promise.resolve(r.storm ? { details: { text: stormTable(r.storm.runs), open: 'storm' } } : {}),
};
