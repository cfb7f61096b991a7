// The load workload: N monitor runners of one client on each of M hosts against one IOC, N rising
// step by step until updates are lost or latency grows; per step the aggregate rate, each host's
// CPU, the IOC's, loss and latency, and the fairness between steady PVs and one whose rate ramps.
// Runners are started and measured only through their Host (this one or an agent's).
import { Context } from 'epics-client';
import { RunnerError } from '../errors.js';
import type { Reading } from '../procstat.js';
import { stealMeter } from '../procstat.js';
import type { Runner } from '../launch/process.js';
import { ClientDeadline } from '../launch/deadline.js';
import { failureOf } from '../launch/run.js';
import { LOCAL, type Host } from '../hosts/host.js';
import type { Ioc, IocServer } from '../ioc/index.js';
import type { ClientSpec } from '../clients/index.js';
import { LocalHost } from '../hosts/local-host.js';
import { shipSamples } from './session.js';
import { DEFAULT_MAX_RSS_MB, MEMORY_KILL } from './monitor.js';
import { firstTick, iocRate, type TickStats } from './headroom.js';
import { analyseRunner, judgeLoadStep, loadClient, pooledLatency, type RunnerAnalysis } from './load-judge.js';
import {
  loadStepLabel,
  type LoadHost,
  type LoadResults,
  type LoadRunner,
  type LoadStepResult,
  type LoadWorkload,
} from '../results/index.js';

/** The ramp when none is given: runners per host. */
export const LOAD_STEPS: readonly number[] = [1, 2, 4, 8, 16];
export const LOAD_SECONDS = 5;
/** From every runner connected to the window's start, ms. */
const WARMUP_MS = 1000;
/** The memory a fairness runner's samples may take (bytes): its room per PV is the ramp's updates
 *  over the window, up to this over all its PVs (32 bytes a sample). */
const RAMP_MEMORY = 64 * 2 ** 20;
/** PREFIX:RAMP's highest rate (the IOC's RAMP_MAX_HZ). */
export const RAMP_MAX_HZ = 5000;

/** PREFIX:RAMP's rate at a step: ten times the counters' rate per runner on a host (100 Hz per
 *  runner at 10 Hz), at most RAMP_MAX_HZ. */
export const rampRate = (rate: number, runnersPerHost: number): number => Math.min(RAMP_MAX_HZ, 10 * rate * runnersPerHost);

/** A step's latency has grown when its p99 is more than one update period above the first step's. */
export const latencyGrowthMs = (rate: number): number => 1000 / rate;

/** The workload a run of these options makes (its ramp rates and thresholds filled in). */
export function loadWorkload(o: Pick<LoadOptions, 'steps' | 'records' | 'rate' | 'stepSeconds'>): LoadWorkload {
  const steps = [...(o.steps ?? LOAD_STEPS)];
  return {
    steps,
    records: o.records,
    rateHz: o.rate,
    seconds: o.stepSeconds ?? LOAD_SECONDS,
    rampRatesHz: steps.map((n) => rampRate(o.rate, n)),
    latencyGrowthMs: latencyGrowthMs(o.rate),
  };
}

export interface LoadOptions {
  clients: readonly ClientSpec[];
  /** Where the runners run, all at once at each step (default: this host, with `python`). */
  hosts?: readonly Host[];
  /** Where the IOC runs (default: the first host). */
  iocHost?: Host;
  /** The managed Python environment's interpreter (for the default host). */
  python?: string;
  /** Runners per host at each step, lowest first (default LOAD_STEPS). */
  steps?: readonly number[];
  records: number;
  /** The built-in IOC's server (default softioc). */
  server?: IocServer;
  rate: number;
  /** Seconds each step is measured for, after every runner has connected and the warm-up (default LOAD_SECONDS). */
  stepSeconds?: number;
  /** Cores of each host by name (default: each host's doctor report). */
  hostCores?: Readonly<Record<string, number>>;
  /** Kill a runner whose resident memory passes this many MiB (default DEFAULT_MAX_RSS_MB). */
  maxRssMb?: number;
  /** Each runner's deadline at one step (ms): past it the runner is stopped and fails. */
  clientDeadlineMs?: number;
  onProgress?: (text: string) => void;
  /** Wraps each (client, step) run: the bench's progress steps. */
  runStep?: (label: string, client: string, body: () => Promise<LoadStepResult>) => Promise<LoadStepResult>;
  /** `n` counted (client, step) runs will not run: a client stopped climbing. */
  onSkip?: (n: number) => void;
  /** Set PREFIX:RAMP:RATE (default: a CA put from here, with the IOC's environment and, when it
   *  runs on another host, that host's address). */
  setRampRate?: (ioc: LoadIoc, hz: number) => Promise<void>;
  /** Another server in the IOC's place, on this host (the servers' load): started once for the run. */
  serve?: () => Promise<LoadIoc>;
}

/** What the workload needs of its server: the built-in IOC, or a server runner with counters. */
export type LoadIoc = Pick<Ioc, 'env' | 'prefix' | 'meter' | 'counterNames' | 'stop'> & {
  stats(): Promise<TickStats | undefined>;
  /** Sets PREFIX:RAMP's rate its own way (a server runner's command), else by a put to PREFIX:RAMP:RATE. */
  setRamp?: (hz: number) => Promise<void>;
};

export async function runLoad(o: LoadOptions): Promise<LoadResults> {
  const hosts = o.hosts ?? [new LocalHost(o.python)];
  if (hosts.length === 0) throw new RunnerError('the load workload needs at least one host');
  const iocHost = o.iocHost ?? hosts[0]!;
  const workload = loadWorkload(o);
  const steps = workload.steps;
  const progress = o.onProgress ?? (() => {});
  const runStep = o.runStep ?? ((_l, _c, body) => body());
  const steal = stealMeter();
  const cores: Record<string, number | undefined> = {};
  for (const h of [...hosts, iocHost])
    cores[h.name] ??=
      o.hostCores?.[h.name] ??
      (await h.doctor().then(
        (d) => d.cpu.cores,
        () => undefined,
      ));
  const hostRows: LoadHost[] = [...new Map([...hosts, iocHost].map((h) => [h.name, h])).values()].map((h) => ({
    name: h.name,
    address: h.address,
    ...(cores[h.name] !== undefined && { cores: cores[h.name] }),
  }));
  // Runners elsewhere reach the IOC over the network: it then serves every interface.
  const elsewhere = hosts.some((h) => h.name !== iocHost.name);
  progress('starting the IOC');
  const ioc: LoadIoc = o.serve
    ? await o.serve()
    : await iocHost.startIoc({
        records: o.records,
        rate: o.rate,
        arrayElements: 0,
        ...(o.server && { server: o.server }),
        ...(elsewhere && { listen: '0.0.0.0' }),
      });
  const putter = o.setRampRate || ioc.setRamp ? undefined : rampPutter(ioc, iocHost);
  const setRamp = o.setRampRate ?? ((_: LoadIoc, hz: number) => (ioc.setRamp ? ioc.setRamp(hz) : putter!.put(hz)));
  const results: LoadStepResult[] = [];
  try {
    await firstTick(ioc);
    for (const client of o.clients) {
      for (const [i, n] of steps.entries()) {
        const first = results.find((r) => r.client === client.name);
        const r = await runStep(loadStepLabel(n, hosts.length), client.name, () =>
          runLoadStep({
            client,
            hosts,
            ioc,
            iocHost: iocHost.name,
            runnersPerHost: n,
            rampHz: workload.rampRatesHz[i]!,
            workload,
            cores,
            first,
            progress,
            o,
            setRamp: (hz) => setRamp(ioc, hz),
          }),
        );
        results.push(r);
        if (!r.held) {
          if (i + 1 < steps.length) o.onSkip?.(steps.length - i - 1);
          break;
        }
      }
    }
  } finally {
    await putter?.close();
    await ioc.stop();
  }
  return {
    workload,
    hosts: hostRows,
    iocHost: iocHost.name,
    steps: results,
    clients: o.clients.map((c) => loadClient(c.name, results, steps.length)),
    stealPercent: steal(),
  };
}

/** Puts to PREFIX:RAMP:RATE over CA from this process, on one context for the run: the IOC's own
 *  environment, and its host's address when it runs elsewhere (an agent's endpoint, tcp://host:port). */
function rampPutter(ioc: LoadIoc, iocHost: Host): { put(hz: number): Promise<void>; close(): Promise<void> } {
  const env: Record<string, string> = { ...ioc.env };
  // An IOC serving every interface gives only its ports: this process names its host.
  if (env.EPICS_CA_ADDR_LIST === undefined) {
    env.EPICS_CA_ADDR_LIST =
      iocHost.name !== LOCAL && /^[a-z]+:\/\//.test(iocHost.address) ? new URL(iocHost.address).hostname : '127.0.0.1';
    env.EPICS_CA_AUTO_ADDR_LIST = 'NO';
  }
  const ctx = new Context({ env });
  // A plain write: an IOC that has fallen behind may not complete a put in time, and the rate the
  // ramp ran at is read back from its timestamps anyway.
  return { put: (hz) => ctx.put(`${ioc.prefix}RAMP:RATE`, hz, { timeout: 5000, wait: false }), close: () => ctx.close() };
}

/** One runner of a step: where, what it monitors, and what became of it. */
interface Slot {
  host: Host;
  index: number;
  /** Monitors PREFIX:RAMP after the counters: its host's fairness runner. */
  ramp: boolean;
  names: string[];
  samples: number;
  runner?: Runner;
  deadline?: ClientDeadline;
  row: LoadRunner;
  t0?: number;
  startedAt?: number;
  overMemoryMb?: number;
  r0?: Reading | undefined;
  analysis?: RunnerAnalysis;
}

interface StepContext {
  client: ClientSpec;
  hosts: readonly Host[];
  ioc: LoadIoc;
  iocHost: string;
  runnersPerHost: number;
  rampHz: number;
  setRamp: (hz: number) => Promise<void>;
  workload: LoadWorkload;
  cores: Readonly<Record<string, number | undefined>>;
  first: LoadStepResult | undefined;
  progress: (text: string) => void;
  o: LoadOptions;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function runLoadStep(c: StepContext): Promise<LoadStepResult> {
  const w = c.workload;
  const n = c.runnersPerHost;
  const counters = c.ioc.counterNames();
  const withRamp = [...counters, `${c.ioc.prefix}RAMP`];
  // More room than the window needs: a runner that connected early collects longer. The fairness
  // runner's room is the ramp's updates over the window, as far as RAMP_MEMORY allows.
  const room = Math.ceil(w.rateHz * (w.seconds + 1) * 3) + 50;
  const rampRoom = Math.max(room, Math.min(Math.ceil(c.rampHz * w.seconds) + 50, Math.floor(RAMP_MEMORY / (withRamp.length * 32))));
  const slots: Slot[] = c.hosts.flatMap((host) =>
    Array.from({ length: n }, (_, k): Slot => {
      const ramp = k === 0;
      return {
        host,
        index: k + 1,
        ramp,
        names: ramp ? withRamp : counters,
        samples: ramp ? rampRoom : room,
        row: { host: host.name, index: k + 1, ok: false, ...(ramp && { ramp }) },
      };
    }),
  );
  const maxRssMb = c.o.maxRssMb ?? DEFAULT_MAX_RSS_MB;
  const live = () => slots.filter((s) => s.runner && s.row.error === undefined);
  const fail = async (s: Slot, err: unknown): Promise<void> => {
    if (s.row.error !== undefined) return;
    const memory =
      s.overMemoryMb === undefined
        ? undefined
        : `${MEMORY_KILL} ${maxRssMb} MiB (${Math.round(s.overMemoryMb)} MiB): it fell behind the updates`;
    s.row.error = failureOf(err, s.deadline, memory);
    await s.runner?.kill();
  };
  const guard = setInterval(() => {
    for (const s of live()) {
      const m = s.runner!.meter.read();
      if (m && m.rssKb / 1024 > maxRssMb) {
        s.overMemoryMb = m.rssKb / 1024;
        void fail(s, new RunnerError('killed for its memory'));
      }
    }
  }, 500);
  let windowS: number | undefined;
  // A put of the ramp's rate that fails costs the step its fairness figure, nothing else.
  let rampError: string | undefined;
  let rampPublished: number | undefined;
  let rampPublishedHz: number | undefined;
  const setRamp = (hz: number) =>
    c.setRamp(hz).catch((err: unknown) => {
      rampError ??= `PREFIX:RAMP:RATE could not be set to ${hz}: ${(err as Error).message}`;
    });
  let iocCpu: number | undefined;
  let iocUpdatesS: number | undefined;
  try {
    // PREFIX:RAMP is still until the window opens: its updates are all the window's.
    await setRamp(0);
    c.progress(`starting ${slots.length} runners`);
    for (const s of slots) {
      try {
        s.runner = s.host.startRunner({
          client: c.client.name,
          task: 'monitor',
          names: s.names,
          args: ['--samples', String(s.samples)],
          env: c.ioc.env,
        });
        s.deadline = new ClientDeadline(s.runner, c.o.clientDeadlineMs);
      } catch (err) {
        s.row.error = `cannot start: ${(err as Error).message}`;
      }
    }
    await Promise.all(
      live().map((s) =>
        s.runner!.next('ready', 60_000, 'ready').then(
          (ev) => {
            if (typeof ev.version === 'string') s.row.version = ev.version;
          },
          (err) => fail(s, err),
        ),
      ),
    );
    // Every runner is told to start at once; the window opens when the last has connected.
    c.progress('connecting');
    for (const s of live()) {
      s.t0 = performance.now();
      s.startedAt = Date.now() / 1000;
      s.runner!.send('start');
    }
    const connectMs = 60_000 + counters.length * 20 * n;
    await Promise.all(
      live().map((s) =>
        s.runner!.next('connected', connectMs, 'all PVs connected').then(
          () => {
            s.row.connectMs = performance.now() - s.t0!;
          },
          (err) => fail(s, err),
        ),
      ),
    );
    c.progress('collecting');
    // A warm-up (the subscriptions' first burst), then the window: CPU from each host's own
    // readings of its processes, the IOC's count and clock at both ends.
    await sleep(WARMUP_MS);
    const t0 = performance.now();
    const stats0 = await c.ioc.stats().catch(() => undefined);
    for (const s of live()) s.r0 = s.runner!.meter.read();
    const ioc0 = c.ioc.meter.read();
    await setRamp(c.rampHz);
    await sleep(Math.max(0, w.seconds * 1000 - (performance.now() - t0)));
    const stats1: TickStats | undefined = await c.ioc.stats().catch(() => undefined);
    const ioc1 = c.ioc.meter.read();
    await setRamp(0);
    iocCpu = cpuBetween(ioc0, ioc1);
    iocUpdatesS = iocRate(stats0, stats1, w.records);
    for (const s of live()) {
      const r1 = s.runner!.meter.read();
      const cpu = cpuBetween(s.r0, r1);
      if (cpu !== undefined) s.row.cpuPercent = cpu;
      if (r1) s.row.peakRssMb = Math.max(r1.peakKb, r1.rssKb) / 1024;
    }
    windowS = (performance.now() - t0) / 1000;
    // The window on the IOC's own clock, which stamped every update: from the warm-up's end to now;
    // and the IOC's own count of the ramp's updates in it.
    const window = stats0 && stats1 && stats1.time > stats0.time ? ([stats0.time, stats1.time] as const) : undefined;
    if (window && stats0?.rampValue !== undefined && stats1?.rampValue !== undefined) {
      rampPublished = stats1.rampValue - stats0.rampValue;
      rampPublishedHz = rampPublished / (window[1] - window[0]);
    }
    c.progress('shipping');
    await Promise.all(
      live().map(async (s) => {
        try {
          const samples = await shipSamples(s.runner!);
          s.analysis = analyseRunner(samples, {
            names: s.names,
            rate: w.rateHz,
            startedAt: s.startedAt!,
            ...(s.ramp && { rampIndex: s.names.length - 1 }),
            ...(window && { window }),
            ...(rampPublished !== undefined && { rampPublished }),
          });
          Object.assign(s.row, s.analysis.figures);
          if (s.analysis.problem) s.row.error = s.analysis.problem;
          await s.runner!.finish();
        } catch (err) {
          await fail(s, err);
        }
      }),
    );
  } finally {
    clearInterval(guard);
    for (const s of slots) {
      s.deadline?.clear();
      if (s.row.error !== undefined || !s.analysis) await s.runner?.kill();
    }
  }
  for (const s of slots) s.row.ok = s.row.error === undefined && s.analysis !== undefined;
  for (const s of slots) if (s.row.ok === false && s.row.error === undefined) s.row.error = 'no samples';
  // A ramp the IOC did not run in the window (its rate reached it too late) has no fairness figure.
  if (rampError === undefined && rampPublished === 0)
    rampError = 'PREFIX:RAMP published no update in the window: the put of its rate reached the IOC too late';
  return stepResult(c, slots, { windowS, iocCpu, iocUpdatesS, rampError, rampPublishedHz });
}

/** CPU % of one core between two readings of one meter (undefined without both). */
function cpuBetween(a: Reading | undefined, b: Reading | undefined): number | undefined {
  if (!a || !b || !(b.t > a.t)) return undefined;
  return ((b.cpuS - a.cpuS) / ((b.t - a.t) / 1000)) * 100;
}

/** A step's figures pooled over its runners, judged. */
function stepResult(
  c: StepContext,
  slots: readonly Slot[],
  m: {
    windowS: number | undefined;
    iocCpu: number | undefined;
    iocUpdatesS: number | undefined;
    rampError: string | undefined;
    rampPublishedHz: number | undefined;
  },
): LoadStepResult {
  const w = c.workload;
  const load = slots;
  const fair = slots.filter((s) => s.ramp && s.analysis);
  const totalClients = c.runnersPerHost * c.hosts.length;
  const missed = load.reduce((a, s) => a + (s.row.missed ?? 0), 0);
  const received = load.reduce((a, s) => a + (s.analysis?.received ?? 0), 0);
  const latency = pooledLatency(load.flatMap((s) => (s.analysis ? [s.analysis.latencies] : [])));
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const steady = fair.map((s) => s.row.steadyFraction).filter((x): x is number => x !== undefined);
  const ramp = fair.map((s) => s.row.rampFraction).filter((x): x is number => x !== undefined);
  const published = fair.map((s) => s.row.rampPublishedHz).filter((x): x is number => x !== undefined);
  const spans = fair.map((s) => s.analysis?.rampSeconds).filter((x): x is number => x !== undefined);
  const s: Omit<LoadStepResult, 'held' | 'limit'> = {
    client: c.client.name,
    runnersPerHost: c.runnersPerHost,
    totalClients,
    offeredUpdatesS: totalClients * w.records * w.rateHz,
    updatesS: load.reduce((a, x) => a + (x.row.updatesS ?? 0), 0),
    missed,
    lossFraction: missed + received > 0 ? missed / (missed + received) : 0,
    ...(latency && { latencyMs: latency }),
    hosts: c.hosts.map((h) => {
      const mine = load.filter((x) => x.host === h);
      const cores = c.cores[h.name];
      return {
        host: h.name,
        cpuPercent: mine.reduce((a, x) => a + (x.row.cpuPercent ?? 0), 0),
        runners: mine.length,
        failed: mine.filter((x) => !x.row.ok).length,
        ...(cores !== undefined && { cores }),
      };
    }),
    ...(m.iocCpu !== undefined && { iocCpuPercent: m.iocCpu }),
    ...(m.iocUpdatesS !== undefined && { iocUpdatesS: m.iocUpdatesS }),
    ...(m.rampError !== undefined && { rampError: m.rampError }),
    ...(m.rampError === undefined &&
      steady.length &&
      ramp.length && {
        fairness: {
          rampRateHz: c.rampHz,
          ...(m.rampPublishedHz !== undefined
            ? { rampPublishedHz: m.rampPublishedHz }
            : published.length && { rampPublishedHz: mean(published) }),
          ...(spans.length && { rampSeconds: mean(spans) }),
          steadyFraction: mean(steady),
          rampFraction: mean(ramp),
          ratio: mean(ramp) / Math.max(mean(steady), 1e-9),
        },
      }),
    runners: slots.map((x) => x.row),
    ...(m.windowS !== undefined && { windowS: m.windowS }),
  };
  return {
    ...s,
    ...judgeLoadStep(s, {
      first: c.first,
      latencyGrowthMs: w.latencyGrowthMs,
      iocOfferedUpdatesS: w.records * w.rateHz,
      iocHost: c.iocHost,
      cores: c.cores,
    }),
  };
}
