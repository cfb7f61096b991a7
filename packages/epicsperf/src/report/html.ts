// The HTML report of one or more bench runs: one self-contained file (inline CSS and SVG, no
// script, no network). What the runs found on top, then per workload a chart of its main figure
// and a table, latency against payload size, and the environment. A function of the results.
import type { BenchResults } from '../results/index.js';
import { fmt } from './table.js';
import { repeatedIn, stealNote } from './bench.js';
import { figureChart, FAIL_COLOUR, INCOMPLETE_FILL } from './charts.js';
import { rank, type ClientFigure, type WorkloadFigures, type WorkloadView } from './figures.js';
import { environmentRows } from './environment.js';

export const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** A short name for a run in a report of several: its number, date and host. */
export function runLabel(r: BenchResults, i: number, count: number): string {
  const day = r.startedAt.slice(0, 16).replace('T', ' ');
  return count > 1 ? `#${i + 1} ${day} ${r.host}` : `${day} ${r.host}`;
}

/** A figure with sensible digits and its unit. */
export function figureText(v: number | undefined, unit: string): string {
  if (v === undefined) return '-';
  const digits = v >= 100 ? 0 : v >= 10 ? 1 : v >= 1 ? 2 : 3;
  return `${fmt(v, digits)} ${unit}`;
}

function failures(c: ClientFigure): string {
  return c.problems.length ? `<span class="fail">✗ ${esc(c.problems.join('; '))}</span>` : '';
}

/** The summary cell of one workload in one run: the best client that passed every check, each
 *  other client's ratio to it, and the clients whose results are incomplete, in red. */
function summaryCell(w: WorkloadFigures | undefined): string {
  if (!w) return '<td class="none">not run</td>';
  const { best, order, ratio } = rank(w);
  const head = best
    ? `<div class="best"><b>${esc(best.client)}</b> ${esc(figureText(best.stat?.median, w.unit))}</div>`
    : '<div class="fail">no client passed every check</div>';
  const others = order
    .filter((c) => c !== best)
    .map((c) => {
      const r = ratio.get(c.client);
      const x = r === undefined ? '' : ` <span class="ratio">${r.toFixed(r >= 10 ? 0 : 1)}×</span>`;
      const cls = c.problems.length ? 'other incomplete' : 'other';
      return `<li class="${cls}">${esc(c.client)}${x} ${failures(c)}</li>`;
    });
  return `<td>${head}<ul>${others.join('')}</ul></td>`;
}

function summary(runs: readonly BenchResults[], figures: WorkloadFigures[][]): string {
  const keys = [...new Set(figures.flat().map((w) => w.key))];
  const head =
    runs.length > 1
      ? `<tr><th>workload</th>${runs.map((r, i) => `<th>${esc(runLabel(r, i, runs.length))}</th>`).join('')}</tr>`
      : '<tr><th>workload</th><th>best client that passed every check, and every other client against it</th></tr>';
  const rows = keys.map((k) => {
    const w = figures.map((f) => f.find((x) => x.key === k));
    const first = w.find((x) => x)!;
    return `<tr><th class="wl"><a href="#${esc(anchor(k))}">${esc(k)}</a><div class="unit">${esc(first.figure)}, ${first.better} is better</div></th>${w.map(summaryCell).join('')}</tr>`;
  });
  return (
    `<section id="summary"><h2>What the run${runs.length > 1 ? 's' : ''} found</h2><table class="summary">${head}${rows.join('')}</table>` +
    `<p class="legend">N×: how many times worse than the best client's median (1.0× = as good). <span class="fail">✗ Red</span>: a failed check or missing work (names unanswered, updates missed, corrupt arrays, a client stopped at its deadline); such a client is never the best, and its bars are grey and dashed.</p></section>`
  );
}

const anchor = (key: string) => `w-${key.replace(/[^A-Za-z0-9]+/g, '-')}`;

function figuresTable(w: WorkloadFigures): string {
  const { best, order, ratio } = rank(w);
  const rows = order.map((c) => {
    const s = c.stat;
    const range = s && s.max > s.min ? ` (${fmt(s.min, 3)}-${fmt(s.max, 3)})` : '';
    const r = ratio.get(c.client);
    return (
      `<tr class="${c.problems.length ? 'incomplete' : ''}"><td>${esc(c.client)}${c === best ? ' <span class="tag">best</span>' : ''}</td><td>${esc(c.version ?? '')}</td>` +
      `<td class="num">${s ? `${fmt(s.median, 3)}${range}` : '-'}</td><td class="num">${r === undefined ? '-' : r.toFixed(2)}</td><td class="num">${c.values.length}</td><td>${failures(c)}</td></tr>`
    );
  });
  return `<table class="figures"><tr><th>client</th><th>version</th><th>${esc(w.figure)} (${esc(w.unit)}), median (min-max)</th><th>× best</th><th>runs</th><th>checks</th></tr>${rows.join('')}</table>`;
}

/** A run's entries, each with the workload that made it. */
type Entry = { view: WorkloadView; w: WorkloadFigures };

async function workloadSection(runs: readonly BenchResults[], entries: Entry[][], key: string): Promise<string> {
  const present = entries
    .map((f, i) => ({ i, e: f.find((x) => x.w.key === key) }))
    .filter((x): x is { i: number; e: Entry } => x.e !== undefined);
  const first = present[0]!.e.w;
  const parts = [
    `<section id="${esc(anchor(key))}"><h2>${esc(first.title)}${esc(runs.length === 1 ? stealNote(first.stealPercent) : '')}</h2>`,
  ];
  const chart = await figureChart(present.map(({ i, e }) => ({ label: runLabel(runs[i]!, i, runs.length), w: e.w })));
  parts.push(
    `<figure class="chart" data-workload="${esc(key)}"><figcaption>${esc(first.figure)}: median with min-max over the runs; grey dashed bars failed a check</figcaption>${chart}</figure>`,
  );
  const more = await Promise.all(present.map(({ i, e }) => e.view.html(runs[i]!, key)));
  present.forEach(({ i }, k) => {
    const title = runs.length > 1 ? ` (${runLabel(runs[i]!, i, runs.length)})` : '';
    for (const c of more[k]!.charts ?? []) {
      parts.push(`<figure class="chart ${esc(c.cls)}"><figcaption>${esc(c.caption + title)}</figcaption>${c.svg}</figure>`);
    }
  });
  present.forEach(({ i, e }, k) => {
    if (runs.length > 1) parts.push(`<h3>${esc(runLabel(runs[i]!, i, runs.length))}${esc(stealNote(e.w.stealPercent))}</h3>`);
    parts.push(figuresTable(e.w));
    const { findings, details } = more[k]!;
    if (findings) parts.push(`<pre class="capture">${esc(findings)}</pre>`);
    // A workload whose every-figure table is its finding beside the chart shows it open; the others
    // keep theirs folded.
    if (details)
      parts.push(
        details.open
          ? `<pre class="${esc(details.open)}">${esc(details.text)}</pre>`
          : `<details><summary>every figure</summary><pre>${esc(details.text)}</pre></details>`,
      );
  });
  parts.push('</section>');
  return parts.join('\n');
}

function environment(views: readonly WorkloadView[], runs: readonly BenchResults[]): string {
  const table = environmentRows(views, runs);
  const head = runs.length > 1 ? `<tr><th></th>${runs.map((r, i) => `<th>${esc(runLabel(r, i, runs.length))}</th>`).join('')}</tr>` : '';
  return `<section id="environment"><h2>Environment</h2><table class="env">${head}${table.map((row) => `<tr><th>${esc(row.name)}</th>${row.values.map((v) => `<td>${esc(v)}</td>`).join('')}</tr>`).join('')}</table></section>`;
}

export async function benchHtml(views: readonly WorkloadView[], input: BenchResults | readonly BenchResults[]): Promise<string> {
  const runs = Array.isArray(input) ? (input as readonly BenchResults[]) : [input as BenchResults];
  const entries = runs.map((r) => views.flatMap((view) => view.figures(r).map((w) => ({ view, w }))));
  const figures = entries.map((e) => e.map((x) => x.w));
  const keys = [...new Set(figures.flat().map((w) => w.key))];
  const parts: string[] = [];
  const sub = runs.map(
    (r, i) =>
      `${runLabel(r, i, runs.length)} · ${r.options.profile} profile${repeatedIn(views, r) ? ` · ${r.options.repeat} run(s) per client` : ''}${r.durationS ? ` · took ${Math.round(r.durationS)} s` : ''}`,
  );
  parts.push(`<h1>epicsperf bench</h1><p class="sub">${sub.map(esc).join('<br>')}</p>`);
  parts.push(summary(runs, figures));
  for (const k of keys) parts.push(await workloadSection(runs, entries, k));
  const unavailable = runs.flatMap((r, i) =>
    r.unavailable.map(
      (u) => `<li>${esc(u.client)}${runs.length > 1 ? ` (${esc(runLabel(r, i, runs.length))})` : ''}: ${esc(u.reason)}</li>`,
    ),
  );
  if (unavailable.length) parts.push(`<section><h2>Not run</h2><ul>${unavailable.join('')}</ul></section>`);
  parts.push(environment(views, runs));
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>epicsperf bench</title><style>
body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:72em;padding:0 1em;color:#222}
h1{margin-bottom:.2em}.sub{color:#555;margin-top:0}
table{border-collapse:collapse;margin:.6em 0}th,td{border:1px solid #ddd;padding:.3em .6em;vertical-align:top;text-align:left}
th{background:#f4f6f8}.num{text-align:right;font-variant-numeric:tabular-nums}
table.summary td{min-width:16em}table.summary ul{display:flex;flex-wrap:wrap;gap:.15em 1.2em;list-style:none;margin:.3em 0;padding:0}.best{font-size:1.05em}
.fail{color:${FAIL_COLOUR};font-weight:600}tr.incomplete td{background:#fdf0f0}li.incomplete{color:#555}
.tag{background:#3b6ea8;color:#fff;border-radius:3px;padding:0 .35em;font-size:.85em}
.unit,.legend,.none,.ratio{color:#666;font-weight:400}.wl a{color:inherit}
figure{margin:1em 0}figcaption{font-weight:600;margin-bottom:.3em}figure svg{max-width:100%;height:auto}
pre{font-size:12px;background:#f6f6f6;padding:.8em;overflow-x:auto}
.swatch{display:inline-block;width:1em;height:.8em;background:${INCOMPLETE_FILL};border:1px dashed ${FAIL_COLOUR}}
</style></head><body>${parts.join('\n')}</body></html>\n`;
}
