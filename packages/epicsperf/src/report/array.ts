// Renders the array workload: a row per client (M elements/s received, median over repeats with
// min-max, ratio to the best, skipped and corrupt updates, CPU and memory of the client, CPU of
// the IOC over the same window, and what the IOC published in the same runs, counted on its side).
import { stat, type MonitorRun, type Stat } from '../results/index.js';
import { fmt, fmtStat, renderMarkdown, renderTable, type Column } from './table.js';

export interface ArrayRow {
  client: string;
  runs: MonitorRun[];
  mElemS?: Stat;
  /** Best throughput divided by this one (1.0 = the best). */
  ratio?: number;
  updatesS?: Stat;
  cpu?: Stat;
  peakRssMb?: Stat;
  iocCpu?: Stat;
  /** The IOC's published rate in the same runs, and the client's updates/s as a fraction of it. */
  serverMElemS?: Stat;
  serverUpdatesS?: Stat;
  ofServer?: Stat;
  skipped: number;
  repeats: number;
  corrupt: number;
  ok: number;
  error?: string;
}

/** A client at this fraction of the IOC's published rate or more kept up: the IOC was the limit. */
export const KEPT_UP = 0.9;

export function summarizeArray(byClient: Map<string, MonitorRun[]>): ArrayRow[] {
  const rows: ArrayRow[] = [];
  for (const [client, runs] of byClient) {
    const done = runs.filter((r) => r.array);
    const row: ArrayRow = {
      client,
      runs,
      ok: runs.filter((r) => r.ok).length,
      skipped: done.reduce((a, r) => a + r.array!.skipped, 0),
      repeats: done.reduce((a, r) => a + r.array!.repeats, 0),
      corrupt: done.reduce((a, r) => a + r.array!.corrupt, 0),
    };
    const put = <K extends keyof ArrayRow>(k: K, v: ArrayRow[K] | undefined) => {
      if (v !== undefined) row[k] = v;
    };
    put('mElemS', stat(done.map((r) => r.array!.mElementsPerSecond)));
    put('updatesS', stat(done.map((r) => r.array!.updatesPerSecond)));
    put('cpu', stat(done.map((r) => r.cpuPercent?.mean ?? NaN)));
    put('peakRssMb', stat(done.map((r) => r.peakRssMb ?? NaN)));
    put('iocCpu', stat(done.map((r) => r.iocCpuPercent?.mean ?? NaN)));
    put('serverMElemS', stat(done.map((r) => r.array!.server?.mElementsPerSecond ?? NaN)));
    put('serverUpdatesS', stat(done.map((r) => r.array!.server?.updatesPerSecond ?? NaN)));
    put('ofServer', stat(done.map((r) => r.array!.server?.fraction ?? NaN)));
    put(
      'error',
      runs.find((r) => r.error)?.error ??
        (row.ofServer && row.ofServer.median >= KEPT_UP ? 'kept up with the IOC: the IOC is the limit' : undefined),
    );
    rows.push(row);
  }
  // The best passed every check; rows with a failed check follow the others.
  const failed = (r: ArrayRow) => r.error !== undefined || r.corrupt > 0;
  const best = Math.max(...rows.filter((r) => !failed(r)).map((r) => r.mElemS?.median ?? 0));
  for (const r of rows) if (r.mElemS && r.mElemS.median > 0 && best > 0) r.ratio = best / r.mElemS.median;
  const key = (r: ArrayRow) => (failed(r) ? 1e12 : 0) - (r.mElemS?.median ?? -1);
  return rows.sort((a, b) => key(a) - key(b));
}

const columns: Column<ArrayRow>[] = [
  { header: 'client', get: (r) => r.client },
  { header: 'M elements/s', get: (r) => fmtStat(r.mElemS, 1), align: 'right' },
  { header: 'best / this', get: (r) => (r.ratio === undefined ? '-' : fmt(r.ratio, 2)), align: 'right' },
  { header: 'updates/s', get: (r) => fmtStat(r.updatesS, 1), align: 'right' },
  { header: 'IOC M el/s', get: (r) => fmt(r.serverMElemS?.median, 1), align: 'right' },
  { header: 'IOC upd/s', get: (r) => fmt(r.serverUpdatesS?.median, 1), align: 'right' },
  { header: 'x IOC', get: (r) => fmt(r.ofServer?.median, 2), align: 'right' },
  { header: 'skipped', get: (r) => String(r.skipped), align: 'right' },
  { header: 'repeated', get: (r) => String(r.repeats), align: 'right' },
  { header: 'corrupt', get: (r) => String(r.corrupt), align: 'right' },
  { header: 'CPU %', get: (r) => fmtStat(r.cpu, 0), align: 'right' },
  { header: 'peak RSS MB', get: (r) => fmt(r.peakRssMb?.median, 0), align: 'right' },
  { header: 'IOC CPU %', get: (r) => fmt(r.iocCpu?.median, 0), align: 'right' },
  { header: 'note', get: (r) => r.error ?? '' },
];

export function arrayTable(rows: readonly ArrayRow[], markdown = false): string {
  return markdown ? renderMarkdown(rows, columns) : renderTable(rows, columns);
}
