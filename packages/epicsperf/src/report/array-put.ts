// Renders the array-put workload: a row per client and mode (with or without completion): puts/s
// and M elements/s as the client saw them, what the IOC received and checked, and CPU.
import { stat, type ArrayPutRun, type ArrayPutWorkload, type Stat } from '../results/index.js';
import { clientLabel, fmt, fmtStat, renderMarkdown, renderTable, type Column } from './table.js';

export interface ArrayPutRow {
  client: string;
  callback: boolean;
  runs: ArrayPutRun[];
  putsS?: Stat;
  mElemS?: Stat;
  iocPutsS?: Stat;
  iocMElemS?: Stat;
  received: string;
  bad: number;
  cpu?: Stat;
  iocCpu?: Stat;
  ok: number;
  error?: string;
}

export function summarizeArrayPut(runs: readonly ArrayPutRun[]): ArrayPutRow[] {
  const groups = new Map<string, ArrayPutRun[]>();
  for (const r of runs) {
    const key = `${clientLabel(r)}\u0000${r.callback}`;
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }
  const rows: ArrayPutRow[] = [];
  for (const list of groups.values()) {
    const first = list[0]!;
    const row: ArrayPutRow = {
      client: clientLabel(first),
      callback: first.callback,
      runs: list,
      ok: list.filter((r) => r.ok).length,
      received: [...new Set(list.map((r) => (r.ioc ? `${r.ioc.received}/${r.puts - r.failedPuts}` : '-')))].join(', '),
      bad: list.reduce((a, r) => a + (r.ioc?.bad ?? 0), 0),
    };
    const put = <K extends keyof ArrayPutRow>(k: K, v: ArrayPutRow[K] | undefined) => {
      if (v !== undefined) row[k] = v;
    };
    put('putsS', stat(list.map((r) => r.putsPerSecond ?? NaN)));
    put('mElemS', stat(list.map((r) => r.mElementsPerSecond ?? NaN)));
    put('iocPutsS', stat(list.map((r) => r.ioc?.putsPerSecond ?? NaN)));
    put('iocMElemS', stat(list.map((r) => r.ioc?.mElementsPerSecond ?? NaN)));
    put('cpu', stat(list.map((r) => r.cpuPercent?.mean ?? NaN)));
    put('iocCpu', stat(list.map((r) => r.iocCpuPercent?.mean ?? NaN)));
    put('error', list.find((r) => r.error)?.error);
    rows.push(row);
  }
  return rows.sort((a, b) => (b.iocMElemS?.median ?? -1) - (a.iocMElemS?.median ?? -1));
}

const columns: Column<ArrayPutRow>[] = [
  { header: 'client', get: (r) => r.client },
  { header: 'completion', get: (r) => (r.callback ? 'waited' : 'none') },
  { header: 'puts/s', get: (r) => fmtStat(r.putsS, 1), align: 'right' },
  { header: 'M elements/s', get: (r) => fmtStat(r.mElemS, 1), align: 'right' },
  { header: 'IOC got', get: (r) => r.received, align: 'right' },
  { header: 'IOC puts/s', get: (r) => fmt(r.iocPutsS?.median, 1), align: 'right' },
  { header: 'IOC M el/s', get: (r) => fmt(r.iocMElemS?.median, 1), align: 'right' },
  { header: 'bad', get: (r) => String(r.bad), align: 'right' },
  { header: 'CPU %', get: (r) => fmtStat(r.cpu, 0), align: 'right' },
  { header: 'IOC CPU %', get: (r) => fmt(r.iocCpu?.median, 0), align: 'right' },
  { header: 'note', get: (r) => r.error ?? '' },
];

export function arrayPutTitle(w: ArrayPutWorkload): string {
  return `Array put: ${w.samples} puts per run of ${w.elements.toLocaleString('en-US')} ${w.type} elements to PREFIX:ARRAY:PUT, each checked by the IOC`;
}

export function arrayPutTable(rows: readonly ArrayPutRow[], markdown = false): string {
  return markdown ? renderMarkdown(rows, columns) : renderTable(rows, columns);
}
