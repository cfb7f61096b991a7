// `bench`: every workload of the run in turn (index.ts), each client repeated on it against the
// built-in IOC, and the results as stored.
import { hostname } from 'node:os';
import { Placement } from '../bench/placement.js';
import { schedulingPrefix } from '../launch/sched.js';
import { percentile } from '../bench/checks.js';
import { clientDeadline } from '../bench/profiles.js';
import { clientStatuses, type ClientSpec } from '../clients/index.js';
import { BENCH_FORMAT, type BenchResults, type BenchRunOptions, type EnvironmentReport } from '../results/index.js';
import { Steps, type StepEvent } from './steps.js';
import { WORKLOADS } from './index.js';

/** What to run: the stored options (clients as specs; the scheduling note is found out) and how. */
export interface BenchOptions extends Omit<BenchRunOptions, 'clients' | 'scheduling'> {
  clients: readonly ClientSpec[];
  python: string;
  report: EnvironmentReport;
  /** Where the clients and the IOC run (default: all here). The headroom workload always runs
   *  here. */
  placement?: Placement;
  /** The phase of the step under way (starting, reading, collecting ...). */
  onProgress?: (text: string) => void;
  /** A step (one client, one workload, one run) starts or ends. */
  onStep?: (e: StepEvent) => void;
}

/** How many steps a run will take (the progress line's denominator). */
export function countSteps(o: Pick<BenchOptions, 'repeat' | 'workloads'>, ready: readonly ClientSpec[]): number {
  return WORKLOADS.reduce((n, w) => n + w.steps(o.workloads, ready, o.repeat), 0);
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
  const statuses = clientStatuses(o.report);
  const unavailable: BenchResults['unavailable'] = [];
  const ready = o.clients.filter((c) => {
    const s = statuses.find((x) => x.name === c.name);
    if (s && !s.available) unavailable.push({ client: c.name, reason: s.reason ?? 'unavailable' });
    return !s || s.available;
  });
  const t0 = performance.now();
  const placement = o.placement ?? Placement.local(o.python);
  const results: BenchResults = {
    schema: BENCH_FORMAT,
    startedAt: new Date().toISOString(),
    host: hostname(),
    environment: o.report,
    hosts: await placement.records(),
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
  const ctx = {
    ready,
    repeat: o.repeat,
    python: o.python,
    run: { timeoutMs: o.timeoutMs, records: o.records, samples: o.samples, rate: o.rate },
    report: o.report,
    placement,
    deadline: clientDeadline(o),
    steps: new Steps(countSteps(o, ready), o.onStep),
    progress: o.onProgress ?? (() => {}),
  };
  for (const w of WORKLOADS) await w.run(o.workloads, ctx, results);
  results.durationS = Math.round((performance.now() - t0) / 100) / 10;
  return results;
}
