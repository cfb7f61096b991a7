// Renders the latency workload as text: per client and size the round trip (put, then the
// client's own monitor update) p50/p90/p99 and min-max and the one way p50/p99 (IOC timestamp to
// callback), and per client the fixed cost and MB/s fitted from the sizes. The HTML report draws
// the same points as a line chart (charts.ts latencyChart) above these tables.
import type { LatencyPoint, LatencyRun, LatencyWorkload } from '../results/index.js';
import { clientLabel, fmt, renderMarkdown, renderTable, type Column } from './table.js';

interface PointRow {
  client: string;
  point?: LatencyPoint;
  run: LatencyRun;
}

const ms = (v: number | undefined): string => fmt(v, v !== undefined && v < 10 ? 3 : 1);

const pointColumns: Column<PointRow>[] = [
  { header: 'client', get: (r) => r.client },
  { header: 'elements', get: (r) => (r.point ? r.point.elements.toLocaleString('en-US') : '-'), align: 'right' },
  { header: 'bytes', get: (r) => (r.point ? r.point.bytes.toLocaleString('en-US') : '-'), align: 'right' },
  { header: 'round trip p50 ms', get: (r) => ms(r.point?.p50Ms), align: 'right' },
  { header: 'p90', get: (r) => ms(r.point?.p90Ms), align: 'right' },
  { header: 'p99', get: (r) => ms(r.point?.p99Ms), align: 'right' },
  { header: 'min-max', get: (r) => (r.point ? `${ms(r.point.minMs)}-${ms(r.point.maxMs)}` : '-'), align: 'right' },
  { header: 'one way p50 ms', get: (r) => ms(r.point?.oneWayP50Ms), align: 'right' },
  { header: 'p99', get: (r) => ms(r.point?.oneWayP99Ms), align: 'right' },
  { header: 'rounds', get: (r) => (r.point ? String(r.point.updates) : '-'), align: 'right' },
  { header: 'note', get: (r) => r.point?.error ?? (r.point ? '' : (r.run.error ?? 'no result')) },
];

interface FitRow {
  run: LatencyRun;
}

const fitColumns: Column<FitRow>[] = [
  { header: 'client', get: (r) => clientLabel(r.run) },
  { header: 'round trip fixed ms', get: (r) => ms(r.run.fit?.roundTrip?.fixedMs), align: 'right' },
  { header: 'MB/s', get: (r) => fmt(r.run.fit?.roundTrip?.mbPerS, 0), align: 'right' },
  { header: 'one way fixed ms', get: (r) => ms(r.run.fit?.oneWay?.fixedMs), align: 'right' },
  { header: 'MB/s', get: (r) => fmt(r.run.fit?.oneWay?.mbPerS, 0), align: 'right' },
  { header: 'note', get: (r) => r.run.error ?? '' },
];

export function latencyTitle(w: LatencyWorkload): string {
  return `Latency against payload size: ${w.elementType} arrays of ${w.sizes.map((s) => s.toLocaleString('en-US')).join(', ')} ${w.sizes.length === 1 && w.sizes[0] === 1 ? 'element' : 'elements'}, ${w.samplesPerSize} rounds per size`;
}

/** The per-size table, then the fit per client (every run of a client, in order; runs without a
 *  fit, as in results that stored none, leave the second table out). */
export function latencyTables(runs: readonly LatencyRun[], markdown = false): string {
  const rows: PointRow[] = runs.flatMap((run) =>
    run.points.length ? run.points.map((point) => ({ client: clientLabel(run), point, run })) : [{ client: clientLabel(run), run }],
  );
  const render = <T>(r: readonly T[], c: readonly Column<T>[]) => (markdown ? renderMarkdown(r, c) : renderTable(r, c));
  const fitted = runs.filter((run) => run.fit && !run.unsupported);
  const points = render(rows, pointColumns);
  return fitted.length === 0
    ? points
    : points +
        '\nFixed cost and slope of p50 against bytes (least squares of the relative error):\n\n' +
        render(
          fitted.map((run) => ({ run })),
          fitColumns,
        );
}
