// Two bench runs held against each other: per workload and client the main figures of A and B,
// their ratio, and whether the difference is larger than the run-to-run spread (non-overlapping
// min-max ranges, or a Mann-Whitney rank test when both have at least 4 repeats).
import type { BenchResults, Stat } from '../results/index.js';
import { fmt, fmtStat, renderMarkdown, renderTable, type Column } from './table.js';
import { figuresOf, type WorkloadFigures, type WorkloadView } from './figures.js';

export interface CompareRow {
  workload: string;
  figure: string;
  unit: string;
  better: 'lower' | 'higher';
  client: string;
  a?: Stat | undefined;
  b?: Stat | undefined;
  /** B's median over A's. */
  ratio?: number;
  /** How much worse B is than A, % (negative: better). */
  worsePct?: number;
  /** Which test decided, in words. */
  test: string;
  /** Whether the difference is larger than the spread (undefined: the test cannot tell). */
  significant?: boolean;
  /** Incomplete results on either side (a failed check or a stop). */
  problems: string[];
}

/** Repeats each side needs before the rank test is used (with 4 and 4 its smallest p is 0.029). */
export const RANK_TEST_MIN = 4;
const ALPHA = 0.05;

/** Two-sided exact p of the Mann-Whitney U statistic (ties count one half). */
export function mannWhitneyP(x: readonly number[], y: readonly number[]): number {
  const n = x.length;
  const m = y.length;
  let u = 0;
  for (const a of x) for (const b of y) u += a > b ? 1 : a === b ? 0.5 : 0;
  // ways[k]: arrangements of n x's among n+m places whose U is k (built up one place at a time).
  let ways: number[][] = [[1]];
  for (let i = 0; i <= n; i++) {
    const next: number[][] = [];
    for (let j = 0; j <= m; j++) {
      if (i === 0 && j === 0) {
        next.push([1]);
        continue;
      }
      const fromX = i > 0 ? ways[j]! : [];
      const fromY = j > 0 ? next[j - 1]! : [];
      // A new x placed last beats all j y's: U grows by j.
      const row = new Array<number>(i * j + 1).fill(0);
      fromX.forEach((c, k) => (row[k + j]! += c));
      fromY.forEach((c, k) => (row[k]! += c));
      next.push(row);
    }
    ways = next;
  }
  const dist = ways[m]!;
  const total = dist.reduce((a, b) => a + b, 0);
  let lo = 0;
  let hi = 0;
  dist.forEach((c, k) => {
    if (k <= u) lo += c;
    if (k >= u) hi += c;
  });
  return Math.min(1, (2 * Math.min(lo, hi)) / total);
}

function decide(w: WorkloadFigures, a: number[], b: number[]): Pick<CompareRow, 'test' | 'significant'> {
  if (a.length >= RANK_TEST_MIN && b.length >= RANK_TEST_MIN) {
    const p = mannWhitneyP(a, b);
    return { test: `rank test (Mann-Whitney, ${a.length}+${b.length} runs, p=${p.toFixed(3)})`, significant: p < ALPHA };
  }
  if (a.length >= 2 && b.length >= 2) {
    const apart = Math.max(...a) < Math.min(...b) || Math.max(...b) < Math.min(...a);
    return { test: apart ? 'min-max ranges apart' : 'min-max ranges overlap', significant: apart };
  }
  void w;
  return { test: 'one run on a side: no spread to compare with' };
}

export function compareRuns(views: readonly WorkloadView[], A: BenchResults, B: BenchResults): CompareRow[] {
  const fa = figuresOf(views, A);
  const fb = figuresOf(views, B);
  const keys = [...new Set([...fa, ...fb].map((w) => w.key))];
  const rows: CompareRow[] = [];
  for (const key of keys) {
    const wa = fa.find((w) => w.key === key);
    const wb = fb.find((w) => w.key === key);
    const w = (wa ?? wb)!;
    const clients = [...new Set([...(wa?.clients ?? []), ...(wb?.clients ?? [])].map((c) => c.client))];
    for (const client of clients) {
      const ca = wa?.clients.find((c) => c.client === client);
      const cb = wb?.clients.find((c) => c.client === client);
      const row: CompareRow = {
        workload: key,
        figure: w.figure,
        unit: w.unit,
        better: w.better,
        client,
        a: ca?.stat,
        b: cb?.stat,
        test: '',
        problems: [...(ca?.problems ?? []).map((p) => `A: ${p}`), ...(cb?.problems ?? []).map((p) => `B: ${p}`)],
      };
      if (!ca?.stat || !cb?.stat) {
        row.test = !ca ? 'only in B' : !cb ? 'only in A' : 'no figure on a side';
      } else {
        row.ratio = cb.stat.median / ca.stat.median;
        row.worsePct = (w.better === 'lower' ? row.ratio - 1 : 1 / row.ratio - 1) * 100;
        Object.assign(row, decide(w, ca.values, cb.values));
      }
      rows.push(row);
    }
  }
  return rows;
}

/** In words: worse, better, within the spread, or cannot tell. */
export function verdict(r: CompareRow): string {
  if (r.worsePct === undefined) return '-';
  const dir = Math.abs(r.worsePct) < 0.5 ? 'same' : r.worsePct > 0 ? 'worse' : 'better';
  if (r.significant === undefined) return `${dir}? (no spread)`;
  return r.significant ? dir : 'within the spread';
}

/** Rows where B is worse than A by more than `pct` %, unless the test put it within the spread. */
export function regressions(rows: readonly CompareRow[], pct: number): CompareRow[] {
  return rows.filter((r) => r.worsePct !== undefined && r.worsePct > pct && r.significant !== false);
}

const columns: Column<CompareRow>[] = [
  { header: 'workload', get: (r) => r.workload },
  { header: 'client', get: (r) => r.client },
  { header: 'A', get: (r) => fmtStat(r.a, 3), align: 'right' },
  { header: 'B', get: (r) => fmtStat(r.b, 3), align: 'right' },
  { header: 'B/A', get: (r) => fmt(r.ratio, 2), align: 'right' },
  {
    header: 'change',
    get: (r) =>
      r.worsePct === undefined
        ? '-'
        : Math.abs(r.worsePct) < 0.5
          ? '0%'
          : `${r.worsePct > 0 ? '+' : ''}${r.worsePct.toFixed(0)}% ${r.worsePct > 0 ? 'worse' : 'better'}`,
    align: 'right',
  },
  { header: 'verdict', get: verdict },
  { header: 'test', get: (r) => r.test },
  { header: 'note', get: (r) => r.problems.join('; ') },
];

/** The units of each workload's figure, once, under the table. */
function units(rows: readonly CompareRow[]): string {
  const seen = new Map<string, string>();
  for (const r of rows) if (!seen.has(r.workload)) seen.set(r.workload, `${r.workload}: ${r.figure} (${r.unit}), ${r.better} is better`);
  return [...seen.values()].join('\n') + '\n';
}

export function compareText(rows: readonly CompareRow[], labels: [string, string], markdown: boolean): string {
  const head = `A: ${labels[0]}\nB: ${labels[1]}\n\n`;
  return head + (markdown ? renderMarkdown(rows, columns) : renderTable(rows, columns)) + '\n' + units(rows);
}

export function compareHtml(rows: readonly CompareRow[], labels: [string, string]): string {
  const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  const cls = (r: CompareRow) => (r.significant && r.worsePct !== undefined ? (r.worsePct > 0 ? 'worse' : 'better') : '');
  const body = rows
    .map(
      (r) =>
        `<tr class="${cls(r)}">${columns.map((c) => `<td${c.align === 'right' ? ' class="num"' : ''}>${esc(c.get(r))}</td>`).join('')}</tr>`,
    )
    .join('');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>epicsperf compare</title><style>
body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:80em;padding:0 1em;color:#222}
table{border-collapse:collapse}th,td{border:1px solid #ddd;padding:.3em .6em;text-align:left}th{background:#f4f6f8}
.num{text-align:right;font-variant-numeric:tabular-nums}tr.worse td{background:#fdecea;color:#b71c1c}tr.better td{background:#e8f5e9}
pre{color:#555}</style></head><body><h1>epicsperf compare</h1><p>A: ${esc(labels[0])}<br>B: ${esc(labels[1])}</p>
<table><tr>${columns.map((c) => `<th>${esc(c.header)}</th>`).join('')}</tr>${body}</table><pre>${esc(units(rows))}</pre></body></html>\n`;
}
