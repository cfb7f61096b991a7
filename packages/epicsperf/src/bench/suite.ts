// `bench`: each client in turn, repeated, on the snapshot, monitor, array, array-put and latency
// workloads, against one built-in IOC per workload family, and the capture and headroom workloads'
// load steps (src/bench/capture.ts, headroom.ts); returns plain results for the reporters.
import { hostname } from 'node:os';
import { UsageError } from '../errors.js';
import type { ArrayType } from '../ioc/index.js';
import { Placement } from './placement.js';
import { stealMeter } from '../procstat.js';
import { schedulingPrefix } from '../runner/sched.js';
import { percentile } from './checks.js';
import { clientStatuses, type ClientSpec, type Workload } from '../clients/index.js';
import { runMonitor, type MonitorRunOptions } from './monitor.js';
import { runSnapshot } from './snapshot.js';
import { CAPTURE_STEPS, runCaptureBench } from './capture.js';
import type { CaptureClient } from '../capture/orchestrate.js';
import { runPutWorkloads } from './put-suite.js';
import { clientDeadline } from './profiles.js';
import { runHeadroom } from './headroom.js';
import { runLoad } from './load.js';
import { LOCAL } from '../hosts/host.js';
import { captureOutcome, headroomOutcome, loadOutcome, monitorOutcome, snapshotOutcome } from '../report/outcomes.js';
import {
  BENCH_FORMAT,
  type BenchResults,
  type BenchRunOptions,
  type EnvironmentReport,
  type MonitorRun,
  type SnapshotWorkload,
} from '../results/index.js';

/** After the 2012 snapshot study, plus the 10,000- and 100,000-name rows of the client's own
 *  targets (the facility scale); any other `N+M` is accepted too (parseSnapshotWorkload). */
export const SNAPSHOT_WORKLOADS: readonly SnapshotWorkload[] = [
  { id: '97', connected: 97, missing: 0 },
  { id: '97+4', connected: 97, missing: 4 },
  { id: '97+15', connected: 97, missing: 15 },
  { id: '1000+95', connected: 1000, missing: 95 },
  { id: '10000', connected: 10_000, missing: 0 },
  { id: '10000+95', connected: 10_000, missing: 95 },
  { id: '100000+95', connected: 100_000, missing: 95 },
];

/** The most counters a snapshot reads (the built-in IOC's facility scale), and the most missing names. */
export const SNAPSHOT_MAX_CONNECTED = 100_000;
export const SNAPSHOT_MAX_MISSING = 10_000;

/**
 * A snapshot workload from its id: `N` or `N+M`, N counters the IOC serves (1-100000) and M names
 * it does not (0-10000). The id is kept in its plain form (`97+0` is `97`, no leading zeros).
 */
export function parseSnapshotWorkload(id: string): SnapshotWorkload {
  const m = /^(\d{1,6})(?:\+(\d{1,5}))?$/.exec(id.trim());
  const connected = Number(m?.[1]);
  const missing = Number(m?.[2] ?? 0);
  if (!m || connected < 1 || connected > SNAPSHOT_MAX_CONNECTED || missing > SNAPSHOT_MAX_MISSING) {
    throw new UsageError(
      `snapshot workload "${id}" is not N or N+M (N names that exist, 1-${SNAPSHOT_MAX_CONNECTED}; M missing, 0-${SNAPSHOT_MAX_MISSING}), e.g. 1000+95 or 100000+95`,
    );
  }
  return { id: missing ? `${connected}+${missing}` : String(connected), connected, missing };
}

/** The workloads: the 2012 study's lists, and 1,000 and 10,000 names with 95 missing. */
export const DEFAULT_SNAPSHOTS = ['97', '97+4', '97+15', '1000+95', '10000+95'];

export function snapshotNames(w: SnapshotWorkload): string[] {
  const names = Array.from({ length: w.connected }, (_, i) => `TEST:CALC${i + 1}`);
  // Missing names spread evenly through the list, as in a real save set.
  for (let k = 0; k < w.missing; k++) {
    const at = Math.floor(((k + 1) * names.length) / (w.missing + 1));
    names.splice(at, 0, `TEST:MISSING${k + 1}`);
  }
  return names;
}

/** What to run: the stored options (clients as specs; the scheduling note is found out) and how. */
export interface BenchOptions extends Omit<BenchRunOptions, 'clients' | 'scheduling'> {
  clients: readonly ClientSpec[];
  python: string;
  report: EnvironmentReport;
  /** Where the clients and the IOC run (default: all here). The capture and headroom workloads
   *  always run here. */
  placement?: Placement;
  /** The phase of the step under way (starting, reading, collecting ...). */
  onProgress?: (text: string) => void;
  /** A step (one client, one workload, one run) starts or ends. */
  onStep?: (e: StepEvent) => void;
}

/** One step of a bench run: `index` of `total` (from 1), and at its end a one-line outcome. */
export interface StepEvent {
  phase: 'start' | 'end';
  index: number;
  total: number;
  workload: string;
  client: string;
  run: number;
  repeat: number;
  /** At the end: seconds the step took, and what it found. */
  seconds?: number;
  outcome?: string;
}

/** The clients that serve each family of the run, available here. */
function clientsFor(ready: readonly ClientSpec[]) {
  const serving = (w: Workload) => ready.filter((c) => c.workloads.includes(w));
  return {
    snapshot: serving('snapshot'),
    monitor: serving('monitor'),
    array: serving('array'),
    arrayPut: serving('array-put'),
    latency: serving('latency'),
  };
}

/** How many steps a run will take (the progress line's denominator). An array-put step is one
 *  client in one mode (with completion, then without); clients that cannot run latency take no step. */
export function countSteps(o: Pick<BenchOptions, 'repeat' | 'workloads'>, ready: readonly ClientSpec[]): number {
  const c = clientsFor(ready);
  const w = o.workloads;
  const cw = w.capture;
  // Capture: every load step for every client at most (a client that loses updates skips the
  // rest of that kind, and the total shrinks then).
  const capture = cw ? captureClientsOf(cw, ready).length * CAPTURE_STEPS.length : 0;
  // Headroom likewise: every step for every client at most.
  const headroom = w.headroom ? c.monitor.length * w.headroom.steps.length : 0;
  const load = w.load ? c.monitor.length * w.load.steps.length : 0;
  return (
    headroom +
    load +
    o.repeat *
      (w.snapshot.length * c.snapshot.length +
        (w.monitor ? c.monitor.length : 0) +
        (w.array ? c.array.length : 0) +
        (w.arrayPut ? 2 * c.arrayPut.length : 0) +
        (w.latency ? c.latency.length : 0)) +
    capture
  );
}

/** The capture workload's clients that are available here, in the order asked. */
function captureClientsOf(cw: NonNullable<BenchOptions['workloads']['capture']>, ready: readonly ClientSpec[]): CaptureClient[] {
  return cw.clients.filter((c) => ready.some((r) => r.name === c)) as CaptureClient[];
}

/** Counts the steps and reports their starts and ends. */
export class Steps {
  private index = 0;
  constructor(
    private total: number,
    private readonly onStep: ((e: StepEvent) => void) | undefined,
  ) {}

  /** `n` counted steps will not run after all. */
  skip(n: number): void {
    this.total = Math.max(this.index, this.total - n);
  }

  async run<T>(
    workload: string,
    client: string,
    run: number,
    repeat: number,
    body: () => Promise<T>,
    outcome: (r: T) => string,
  ): Promise<T> {
    const base = { index: ++this.index, total: this.total, workload, client, run, repeat };
    this.onStep?.({ phase: 'start', ...base });
    const t0 = performance.now();
    const r = await body();
    this.onStep?.({ phase: 'end', ...base, seconds: (performance.now() - t0) / 1000, outcome: outcome(r) });
    return r;
  }
}

/**
 * The results as stored: a snapshot run keeps the first 100 rows of PVs that failed or disagreed
 * with the IOC, a count per reason, and the distribution of the answers' elapsed times, instead
 * of one row per PV (10,000 per run).
 */
export function compactResults(r: BenchResults): BenchResults {
  return {
    ...r,
    snapshot: r.snapshot.map((s) => ({
      ...s,
      runs: s.runs.map((run) => {
        if (run.rowsKept === 'failures') return run;
        const times = run.rows
          .filter((x) => x.ok && x.elapsedMs !== undefined)
          .map((x) => x.elapsedMs!)
          .sort((a, b) => a - b);
        const elapsedMs = times.length
          ? { p50: percentile(times, 50), p99: percentile(times, 99), max: times[times.length - 1]! }
          : undefined;
        const bad = run.rows.filter((x) => !x.ok || x.correct === false);
        const failureReasons: Record<string, number> = {};
        for (const x of bad) {
          const why = x.ok ? 'disagrees with the IOC' : (x.error ?? 'failed');
          failureReasons[why] = (failureReasons[why] ?? 0) + 1;
        }
        return { ...run, rows: bad.slice(0, 100), rowsKept: 'failures' as const, failureReasons, ...(elapsedMs && { elapsedMs }) };
      }),
    })),
  };
}

export async function runBench(o: BenchOptions): Promise<BenchResults> {
  const progress = o.onProgress ?? (() => {});
  const statuses = clientStatuses(o.report);
  const unavailable: BenchResults['unavailable'] = [];
  const ready = o.clients.filter((c) => {
    const s = statuses.find((x) => x.name === c.name);
    if (s && !s.available) unavailable.push({ client: c.name, reason: s.reason ?? 'unavailable' });
    return !s || s.available;
  });
  const t0 = performance.now();
  const pl = o.placement ?? Placement.local(o.python);
  const steps = new Steps(countSteps(o, ready), o.onStep);
  const deadline = clientDeadline(o);
  const results: BenchResults = {
    schema: BENCH_FORMAT,
    startedAt: new Date().toISOString(),
    host: hostname(),
    environment: o.report,
    hosts: await pl.records(),
    options: {
      workloads: o.workloads,
      repeat: o.repeat,
      timeoutMs: o.timeoutMs,
      records: o.records,
      samples: o.samples,
      rate: o.rate,
      clients: o.clients.map((c) => c.name),
      scheduling: schedulingPrefix().note,
      profile: o.profile,
      ...(o.clientDeadlineS !== undefined && { clientDeadlineS: o.clientDeadlineS }),
      ...(o.clientDeadlineS !== undefined && o.clientDeadlineBeyondWork && { clientDeadlineBeyondWork: true }),
    },
    unavailable,
    snapshot: [],
  };

  if (o.workloads.snapshot.length) {
    const snapClients = ready.filter((c) => c.workloads.includes('snapshot'));
    const records = Math.max(...o.workloads.snapshot.map((w) => w.connected));
    // Counters tick slowly here: the snapshot reads values, it does not race updates.
    const ioc = await pl.startIoc({ records, rate: 1, arrayElements: 0 });
    try {
      for (const w of o.workloads.snapshot) {
        const entry: BenchResults['snapshot'][number] = { workload: w, runs: [] };
        results.snapshot.push(entry);
        const names = snapshotNames(w);
        const steal = stealMeter();
        for (let rep = 1; rep <= o.repeat; rep++) {
          for (const client of snapClients) {
            entry.runs.push(
              await steps.run(
                `snapshot ${w.id}`,
                client.name,
                rep,
                o.repeat,
                () =>
                  runSnapshot({
                    client,
                    python: o.python,
                    env: ioc.env,
                    names,
                    timeoutMs: o.timeoutMs,
                    onProgress: progress,
                    ...pl.runOn(client.name),
                    ...deadline(o.timeoutMs / 1000),
                  }),
                snapshotOutcome,
              ),
            );
          }
        }
        entry.stealPercent = steal();
      }
    } finally {
      await ioc.stop();
    }
  }

  if (o.workloads.monitor) {
    const ioc = await pl.startIoc({ records: o.records, rate: o.rate, arrayElements: 0 });
    try {
      results.monitor = await repeatMonitor(
        o,
        pl,
        steps,
        ready,
        'monitor',
        `monitor ${o.records}x${o.samples}`,
        deadline(o.samples / o.rate),
        {
          env: ioc.env,
          names: ioc.counterNames(),
          samples: o.samples,
          rate: o.rate,
          iocMeter: ioc.meter,
        },
      );
    } finally {
      await ioc.stop();
    }
  }
  const aw = o.workloads.array;
  if (aw) {
    // The IOC refreshes the waveform at the given rate (by default as fast as it can); a client that
    // keeps up sees every update.
    const ioc = await pl.startIoc({
      records: 1,
      rate: 0,
      arrayElements: aw.elements,
      arrayRate: aw.rate,
      ...(aw.type && { arrayType: aw.type as ArrayType }),
    });
    try {
      results.array = {
        workload: aw,
        ...(await repeatMonitor(
          o,
          pl,
          steps,
          ready,
          'array',
          `array ${aw.elements.toLocaleString('en-US')}`,
          deadline(typeof aw.rate === 'number' ? aw.samples / aw.rate : 0),
          {
            env: ioc.env,
            names: [`${ioc.prefix}ARRAY`],
            samples: aw.samples,
            rate: 1,
            iocMeter: ioc.meter,
            array: { elements: aw.elements, ...(aw.type && { type: aw.type }), iocStats: () => ioc.stats() },
          },
        )),
      };
    } finally {
      await ioc.stop();
    }
  }
  await runPutWorkloads(
    {
      ...o.workloads,
      repeat: o.repeat,
      python: o.python,
      placement: pl,
      deadline,
      ...(o.onProgress && { onProgress: o.onProgress }),
    },
    steps,
    ready,
    results,
  );
  const cw = o.workloads.capture;
  if (cw) {
    const clients = captureClientsOf(cw, ready);
    // Each (load step, client) capture is one step of the progress and one run under the deadline.
    results.capture = await runCaptureBench({
      clients,
      python: o.python,
      seconds: cw.seconds,
      flushMs: cw.flushMs,
      onProgress: progress,
      ...deadline(cw.seconds),
      runStep: (label, client, body) => steps.run(`capture ${label}`, client, 1, 1, body, captureOutcome),
      onSkip: (n) => steps.skip(n),
    });
  }
  if (o.workloads.headroom) {
    results.headroom = await runHeadroom({
      clients: ready.filter((c) => c.workloads.includes('monitor')),
      python: o.python,
      workload: o.workloads.headroom,
      onProgress: progress,
      ...deadline(o.workloads.headroom.seconds),
      runStep: (label, client, body) => steps.run(`headroom ${label}`, client, 1, 1, body, headroomOutcome),
      onSkip: (n) => steps.skip(n),
    });
  }
  const lw = o.workloads.load;
  if (lw) {
    // Every agent of --hosts runs the step's runners of each client, against the IOC where it is
    // placed (here unless --place ioc=); without --hosts, this host runs them and the IOC.
    const loadClients = ready.filter((c) => c.workloads.includes('monitor'));
    const agents = pl.hosts.filter((h) => h.name !== LOCAL);
    const hosts = pl.spread && agents.length > 0 ? agents : [pl.hosts[0]!];
    await Promise.all(
      agents
        .filter((h) => hosts.includes(h))
        .map((h) =>
          h.prepare(
            loadClients.map((c) => c.name),
            false,
          ),
        ),
    );
    results.load = await runLoad({
      clients: loadClients,
      hosts,
      iocHost: pl.iocHost,
      steps: lw.steps,
      records: lw.records,
      rate: lw.rateHz,
      stepSeconds: lw.seconds,
      onProgress: progress,
      // This host's cores are in the report already; another host's come from its own report.
      hostCores: { [LOCAL]: o.report.cpu.cores },
      ...deadline(lw.seconds),
      runStep: (label, client, body) => steps.run(`load ${label}`, client, 1, 1, body, loadOutcome),
      onSkip: (n) => steps.skip(n),
    });
  }
  results.durationS = Math.round((performance.now() - t0) / 100) / 10;
  return results;
}

/**
 * Every available client that serves `workload`, `o.repeat` times in turn, against one running
 * IOC; the runs and the host's steal over them.
 */
async function repeatMonitor(
  o: BenchOptions,
  pl: Placement,
  steps: Steps,
  available: readonly ClientSpec[],
  workload: 'monitor' | 'array',
  label: string,
  deadline: { clientDeadlineMs?: number },
  run: Pick<MonitorRunOptions, 'env' | 'names' | 'samples' | 'rate' | 'iocMeter' | 'array'>,
): Promise<{ runs: MonitorRun[]; stealPercent: number | undefined }> {
  const progress = o.onProgress ?? (() => {});
  const clients = available.filter((c) => c.workloads.includes(workload));
  const runs: MonitorRun[] = [];
  const steal = stealMeter();
  for (let rep = 1; rep <= o.repeat; rep++) {
    for (const client of clients) {
      runs.push(
        await steps.run(
          label,
          client.name,
          rep,
          o.repeat,
          () =>
            runMonitor({
              ...run,
              workload,
              client,
              python: o.python,
              onProgress: progress,
              ...pl.runOn(client.name),
              ...deadline,
            }),
          monitorOutcome,
        ),
      );
    }
  }
  return { runs, stealPercent: steal() };
}
