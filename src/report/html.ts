// A self-contained HTML report of a bench run: the environment, one bar chart (SVG, median with
// min-max whiskers) and one table per workload. A pure function of the results.
import type { BenchResults, MonitorRun, SnapshotRun, Stat } from '../results/index.js';
import { summarizeArray, arrayTable } from './array.js';
import { summarizeMonitor, monitorTable } from './monitor.js';
import { summarizeSnapshot, snapshotBenchTable } from './snapshot-bench.js';
import { groupByClient } from './table.js';
import { stealNote } from './bench.js';
import { captureBars, captureBenchTable, captureBenchTitle, captureStepsTable } from './capture.js';

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

interface Bar {
  label: string;
  stat?: Stat | undefined;
  /** Why there is no bar. */
  note?: string | undefined;
  /** A warning shown after the value (a failed check). */
  flag?: string | undefined;
}

/** Horizontal bars: median as the bar, min-max as a whisker; missing values say why. */
export function barChart(title: string, unit: string, bars: readonly Bar[]): string {
  const rowH = 22;
  const left = 150;
  const width = 640;
  const plotW = width - left - 90;
  const max = Math.max(...bars.map((b) => b.stat?.max ?? 0), 1e-9);
  const x = (v: number) => left + (v / max) * plotW;
  const h = bars.length * rowH + 40;
  const rows = bars.map((b, i) => {
    const y = 30 + i * rowH;
    const label = `<text x="${left - 8}" y="${y + 14}" text-anchor="end">${esc(b.label)}</text>`;
    if (!b.stat) return `${label}<text x="${left + 4}" y="${y + 14}" class="note">${esc(b.note ?? 'no result')}</text>`;
    const s = b.stat;
    const digits = s.median >= 100 ? 0 : s.median >= 10 ? 1 : 2;
    return `${label}<rect x="${left}" y="${y + 3}" width="${Math.max(1, x(s.median) - left).toFixed(1)}" height="${rowH - 8}" class="bar"/>` +
      (s.max > s.min ? `<line x1="${x(s.min).toFixed(1)}" x2="${x(s.max).toFixed(1)}" y1="${y + 11}" y2="${y + 11}" class="whisker"/>` : '') +
      `<text x="${(x(s.max) + 6).toFixed(1)}" y="${y + 14}">${s.median.toFixed(digits)}` +
      (b.flag ? `<tspan class="note"> · ${esc(b.flag)}</tspan>` : '') + '</text>';
  });
  return `<figure><figcaption>${esc(title)} <span class="unit">(${esc(unit)})</span></figcaption>` +
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${h}" role="img" aria-label="${esc(title)}">${rows.join('')}</svg></figure>`;
}

const pre = (text: string) => `<pre>${esc(text)}</pre>`;

export function benchHtml(r: BenchResults): string {
  const env = r.environment;
  const parts: string[] = [];
  parts.push(`<h1>epicsperf bench</h1><p>${esc(r.startedAt)} · epicsperf ${esc(env.epicsperf)} · Node ${esc(env.node)} · Python ${esc(env.python.version ?? '-')} · ${esc(env.cpu.model)}, ${env.cpu.cores} cores, ${(env.memoryBytes / 2 ** 30).toFixed(0)} GiB · ${r.options.repeat} run(s) per client · ${esc(r.options.scheduling)}</p>`);
  for (const s of r.snapshot) {
    const rows = summarizeSnapshot(groupByClient<SnapshotRun>(s.runs), s.workload.connected);
    parts.push(`<h2>Snapshot ${esc(s.workload.id)}: ${s.workload.connected} PVs + ${s.workload.missing} missing, timeout ${r.options.timeoutMs} ms${esc(stealNote(s.stealPercent))}</h2>`);
    parts.push(barChart('wall time, shorter is better', 's', rows.map((x) => ({ label: x.client, stat: x.wallS, note: x.error, flag: x.wrong ? `${x.wrong} wrong` : x.error }))));
    parts.push(pre(snapshotBenchTable(rows)));
  }
  if (r.monitor) {
    const rows = summarizeMonitor(groupByClient<MonitorRun>(r.monitor.runs));
    parts.push(`<h2>Monitor: ${r.options.records} counters x ${r.options.samples} samples at ${r.options.rate} Hz${esc(stealNote(r.monitor.stealPercent))}</h2>`);
    parts.push(barChart('CPU of the client process, lower is better', '% of one core', rows.map((x) => ({ label: x.client, stat: x.cpu, note: x.error, flag: x.missed ? `${x.missed} missed` : x.checkFailures ? 'check failed' : undefined }))));
    parts.push(pre(monitorTable(rows)));
  }
  if (r.array) {
    const rows = summarizeArray(groupByClient<MonitorRun>(r.array.runs));
    parts.push(`<h2>Array: ${r.array.workload.elements.toLocaleString('en-US')} doubles refreshed ${r.array.workload.rate === 'max' ? 'as fast as the IOC can' : `at ${r.array.workload.rate} Hz`}, ${r.array.workload.samples} updates per run${esc(stealNote(r.array.stealPercent))}</h2>`);
    parts.push(barChart('elements received per second, higher is better', 'millions', rows.map((x) => ({ label: x.client, stat: x.mElemS, note: x.error, flag: x.corrupt ? `${x.corrupt} corrupt` : undefined }))));
    parts.push(pre(arrayTable(rows)));
  }
  if (r.capture) {
    parts.push(`<h2>${esc(captureBenchTitle(r.capture))}</h2>`);
    parts.push(barChart('MB/s written to HDF5 with zero loss, higher is better', 'MB/s', captureBars(r.capture)));
    parts.push(pre(captureBenchTable(r.capture)) + pre(captureStepsTable(r.capture)));
  }
  if (r.unavailable.length) parts.push(`<h2>Not run</h2><ul>${r.unavailable.map((u) => `<li>${esc(u.client)}: ${esc(u.reason)}</li>`).join('')}</ul>`);
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>epicsperf bench</title><style>
body{font:14px/1.4 system-ui,sans-serif;margin:2em;max-width:70em;color:#222}
pre{font-size:12px;background:#f6f6f6;padding:.8em;overflow-x:auto}
figure{margin:1em 0}figcaption{font-weight:600}.unit{font-weight:400;color:#666}
svg text{font-size:12px;fill:#222}svg .note{fill:#a33}.bar{fill:#4a7bb7}.whisker{stroke:#222;stroke-width:1.5}
</style></head><body>${parts.join('\n')}</body></html>\n`;
}
