// Checks every monitor sample a runner shipped (values step by exactly 1, timestamps strictly
// increase and are not stale, severity MINOR), and derives latency and throughput. Pure functions.
import type { Sample } from './samples.js';
import type { ArrayCheck, MonitorCheck } from '../results/index.js';

export interface CheckOptions {
  pvs: number;
  samplesPerPv: number;
  /** Wall time (POSIX s) when the runner was told to start: timestamps older than this minus slack are stale. */
  startedAt: number;
  /** The IOC's update period (s): the first sample may be this old. */
  periodS: number;
  expectedSeverity: number;
  names?: readonly string[];
}

export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return NaN;
  const idx = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[idx]!;
}

export function checkMonitorSamples(samples: readonly Sample[], o: CheckOptions): MonitorCheck {
  const byPv: Sample[][] = Array.from({ length: o.pvs }, () => []);
  for (const s of samples) if (s.pv < o.pvs) byPv[s.pv]!.push(s);
  const c: MonitorCheck = {
    pvs: o.pvs,
    silentPvs: 0,
    incompletePvs: 0,
    samples: samples.length,
    gaps: 0,
    missedValues: 0,
    valueErrors: 0,
    timestampErrors: 0,
    staleTimestamps: 0,
    severityErrors: 0,
    latencyMs: undefined,
    updatesPerSecond: 0,
    findings: [],
    ok: false,
  };
  const noted: Record<string, number> = {};
  const note = (kind: string, text: string) => {
    noted[kind] = (noted[kind] ?? 0) + 1;
    if (noted[kind]! <= 3) c.findings.push(text);
  };
  const name = (pv: number) => o.names?.[pv] ?? `PV #${pv}`;
  const oldest = o.startedAt - o.periodS - 1.0;
  const latencies: number[] = [];
  let firstRecv = Infinity;
  let lastRecv = -Infinity;
  byPv.forEach((list, pv) => {
    if (list.length === 0) {
      c.silentPvs++;
      note('silent', `${name(pv)}: no update`);
      return;
    }
    if (list.length < o.samplesPerPv) {
      c.incompletePvs++;
      note('incomplete', `${name(pv)}: ${list.length} of ${o.samplesPerPv} samples`);
    }
    for (let i = 0; i < list.length; i++) {
      const s = list[i]!;
      firstRecv = Math.min(firstRecv, s.recvTime);
      lastRecv = Math.max(lastRecv, s.recvTime);
      if (s.severity !== o.expectedSeverity) {
        c.severityErrors++;
        note('severity', `${name(pv)}: severity ${s.severity} at value ${s.value}, expected ${o.expectedSeverity}`);
      }
      if (s.iocTime < oldest || s.iocTime > s.recvTime + 1.0) {
        c.staleTimestamps++;
        note('stale', `${name(pv)}: timestamp ${new Date(s.iocTime * 1000).toISOString()} outside the run`);
      }
      if (i === 0) continue;
      const prev = list[i - 1]!;
      latencies.push((s.recvTime - s.iocTime) * 1000);
      const step = s.value - prev.value;
      if (step > 1) {
        c.gaps++;
        c.missedValues += step - 1;
        note('gap', `${name(pv)}: ${prev.value} -> ${s.value} (${step - 1} missed)`);
      } else if (step !== 1) {
        c.valueErrors++;
        note('value', `${name(pv)}: ${prev.value} -> ${s.value}`);
      }
      if (!(s.iocTime > prev.iocTime)) {
        c.timestampErrors++;
        note('timestamp', `${name(pv)}: timestamp did not increase after value ${prev.value}`);
      }
    }
  });
  latencies.sort((a, b) => a - b);
  if (latencies.length)
    c.latencyMs = { p50: percentile(latencies, 50), p99: percentile(latencies, 99), max: latencies[latencies.length - 1]! };
  c.updatesPerSecond = lastRecv > firstRecv ? samples.length / (lastRecv - firstRecv) : 0;
  for (const [kind, n] of Object.entries(noted)) if (n > 3) c.findings.push(`... ${n - 3} more ${kind} findings`);
  c.ok =
    c.silentPvs === 0 &&
    c.incompletePvs === 0 &&
    c.gaps === 0 &&
    c.valueErrors === 0 &&
    c.timestampErrors === 0 &&
    c.staleTimestamps === 0 &&
    c.severityErrors === 0;
  return c;
}

/** Bits of an array sample's `status` (docs/runners.md): which check of the update failed. */
export const ARRAY_BAD = { middle: 1, last: 2, length: 4, element: 8 } as const;

/** Width of the wrap-around of update numbers in an array of this element type (undefined: none). */
export function arrayModulus(type: string | undefined): number | undefined {
  return type === 'int8' ? 256 : type === 'int16' ? 65536 : undefined;
}

/** Array updates per second the IOC published between two of its stats answers. */
export interface ServerRate {
  updatesPerSecond: number;
  mElementsPerSecond: number;
}

export interface ArrayCheckOptions {
  /** Elements every update should hold (the workload's size). */
  elements: number;
  /** The length of the last update, as the runner reported it. */
  lastLength?: number;
  /** The element type: int8 and int16 update numbers wrap (over CA int8 also arrives unsigned). */
  type?: string;
}

/**
 * Checks the samples of the array workload (one PV; value = the first element, which is the
 * update number k wrapped to the type; status = the ARRAY_BAD bits of the update's own checks).
 */
export function checkArraySamples(samples: readonly Sample[], o: ArrayCheckOptions | number): ArrayCheck {
  const opts = typeof o === 'number' ? { elements: o } : o;
  const mod = arrayModulus(opts.type);
  let skipped = 0;
  let corrupt = 0;
  let valueErrors = 0;
  let repeats = 0;
  const corruptUpdates: string[] = [];
  const shortAll = opts.lastLength !== undefined && opts.lastLength !== opts.elements;
  const lat: number[] = [];
  for (let i = 0; i < samples.length; i++) {
    const s = samples[i]!;
    if (s.status !== 0 || shortAll || !Number.isFinite(s.value)) {
      corrupt++;
      if (corruptUpdates.length < 5) corruptUpdates.push(corruptText(i, s, shortAll ? opts : undefined));
    }
    if (i === 0) continue;
    lat.push((s.recvTime - s.iocTime) * 1000);
    let step = s.value - samples[i - 1]!.value;
    // Narrow types wrap: the step is taken modulo the width (a skip of a whole width is not seen).
    if (mod !== undefined) step = ((step % mod) + mod) % mod;
    if (step > 1) skipped += step - 1;
    else if (step === 0) repeats++;
    else if (step !== 1) valueErrors++;
  }
  lat.sort((a, b) => a - b);
  const span = samples.length > 1 ? samples[samples.length - 1]!.recvTime - samples[0]!.recvTime : 0;
  const updatesPerSecond = span > 0 ? (samples.length - 1) / span : 0;
  return {
    updates: samples.length,
    elements: opts.lastLength ?? opts.elements,
    skipped,
    corrupt,
    ...(corruptUpdates.length > 0 && { corruptUpdates }),
    repeats,
    valueErrors,
    mElementsPerSecond: (updatesPerSecond * opts.elements) / 1e6,
    updatesPerSecond,
    latencyMs: lat.length ? { p50: percentile(lat, 50), p99: percentile(lat, 99) } : undefined,
    ok: corrupt === 0 && valueErrors === 0 && samples.length > 1,
  };
}

function corruptText(i: number, s: Sample, short: { elements: number; lastLength?: number } | undefined): string {
  const what: string[] = [];
  if (short) what.push(`${short.lastLength} elements, expected ${short.elements}`);
  if (s.status & ARRAY_BAD.length) what.push('its length differs from the first update');
  if (s.status & ARRAY_BAD.middle) what.push('middle element differs');
  if (s.status & ARRAY_BAD.last) what.push('last element differs');
  if (s.status & ARRAY_BAD.element) what.push('an element differs');
  if (!Number.isFinite(s.value)) what.push('empty');
  return `update ${i + 1} (first element ${s.value}): ${what.join(', ') || `status ${s.status}`}`;
}
