// The monitor sample checks on synthetic streams: clean, gaps, repeats, stale timestamps, wrong severities.
import { describe, expect, it } from 'vitest';
import { checkArraySamples, checkMonitorSamples, percentile } from '../../src/bench/checks.js';
import type { Sample } from '../../src/bench/samples.js';

const T0 = 1_800_000_000;

function stream(pvs: number, n: number, tweak?: (s: Sample, pv: number, i: number) => Sample | undefined): Sample[] {
  const out: Sample[] = [];
  for (let i = 0; i < n; i++)
    for (let pv = 0; pv < pvs; pv++) {
      const s: Sample = { pv, severity: 1, status: 4, value: 100 + i, iocTime: T0 + i * 0.1, recvTime: T0 + i * 0.1 + 0.002 };
      const t = tweak ? tweak(s, pv, i) : s;
      if (t) out.push(t);
    }
  return out;
}

const opts = { pvs: 3, samplesPerPv: 10, startedAt: T0, periodS: 0.1, expectedSeverity: 1 };

describe('monitor sample checks', () => {
  it('passes a clean stream and measures latency and rate', () => {
    const c = checkMonitorSamples(stream(3, 10), opts);
    expect(c.ok).toBe(true);
    expect(c.samples).toBe(30);
    expect(c.latencyMs!.p50).toBeCloseTo(2, 3);
    expect(c.updatesPerSecond).toBeCloseTo(30 / 0.9, 1);
  });

  it('counts a gap and the values it skipped', () => {
    const c = checkMonitorSamples(
      stream(3, 10, (s, pv, i) => (pv === 1 && (i === 4 || i === 5) ? undefined : s)),
      { ...opts, samplesPerPv: 8 },
    );
    expect(c.ok).toBe(false);
    expect(c.gaps).toBe(1);
    expect(c.missedValues).toBe(2);
    expect(c.findings.join()).toMatch(/103 -> 106 \(2 missed\)/);
  });

  it('flags repeated values and timestamps that do not increase', () => {
    const c = checkMonitorSamples(
      stream(3, 10, (s, pv, i) => (pv === 2 && i === 6 ? { ...s, value: 105, iocTime: T0 + 0.5 } : s)),
      opts,
    );
    expect(c.valueErrors).toBeGreaterThanOrEqual(1);
    expect(c.timestampErrors).toBe(1);
    expect(c.ok).toBe(false);
  });

  it('flags stale timestamps and wrong severities', () => {
    const c = checkMonitorSamples(
      stream(3, 10, (s, pv, i) => (pv === 0 && i === 0 ? { ...s, iocTime: T0 - 60 } : pv === 1 && i === 3 ? { ...s, severity: 0 } : s)),
      opts,
    );
    expect(c.staleTimestamps).toBe(1);
    expect(c.severityErrors).toBe(1);
    expect(c.ok).toBe(false);
  });

  it('reports silent and incomplete PVs', () => {
    const c = checkMonitorSamples(
      stream(3, 10, (s, pv, i) => (pv === 0 ? undefined : pv === 2 && i > 4 ? undefined : s)),
      opts,
    );
    expect(c.silentPvs).toBe(1);
    expect(c.incompletePvs).toBe(1);
    expect(c.ok).toBe(false);
  });

  it('takes percentiles by rank', () => {
    expect(percentile([1, 2, 3, 4], 50)).toBe(2);
    expect(percentile([1, 2, 3, 4], 99)).toBe(4);
    expect(Number.isNaN(percentile([], 50))).toBe(true);
  });
});

describe('array sample checks', () => {
  const arr = (values: number[], bad: number[] = []) =>
    values.map((v, i) => ({
      pv: 0,
      severity: 0,
      status: bad.includes(i) ? 1 : 0,
      value: v,
      iocTime: T0 + i * 0.1,
      recvTime: T0 + i * 0.1 + 0.01,
    }));
  it('measures throughput and counts skipped updates', () => {
    const c = checkArraySamples(arr([1, 2, 4, 5]), 1_000_000);
    expect(c.ok).toBe(true);
    expect(c.skipped).toBe(1);
    expect(c.updatesPerSecond).toBeCloseTo(10, 3);
    expect(c.mElementsPerSecond).toBeCloseTo(10, 3);
  });
  it('counts repeated content apart from errors, and flags corrupt or backward updates', () => {
    const c = checkArraySamples(arr([1, 2, 2, 1, 3], [4]), 10);
    expect(c.repeats).toBe(1);
    expect(c.valueErrors).toBe(1);
    expect(c.corrupt).toBe(1);
    expect(c.ok).toBe(false);
    expect(checkArraySamples(arr([5, 6, 6, 7]), 10).ok).toBe(true);
  });
  it('names the corrupt update and what was wrong with it', () => {
    const samples = arr([1, 2, 3]);
    samples[1]!.status = 2 | 8;
    const c = checkArraySamples(samples, { elements: 10 });
    expect(c.corrupt).toBe(1);
    expect(c.corruptUpdates).toEqual(['update 2 (first element 2): last element differs, an element differs']);
  });
  it("an array shorter than the workload's is corrupt in every update", () => {
    const c = checkArraySamples(arr([1, 2, 3]), { elements: 10, lastLength: 8 });
    expect(c.corrupt).toBe(3);
    expect(c.corruptUpdates![0]).toMatch(/8 elements, expected 10/);
    expect(c.ok).toBe(false);
  });
  it('int8 and int16 update numbers wrap: steps are taken modulo the width, signed or unsigned', () => {
    const signed = checkArraySamples(arr([126, 127, -128, -126]), { elements: 10, type: 'int8' });
    expect([signed.skipped, signed.valueErrors, signed.ok]).toEqual([1, 0, true]);
    const unsigned = checkArraySamples(arr([254, 255, 0, 1]), { elements: 10, type: 'int8' });
    expect([unsigned.skipped, unsigned.valueErrors, unsigned.ok]).toEqual([0, 0, true]);
    expect(checkArraySamples(arr([32767, -32768]), { elements: 10, type: 'int16' }).ok).toBe(true);
    // Without the type the same numbers went backwards.
    expect(checkArraySamples(arr([254, 255, 0, 1]), { elements: 10, type: 'double' }).valueErrors).toBe(1);
  });
});
