// The headroom workload: scalar monitors at rising steps of counters x rate until a client loses
// updates, falls behind or fails; its figure is the highest update rate held (bench/headroom.ts).
// With --servers, the servers' headroom instead: each server's app posting the counters to one
// or N reference clients at once (bench/server-headroom.ts).
import { InvalidArgumentError, Option } from 'commander';
import { intArg, listArg } from '../options.js';
import { HEADROOM_STEPS, headroomStep, runHeadroom } from '../bench/headroom.js';
import { servedProtocols } from '../bench/counting.js';
import { runServerHeadroom, type ServerRow } from '../bench/server-headroom.js';
import { headroomOutcome } from '../report/outcomes.js';
import type { ClientFigure } from '../report/figures.js';
import { stealNote } from '../report/bench.js';
import { headroomNote, headroomStepsTable, headroomTable, headroomText, headroomTitle } from '../report/headroom.js';
import { headroomStepLabel, heldRate, stat, type HeadroomStep, type HeadroomWorkload } from '../results/index.js';
import { type BenchWorkload, serving, value } from './workload.js';
import { referenceClients, referenceFor, serversOption } from './servers.js';
import { UsageError } from '../errors.js';
import type { ClientSpec } from '../clients/index.js';

/** The servers' fan-outs: one reference client, then four at once. */
export const HEADROOM_FANOUT = [1, 4];

/** A server's rows of `--servers`: each protocol it serves that a reference client speaks, at each fan-out. */
export function serverRows(w: HeadroomWorkload, ready: readonly ClientSpec[]): ServerRow[] {
  const rows: ServerRow[] = [];
  for (const server of w.servers?.names ?? [])
    for (const protocol of servedProtocols(server)) {
      const client = referenceFor(ready, protocol, ['monitor']);
      if (client) for (const fanout of w.servers!.fanout) rows.push({ server, protocol, client, fanout });
    }
  return rows;
}

/** The full profile's ramp (the only one: a ramp is not in the quick profile). */
export const HEADROOM_DEFAULTS: HeadroomWorkload = { seconds: 4, steps: [...HEADROOM_STEPS] };

export const headroom: BenchWorkload = {
  name: 'headroom',
  serves: 'monitor',
  ramp: true,
  inAll: { quick: false, full: false },
  options: [
    new Option(
      '--headroom-seconds <s>',
      `headroom: seconds of updates each client receives at each step (${HEADROOM_DEFAULTS.seconds})`,
    ).argParser(intArg(1, 600)),
    new Option(
      '--headroom-steps <list>',
      `headroom: the ramp, RECORDSxHZ,... lowest first (${HEADROOM_DEFAULTS.steps.map((x) => `${x.records}x${x.rateHz}`).join(',')})`,
    ).argParser(parseHeadroomSteps),
    serversOption,
    new Option(
      '--headroom-fanout <list>',
      `headroom --servers: how many reference clients monitor a server at once, a row each (${HEADROOM_FANOUT.join(',')})`,
    ).argParser(parseFanout),
  ],
  ask: (o) => {
    const servers = value<string[]>(o, 'servers');
    return {
      headroom: {
        seconds: value<number>(o, 'headroomSeconds') ?? HEADROOM_DEFAULTS.seconds,
        steps: value<HeadroomStep[]>(o, 'headroomSteps') ?? HEADROOM_DEFAULTS.steps,
        ...(servers && { servers: { names: servers, fanout: value<number[]>(o, 'headroomFanout') ?? HEADROOM_FANOUT } }),
      },
    };
  },
  check(o, asked) {
    if (o.headroomFanout !== undefined && !asked.headroom?.servers) throw new UsageError('--headroom-fanout needs --servers');
  },
  // With servers, the reference clients (c-libca and c-pvxs), else the usual choice.
  clients: (list, o) => (o?.servers ? referenceClients('headroom', list, ['monitor']) : undefined),
  // Every step for every client (or server row) at most.
  steps: (w, ready) =>
    w.headroom
      ? (w.headroom.servers ? serverRows(w.headroom, ready).length : serving(ready, 'monitor').length) * w.headroom.steps.length
      : 0,
  async run(w, ctx, results) {
    if (!w.headroom) return;
    if (w.headroom.servers) {
      results.headroom = await runServerHeadroom({
        rows: serverRows(w.headroom, ctx.ready),
        python: ctx.python,
        workload: w.headroom,
        onProgress: ctx.progress,
        ...ctx.deadline(w.headroom.seconds),
        runStep: ctx.steps.ramp('headroom', headroomOutcome),
        onSkip: (n) => ctx.steps.skip(n),
      });
      return;
    }
    results.headroom = await runHeadroom({
      clients: serving(ctx.ready, 'monitor'),
      python: ctx.python,
      server: ctx.placement.server,
      workload: w.headroom,
      onProgress: ctx.progress,
      ...ctx.deadline(w.headroom.seconds),
      runStep: ctx.steps.ramp('headroom', headroomOutcome),
      onSkip: (n) => ctx.steps.skip(n),
    });
  },
  // The main figure is the highest update rate a client held with no loss and no growing latency.
  // Giving way at a later step is how the limit is found, not a failure; giving way at the first
  // step (no figure at all) or a stop at the deadline is. The IOC's highest published rate is the
  // reference: a client near it was held back by the IOC, not by itself.
  figures: (r) => {
    const h = r.headroom;
    if (!h) return [];
    return [
      {
        key: 'headroom',
        title: headroomTitle(h),
        figure: h.workload.servers ? 'highest updates/s a server posted with no loss' : 'highest updates/s held with no loss',
        ...(h.workload.servers && { servers: true as const }),
        unit: 'updates/s',
        better: 'higher' as const,
        stealPercent: h.stealPercent,
        ...(h.iocMaxUpdatesS !== undefined && { references: [{ label: "the IOC's highest published rate", value: h.iocMaxUpdatesS }] }),
        clients: h.clients.map((cl): ClientFigure => {
          const mine = h.runs.filter((x) => x.client === cl.client);
          const v = heldRate(cl.best);
          const values = v !== undefined && Number.isFinite(v) ? [v] : [];
          const problems: string[] = [];
          if (mine.length === 0) problems.push('no step ran');
          else if (!cl.best) problems.push(`gave way at its first step (${headroomNote(cl, h)})`);
          // A stop at a later step is how that client gave way; at its first step it leaves no figure.
          const stopped = cl.best ? undefined : mine.find((x) => x.run.stoppedAfterS !== undefined)?.run.stoppedAfterS;
          return {
            client: cl.client,
            version: mine.find((x) => x.run.version)?.run.version,
            values,
            stat: stat(values),
            problems,
            ...(stopped !== undefined && { stoppedAfterS: stopped }),
          };
        }),
      },
    ];
  },
  text: (r, markdown) => (r.headroom ? `${headroomText(r.headroom, markdown)}${stealNote(r.headroom.stealPercent)}` : ''),
  // Where each client's loss-free rate was held, its CPU and memory there, and what it did past it.
  html: async (r) =>
    r.headroom ? { findings: headroomTable(r.headroom), details: { text: `Every step:\n\n${headroomStepsTable(r.headroom)}` } } : {},
};

/** `--headroom-steps 1000x10,2000x50`: the ramp, each step's load above the one before. */
export function parseHeadroomSteps(v: string): HeadroomStep[] {
  const steps = listArg(v).map((x) => {
    const m = /^(\d+)x(\d+(?:\.\d+)?)$/.exec(x);
    const records = Number(m?.[1]);
    const rate = Number(m?.[2]);
    if (!m || !(records >= 1 && records <= 100_000) || !(rate > 0 && rate <= 10_000)) {
      throw new InvalidArgumentError(`"${x}" is not RECORDSxHZ (1-100000 records, 0-10000 Hz), e.g. 1000x10`);
    }
    return headroomStep(records, rate);
  });
  if (steps.length === 0) throw new InvalidArgumentError('no step given');
  // a client that fails a step skips every later one: a lower step after a higher one would never run
  for (let i = 1; i < steps.length; i++) {
    if (steps[i]!.offeredUpdatesS <= steps[i - 1]!.offeredUpdatesS) {
      throw new InvalidArgumentError(
        `each step must offer more updates/s than the one before (${headroomStepLabel(steps[i]!)} after ${headroomStepLabel(steps[i - 1]!)})`,
      );
    }
  }
  return steps;
}

/** `--headroom-fanout 1,4`: clients at once, each 1-64, rising. */
export function parseFanout(v: string): number[] {
  const list = v.split(',').map((x) => Number(x.trim()));
  if (list.some((n) => !Number.isInteger(n) || n < 1 || n > 64) || list.some((n, i) => i > 0 && n <= list[i - 1]!))
    throw new InvalidArgumentError(`"${v}" is not a rising list of client counts from 1 to 64, e.g. 1,4`);
  return list;
}
