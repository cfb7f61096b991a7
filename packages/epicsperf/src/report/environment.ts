// The environment of one or more bench runs as rows of a table: machine, CPU steal per
// workload, the runtimes and the version of every client library (a column per run).
import type { BenchResults, HostRecord } from '../results/index.js';
import { figuresOf, type WorkloadView } from './figures.js';

export interface EnvRow {
  name: string;
  values: string[];
}

/** One line about a host of a run spread over agents: where it is, its machine, what ran there. */
export function hostLine(h: HostRecord): string {
  const e = h.environment;
  const machine = e
    ? `${e.cpu.model}, ${e.cpu.cores} cores, epicsperf ${e.epicsperf}, node ${e.node}, python ${e.python.version ?? '-'}`
    : `no report: ${h.error ?? 'unknown'}`;
  return `${h.address}${h.machine ? ` (${h.machine})` : ''}: ${machine}; ran ${h.runs.join(', ') || 'nothing'}`;
}

export function environmentRows(views: readonly WorkloadView[], runs: readonly BenchResults[]): EnvRow[] {
  const row = (name: string, get: (r: BenchResults) => string | undefined): EnvRow => ({ name, values: runs.map((r) => get(r) ?? '-') });
  const rows: EnvRow[] = [
    row('host', (r) => r.host),
    row('started', (r) => r.startedAt),
    row('took', (r) => (r.durationS === undefined ? undefined : `${Math.round(r.durationS)} s`)),
    row(
      'profile',
      (r) =>
        `${r.options.profile}, ${r.options.repeat} run(s) per client${r.options.clientDeadlineS ? `, deadline ${r.options.clientDeadlineS} s per client and workload${r.options.clientDeadlineBeyondWork ? ' beyond its own time' : ''}` : ''}`,
    ),
    row('CPU', (r) => `${r.environment.cpu.model}, ${r.environment.cpu.cores} cores`),
    row('memory', (r) => `${(r.environment.memoryBytes / 2 ** 30).toFixed(1)} GiB`),
    row('OS', (r) => `${r.environment.os.platform} ${r.environment.os.release} ${r.environment.os.arch}`),
    row('scheduling', (r) => r.options.scheduling),
    row('epicsperf', (r) => r.environment.epicsperf),
    row('Node', (r) => r.environment.node),
    row('Python', (r) => `${r.environment.python.version ?? '-'} (${r.environment.python.kind})`),
  ];
  const hosts = [...new Set(runs.flatMap((r) => (r.hosts ?? []).map((h) => h.name)))];
  for (const name of hosts) {
    rows.push(
      row(`host ${name}`, (r) => {
        const h = r.hosts?.find((x) => x.name === name);
        return h && hostLine(h);
      }),
    );
  }
  const keys = [...new Set(runs.flatMap((r) => figuresOf(views, r).map((w) => w.key)))];
  for (const k of keys) {
    rows.push(
      row(`CPU steal, ${k}`, (r) => {
        const p = figuresOf(views, r).find((w) => w.key === k)?.stealPercent;
        return p === undefined ? undefined : `${p.toFixed(1)} %`;
      }),
    );
  }
  const libs = [...new Set(runs.flatMap((r) => Object.keys(r.environment.libraries)))].sort();
  for (const lib of libs) {
    rows.push(
      row(lib, (r) => {
        const l = r.environment.libraries[lib];
        return l ? (l.version ?? `missing: ${l.error ?? 'not installed'}`) : undefined;
      }),
    );
  }
  return rows;
}
