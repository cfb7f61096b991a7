// Renders captures: the summary of one `epicsperf capture` (a row per PV, then the totals), and
// the bench's capture workload (a row per client: the highest load kept with zero loss).
import type { CaptureBenchResults, CaptureRun, CaptureStepResult } from '../results/capture.js';
import { fmt, renderMarkdown, renderTable, type Column } from './table.js';

const MB = 1e6;

export function captureSummaryText(run: CaptureRun): string {
  const s = run.summary;
  if (!s) return `${run.client}: no summary: ${run.error ?? 'the capture failed'}\n`;
  const rows = s.pvs;
  const table = renderTable(rows, [
    { header: 'PV', get: (r) => r.name },
    { header: 'updates', get: (r) => String(r.updates), align: 'right' },
    { header: 'MB', get: (r) => fmt(r.bytes / MB, 3), align: 'right' },
    { header: 'gaps', get: (r) => (r.checked ? String(r.gaps) : '-'), align: 'right' },
    { header: 'lost', get: (r) => (r.checked ? String(r.lost) : '-'), align: 'right' },
    { header: 'note', get: (r) => r.skipped ?? (r.overruns ? `${r.overruns} dropped by the client's queue` : '') },
  ]);
  const lost = rows.reduce((a, r) => a + r.lost, 0);
  const lines = [
    table,
    `${s.updates} updates, ${fmt(s.bytes / MB, 2)} MB of data in ${fmt(s.seconds, 1)} s: ${fmt(s.bytes / MB / Math.max(s.seconds, 1e-9), 2)} MB/s, ${fmt(s.updates / Math.max(s.seconds, 1e-9), 0)} updates/s`,
    `lost: ${lost} updates in ${rows.reduce((a, r) => a + r.gaps, 0)} gaps${
      lost
        ? ` (${rows
            .filter((r) => r.lost)
            .slice(0, 5)
            .map((r) => `${r.name} ${r.lost}`)
            .join(', ')})`
        : ''
    }`,
    `flushes: ${s.flushes}, mean ${fmt(s.meanFlushMs, 1)} ms, max ${fmt(s.maxFlushMs, 1)} ms${s.slowFlushes ? `, ${s.slowFlushes} longer than the period` : ''}`,
    `client: ${s.client} ${s.version}${run.cpuPercent !== undefined ? `, CPU ${fmt(run.cpuPercent, 0)}% of a core` : ''}${run.peakRssMb !== undefined ? `, peak RSS ${fmt(run.peakRssMb, 0)} MB` : ''}`,
    `file: ${s.file} (${fmt(s.fileBytes / MB, 2)} MB)`,
  ];
  if (s.error) lines.push(`stopped early: ${s.error}`);
  return lines.join('\n') + '\n';
}

interface BenchRow {
  client: string;
  best?: CaptureStepResult | undefined;
  limit?: CaptureStepResult | undefined;
}

export const stepLabel = (r: CaptureStepResult | undefined) =>
  !r
    ? '-'
    : r.step.kind === 'scalar'
      ? `${r.step.pvs} scalars x ${r.step.rateHz} Hz`
      : `${r.step.elements.toLocaleString('en-US')} doubles x ${r.step.rateHz} Hz`;

function limitNote(r: CaptureStepResult | undefined): string {
  if (!r) return 'no step lost updates';
  if (r.run.error) return `${stepLabel(r)}: ${r.run.error}`;
  return `${stepLabel(r)}: ${r.lost} lost${r.run.summary?.slowFlushes ? `, ${r.run.summary.slowFlushes} slow flushes` : ''}`;
}

export function captureBenchTable(r: CaptureBenchResults, markdown = false): string {
  const rows: BenchRow[] = r.clients.map((c) => ({ client: c.client, best: c.best, limit: c.limit }));
  const best = Math.max(...rows.map((x) => x.best?.mbS ?? 0));
  const columns: Column<BenchRow>[] = [
    { header: 'client', get: (x) => x.client },
    { header: 'MB/s kept', get: (x) => fmt(x.best?.mbS, 1), align: 'right' },
    { header: 'best / this', get: (x) => (x.best?.mbS ? fmt(best / x.best.mbS, 2) : '-'), align: 'right' },
    { header: 'updates/s kept', get: (x) => fmt(x.best?.updatesS, 0), align: 'right' },
    { header: 'at', get: (x) => stepLabel(x.best) },
    { header: 'CPU %', get: (x) => fmt(x.best?.run.cpuPercent, 0), align: 'right' },
    { header: 'peak RSS MB', get: (x) => fmt(x.best?.run.peakRssMb, 0), align: 'right' },
    { header: 'x disk', get: (x) => (x.best?.mbS && r.diskMBs ? fmt(x.best.mbS / r.diskMBs, 2) : '-'), align: 'right' },
    { header: 'limit', get: (x) => limitNote(x.limit) },
  ];
  return markdown ? renderMarkdown(rows, columns) : renderTable(rows, columns);
}

export function captureBenchTitle(r: CaptureBenchResults): string {
  const disk =
    r.diskMBs !== undefined ? `disk ${fmt(r.diskMBs, 0)} MB/s sequential (same run)` : `disk rate not measured: ${r.diskError ?? '?'}`;
  return `Capture to HDF5: highest load written with zero loss, ${r.seconds} s per step, flush every ${r.flushMs} ms; ${disk}; the study: ${r.studyMBs[0]}-${r.studyMBs[1]} MB/s`;
}

/** Every step of every client (the detail under the table). */
export function captureStepsTable(r: CaptureBenchResults, markdown = false): string {
  const columns: Column<CaptureStepResult>[] = [
    { header: 'client', get: (x) => x.client },
    { header: 'step', get: (x) => stepLabel(x) },
    { header: 'offered MB/s', get: (x) => fmt(x.step.offeredMBs, 1), align: 'right' },
    { header: 'MB/s', get: (x) => fmt(x.mbS, 1), align: 'right' },
    { header: 'updates/s', get: (x) => fmt(x.updatesS, 0), align: 'right' },
    { header: 'lost', get: (x) => String(x.lost), align: 'right' },
    { header: 'max flush ms', get: (x) => fmt(x.run.summary?.maxFlushMs, 0), align: 'right' },
    { header: 'CPU %', get: (x) => fmt(x.run.cpuPercent, 0), align: 'right' },
    { header: 'kept', get: (x) => (x.kept ? 'yes' : x.run.error ? `no: ${x.run.error}` : 'no') },
  ];
  return markdown ? renderMarkdown(r.steps, columns) : renderTable(r.steps, columns);
}

/** The capture workload as text: title, the table per client and every step. */
export function captureBenchText(r: CaptureBenchResults, markdown = false): string {
  return `\n${captureBenchTitle(r)}\n\n${captureBenchTable(r, markdown)}\nEvery step:\n\n${captureStepsTable(r, markdown)}`;
}
