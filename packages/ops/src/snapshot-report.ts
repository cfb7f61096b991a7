// Renders one snapshot run (the `snapshot` command): a row per PV and a summary, as a table,
// CSV or JSON.
import { ALARM_STATUS_NAMES, SEVERITY_NAMES } from 'epics-client/ca';
import { SNAPSHOT_FORMAT, type SnapshotDocument, type SnapshotRun } from './read.js';
import { csvField, fmt, renderTable } from './table.js';

const sev = (n: number | undefined) => (n === undefined ? '' : (SEVERITY_NAMES[n] ?? String(n)));
const stat = (n: number | undefined) => (n === undefined ? '' : (ALARM_STATUS_NAMES[n] ?? String(n)));
const ts = (t: number | undefined) => (t === undefined || t <= 631152000 ? '' : new Date(t * 1000).toISOString());
const val = (v: unknown) =>
  v === undefined ? '' : Array.isArray(v) ? `[${v.length}] ${v.slice(0, 4).join(' ')}${v.length > 4 ? ' ...' : ''}` : String(v);

export function snapshotSummary(run: SnapshotRun, timeoutMs: number): string {
  const wall = run.wallMs === undefined ? '' : ` in ${fmt(run.wallMs / 1000, 3)} s`;
  const wrong = run.rows.some((r) => r.correct !== undefined) ? `, ${run.wrong} wrong` : '';
  const unchecked = run.unchecked ? `; values not checked: ${run.unchecked}` : '';
  return `${run.answered} answered, ${run.failed} failed${wrong}${wall} (client ${run.client}, timeout ${timeoutMs} ms)${unchecked}`;
}

export function snapshotTable(run: SnapshotRun, timeoutMs: number): string {
  const table = renderTable(run.rows, [
    { header: 'name', get: (r) => r.name },
    { header: 'value', get: (r) => (r.ok ? val(r.value) : '') },
    { header: 'severity', get: (r) => sev(r.severity) },
    { header: 'status', get: (r) => stat(r.status) },
    { header: 'timestamp', get: (r) => ts(r.timestamp) },
    { header: 'ms', get: (r) => fmt(r.elapsedMs, 1), align: 'right' },
    { header: 'error', get: (r) => r.error ?? '' },
  ]);
  return table + '\n' + snapshotSummary(run, timeoutMs) + '\n';
}

export function snapshotCsv(run: SnapshotRun): string {
  const head = 'name,ok,value,severity,status,timestamp,elapsed_ms,error\n';
  return (
    head +
    run.rows
      .map((r) =>
        [r.name, r.ok, r.value, sev(r.severity), stat(r.status), ts(r.timestamp), r.elapsedMs?.toFixed(3), r.error].map(csvField).join(','),
      )
      .join('\n') +
    '\n'
  );
}

export function snapshotJson(run: SnapshotRun, timeoutMs: number): string {
  const doc: SnapshotDocument = {
    schema: SNAPSHOT_FORMAT,
    client: run.client,
    ...(run.host && { host: run.host }),
    version: run.version,
    timeoutMs,
    wallMs: run.wallMs,
    answered: run.answered,
    failed: run.failed,
    error: run.error,
    ...(run.rows.some((r) => r.correct !== undefined) && { wrong: run.wrong }),
    unchecked: run.unchecked,
    rows: run.rows.map((r) => ({
      name: r.name,
      ok: r.ok,
      value: r.value,
      severity: r.severity,
      severityName: r.severity === undefined ? undefined : sev(r.severity),
      status: r.status,
      timestamp: r.timestamp,
      elapsedMs: r.elapsedMs,
      error: r.error,
      correct: r.correct,
    })),
  };
  return JSON.stringify(doc, null, 2) + '\n';
}
