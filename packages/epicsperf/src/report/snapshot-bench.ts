// Renders snapshot comparisons: one table per workload, a row per client (median wall time over
// repeats with min-max, ratio to the best, answered/failed, when the last answer came, values
// checked against the IOC).
import { stat, type SnapshotRun, type Stat } from '../results/index.js';
import { fmt, fmtStat, renderMarkdown, renderTable, type Column } from './table.js';

export interface SnapshotBenchRow {
  client: string;
  version?: string;
  runs: SnapshotRun[];
  wallS?: Stat;
  ratio?: number;
  cpuS?: Stat;
  answered: string;
  /** When the last answer came, s from the client's snapshot call (the runner's clock): with
   *  missing names the wall time is the timeout, and this is when the names that exist were read. */
  lastAnswerS?: Stat;
  wrong: number;
  error?: string;
}

/** `existing`: how many of the names exist; a client that answers fewer is noted (its wall time
 *  alone would flatter it). */
export function summarizeSnapshot(byClient: Map<string, SnapshotRun[]>, existing?: number): SnapshotBenchRow[] {
  const rows: SnapshotBenchRow[] = [];
  for (const [client, runs] of byClient) {
    const done = runs.filter((r) => r.wallMs !== undefined);
    const row: SnapshotBenchRow = {
      client,
      runs,
      answered: done.length ? [...new Set(done.map((r) => `${r.answered}/${r.answered + r.failed}`))].join(', ') : '-',
      wrong: runs.reduce((a, r) => a + r.wrong, 0),
    };
    const version = runs.find((r) => r.version)?.version;
    if (version) row.version = version;
    const wall = stat(done.map((r) => r.wallMs! / 1000));
    if (wall) row.wallS = wall;
    const last = stat(
      done
        .map(lastAnswerMs)
        .filter((x): x is number => x !== undefined)
        .map((x) => x / 1000),
    );
    if (last) row.lastAnswerS = last;
    const cpu = stat(done.map((r) => r.cpuS ?? NaN));
    if (cpu) row.cpuS = cpu;
    const unchecked = runs.find((r) => r.unchecked)?.unchecked;
    const err = runs.find((r) => r.error)?.error ?? (unchecked && `values not checked: ${unchecked}`);
    const fewest = Math.min(...done.map((r) => r.answered));
    if (err) row.error = err;
    else if (existing !== undefined && done.length && fewest < existing)
      row.error = `up to ${existing - fewest} PVs that exist went unanswered`;
    rows.push(row);
  }
  // The best is the fastest client with nothing to note (an incomplete answer cannot be the best);
  // noted rows follow the others.
  const best = Math.min(...rows.filter((r) => !r.error).map((r) => r.wallS?.median ?? Infinity));
  for (const r of rows) if (r.wallS && Number.isFinite(best) && best > 0) r.ratio = r.wallS.median / best;
  const key = (r: SnapshotBenchRow) => (r.error ? 1e12 : 0) + (r.wallS?.median ?? 1e11);
  return rows.sort((a, b) => key(a) - key(b));
}

/** The elapsed time of a run's last answer, ms: from its rows, or the distribution stored in their place. */
function lastAnswerMs(r: SnapshotRun): number | undefined {
  if (r.rowsKept === 'failures') return r.elapsedMs?.max;
  const times = r.rows.flatMap((x) => (x.ok && x.elapsedMs !== undefined ? [x.elapsedMs] : []));
  return times.length ? times.reduce((a, b) => Math.max(a, b)) : undefined;
}

const columns: Column<SnapshotBenchRow>[] = [
  { header: 'client', get: (r) => r.client },
  { header: 'wall s', get: (r) => fmtStat(r.wallS, 3), align: 'right' },
  { header: 'x best', get: (r) => (r.ratio === undefined ? '-' : fmt(r.ratio, 1)), align: 'right' },
  { header: 'answered', get: (r) => r.answered, align: 'right' },
  { header: 'last answer s', get: (r) => fmtStat(r.lastAnswerS, 3), align: 'right' },
  { header: 'wrong', get: (r) => String(r.wrong), align: 'right' },
  { header: 'CPU s', get: (r) => fmtStat(r.cpuS, 2), align: 'right' },
  { header: 'note', get: (r) => r.error ?? '' },
];

export function snapshotBenchTable(rows: readonly SnapshotBenchRow[], markdown = false): string {
  return markdown ? renderMarkdown(rows, columns) : renderTable(rows, columns);
}
