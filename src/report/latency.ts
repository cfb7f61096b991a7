// Renders the latency workload as text: a row per client and payload size (median, p99, min-max
// of the put-to-update round trip), failures noted.
import type { LatencyRun } from '../results/index.js';
import { fmt, renderMarkdown, renderTable, type Column } from './table.js';

interface Row {
  client: string;
  elements: string;
  bytes: string;
  updates: string;
  p50: string;
  p99: string;
  range: string;
  note: string;
}

export function latencyRows(runs: readonly LatencyRun[]): Row[] {
  return runs.flatMap((r) => {
    if (r.points.length === 0) return [{ client: r.client, elements: '-', bytes: '-', updates: '-', p50: '-', p99: '-', range: '-', note: r.error ?? 'no result' }];
    return r.points.map((p) => ({
      client: r.client,
      elements: p.elements.toLocaleString('en-US'),
      bytes: p.bytes.toLocaleString('en-US'),
      updates: String(p.updates),
      p50: fmt(p.p50Ms, 3),
      p99: fmt(p.p99Ms, 3),
      range: `${fmt(p.minMs, 3)}-${fmt(p.maxMs, 3)}`,
      note: p.ok ? '' : p.error ?? 'failed',
    }));
  });
}

const columns: Column<Row>[] = [
  { header: 'client', get: (r) => r.client },
  { header: 'elements', get: (r) => r.elements, align: 'right' },
  { header: 'bytes', get: (r) => r.bytes, align: 'right' },
  { header: 'updates', get: (r) => r.updates, align: 'right' },
  { header: 'p50 ms', get: (r) => r.p50, align: 'right' },
  { header: 'p99 ms', get: (r) => r.p99, align: 'right' },
  { header: 'min-max ms', get: (r) => r.range, align: 'right' },
  { header: 'note', get: (r) => r.note },
];

export function latencyTable(runs: readonly LatencyRun[], markdown = false): string {
  const rows = latencyRows(runs);
  return markdown ? renderMarkdown(rows, columns) : renderTable(rows, columns);
}
