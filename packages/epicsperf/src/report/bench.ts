// Renders a bench run as text or Markdown: the environment, then one table per workload.
import type { BenchResults, MonitorRun, SnapshotRun } from '../results/index.js';
import { arrayTable, summarizeArray } from './array.js';
import { monitorTable, summarizeMonitor } from './monitor.js';
import { snapshotBenchTable, summarizeSnapshot } from './snapshot-bench.js';
import { fmtStat, groupByClient, renderMarkdown, renderTable, type Column } from './table.js';
import { arrayPutTable, arrayPutTitle, summarizeArrayPut } from './array-put.js';
import { latencyTables, latencyTitle } from './latency.js';
import { rank, workloadFigures, type WorkloadFigures } from './workloads.js';
import { captureBenchText } from './capture.js';
import { hostLine } from './environment.js';
import { headroomText } from './headroom.js';
import { loadText } from './load.js';

/**
 * " · CPU steal N%" when the host gave at least 1% of the machine's CPU time to other guests
 * during the workload (the more, the slower every figure of that table).
 */
export function stealNote(p: number | undefined): string {
  return p !== undefined && p >= 1 ? ` · CPU steal ${p.toFixed(0)}%` : '';
}

export function renderBench(results: BenchResults, markdown: boolean): string {
  const out: string[] = [];
  const env = results.environment;
  // The ramps (capture, headroom, load) run each step once: the repeat count is only for the others.
  const repeated = results.snapshot.length > 0 || results.monitor || results.array || results.arrayPut || results.latency;
  const repeats = repeated ? ` · repeats ${results.options.repeat}` : '';
  out.push(
    `epicsperf ${env.epicsperf} · node ${env.node} · python ${env.python.version ?? '-'} · ${env.cpu.model} (${env.cpu.cores} cores)${repeats}\n${results.options.scheduling}\n`,
  );
  for (const h of results.hosts ?? []) out.push(`host ${h.name}: ${hostLine(h)}\n`);
  for (const s of results.snapshot) {
    out.push(
      `\nSnapshot ${s.workload.id}: ${s.workload.connected} PVs that exist + ${s.workload.missing} missing, timeout ${results.options.timeoutMs} ms${stealNote(s.stealPercent)}\n\n`,
    );
    out.push(snapshotBenchTable(summarizeSnapshot(groupByClient<SnapshotRun>(s.runs), s.workload.connected), markdown));
  }
  if (results.monitor) {
    const o = results.options;
    out.push(
      `\nMonitor: ${o.records} counters x ${o.samples} samples at ${o.rate} Hz (CPU of the client process, 100% = one core)${stealNote(results.monitor.stealPercent)}\n\n`,
    );
    out.push(monitorTable(summarizeMonitor(groupByClient<MonitorRun>(results.monitor.runs)), markdown));
  }
  if (results.array) {
    const a = results.array.workload;
    out.push(
      `\nArray: one ${a.elements.toLocaleString('en-US')}-element ${a.type ?? 'double'} waveform refreshed ${a.rate === 'max' ? 'as fast as the IOC can' : `at ${a.rate} Hz`}, ${a.samples} updates per run${stealNote(results.array.stealPercent)}\n\n`,
    );
    out.push(arrayTable(summarizeArray(groupByClient<MonitorRun>(results.array.runs)), markdown));
  }
  if (results.arrayPut) {
    out.push(`\n${arrayPutTitle(results.arrayPut.workload)}${stealNote(results.arrayPut.stealPercent)}\n\n`);
    out.push(arrayPutTable(summarizeArrayPut(results.arrayPut.runs), markdown));
  }
  if (results.latency) {
    out.push(`\n${latencyTitle(results.latency.workload)}${stealNote(results.latency.stealPercent)}\n\n`);
    out.push(latencyTables(results.latency.runs, markdown));
  }
  if (results.capture) out.push(captureBenchText(results.capture, markdown));
  if (results.headroom) out.push(`${headroomText(results.headroom, markdown)}${stealNote(results.headroom.stealPercent)}`);
  if (results.load) out.push(`${loadText(results.load, markdown)}${stealNote(results.load.stealPercent)}`);
  for (const u of results.unavailable) out.push(`\n${u.client}: not run: ${u.reason}`);
  return out.join('') + '\n';
}

/**
 * Several runs side by side: per workload a row per client and a column per run with its main
 * figure (median, min-max); a result that failed a check is marked with a cross.
 */
export function renderRuns(runs: readonly BenchResults[], labels: readonly string[], markdown: boolean): string {
  if (runs.length === 1) return renderBench(runs[0]!, markdown);
  const figures = runs.map(workloadFigures);
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
