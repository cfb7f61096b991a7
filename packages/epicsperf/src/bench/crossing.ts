// The crossing workload for one server: per protocol it serves, the reference client of that
// protocol receives each payload's posts (its monitor task for the double, its array task for the
// arrays, whose first element is the post's number k), and each update's crossing time is the
// client's receive time less the server app's time of post k (T5 - T3 in the ADO bridge study):
// one host, one clock. The fixed cost and MB/s are fitted through the sizes as for latency.
import type { ClientSpec } from '../clients/index.js';
import type { CrossingPayload, CrossingPoint, CrossingRun, CrossingWorkload } from '../results/index.js';
import type { RunningServer } from '../servers/index.js';
import { percentile } from './checks.js';
import { fitLatency, runLatency } from './latency.js';
import type { Sample } from './samples.js';
import { runSession, shipSamples, type SessionResult } from './session.js';

/** The PV names' prefix of the server runners. */
export const CROSSING_PREFIX = 'XP:';

/** Bytes per element of each payload. */
const ELEMENT_BYTES: Record<CrossingPayload, number> = { double: 8, int32: 4, bytes: 1 };

/** The payloads of a workload, in the order measured: the double, the int32 sizes, the byte sizes. */
export function payloads(w: CrossingWorkload): { payload: CrossingPayload; elements: number; name: string }[] {
  return [
    { payload: 'double' as const, elements: 1, name: `${CROSSING_PREFIX}CROSS:DOUBLE` },
    ...w.int32Sizes.map((n) => ({ payload: 'int32' as const, elements: n, name: `${CROSSING_PREFIX}CROSS:INT32:${n}` })),
    ...w.byteSizes.map((n) => ({ payload: 'bytes' as const, elements: n, name: `${CROSSING_PREFIX}CROSS:BYTES:${n}` })),
  ];
}

export interface CrossingOptions {
  server: RunningServer;
  protocol: 'CA' | 'PVA';
  client: ClientSpec;
  python: string;
  workload: CrossingWorkload;
  onProgress?: (text: string) => void;
}

/** Every payload of the workload from `server` to `client` over `protocol`. */
export async function runCrossing(o: CrossingOptions): Promise<CrossingRun> {
  const w = o.workload;
  const run: CrossingRun = { server: o.server.spec.name, protocol: o.protocol, client: o.client.name, ok: false, points: [] };
  if (o.server.version !== undefined) run.version = o.server.version;
  for (const p of payloads(w)) {
    o.onProgress?.(`${p.elements.toLocaleString('en-US')} ${p.payload === 'double' ? 'double' : `${p.payload} elements`}`);
    const session: SessionResult = { ok: false };
    let samples: Sample[] = [];
    await runSession(
      {
        client: o.client,
        python: o.python,
        env: o.server.clientEnv,
        task: p.payload === 'double' ? 'monitor' : 'array',
        names: [p.name],
        // The value at subscription, then each post.
        args: ['--samples', String(w.count + 1)],
        ...(o.onProgress && { onProgress: o.onProgress }),
      },
      session,
      async ({ runner }) => {
        await o.server.post(p.name, w.count, w.periodMs);
        // Past the last post, the updates have a few seconds to arrive; then what did is shipped
        // (a merged post leaves the runner one short of complete; a lost one reads as lost).
        await runner.until('complete', 5_000 + (p.elements * ELEMENT_BYTES[p.payload]) / 1000);
        samples = await shipSamples(runner);
      },
    );
    let posted: Map<number, number>;
    try {
      posted = await o.server.ship();
    } catch (e) {
      // The server runner failed: the rest of its payloads cannot be measured.
      run.error = `the server: ${(e as Error).message}`;
      return run;
    }
    run.points.push(crossingPoint(p.payload, p.elements, samples, posted, w.count, session.error));
  }
  const fit = (payload: CrossingPayload) =>
    fitLatency(
      run.points.filter((x) => x.payload === payload),
      (x) => x.p50Ms,
    );
  const int32 = fit('int32');
  const bytes = fit('bytes');
  if (int32 || bytes) run.fit = { ...(int32 && { int32 }), ...(bytes && { bytes }) };
  run.ok = run.points.every((x) => x.ok);
  if (!run.ok) run.error = run.points.find((x) => !x.ok)?.error;
  if (w.roundTripSizes?.length) {
    // The round trip through the app: the client's latency task against the server's
    // P:LATENCY:DOUBLE, whose put handler posts what was put.
    o.onProgress?.('round trip through the app');
    const rt = await runLatency({
      client: o.client,
      python: o.python,
      env: o.server.clientEnv,
      prefix: CROSSING_PREFIX,
      workload: { sizes: w.roundTripSizes, elementType: 'double', samplesPerSize: w.count },
    });
    run.roundTrip = rt.points;
    if (!rt.ok) {
      run.ok = false;
      run.error ??= `round trip: ${rt.error ?? 'failed'}`;
    }
  }
  return run;
}

/**
 * One payload's point from the client's samples (value = the post's k; the first is the value at
 * subscription, whatever an earlier run left) and the server's post times: each post once, in
 * order, the array intact. A post missing before one that arrived was merged into it (a server
 * or client squashing the updates its receiver is behind on, as EPICS monitors may): counted as
 * `merged`, not an error; the last post always arrives.
 */
export function crossingPoint(
  payload: CrossingPayload,
  elements: number,
  samples: readonly Sample[],
  posted: ReadonlyMap<number, number>,
  count: number,
  sessionError?: string,
): CrossingPoint {
  const ms: number[] = [];
  let last = 0;
  let wrong = 0;
  let disorder = 0;
  for (const s of samples.slice(1)) {
    const t = posted.get(s.value);
    if (t === undefined || s.status !== 0) {
      wrong++;
      continue;
    }
    if (s.value <= last) disorder++;
    last = s.value;
    ms.push((s.recvTime - t) * 1000);
  }
  const got = new Set(samples.slice(1).map((s) => s.value));
  const missing = [...posted.keys()].filter((k) => !got.has(k));
  // Posts before the last that arrived: merged into a later update; after it: lost.
  const merged = missing.filter((k) => k < last);
  const lost = missing.filter((k) => k > last);
  const sorted = [...ms].sort((a, b) => a - b);
  const point: CrossingPoint = {
    payload,
    elements,
    bytes: elements * ELEMENT_BYTES[payload],
    updates: ms.length,
    ...(merged.length > 0 && { merged: merged.length }),
    ...(sorted.length > 0 && {
      p50Ms: percentile(sorted, 50),
      p90Ms: percentile(sorted, 90),
      p99Ms: percentile(sorted, 99),
      minMs: sorted[0],
      maxMs: sorted[sorted.length - 1],
    }),
    ok: ms.length + merged.length === count && wrong === 0 && disorder === 0 && posted.size === count,
  };
  if (wrong) point.error = `${wrong} updates not of a post, or not intact`;
  else if (disorder) point.error = `${disorder} updates out of order`;
  else if (!point.ok) {
    const which = lost.length > 0 ? `; not post${lost.length > 1 ? 's' : ''} ${lost.join(', ')}` : '';
    // What arrived, from the value at subscription on.
    const seen = samples.slice(0, 12).map((s) => s.value);
    const received = `; received ${seen.join(', ')}${samples.length > seen.length ? ', …' : ''}`;
    point.error = `${ms.length} of ${count} posts received${which}${received}${sessionError ? ` (${sessionError})` : ''}`;
  }
  return point;
}
