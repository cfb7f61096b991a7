// What each workload's main figure is, for the summary, the charts and compare: one description
// per workload (the figure, its unit, whether higher or lower is better, and what makes a
// client's result incomplete). A new workload is one more entry of WORKLOADS.
import {
  heldRate,
  stat,
  type ArrayPutRun,
  type BenchResults,
  type LatencyRun,
  type MonitorRun,
  type SnapshotRun,
  type Stat,
} from '../results/index.js';
import { groupByClient } from './table.js';
import { captureBenchTitle, stepLabel } from './capture.js';
import { arrayPutTitle } from './array-put.js';
import { latencyTitle } from './latency.js';
import { headroomNote, headroomTitle } from './headroom.js';
import { loadLimitNote, loadTitle } from './load.js';

/** One client's main figure on one workload: a value per run, and why it cannot count as a result. */
export interface ClientFigure {
  client: string;
  version?: string | undefined;
  /** The figure of every run that produced one. */
  values: number[];
  stat: Stat | undefined;
  /** Failed checks and missing work (names unanswered, updates missed, corrupt arrays, a stop):
   *  empty when the client passed every check of every run. */
  problems: string[];
  /** Set when a run was stopped at the client's deadline. */
  stoppedAfterS?: number | undefined;
}

export interface WorkloadFigures {
  /** Stable across runs, for compare: "snapshot 1000+95", "monitor", "array", "array-put completion",
   *  "array-put no completion", "latency". */
  key: string;
  title: string;
  /** The main figure: what it is, its unit, which way is better. */
  figure: string;
  unit: string;
  better: 'lower' | 'higher';
  stealPercent?: number | undefined;
  clients: ClientFigure[];
  /** Figures to hold the clients against (the capture's disk rate and the study's), drawn as
   *  lines on the chart; never ranked. */
  references?: { label: string; value: number; to?: number }[];
}

export interface WorkloadKind {
  /** The workloads of this kind in a run (none when the run did not include it). */
  figures(r: BenchResults): WorkloadFigures[];
}

const plural = (n: number, one: string, many = `${one}s`) => `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;

function figure<T extends { client: string; version?: string | undefined; error?: string | undefined; stoppedAfterS?: number | undefined }>(
  runs: readonly T[],
  value: (r: T) => number | undefined,
  problems: (r: T) => string[],
): ClientFigure[] {
  return [...groupByClient(runs)].map(([client, rs]) => {
    const values = rs.map(value).filter((v): v is number => v !== undefined && Number.isFinite(v));
    const found = new Set<string>();
    for (const r of rs) {
      // The checks' own findings say more than the run's one-line error; the error stands alone
      // when there are none (a crash, a stop).
      const p = problems(r);
      if (r.stoppedAfterS !== undefined || (p.length === 0 && r.error)) found.add(r.error ?? `stopped after ${r.stoppedAfterS} s`);
      for (const x of p) found.add(x);
    }
    if (values.length < rs.length && found.size === 0) found.add(`${rs.length - values.length} of ${rs.length} runs gave no figure`);
    const stopped = rs.find((r) => r.stoppedAfterS !== undefined)?.stoppedAfterS;
    return {
      client,
      version: rs.find((r) => r.version)?.version,
      values,
      stat: stat(values),
      problems: [...found],
      ...(stopped !== undefined && { stoppedAfterS: stopped }),
    };
  });
}

const snapshot: WorkloadKind = {
  figures: (r) =>
    r.snapshot.map((s) => ({
      key: `snapshot ${s.workload.id}`,
      title: `Snapshot ${s.workload.id}: ${plural(s.workload.connected, 'PV')} that exist + ${s.workload.missing} missing, timeout ${r.options.timeoutMs} ms`,
      figure: 'wall time',
      unit: 's',
      better: 'lower' as const,
      stealPercent: s.stealPercent,
      clients: figure<SnapshotRun>(
        s.runs,
        (x) => (x.wallMs === undefined || x.stoppedAfterS !== undefined ? undefined : x.wallMs / 1000),
        (x) => {
          const p: string[] = [];
          if (x.wallMs !== undefined && x.answered < s.workload.connected)
            p.push(`${plural(s.workload.connected - x.answered, 'PV')} that exist unanswered`);
          if (x.wrong) p.push(`${plural(x.wrong, 'wrong answer')}`);
          if (x.unchecked) p.push(`values not checked: ${x.unchecked}`);
          return p;
        },
      ),
    })),
};

const monitorProblems = (x: MonitorRun): string[] => {
  const c = x.check;
  if (!c) return [];
  const p: string[] = [];
  if (c.missedValues) p.push(`${plural(c.missedValues, 'update')} missed`);
  if (c.silentPvs) p.push(`${plural(c.silentPvs, 'PV')} silent`);
  if (c.valueErrors + c.timestampErrors + c.severityErrors + c.staleTimestamps) p.push('samples failed their checks');
  if (!c.ok && p.length === 0) p.push('sample check failed');
  return p;
};

const monitor: WorkloadKind = {
  figures: (r) =>
    r.monitor
      ? [
          {
            key: 'monitor',
            title: `Monitor: ${plural(r.options.records, 'counter')} x ${r.options.samples} samples at ${r.options.rate} Hz`,
            figure: 'CPU of the client process',
            unit: '% of one core',
            better: 'lower' as const,
            stealPercent: r.monitor.stealPercent,
            clients: figure<MonitorRun>(
              r.monitor.runs,
              (x) => (x.stoppedAfterS !== undefined ? undefined : x.cpuPercent?.mean),
              monitorProblems,
            ),
          },
        ]
      : [],
};

const array: WorkloadKind = {
  figures: (r) =>
    r.array
      ? [
          {
            key: 'array',
            title: `Array: one ${r.array.workload.elements.toLocaleString('en-US')}-element ${r.array.workload.type ?? 'double'} waveform refreshed ${r.array.workload.rate === 'max' ? 'as fast as the IOC can' : `at ${r.array.workload.rate} Hz`}, ${r.array.workload.samples} updates per run`,
            figure: 'elements received per second',
            unit: 'millions',
            better: 'higher' as const,
            stealPercent: r.array.stealPercent,
            clients: figure<MonitorRun>(
              r.array.runs,
              (x) => (x.stoppedAfterS !== undefined ? undefined : x.array?.mElementsPerSecond),
              (x) => {
                const a = x.array;
                if (!a) return [];
                const p: string[] = [];
                if (a.corrupt)
                  p.push(
                    `${plural(a.corrupt, 'corrupt array')}${a.corruptUpdates?.length ? ` (${a.corruptUpdates.slice(0, 2).join('; ')})` : ''}`,
                  );
                if (a.valueErrors) p.push(`${plural(a.valueErrors, 'update')} went backwards`);
                return p;
              },
            ),
          },
        ]
      : [],
};

/** Array put, one entry per mode (each put waiting for its completion, or not): the main figure
 *  is what the IOC received and checked per second, so a put still queued does not count. */
const arrayPut: WorkloadKind = {
  figures: (r) => {
    const a = r.arrayPut;
    if (!a) return [];
    return [true, false].flatMap((callback) => {
      const runs = a.runs.filter((x) => x.callback === callback);
      if (runs.length === 0) return [];
      const mode = callback ? 'completion' : 'no completion';
      return [
        {
          key: `array-put ${mode}`,
          title: `${arrayPutTitle(a.workload)}, ${callback ? 'each waiting for its completion' : 'none waiting for completion'}`,
          figure: 'elements put and checked by the IOC per second',
          unit: 'millions',
          better: 'higher' as const,
          stealPercent: a.stealPercent,
          clients: figure<ArrayPutRun>(
            runs,
            (x) => (x.stoppedAfterS !== undefined ? undefined : x.ioc?.mElementsPerSecond),
            (x) => {
              const p: string[] = [];
              if (x.failedPuts) p.push(`${plural(x.failedPuts, 'put')} failed in the client`);
              if (x.ioc?.bad) p.push(`the IOC found ${plural(x.ioc.bad, 'bad put')}`);
              if (x.ioc && x.ioc.received < x.puts - x.failedPuts) p.push(`the IOC received ${x.ioc.received} of ${x.puts - x.failedPuts}`);
              if (x.ioc && x.puts < a.workload.samples && x.stoppedAfterS === undefined && !x.error)
                p.push(`${x.puts} of ${a.workload.samples} puts made`);
              return p;
            },
          ),
        },
      ];
    });
  },
};

/** Latency: the main figure is the median round trip at the largest payload every client tried. */
const latency: WorkloadKind = {
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
};

/**
 * Capture: the main figure is the highest MB/s a client wrote to HDF5 with zero loss while the
 * load rose. Losing updates at a later step is how the limit is found, not a failure; losing them
 * at the first step (no figure at all), a run that failed, or a stop at the deadline is.
 */
const capture: WorkloadKind = {
  figures: (r) => {
    const c = r.capture;
    if (!c) return [];
    const references = [
      ...(c.diskMBs !== undefined ? [{ label: 'disk (sequential)', value: c.diskMBs }] : []),
      { label: 'the study (pandablocks)', value: c.studyMBs[0], to: c.studyMBs[1] },
    ];
    return [
      {
        key: 'capture',
        title: captureBenchTitle(c),
        figure: 'highest MB/s written with zero loss',
        unit: 'MB/s',
        better: 'higher' as const,
        references,
        clients: c.clients.map((cl): ClientFigure => {
          const mine = c.steps.filter((x) => x.client === cl.client);
          const mbS = cl.best?.mbS;
          const values = mbS !== undefined && Number.isFinite(mbS) ? [mbS] : [];
          const problems: string[] = [];
          const first = mine[0];
          if (!first) problems.push('no load step ran');
          else if (!cl.best && !first.run.error)
            problems.push(`${plural(first.lost, 'update')} lost at its first step (${stepLabel(first)})`);
          for (const x of mine) if (x.run.error) problems.push(`${stepLabel(x)}: ${x.run.error}`);
          const stopped = mine.find((x) => x.run.stoppedAfterS !== undefined)?.run.stoppedAfterS;
          return {
            client: cl.client,
            version: mine.find((x) => x.run.summary?.version)?.run.summary?.version,
            values,
            stat: stat(values),
            problems,
            ...(stopped !== undefined && { stoppedAfterS: stopped }),
          };
        }),
      },
    ];
  },
};

/**
 * Headroom: the main figure is the highest update rate a client held with no loss and no growing
 * latency. Giving way at a later step is how the limit is found, not a failure; giving way at the
 * first step (no figure at all) or a stop at the deadline is. The IOC's highest published rate is
 * the reference: a client near it was held back by the IOC, not by itself.
 */
const headroom: WorkloadKind = {
  figures: (r) => {
    const h = r.headroom;
    if (!h) return [];
    return [
      {
        key: 'headroom',
        title: headroomTitle(h),
        figure: 'highest updates/s held with no loss',
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
};

/**
 * Load: the main figure is how many clients (load runners on every host) a client's ramp served
 * with no loss, no grown latency and no failed runner. Giving way at a later step is how the limit
 * is found; giving way at the first step (no figure) is incomplete.
 */
const load: WorkloadKind = {
  figures: (r) => {
    const l = r.load;
    if (!l) return [];
    return [
      {
        key: 'load',
        title: loadTitle(l),
        figure: 'clients served with no loss',
        unit: 'clients',
        better: 'higher' as const,
        stealPercent: l.stealPercent,
        clients: l.clients.map((cl): ClientFigure => {
          const mine = l.steps.filter((x) => x.client === cl.client);
          const values = cl.served > 0 ? [cl.served] : [];
          const problems: string[] = [];
          if (mine.length === 0) problems.push('no step ran');
          else if (cl.served === 0) problems.push(`gave way at its first step (${loadLimitNote(cl, l)})`);
          const version = mine.flatMap((x) => x.runners).find((x) => x.version)?.version;
          return { client: cl.client, version, values, stat: stat(values), problems };
        }),
      },
    ];
  },
};

/** Every workload, in report order. */
export const WORKLOADS: readonly WorkloadKind[] = [snapshot, monitor, array, arrayPut, latency, capture, headroom, load];

export function workloadFigures(r: BenchResults): WorkloadFigures[] {
  return WORKLOADS.flatMap((w) => w.figures(r));
}

/** How many times worse than `best` a median is (1 = the best; > 1 worse), whichever way is better. */
export function timesBest(w: Pick<WorkloadFigures, 'better'>, median: number, best: number): number {
  return w.better === 'lower' ? median / best : best / median;
}

export interface Ranked {
  /** The best client among those that passed every check (undefined: none did). */
  best: ClientFigure | undefined;
  /** Clients that passed every check, best first, then the others (incomplete ones last). */
  order: ClientFigure[];
  /** Each client's median relative to the best's (timesBest). */
  ratio: Map<string, number>;
}

export function rank(w: WorkloadFigures): Ranked {
  const key = (c: ClientFigure) => (c.stat ? (w.better === 'lower' ? c.stat.median : -c.stat.median) : Infinity);
  const complete = w.clients.filter((c) => c.problems.length === 0 && c.stat).sort((a, b) => key(a) - key(b));
  const rest = w.clients.filter((c) => !complete.includes(c)).sort((a, b) => key(a) - key(b));
  const best = complete[0];
  const ratio = new Map<string, number>();
  if (best?.stat && best.stat.median > 0) {
    for (const c of w.clients) if (c.stat && c.stat.median > 0) ratio.set(c.client, timesBest(w, c.stat.median, best.stat.median));
  }
  return { best, order: [...complete, ...rest], ratio };
}
