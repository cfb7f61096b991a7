// Renders the crossing workload as text: per server, protocol and payload the crossing time (the
// app's post to the reference client's callback) p50/p90/p99 and min-max, then per server and
// protocol the fixed cost and MB/s fitted through the int32 and the byte array sizes; and the ADO
// bridge study's figures beside them.
import type { CrossingPoint, CrossingRun, CrossingWorkload, LatencyPoint } from '../results/index.js';
import { fmt, renderMarkdown, renderTable, type Column } from './table.js';

interface PointRow {
  run: CrossingRun;
  point?: CrossingPoint;
}

const ms = (v: number | undefined): string => fmt(v, v !== undefined && v < 10 ? 3 : 1);

const pointColumns: Column<PointRow>[] = [
  { header: 'server', get: (r) => r.run.server },
  { header: 'protocol', get: (r) => r.run.protocol },
  { header: 'payload', get: (r) => (r.point ? r.point.payload : '-') },
  { header: 'elements', get: (r) => (r.point ? r.point.elements.toLocaleString('en-US') : '-'), align: 'right' },
  { header: 'bytes', get: (r) => (r.point ? r.point.bytes.toLocaleString('en-US') : '-'), align: 'right' },
  { header: 'crossing p50 ms', get: (r) => ms(r.point?.p50Ms), align: 'right' },
  { header: 'p90', get: (r) => ms(r.point?.p90Ms), align: 'right' },
  { header: 'p99', get: (r) => ms(r.point?.p99Ms), align: 'right' },
  { header: 'min-max', get: (r) => (r.point ? `${ms(r.point.minMs)}-${ms(r.point.maxMs)}` : '-'), align: 'right' },
  { header: 'posts', get: (r) => (r.point ? String(r.point.updates) : '-'), align: 'right' },
  { header: 'client', get: (r) => r.run.client },
  { header: 'note', get: (r) => (r.point ? (r.point.error ?? mergedNote(r.point)) : (r.run.error ?? 'no result')) },
];

const mergedNote = (p: CrossingPoint): string => (p.merged ? `${p.merged} post${p.merged > 1 ? 's' : ''} merged into a later update` : '');

const fitColumns: Column<CrossingRun>[] = [
  { header: 'server', get: (r) => r.server },
  { header: 'protocol', get: (r) => r.protocol },
  { header: 'int32 fixed ms', get: (r) => ms(r.fit?.int32?.fixedMs), align: 'right' },
  { header: 'int32 MB/s', get: (r) => fmt(r.fit?.int32?.mbPerS, 0), align: 'right' },
  { header: 'bytes fixed ms', get: (r) => ms(r.fit?.bytes?.fixedMs), align: 'right' },
  { header: 'bytes MB/s', get: (r) => fmt(r.fit?.bytes?.mbPerS, 0), align: 'right' },
  { header: 'version', get: (r) => r.version ?? '' },
  { header: 'note', get: (r) => r.error ?? '' },
];

interface TripRow {
  run: CrossingRun;
  point: LatencyPoint;
}

const tripColumns: Column<TripRow>[] = [
  { header: 'server', get: (r) => r.run.server },
  { header: 'protocol', get: (r) => r.run.protocol },
  { header: 'elements', get: (r) => r.point.elements.toLocaleString('en-US'), align: 'right' },
  { header: 'round trip p50 ms', get: (r) => ms(r.point.p50Ms), align: 'right' },
  { header: 'p90', get: (r) => ms(r.point.p90Ms), align: 'right' },
  { header: 'p99', get: (r) => ms(r.point.p99Ms), align: 'right' },
  { header: 'min-max', get: (r) => `${ms(r.point.minMs)}-${ms(r.point.maxMs)}`, align: 'right' },
  { header: 'rounds', get: (r) => String(r.point.updates), align: 'right' },
  { header: 'client', get: (r) => r.run.client },
  { header: 'note', get: (r) => r.point.error ?? '' },
];

/** The ADO-to-EPICS bridge study's own figures (its server, its 2013 hosts), for comparison. */
export const SEED_CROSSING = { fixedMs: 0.35, int32MbPerS: 30, bytesMbPerS: 330 };

export function crossingTitle(w: CrossingWorkload): string {
  const list = (xs: readonly number[]) => xs.map((s) => s.toLocaleString('en-US')).join(', ');
  return (
    `Crossing time (a server app's post to a client's callback): a double, int32 arrays of ${list(w.int32Sizes)}` +
    `${w.byteSizes.length ? ` and byte arrays of ${list(w.byteSizes)}` : ''} elements, ${w.count} posts each, one every ${w.periodMs} ms` +
    `${w.roundTripSizes?.length ? `; the round trip through the app's put handler at ${list(w.roundTripSizes)} doubles, ${w.count} rounds each` : ''}`
  );
}

export function crossingTables(runs: readonly CrossingRun[], markdown = false): string {
  const render = <T>(r: readonly T[], c: readonly Column<T>[]) => (markdown ? renderMarkdown(r, c) : renderTable(r, c));
  const rows: PointRow[] = runs.flatMap((run) => (run.points.length ? run.points.map((point) => ({ run, point })) : [{ run }]));
  const fitted = runs.filter((r) => r.fit);
  const trips: TripRow[] = runs.flatMap((run) => (run.roundTrip ?? []).map((point) => ({ run, point })));
  const seed = `The ADO-to-EPICS bridge study (its own server and hosts): about ${SEED_CROSSING.fixedMs} ms of fixed cost, ${SEED_CROSSING.int32MbPerS} MB/s for int arrays and ${SEED_CROSSING.bytesMbPerS} MB/s for byte arrays.\n`;
  return (
    render(rows, pointColumns) +
    (fitted.length
      ? `\nFixed cost and slope of p50 against bytes (least squares of the relative error):\n\n${render(fitted, fitColumns)}`
      : '') +
    (trips.length
      ? `\nRound trip through the app (a client's put of doubles, the app's put handler posting them, the client's own update):\n\n${render(trips, tripColumns)}`
      : '') +
    `\n${seed}`
  );
}

/** One line of a run's outcome, for the progress line. */
export function crossingOutcome(r: CrossingRun): string {
  if (r.error) return r.error;
  const d = r.points.find((p) => p.payload === 'double');
  return d?.p50Ms !== undefined ? `double p50 ${d.p50Ms.toFixed(3)} ms` : 'no result';
}
