// What each workload's main figure is, for the summary, the charts and compare, and the parts of a
// workload's report: one `WorkloadView` per workload (src/workloads/), which the reports here loop
// over. Pure functions of results.
import { stat, type BenchResults, type Stat } from '../results/index.js';
import { groupByClient } from './table.js';

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
  /** Its rows are servers ("node (PVA)"), not clients: `epicsperf results` does not count them among a run's clients. */
  servers?: true;
}

export const plural = (n: number, one: string, many = `${one}s`) => `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;

export function figure<
  T extends { client: string; version?: string | undefined; error?: string | undefined; stoppedAfterS?: number | undefined },
>(runs: readonly T[], value: (r: T) => number | undefined, problems: (r: T) => string[]): ClientFigure[] {
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

/** How one workload appears in the reports (src/workloads/ declares one per workload). */
export interface WorkloadView {
  /** `bench <name>`. */
  name: string;
  /** A rising-load ramp: each step runs once, whatever the run's repeat count. */
  ramp: boolean;
  /** The workload's entries in a run (none when the run did not include it). */
  figures(r: BenchResults): WorkloadFigures[];
  /** How `epicsperf results` names what a run did of it, when not by its name (once, when it has
   *  entries): the snapshot names each of its lists. */
  listed?(r: BenchResults): string[];
  /** Its section of the text report ('' when the run did not include it). */
  text(r: BenchResults, markdown: boolean): string;
  /** The HTML report's parts for one entry of one run, beside the chart of its main figure. */
  html(r: BenchResults, key: string): Promise<HtmlParts>;
}

/** One entry's parts of the HTML report. */
export interface HtmlParts {
  /** More charts (`cls` names the figure's class), drawn after the main chart. */
  charts?: { cls: string; caption: string; svg: string }[];
  /** A findings table shown under the figures (the ramps' per-client table). */
  findings?: string;
  /** Every figure, as text: folded unless `open` (then `<pre class="open">`, named by `cls`). */
  details?: { text: string; open?: string };
}

/** The main figure of a workload whose rows are servers, one per server and protocol
 *  ("node (PVA)"): the runs a server could not serve left out, none when nothing ran. */
export function serverFigure<
  T extends {
    server: string;
    protocol: string;
    unsupported?: boolean | undefined;
    version?: string | undefined;
    error?: string | undefined;
  },
>(
  head: Pick<WorkloadFigures, 'key' | 'title' | 'figure' | 'unit' | 'better' | 'stealPercent'>,
  runs: readonly T[],
  value: (r: T) => number | undefined,
  problems: (r: T) => string[],
): WorkloadFigures[] {
  const served = runs.filter((x) => !x.unsupported);
  if (served.length === 0) return [];
  const rows = served.map((x) => ({ ...x, client: `${x.server} (${x.protocol})` }));
  return [{ ...head, servers: true, clients: figure(rows, value, problems) }];
}

/** The entries of a run, every workload in `views` order. */
export function figuresOf(views: readonly WorkloadView[], r: BenchResults): WorkloadFigures[] {
  return views.flatMap((w) => w.figures(r));
}

/** What a run did, as `epicsperf results` lists it: each workload it ran (WorkloadView.listed), in
 *  `views` order, and every client with a figure in it, in the order they first appear. */
export function ranOf(views: readonly WorkloadView[], r: BenchResults): { workloads: string[]; clients: string[] } {
  return {
    workloads: [...new Set(views.flatMap((w) => w.listed?.(r) ?? (w.figures(r).length ? [w.name] : [])))],
    clients: [
      ...new Set(
        figuresOf(views, r)
          .filter((w) => !w.servers)
          .flatMap((w) => w.clients.map((c) => c.client)),
      ),
    ],
  };
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
