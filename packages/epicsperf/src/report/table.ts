// The reports' table helpers: figures with their spread, runs grouped by client (and host); the
// tables themselves are epics-ops's (renderTable, renderMarkdown).
import { fmt } from 'epics-ops';

export { type Column, csvField, fmt, renderMarkdown, renderTable } from 'epics-ops';

/** "median (min-max)" */
export function fmtStat(s: { median: number; min: number; max: number } | undefined, digits = 1): string {
  if (!s) return '-';
  return s.min === s.max ? fmt(s.median, digits) : `${fmt(s.median, digits)} (${fmt(s.min, digits)}-${fmt(s.max, digits)})`;
}

/** How a run's client is named in reports: `node`, or `node@a` when it ran on host a (--hosts). */
export function clientLabel(r: { client: string; host?: string | undefined }): string {
  return r.host ? `${r.client}@${r.host}` : r.client;
}

/** Runs grouped by client (and host), in the order they first appear. */
export function groupByClient<T extends { client: string; host?: string | undefined }>(runs: readonly T[]): Map<string, T[]> {
  const m = new Map<string, T[]>();
  for (const r of runs) m.set(clientLabel(r), [...(m.get(clientLabel(r)) ?? []), r]);
  return m;
}
