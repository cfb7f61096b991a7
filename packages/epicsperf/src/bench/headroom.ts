// The headroom workload: scalar monitors at rising (records x rate) steps until a client loses
// updates, falls behind (its latency grows through the step), is killed for its memory or fails;
// the IOC's own published rate at each step says where the IOC, not the client, was the limit.
import { availableParallelism } from 'node:os';
import { startIoc, type Ioc, type IocServer, type IocStats } from '../ioc/index.js';
import { percentile } from './checks.js';
import type { ClientSpec } from '../clients/index.js';
import { DEFAULT_MAX_RSS_MB, MEMORY_KILL, runMonitor } from './monitor.js';
import { climb } from './ramp.js';
import type { Sample } from './samples.js';
import { stealMeter } from '../procstat.js';
import {
  headroomStepLabel,
  type HeadroomClient,
  type HeadroomResults,
  type HeadroomStep,
  type HeadroomStepResult,
  type HeadroomWorkload,
  type MonitorRun,
} from '../results/index.js';

export const headroomStep = (records: number, rateHz: number): HeadroomStep => ({ records, rateHz, offeredUpdatesS: records * rateHz });

/** Around the monitor workload's load (1,000 x 10 Hz: two steps below it, so that a client that
 *  cannot hold it still gets a figure) up to more than a 2-core machine's IOC can publish while it
 *  shares the cores with the client. */
export const HEADROOM_STEPS: readonly HeadroomStep[] = [
  headroomStep(1000, 2),
  headroomStep(1000, 5),
  headroomStep(1000, 10),
  headroomStep(2000, 10),
  headroomStep(2000, 20),
  headroomStep(1000, 50),
  headroomStep(2000, 50),
  headroomStep(4000, 50),
  headroomStep(4000, 100),
];

/** A step is IOC-limited when the IOC published less than this share of the offered rate, or used this share of every core. */
const IOC_LIMITED = 0.9;
/** A client falls behind when its latency over the last quarter of the step exceeds that over the
 *  first quarter by this much (ms) and by half again, and over the third quarter by half as much. */
const BEHIND_MS = 250;

export interface HeadroomOptions {
  clients: readonly ClientSpec[];
  python: string;
  /** The built-in IOC's server (default softioc). */
  server?: IocServer;
  workload: HeadroomWorkload;
  /** Kill a runner whose resident memory passes this many MiB (default DEFAULT_MAX_RSS_MB). */
  maxRssMb?: number;
  clientDeadlineMs?: number;
  onProgress?: (text: string) => void;
  /** Wraps each (step, client) run: the bench's progress steps. */
  runStep?: (label: string, client: string, body: () => Promise<HeadroomStepResult>) => Promise<HeadroomStepResult>;
  onSkip?: (n: number) => void;
  /** Called when a client starts collecting at a step, with the step's IOC (tests inject a gap here). */
  onCollecting?: (ioc: Ioc, client: string, step: HeadroomStep) => void;
}

export async function runHeadroom(o: HeadroomOptions): Promise<HeadroomResults> {
  const progress = o.onProgress ?? (() => {});
  const runStep = o.runStep ?? ((_l, _c, body) => body());
  const steal = stealMeter();
  const runs = await climb<HeadroomStep, ClientSpec, HeadroomStepResult>({
    steps: o.workload.steps,
    clients: o.clients,
    held: (r) => r.held,
    ...(o.onSkip && { onSkip: o.onSkip }),
    open: async (step) => {
      const ioc = await startIoc({ records: step.records, rate: step.rateHz, arrayElements: 0, ...(o.server && { server: o.server }) });
      await firstTick(ioc);
      const names = ioc.counterNames();
      return {
        close: () => ioc.stop(),
        run: (client) =>
          runStep(headroomStepLabel(step), client.name, async () => {
            // The IOC's counts when collection starts and when it ends (the runner's phases).
            const marks: Promise<IocStats | undefined>[] = [];
            let samples: readonly Sample[] = [];
            const run = await runMonitor({
              client,
              python: o.python,
              env: ioc.env,
              names,
              rate: step.rateHz,
              iocMeter: ioc.meter,
              samples: Math.max(5, Math.round(step.rateHz * o.workload.seconds)),
              ...(o.maxRssMb !== undefined && { maxRssMb: o.maxRssMb }),
              ...(o.clientDeadlineMs !== undefined && { clientDeadlineMs: o.clientDeadlineMs }),
              onSamples: (s) => (samples = s),
              onProgress: (text) => {
                progress(text);
                if (text === 'collecting' || text === 'checking') marks.push(ioc.stats().catch(() => undefined));
                if (text === 'collecting') o.onCollecting?.(ioc, client.name, step);
              },
            });
            const [a, b] = await Promise.all(marks);
            return judge(client.name, step, run, samples, iocRate(a, b, step.records), o.maxRssMb ?? DEFAULT_MAX_RSS_MB);
          }),
      };
    },
  });
  const clients = o.clients.map((c) => headroomClient(c.name, runs, o.workload.steps.length));
  const rates = runs.map((r) => r.iocUpdatesS).filter((x): x is number => x !== undefined);
  return {
    workload: o.workload,
    runs,
    clients,
    ...(rates.length && { iocMaxUpdatesS: Math.max(...rates) }),
    stealPercent: steal(),
  };
}

/** The counts of the counters' ticks (the IOC's, or a server runner's). */
export type TickStats = Pick<IocStats, 'ticks' | 'tickTime' | 'counterValue' | 'time' | 'rampValue'>;

/** Until the IOC has posted its first tick (at most 2 s): the IOC's rate counts from a post. */
export async function firstTick(ioc: { stats(): Promise<TickStats | undefined> }): Promise<void> {
  for (let t0 = performance.now(); performance.now() - t0 < 2000; await new Promise((r) => setTimeout(r, 20))) {
    if (((await ioc.stats().catch(() => undefined))?.ticks ?? 0) > 0) return;
  }
}

/**
 * Updates per second the IOC published between two of its stats answers (undefined without both):
 * the ticks it posted per second, between the posts themselves (exact at a low rate), times the
 * share of them it processed (one tick of slack: the last may still be under way).
 */
export function iocRate(a: TickStats | undefined, b: TickStats | undefined, records: number): number | undefined {
  if (a?.counterValue === undefined || b?.counterValue === undefined || !(b.time > a.time)) return undefined;
  const processed = b.counterValue - a.counterValue;
  const posted = (b.ticks ?? 0) - (a.ticks ?? 0);
  const span = (b.tickTime ?? 0) - (a.tickTime ?? 0);
  // Without a tick before the first answer (a fresh IOC at a low rate) there is no post to count from.
  if (!((a.ticks ?? 0) > 0 && posted > 0 && span > 0)) return (processed * records) / (b.time - a.time);
  return ((posted * records) / span) * Math.min(1, (processed + 1) / posted);
}

/** Median latency (ms) of the first, the third and the last quarter of the updates by arrival, leaving out
 *  each PV's first update (its value may predate the subscription). */
export function latencyTrend(samples: readonly Sample[]): { early: number; third: number; late: number } | undefined {
  const seen = new Set<number>();
  const later: Sample[] = [];
  for (const s of samples) {
    if (seen.has(s.pv)) later.push(s);
    else seen.add(s.pv);
  }
  if (later.length < 8) return undefined;
  later.sort((x, y) => x.recvTime - y.recvTime);
  const q = Math.floor(later.length / 4);
  const median = (xs: Sample[]) =>
    percentile(
      xs.map((s) => (s.recvTime - s.iocTime) * 1000).sort((x, y) => x - y),
      50,
    );
  return { early: median(later.slice(0, q)), third: median(later.slice(2 * q, 3 * q)), late: median(later.slice(later.length - q)) };
}

const ms = (v: number) => `${v.toFixed(v >= 100 ? 0 : 1)} ms`;

/** Whether a client held a step, and if not, how it gave way. */
export function judge(
  client: string,
  step: HeadroomStep,
  run: MonitorRun,
  samples: readonly Sample[],
  iocUpdatesS: number | undefined,
  maxRssMb = DEFAULT_MAX_RSS_MB,
  cores = availableParallelism(),
): HeadroomStepResult {
  const trend = latencyTrend(samples);
  // The IOC is the limit when it published under 90% of the offered rate, or when it used 90% of
  // every core: it then starves its own send threads, which merge the updates a client would get.
  const iocShort = iocUpdatesS !== undefined && iocUpdatesS < IOC_LIMITED * step.offeredUpdatesS;
  const iocBusy = (run.iocCpuPercent?.mean ?? 0) >= IOC_LIMITED * cores * 100;
  const r: HeadroomStepResult = {
    client,
    step,
    run,
    held: false,
    iocLimited: iocShort || iocBusy,
    ...(iocUpdatesS !== undefined && { iocUpdatesS }),
    ...(trend && { latencyEarlyMs: trend.early, latencyLateMs: trend.late }),
  };
  const c = run.check;
  // Growing through the step, not one stall at its end: the third quarter is already well behind.
  const behind =
    trend !== undefined &&
    trend.late > trend.early + BEHIND_MS &&
    trend.late > 1.5 * trend.early &&
    trend.third > trend.early + BEHIND_MS / 2;
  const behindText = trend ? `fell behind: latency grew from ${ms(trend.early)} to ${ms(trend.late)} through the step` : '';
  if (run.stoppedAfterS !== undefined) r.failure = { mode: 'stopped', text: run.error ?? `stopped after ${run.stoppedAfterS} s` };
  else if (run.error?.startsWith(MEMORY_KILL))
    r.failure = { mode: 'memory', text: `grew to ${Math.round(run.peakRssMb ?? 0)} MiB and was killed (limit ${maxRssMb} MiB)` };
  else if (c && c.missedValues > 0) {
    const share = c.samples > 0 ? ` (${((100 * c.missedValues) / (c.samples + c.missedValues)).toFixed(1)}% of the updates)` : '';
    r.failure = {
      mode: 'lost',
      text: `lost ${c.missedValues.toLocaleString('en-US')} updates in ${c.gaps.toLocaleString('en-US')} gaps${share}${behind ? `; ${behindText}` : ''}`,
    };
  } else if (!c || run.error) r.failure = { mode: 'failed', text: run.error ?? 'no samples to check' };
  else if (!c.ok) r.failure = { mode: 'failed', text: `sample check failed: ${c.findings.slice(0, 2).join('; ')}` };
  else if (behind) r.failure = { mode: 'behind', text: behindText };
  r.held = r.failure === undefined;
  return r;
}

/** A client's best step, the first it did not hold, and whether it held them all. */
export function headroomClient(client: string, runs: readonly HeadroomStepResult[], steps: number): HeadroomClient {
  const mine = runs.filter((r) => r.client === client);
  const held = mine.filter((r) => r.held);
  const best = held[held.length - 1];
  const past = mine.find((r) => !r.held);
  return { client, ...(best && { best }), ...(past && { past }), heldAll: !past && held.length === steps };
}
