// Renders a comparison (`diff`) and a restore (`restore`) as a table,
// Markdown or JSON: a row per PV worth a look (every PV with `all`) and a summary line.
import type { Diff, PvDiff, PvRestore, RestoreReport, SavedValue } from 'epics-client/saveset';
import { fmt, renderMarkdown, renderTable, type Column } from './table.js';

export type SavesetFormat = 'table' | 'json' | 'markdown';

export const DIFF_FORMAT = 'epicsperf-diff/1';
export const RESTORE_FORMAT = 'epicsperf-restore/1';

/** A value in a cell: arrays by length and first elements, strings quoted when they would read as something else. */
export function cell(v: SavedValue | undefined): string {
  if (v === undefined) return '';
  if (Array.isArray(v)) return `[${v.length}] ${v.slice(0, 4).map(String).join(' ')}${v.length > 4 ? ' ...' : ''}`;
  if (typeof v === 'string' && (v === '' || /^\s|\s$/.test(v))) return JSON.stringify(v);
  return String(v);
}

/** A number as short as it reads exactly (up to 6 significant digits). */
function num(n: number | undefined): string {
  if (n === undefined) return '';
  return Math.abs(n) >= 1e6 || (n !== 0 && Math.abs(n) < 1e-4) ? n.toExponential(3) : String(Number(n.toPrecision(6)));
}

const DIFF_WORDS: Record<PvDiff['status'], string> = {
  equal: 'equal',
  different: 'different',
  'only-a': 'only in a',
  'only-b': 'only in b',
  'not-connected': 'not connected',
};

function diffColumns(labels: [string, string]): Column<PvDiff>[] {
  return [
    { header: 'name', get: (r) => r.name },
    { header: 'status', get: (r) => DIFF_WORDS[r.status] },
    { header: labels[0], get: (r) => cell(r.a) },
    { header: labels[1], get: (r) => cell(r.b) },
    {
      header: 'difference',
      align: 'right',
      get: (r) =>
        r.elementsDiffering !== undefined
          ? `${r.elementsDiffering} el., max ${num(r.largestDifference)}`
          : num(r.status === 'equal' ? undefined : r.difference),
    },
    { header: 'allowed', align: 'right', get: (r) => (r.allowed ? num(r.allowed) : '') },
    { header: 'note', get: (r) => r.note ?? '' },
  ];
}

export function diffSummary(d: Diff): string {
  const s = d.summary;
  const parts = [`${s.equal} equal`, `${s.different} different`];
  if (s.onlyA) parts.push(`${s.onlyA} only in a`);
  if (s.onlyB) parts.push(`${s.onlyB} only in b`);
  if (s.notConnected) parts.push(`${s.notConnected} not connected`);
  return `${s.total} PVs: ${parts.join(', ')}`;
}

/** The comparison as text: the PVs that are not equal (all with `all`), then the summary. */
export function renderDiff(
  d: Diff,
  format: SavesetFormat,
  opts: { all?: boolean; labels?: [string, string]; extra?: Record<string, unknown> } = {},
): string {
  if (format === 'json')
    return (
      JSON.stringify({ format: DIFF_FORMAT, ...opts.extra, a: d.a, b: d.b, summary: d.summary, equal: d.equal, pvs: d.pvs }, null, 1) + '\n'
    );
  const rows = opts.all ? d.pvs : d.pvs.filter((p) => p.status !== 'equal');
  const cols = diffColumns(opts.labels ?? ['a', 'b']);
  const body = rows.length === 0 ? '' : format === 'markdown' ? renderMarkdown(rows, cols) + '\n' : renderTable(rows, cols);
  return body + (format === 'markdown' ? `**${diffSummary(d)}**\n` : diffSummary(d) + '\n');
}

const OUTCOME_WORDS: Record<PvRestore['outcome'], string> = {
  restored: 'restored',
  equal: 'already equal',
  skipped: 'skipped',
  failed: 'failed',
  'not-written': 'not written',
};

const RESTORE_COLUMNS: Column<PvRestore>[] = [
  { header: 'name', get: (r) => r.name },
  { header: 'outcome', get: (r) => (r.code === 'dry-run' ? 'would write' : OUTCOME_WORDS[r.outcome]) },
  { header: 'saved', get: (r) => cell(r.saved) },
  { header: 'before', get: (r) => cell(r.before) },
  { header: 'after', get: (r) => cell(r.after) },
  { header: 'why', get: (r) => r.reason ?? '' },
];

export function restoreSummary(rep: RestoreReport): string {
  const s = rep.summary;
  const skipped = new Map<string, number>();
  for (const r of rep.pvs) if (r.outcome === 'skipped') skipped.set(r.code ?? 'other', (skipped.get(r.code ?? 'other') ?? 0) + 1);
  const why = skipped.size ? ` (${[...skipped].map(([k, n]) => `${n} ${k}`).join(', ')})` : '';
  const lead = rep.dryRun ? `dry run, nothing written: ${s.notWritten} would be written` : `${s.restored} restored`;
  const notWritten = rep.dryRun ? '' : `, ${s.notWritten} not written`;
  const t = rep.timings;
  const took = rep.dryRun
    ? ''
    : ` (read ${fmt(t.readMs / 1000, 2)} s, write ${fmt(t.writeMs / 1000, 2)} s, read back ${fmt(t.readBackMs / 1000, 2)} s)`;
  return `${s.selected} PVs: ${lead}, ${s.equal} already equal, ${s.skipped} skipped${why}, ${s.failed} failed${notWritten}${rep.interrupted ? ', interrupted' : ''}${took}`;
}

/** The restore as text: every PV that was not already equal (all with `all`), then the summary. */
export function renderRestore(
  rep: RestoreReport,
  format: SavesetFormat,
  opts: { all?: boolean; extra?: Record<string, unknown> } = {},
): string {
  if (format === 'json') return JSON.stringify({ format: RESTORE_FORMAT, ...opts.extra, ...rep }, null, 1) + '\n';
  const rows = opts.all ? rep.pvs : rep.pvs.filter((r) => r.outcome !== 'equal');
  const body =
    rows.length === 0 ? '' : format === 'markdown' ? renderMarkdown(rows, RESTORE_COLUMNS) + '\n' : renderTable(rows, RESTORE_COLUMNS);
  return body + (format === 'markdown' ? `**${restoreSummary(rep)}**\n` : restoreSummary(rep) + '\n');
}

/** The changes a restore asks to confirm, as a table. */
export function changesTable(changes: readonly PvRestore[]): string {
  return renderTable(changes, [
    { header: 'name', get: (r) => r.name },
    { header: 'now', get: (r) => cell(r.before) },
    { header: 'saved (to write)', get: (r) => cell(r.saved) },
  ]);
}
