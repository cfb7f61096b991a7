// Renders a bench run as text or Markdown: the environment, then each workload's section (its
// WorkloadView); several runs side by side.
import type { BenchResults } from '../results/index.js';
import { fmtStat, renderMarkdown, renderTable, type Column } from './table.js';
import { figuresOf, rank, type WorkloadFigures, type WorkloadView } from './figures.js';
import { hostLine } from './environment.js';

/**
 * " · CPU steal N%" when the host gave at least 1% of the machine's CPU time to other guests
 * during the workload (the more, the slower every figure of that table).
 */
export function stealNote(p: number | undefined): string {
  return p !== undefined && p >= 1 ? ` · CPU steal ${p.toFixed(0)}%` : '';
}

export function renderBench(views: readonly WorkloadView[], results: BenchResults, markdown: boolean): string {
  const out: string[] = [];
  const env = results.environment;
  // The ramps (capture, headroom, load) run each step once: the repeat count is only for the others.
  const repeats = repeatedIn(views, results) ? ` · repeats ${results.options.repeat}` : '';
  out.push(
    `epicsperf ${env.epicsperf} · node ${env.node} · python ${env.python.version ?? '-'} · ${env.cpu.model} (${env.cpu.cores} cores)${repeats}\n${results.options.scheduling}\n`,
  );
  for (const h of results.hosts ?? []) out.push(`host ${h.name}: ${hostLine(h)}\n`);
  for (const w of views) out.push(w.text(results, markdown));
  for (const u of results.unavailable) out.push(`\n${u.client}: not run: ${u.reason}`);
  return out.join('') + '\n';
}

/** Whether a run includes a workload that runs `repeat` times (not only ramps). */
export function repeatedIn(views: readonly WorkloadView[], r: BenchResults): boolean {
  return views.some((w) => !w.ramp && w.figures(r).length > 0);
}

/**
 * Several runs side by side: per workload a row per client and a column per run with its main
 * figure (median, min-max); a result that failed a check is marked with a cross.
 */
export function renderRuns(
  views: readonly WorkloadView[],
  runs: readonly BenchResults[],
  labels: readonly string[],
  markdown: boolean,
): string {
  if (runs.length === 1) return renderBench(views, runs[0]!, markdown);
  const figures = runs.map((r) => figuresOf(views, r));
  const keys = [...new Set(figures.flat().map((w) => w.key))];
  const out: string[] = [];
  for (const k of keys) {
    const ws = figures.map((f) => f.find((w) => w.key === k));
    const first = ws.find((w): w is WorkloadFigures => w !== undefined)!;
    const clients = [...new Set(ws.flatMap((w) => (w ? rank(w).order.map((c) => c.client) : [])))];
    const columns: Column<string>[] = [
      { header: 'client', get: (c) => c },
      ...ws.map(
        (w, i): Column<string> => ({
          header: labels[i]!,
          align: 'right',
          get: (c) => {
            const f = w?.clients.find((x) => x.client === c);
            if (!f) return '';
            return f.problems.length ? `✗ ${fmtStat(f.stat, 3)}` : fmtStat(f.stat, 3);
          },
        }),
      ),
    ];
    out.push(`\n${first.title}\n${first.figure} (${first.unit}), ${first.better} is better; ✗ failed a check\n\n`);
    out.push(markdown ? renderMarkdown(clients, columns) : renderTable(clients, columns));
  }
  return out.join('') + '\n';
}
