// `bench`: each client in turn, repeated, on the snapshot and monitor workloads, against one
// built-in IOC per workload family; returns plain results for the reporters.
import { startIoc } from '../ioc/index.js';
import { stealMeter } from './procstat.js';
import { schedulingPrefix } from './sched.js';
import { percentile } from './checks.js';
import { clientStatuses, type ClientSpec } from './clients.js';
import { runMonitor, type MonitorRunOptions } from './monitor.js';
import { runSnapshot } from './snapshot.js';
import { runCaptureBench } from './capture.js';
import type { CaptureClient } from '../capture/orchestrate.js';
import { BENCH_FORMAT, type BenchResults, type BenchRunOptions, type EnvironmentReport, type MonitorRun, type SnapshotWorkload } from '../results/index.js';

/** After the 2012 snapshot study, plus the 10,000-name rows of the client's own targets. */
export const SNAPSHOT_WORKLOADS: readonly SnapshotWorkload[] = [
  { id: '97', connected: 97, missing: 0 },
  { id: '97+4', connected: 97, missing: 4 },
  { id: '97+15', connected: 97, missing: 15 },
  { id: '1000+95', connected: 1000, missing: 95 },
  { id: '10000', connected: 10_000, missing: 0 },
  { id: '10000+95', connected: 10_000, missing: 95 },
];

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
  onProgress?: (text: string) => void;
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
        const times = run.rows.filter((x) => x.ok && x.elapsedMs !== undefined).map((x) => x.elapsedMs!).sort((a, b) => a - b);
        const elapsedMs = times.length ? { p50: percentile(times, 50), p99: percentile(times, 99), max: times[times.length - 1]! } : undefined;
        const bad = run.rows.filter((x) => !x.ok || x.correct === false);
        const failureReasons: Record<string, number> = {};
        for (const x of bad) {
          const why = x.ok ? 'disagrees with the IOC' : x.error ?? 'failed';
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
  const results: BenchResults = {
    schema: BENCH_FORMAT,
    startedAt: new Date().toISOString(),
    environment: o.report,
    options: { workloads: o.workloads, repeat: o.repeat, timeoutMs: o.timeoutMs, records: o.records, samples: o.samples, rate: o.rate, clients: o.clients.map((c) => c.name), scheduling: schedulingPrefix().note },
    unavailable,
    snapshot: [],
    monitor: undefined,
    array: undefined,
  };

  if (o.workloads.snapshot.length) {
    const snapClients = ready.filter((c) => c.workloads.includes('snapshot'));
    const records = Math.max(...o.workloads.snapshot.map((w) => w.connected));
    // Counters tick slowly here: the snapshot reads values, it does not race updates.
    const ioc = await startIoc({ records, rate: 1, arrayElements: 0 });
    try {
      for (const w of o.workloads.snapshot) {
        const entry: BenchResults['snapshot'][number] = { workload: w, runs: [] };
        results.snapshot.push(entry);
        const names = snapshotNames(w);
        const steal = stealMeter();
        for (let rep = 1; rep <= o.repeat; rep++) {
          for (const client of snapClients) {
            const tag = `snapshot ${w.id} · ${client.name} · run ${rep}/${o.repeat}`;
            entry.runs.push(await runSnapshot({ client, python: o.python, env: ioc.env, names, timeoutMs: o.timeoutMs, onProgress: (s) => progress(`${tag}: ${s}`) }));
          }
        }
        entry.stealPercent = steal();
      }
    } finally {
      await ioc.stop();
    }
  }

  if (o.workloads.monitor) {
    const ioc = await startIoc({ records: o.records, rate: o.rate, arrayElements: 0 });
    try {
      results.monitor = await repeatMonitor(o, ready, 'monitor', `monitor ${o.records}x${o.samples}`, {
        env: ioc.env, names: ioc.counterNames(), samples: o.samples, rate: o.rate, iocPid: ioc.pid,
      });
    } finally {
      await ioc.stop();
    }
  }
  const aw = o.workloads.array;
  if (aw) {
    // The IOC refreshes the waveform at the given rate (by default as fast as it can); a client that
    // keeps up sees every update.
    const ioc = await startIoc({ records: 1, rate: 0, arrayElements: aw.elements, arrayRate: aw.rate });
    try {
      results.array = {
        workload: aw,
        ...(await repeatMonitor(o, ready, 'array', `array ${aw.elements} x ${aw.samples}`, {
          env: ioc.env, names: [`${ioc.prefix}ARRAY`], samples: aw.samples, rate: 1, iocPid: ioc.pid,
        })),
      };
    } finally {
      await ioc.stop();
    }
  }
  const cw = o.workloads.capture;
  if (cw) {
    const clients = cw.clients.filter((c) => {
      const s = statuses.find((x) => x.name === c);
      if (s && !s.available && !unavailable.some((u) => u.client === c)) unavailable.push({ client: c, reason: s.reason ?? 'unavailable' });
      return !s || s.available;
    }) as CaptureClient[];
    results.capture = await runCaptureBench({ clients, python: o.python, seconds: cw.seconds, flushMs: cw.flushMs, onProgress: progress });
  }
  return results;
}

/**
 * Every available client that serves `workload`, `o.repeat` times in turn, against one running
 * IOC; the runs and the host's steal over them.
 */
async function repeatMonitor(
  o: BenchOptions,
  available: readonly ClientSpec[],
  workload: 'monitor' | 'array',
  label: string,
  run: Pick<MonitorRunOptions, 'env' | 'names' | 'samples' | 'rate' | 'iocPid'>,
): Promise<{ runs: MonitorRun[]; stealPercent: number | undefined }> {
  const progress = o.onProgress ?? (() => {});
  const clients = available.filter((c) => c.workloads.includes(workload));
  const runs: MonitorRun[] = [];
  const steal = stealMeter();
  for (let rep = 1; rep <= o.repeat; rep++) {
    for (const client of clients) {
      const tag = `${label} · ${client.name} · run ${rep}/${o.repeat}`;
      runs.push(await runMonitor({ ...run, workload, client, python: o.python, onProgress: (s) => progress(`${tag}: ${s}`) }));
    }
  }
  return { runs, stealPercent: steal() };
}
