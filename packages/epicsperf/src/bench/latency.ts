// The latency workload for one client: per array size, its runner puts an array and waits for its
// own monitor update of it; round trip and one way (IOC timestamp to callback) per size, and the
// fixed cost and slope fitted from the sizes, as the ADO bridge study did.
import type { Sample } from './samples.js';
import { percentile } from './checks.js';
import type { ClientSpec } from '../clients/index.js';
import { runSession, shipSamples } from './session.js';
import type { Host } from '../hosts/host.js';
import type { LatencyFit, LatencyPoint, LatencyRun, LatencyWorkload } from '../results/index.js';

export const LATENCY_TYPES = ['double', 'char'] as const;
export type LatencyType = (typeof LATENCY_TYPES)[number];
export const DEFAULT_LATENCY_SIZES = [1, 10, 100, 1000, 10_000, 100_000, 1_000_000];

/** Bytes per element of each latency type (the payload the study's MB/s refer to). */
export const ELEMENT_BYTES: Record<string, number> = { double: 8, char: 1 };

/** The built-in IOC's target record of each type (IocOptions.latencyElements makes them). */
export function latencyRecord(prefix: string, type: string): string {
  return `${prefix}LATENCY:${type === 'char' ? 'CHAR' : 'DOUBLE'}`;
}

export interface LatencyRunOptions {
  client: ClientSpec;
  python: string;
  /** Where the runner runs (default: here). */
  host?: Host;
  env: Record<string, string>;
  prefix: string;
  workload: LatencyWorkload;
  /** The client's deadline for the whole run (ms): past it the runner is stopped (ClientDeadline). */
  clientDeadlineMs?: number;
  onProgress?: (text: string) => void;
}

export async function runLatency(o: LatencyRunOptions): Promise<LatencyRun> {
  const w = o.workload;
  const result: LatencyRun = { client: o.client.name, ok: false, points: [] };
  return runSession(
    {
      ...o,
      task: 'latency',
      names: [latencyRecord(o.prefix, w.elementType)],
      args: ['--samples', String(w.samplesPerSize), '--sizes', w.sizes.join(','), '--type', w.elementType],
    },
    result,
    async ({ runner, progress }) => {
      progress('putting and waiting for each update');
      const bytes = w.sizes.reduce((a, s) => a + s * (ELEMENT_BYTES[w.elementType] ?? 8), 0);
      // A round per size costs at least a few ms; a slow client moves 1 MB in well under a second.
      const deadline = 60_000 + (w.samplesPerSize + 3) * (w.sizes.length * 200 + bytes / 1000);
      await runner.next('complete', deadline, `${w.samplesPerSize} rounds per size`);
      result.points = latencyPoints(await shipSamples(runner), w);
      const fit = { roundTrip: fitLatency(result.points, (p) => p.p50Ms), oneWay: fitLatency(result.points, (p) => p.oneWayP50Ms) };
      if (fit.roundTrip || fit.oneWay)
        result.fit = { ...(fit.roundTrip && { roundTrip: fit.roundTrip }), ...(fit.oneWay && { oneWay: fit.oneWay }) };
      result.ok = result.points.length === w.sizes.length && result.points.every((p) => p.ok);
      if (!result.ok) result.error = result.points.find((p) => p.error)?.error ?? 'not every size was measured';
    },
  );
}

/** One point per size from the runner's samples (pv = size index, value = round trip in s). */
export function latencyPoints(samples: readonly Sample[], w: LatencyWorkload): LatencyPoint[] {
  return w.sizes.map((elements, i) => {
    const mine = samples.filter((s) => s.pv === i);
    const rt = mine.map((s) => s.value * 1000).sort((a, b) => a - b);
    const ow = mine.map((s) => (s.recvTime - s.iocTime) * 1000).sort((a, b) => a - b);
    const wrong = mine.filter((s) => s.status !== 0).length;
    const point: LatencyPoint = {
      elements,
      bytes: elements * (ELEMENT_BYTES[w.elementType] ?? 8),
      updates: mine.length,
      p50Ms: percentile(rt, 50),
      p90Ms: percentile(rt, 90),
      p99Ms: percentile(rt, 99),
      minMs: rt[0] ?? NaN,
      maxMs: rt[rt.length - 1] ?? NaN,
      oneWayP50Ms: percentile(ow, 50),
      oneWayP90Ms: percentile(ow, 90),
      oneWayP99Ms: percentile(ow, 99),
      ok: mine.length === w.samplesPerSize && wrong === 0,
    };
    if (wrong) point.error = `${wrong} updates of the wrong length`;
    else if (mine.length !== w.samplesPerSize) point.error = `${mine.length} of ${w.samplesPerSize} rounds`;
    return point;
  });
}

/**
 * The line `p50 = fixed + bytes / rate` through the sizes' p50s, by least squares of the relative
 * error (each point weighted 1/p50², so a 1 ms and a 100 ms point count alike and the largest
 * size cannot swamp the fixed cost): the fixed cost in ms and the rate in MB/s. Undefined with
 * fewer than two sizes or a slope that is not positive.
 */
export function fitLatency<P extends { bytes: number }>(points: readonly P[], y: (p: P) => number | undefined): LatencyFit | undefined {
  const xy = points
    .map((p) => [p.bytes, y(p)] as const)
    .filter((v): v is readonly [number, number] => v[1] !== undefined && Number.isFinite(v[1]) && v[1] > 0);
  if (xy.length < 2) return undefined;
  let sw = 0,
    sx = 0,
    sy = 0,
    sxx = 0,
    sxy = 0;
  for (const [x, v] of xy) {
    const w = 1 / (v * v);
    sw += w;
    sx += w * x;
    sy += w * v;
    sxx += w * x * x;
    sxy += w * x * v;
  }
  const det = sw * sxx - sx * sx;
  if (det <= 0) return undefined;
  const slope = (sw * sxy - sx * sy) / det; // ms per byte
  if (!(slope > 0)) return undefined;
  return { fixedMs: (sy - slope * sx) / sw, mbPerS: 1 / slope / 1000 };
}

/** Why a client has no latency row: what its declaration says (`unserved`), else that its runner does not put yet. */
export function whyNoLatency(c: ClientSpec): string {
  return c.unserved ?? `its runner does not put yet (${c.library} can put and monitor; not measured here)`;
}
