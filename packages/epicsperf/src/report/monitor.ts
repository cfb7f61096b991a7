// Renders monitor results: one row per client (median over repeats, min-max, ratio to the best).
import { stat, type MonitorRun, type Stat } from '../results/index.js';
import { fmt, fmtStat, renderMarkdown, renderTable, type Column } from './table.js';

export interface MonitorRow {
  client: string;
  version?: string;
  runs: MonitorRun[];
  ok: number;
  cpu?: Stat;
  ratio?: number;
  connectMs?: Stat;
  peakRssMb?: Stat;
  updatesPerSecond?: Stat;
  latencyP50Ms?: Stat;
  latencyP99Ms?: Stat;
  iocCpu?: Stat;
  missed: number;
  checkFailures: number;
  error?: string;
}

export function summarizeMonitor(byClient: Map<string, MonitorRun[]>): MonitorRow[] {
  const rows: MonitorRow[] = [];
  for (const [client, runs] of byClient) {
    const good = runs.filter((r) => r.cpuPercent || r.check);
    const row: MonitorRow = {
      client,
      runs,
      ok: runs.filter((r) => r.ok).length,
      missed: runs.reduce((a, r) => a + (r.check?.missedValues ?? 0), 0),
      checkFailures: runs.filter((r) => r.check && !r.check.ok).length,
    };
    const version = runs.find((r) => r.version)?.version;
    if (version) row.version = version;
    const put = <K extends keyof MonitorRow>(k: K, v: MonitorRow[K] | undefined) => {
      if (v !== undefined) row[k] = v;
    };
    put('cpu', stat(good.map((r) => r.cpuPercent?.mean ?? NaN)));
    put('connectMs', stat(good.map((r) => r.connectMs ?? NaN)));
    put('peakRssMb', stat(good.map((r) => r.peakRssMb ?? NaN)));
    put('updatesPerSecond', stat(good.map((r) => r.check?.updatesPerSecond ?? NaN)));
    put('latencyP50Ms', stat(good.map((r) => r.check?.latencyMs?.p50 ?? NaN)));
    put('latencyP99Ms', stat(good.map((r) => r.check?.latencyMs?.p99 ?? NaN)));
    put('iocCpu', stat(good.map((r) => r.iocCpuPercent?.mean ?? NaN)));
    const err = runs.find((r) => r.error)?.error;
    if (err) row.error = err;
    rows.push(row);
  }
  // The best passed every check; rows with a failed check follow the others.
  const failed = (r: MonitorRow) => r.error !== undefined || r.checkFailures > 0;
  const best = Math.min(...rows.filter((r) => !failed(r)).map((r) => r.cpu?.median ?? Infinity));
  for (const r of rows) if (r.cpu && best > 0 && Number.isFinite(best)) r.ratio = r.cpu.median / best;
  const key = (r: MonitorRow) => (failed(r) ? 1e12 : 0) + (r.cpu?.median ?? 1e11);
  return rows.sort((a, b) => key(a) - key(b));
}

const columns: Column<MonitorRow>[] = [
  { header: 'client', get: (r) => r.client },
  { header: 'CPU % of a core', get: (r) => fmtStat(r.cpu, 2), align: 'right' },
  { header: 'x best', get: (r) => (r.ratio === undefined ? '-' : fmt(r.ratio, 1)), align: 'right' },
  { header: 'checks', get: (r) => (r.runs.length === 0 ? '-' : `${r.ok}/${r.runs.length} ok`) },
  { header: 'missed', get: (r) => String(r.missed), align: 'right' },
  { header: 'connect ms', get: (r) => fmtStat(r.connectMs, 0), align: 'right' },
  { header: 'peak RSS MB', get: (r) => fmt(r.peakRssMb?.median, 0), align: 'right' },
  { header: 'updates/s', get: (r) => fmt(r.updatesPerSecond?.median, 0), align: 'right' },
  {
    header: 'latency p50/p99 ms',
    get: (r) => (r.latencyP50Ms ? `${fmt(r.latencyP50Ms.median, 2)}/${fmt(r.latencyP99Ms?.median, 2)}` : '-'),
    align: 'right',
  },
  { header: 'IOC CPU %', get: (r) => fmt(r.iocCpu?.median, 1), align: 'right' },
  { header: 'note', get: (r) => r.error ?? '' },
];

export function monitorTable(rows: readonly MonitorRow[], markdown = false): string {
  return markdown ? renderMarkdown(rows, columns) : renderTable(rows, columns);
}
