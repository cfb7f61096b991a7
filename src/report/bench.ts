// Renders a bench run as text or Markdown: the environment, then one table per workload.
import type { BenchResults, MonitorRun, SnapshotRun } from '../results/index.js';
import { arrayTable, summarizeArray } from './array.js';
import { monitorTable, summarizeMonitor } from './monitor.js';
import { snapshotBenchTable, summarizeSnapshot } from './snapshot-bench.js';
import { groupByClient } from './table.js';
import { captureBenchText } from './capture.js';

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
  out.push(`epicsperf ${env.epicsperf} · node ${env.node} · python ${env.python.version ?? '-'} · ${env.cpu.model} (${env.cpu.cores} cores) · repeats ${results.options.repeat}\n${results.options.scheduling}\n`);
  for (const s of results.snapshot) {
    out.push(`\nSnapshot ${s.workload.id}: ${s.workload.connected} PVs that exist + ${s.workload.missing} missing, timeout ${results.options.timeoutMs} ms${stealNote(s.stealPercent)}\n\n`);
    out.push(snapshotBenchTable(summarizeSnapshot(groupByClient<SnapshotRun>(s.runs), s.workload.connected), markdown));
  }
  if (results.monitor) {
    const o = results.options;
    out.push(`\nMonitor: ${o.records} counters x ${o.samples} samples at ${o.rate} Hz (CPU of the client process, 100% = one core)${stealNote(results.monitor.stealPercent)}\n\n`);
    out.push(monitorTable(summarizeMonitor(groupByClient<MonitorRun>(results.monitor.runs)), markdown));
  }
  if (results.array) {
    const a = results.array.workload;
    out.push(`\nArray: one ${a.elements.toLocaleString('en-US')}-double waveform refreshed ${a.rate === 'max' ? 'as fast as the IOC can' : `at ${a.rate} Hz`}, ${a.samples} updates per run${stealNote(results.array.stealPercent)}\n\n`);
    out.push(arrayTable(summarizeArray(groupByClient<MonitorRun>(results.array.runs)), markdown));
  }
  if (results.capture) out.push(captureBenchText(results.capture, markdown));
  for (const u of results.unavailable) out.push(`\n${u.client}: not run: ${u.reason}`);
  return out.join('') + '\n';
}
